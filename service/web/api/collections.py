"""``/v1/collections``: test collections (judgments, intent weights, metadata); immutable once created."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask import Response
from flask.views import MethodView
from flask_smorest import Blueprint

from evalserve.service.inputs import stored as stored_inputs
from evalserve.service.inputs.uploads import create_collection
from evalserve.service.web.auth import current_token, require
from evalserve.service.web.context import session, state
from evalserve.service.web.idempotency import idempotent
from evalserve.service.web.problems import PROBLEM_JSON, ProblemSchema
from evalserve.service.web.schemas import (
    CollectionFilesSchema,
    CollectionFormSchema,
    CollectionSchema,
    TopicsSchema,
)
from evalserve.service.web.upload_limits import UPLOADS_BUSY, check_upload, in_flight
from evaluation.hierarchy.model import SIMS, TOPS, VARIANTS, WD_GAINS, WI_COUNTS, HierarchySettings
from evaluation.side_registry import SIDE_KINDS

blp = Blueprint("collections", __name__, url_prefix="/v1/collections", description="Test collections")


@blp.route("")
class Collections(MethodView):
    @require("read")
    @blp.response(200, CollectionSchema(many=True))
    @blp.paginate()
    def get(self, pagination_parameters: Any) -> Any:
        """List collections (every token can read every collection but others' hidden ones), newest first."""
        return stored_inputs.list_collections(session(), state(), current_token(), pagination_parameters)

    @require("submit")
    @in_flight
    @idempotent
    @blp.arguments(CollectionFormSchema, location="form")
    @blp.arguments(CollectionFilesSchema, location="files")
    @blp.response(201, CollectionSchema)
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="the judgments have errors (all of them listed), or a field is given twice")
    @blp.alt_response(429, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="over the rate limit or the storage quota (Retry-After); nothing is stored")
    @blp.alt_response(503, **UPLOADS_BUSY)
    def post(self, form: dict[str, Any], files: dict[str, Any]) -> Any:
        """Create a collection from a judgments file (multipart field ``qrels``), optional intent weights and the
        side inputs some measures need (item scores, hierarchies, ...: one field per kind)."""
        qrels = files["qrels"]
        weights = files.get("intent_weights")
        side = {kind: (f.filename or kind, f.read()) for kind in SIDE_KINDS if (f := files.get(kind)) is not None}
        qrels_file = (qrels.filename or "qrels", qrels.read())
        weights_file = (weights.filename or "intent-weights", weights.read()) if weights else None
        check_upload(stored=[qrels_file[1], *([weights_file[1]] if weights_file else []),
                             *(data for _, data in side.values())])
        row = create_collection(session(), state(), current_token().id, form, qrels_file, weights_file, side)
        return row, 201, {"Location": f"/v1/collections/{row.id}"}


@blp.route("/<string:collection_id>")
class OneCollection(MethodView):
    @require("read")
    @blp.response(200, CollectionSchema)
    def get(self, collection_id: str) -> Any:
        return stored_inputs.one_collection(session(), state(), current_token(), collection_id)


@blp.route("/<string:collection_id>/topics")
class CollectionTopics(MethodView):
    @require("read")
    @blp.response(200, TopicsSchema)
    @blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM_JSON, description="no such collection")
    def get(self, collection_id: str) -> Any:
        """The collection's topic descriptions (query, description, subtopics) where it has them."""
        return stored_inputs.collection_topics(session(), state(), current_token(), collection_id)


class HierarchyQuerySchema(ma.Schema):
    h = ma.fields.String(load_default=HierarchySettings.h, validate=ma.validate.OneOf([v for v in VARIANTS
                                                                                      if v != "given"]))
    delta = ma.fields.Float(load_default=HierarchySettings.delta, validate=ma.validate.Range(0.0, 1.0))
    top = ma.fields.String(load_default=HierarchySettings.top, validate=ma.validate.OneOf(TOPS))
    sim = ma.fields.String(load_default=HierarchySettings.sim, validate=ma.validate.OneOf(SIMS))
    wi = ma.fields.String(load_default=HierarchySettings.wi, validate=ma.validate.OneOf(WI_COUNTS))
    wd_gain = ma.fields.String(load_default=HierarchySettings.wd_gain, validate=ma.validate.OneOf(WD_GAINS))


@blp.route("/<string:collection_id>/hierarchies")
class CollectionHierarchies(MethodView):
    @require("read")
    @blp.arguments(HierarchyQuerySchema, location="query")
    @blp.response(200, description="the intent hierarchies of every topic as JSON (spec 4.1), reusable as a"
                  " collection's hierarchy file or with evalserve evaluate --hierarchy",
                  content_type="application/json")
    @blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM_JSON, description="no such collection")
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="the collection lacks the fingerprints, document texts or super-intents needed")
    def get(self, query: dict[str, Any], collection_id: str) -> Any:
        """Build the collection's intent hierarchies with these settings (as ``evalserve hierarchy build``) and
        return them for download."""
        text = stored_inputs.collection_hierarchies(session(), state(), current_token(), collection_id, query)
        return Response(text, mimetype="application/json")
