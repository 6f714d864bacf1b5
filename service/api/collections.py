"""``/v1/collections``: test collections (judgments, intent weights, metadata); immutable once created."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint
from sqlalchemy import select

from evaluation.side_registry import SIDE_KINDS
from service.api._common import collection_out, get_or_404, page_of
from service.auth import current_token, require
from service.idempotency import idempotent
from service.models import Collection
from service.problems import PROBLEM_JSON, ProblemSchema
from service.schemas import CollectionFilesSchema, CollectionFormSchema, CollectionSchema
from service.state import state
from service.uploads import create_collection

blp = Blueprint("collections", __name__, url_prefix="/v1/collections", description="Test collections")


@blp.route("")
class Collections(MethodView):
    @require("read")
    @blp.response(200, CollectionSchema(many=True))
    @blp.paginate()
    def get(self, pagination_parameters: Any) -> Any:
        """List collections (every token can read every collection), newest first."""
        with state().db.session() as s:
            rows = page_of(s, select(Collection), Collection.created_at.desc(), pagination_parameters)
        return [collection_out(c) for c in rows]

    @require("submit")
    @idempotent
    @blp.arguments(CollectionFormSchema, location="form")
    @blp.arguments(CollectionFilesSchema, location="files")
    @blp.response(201, CollectionSchema)
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="the judgments have errors (all of them listed)")
    def post(self, form: dict[str, Any], files: dict[str, Any]) -> Any:
        """Create a collection from a judgments file (multipart field ``qrels``), optional intent weights and the
        side inputs some measures need (item scores, hierarchies, ...: one field per kind)."""
        qrels = files["qrels"]
        weights = files.get("intent_weights")
        side = {kind: (f.filename or kind, f.read()) for kind in SIDE_KINDS if (f := files.get(kind)) is not None}
        row = create_collection(
            state(), current_token().id, form, (qrels.filename or "qrels", qrels.read()),
            (weights.filename or "intent-weights", weights.read()) if weights else None, side,
        )
        return collection_out(row), 201, {"Location": f"/v1/collections/{row.id}"}


@blp.route("/<string:collection_id>")
class OneCollection(MethodView):
    @require("read")
    @blp.response(200, CollectionSchema)
    def get(self, collection_id: str) -> Any:
        with state().db.session() as s:
            return collection_out(get_or_404(s, Collection, collection_id, "collection", owned=False))
