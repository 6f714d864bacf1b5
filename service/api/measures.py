"""``GET /v1/measures``: the measure catalogue (the same as ``evalserve measures --format json``)."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask_smorest import Blueprint

from evaluation.measures.base import MeasureError
from evaluation.measures.registry import default_registry
from service.problems import ApiProblem

blp = Blueprint("measures", __name__, url_prefix="/v1/measures", description="The measure catalogue")


class CatalogueSchema(ma.Schema):
    measures = ma.fields.List(ma.fields.Dict())


@blp.route("")
@blp.response(200, CatalogueSchema)
@blp.doc(security=[])  # public: no token needed
def catalogue() -> Any:
    """Every measure with its parameters, defaults, inputs, reference and whose numbers its defaults give."""
    return {"measures": default_registry().catalogue()}


@blp.route("/<string:name>")
@blp.response(200, CatalogueSchema)
@blp.doc(security=[])  # public: no token needed
def one(name: str) -> Any:
    """One measure (by name or alias)."""
    registry = default_registry()
    try:
        wanted = registry.definition(name).name
    except MeasureError as exc:
        try:  # trec_eval spellings (ndcg_cut_10) and full names (nDCG@10) name a measure too
            wanted = registry.parse(name).definition.name
        except MeasureError:
            raise ApiProblem(404, "unknown-measure", str(exc)) from None
    return {"measures": [e for e in registry.catalogue() if e["name"] == wanted]}
