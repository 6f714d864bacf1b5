"""``/v1/catalogue``: the published judgment sets this server can host (TREC Web 2009-2014, NTCIR WWW) and, for
admins, loading them as public collections from ``EVALSERVE_CATALOGUE_DIR`` (``evalserve collections import`` does
the same from a shell)."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from evalserve.service.inputs import stored as stored_inputs
from evalserve.service.web.auth import current_token, require
from evalserve.service.web.context import session, state
from evalserve.service.web.problems import PROBLEM_JSON, ProblemSchema
from evalserve.service.web.schemas import CatalogueImportedSchema, CatalogueImportSchema, PublishedSetSchema

blp = Blueprint("catalogue", __name__, url_prefix="/v1/catalogue", description="Published judgment sets")


@blp.route("")
class Catalogue(MethodView):
    @require("read")
    @blp.response(200, PublishedSetSchema(many=True))
    def get(self) -> Any:
        """Every published set the catalogue knows, with its citation and the collection it was loaded as (null:
        not loaded on this server)."""
        return stored_inputs.published_sets(session(), state())

    @require("admin")
    @blp.arguments(CatalogueImportSchema)
    @blp.response(200, CatalogueImportedSchema)
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="an unknown key, or no catalogue directory on this server")
    def post(self, body: dict[str, Any]) -> Any:
        """Load published judgment sets from the server's catalogue directory (``EVALSERVE_CATALOGUE_DIR``) as
        public collections with their citation and topics; sets loaded before are left as they are."""
        return stored_inputs.import_published(session(), state(), current_token(), body["keys"])
