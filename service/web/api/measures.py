"""``GET /v1/measures``: the measure catalogue (the same as ``evalserve measures --format json``)."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask_smorest import Blueprint

from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.web.problems import ApiProblem
from evaluation.measures.registry import default_registry
from evaluation.problems import MeasureError

blp = Blueprint("measures", __name__, url_prefix="/v1/measures", description="The measure catalogue")


class CatalogueSchema(ma.Schema):
    measures = ma.fields.List(ma.fields.Dict())


@blp.route("")
@blp.response(200, CatalogueSchema)
@blp.doc(security=[])  # public: no token needed
def catalogue() -> Any:
    """Every measure with its parameters, defaults, inputs, reference and whose numbers its defaults give."""
    return {"measures": default_registry().catalogue()}


class OneQuerySchema(ma.Schema):
    axioms = ma.fields.Boolean(load_default=False, metadata={
        "description": "add the constraint profile (spec 7.5) of the measure as named (parameters included;"
                       " a bare name: its parameter-free form); takes about a second"})


@blp.route("/<string:name>")
@blp.arguments(OneQuerySchema, location="query")
@blp.response(200, CatalogueSchema)
@blp.doc(security=[])  # public: no token needed
def one(query: dict[str, Any], name: str) -> Any:
    """One measure (by name, alias, trec_eval spelling -- a list such as ``ndcg_cut.10,20`` names its measure --
    or full name with parameters); a 404 says what is wrong (with the close names of a misspelt one), so clients
    check a request's measures here before they store anything (``evalserve-client submit``)."""
    registry = default_registry()
    measure = None
    try:
        definition = registry.definition(name)
    except MeasureError:
        try:  # trec_eval spellings (ndcg_cut_10) and full names (nDCG@10) name a measure too
            measure = registry.parse_all([name])[0]
        except MeasureError as exc:
            raise ApiProblem(404, ProblemCode.UNKNOWN_MEASURE, str(exc)) from None
        definition = measure.definition
    entries = [e for e in registry.catalogue() if e["name"] == definition.name]
    if query["axioms"]:
        from evaluation.axioms.profiles import constraint_profile

        profile = constraint_profile(measure if measure is not None else definition)
        entries[0]["axioms"] = {"measure": profile["measure"], **profile["constraints"]}
    return {"measures": entries}
