"""A caller's stored collections and runs as the ``/v1/collections`` and ``/v1/runs`` routes read them: a page,
one of them, and a collection's intent hierarchies built on request (creating them: ``service.uploads``).
Flask-free: the caller's token is passed in, refusals are :class:`~service.errors.ServiceError`, and each function
is one request in one database session."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from evaluation.hierarchy.jsonio import to_json
from evaluation.hierarchy.model import HierarchySettings
from evaluation.hierarchy.prepare import HierarchySource
from evaluation.intent_ranking import intent_slots
from evaluation.pipeline import load_inputs
from evaluation.problems import EvaluationError, InputError
from service.collection_files import collection_files
from service.errors import ServiceError
from service.models import Collection, RunRecord, Token, as_utc
from service.owners import readable_collections, visible, visible_row
from service.paging import page_of
from service.state import ServiceState


def collection_out(c: Collection) -> dict[str, Any]:
    return {
        "id": c.id, "name": c.name, "description": c.description, "grade_scale": c.grade_scale,
        "qrels_format": c.qrels_format, "qrels": {"filename": c.qrels_filename, "sha256": c.qrels_sha256},
        "intent_weights": ({"filename": c.intent_weights_filename, "sha256": c.intent_weights_sha256}
                           if c.intent_weights_sha256 else None),
        "side_inputs": c.side_inputs or {}, "hidden": c.hidden,
        "n_topics": c.n_topics, "n_judgments": c.n_judgments, "n_intents": c.n_intents, "warnings": c.warnings,
        "created_at": as_utc(c.created_at),
    }


def run_out(r: RunRecord) -> dict[str, Any]:
    return {"id": r.id, "collection": r.collection_id, "name": r.name, "filename": r.filename, "sha256": r.sha256,
            "n_topics": r.n_topics, "n_rows": r.n_rows, "warnings": r.warnings, "created_at": as_utc(r.created_at)}


def list_collections(st: ServiceState, token: Token, pagination: Any) -> list[dict[str, Any]]:
    """A page of the collections the caller may read (every one but others' hidden ones), newest first."""
    with st.db.session() as s:
        rows = page_of(s, readable_collections(select(Collection), token), Collection.created_at.desc(), pagination)
        return [collection_out(c) for c in rows]


def one_collection(st: ServiceState, token: Token, collection_id: str) -> dict[str, Any]:
    """A collection the caller may read, or a 404."""
    with st.db.session() as s:
        return collection_out(visible_row(s, Collection, collection_id, "collection", token, owned=False))


def collection_hierarchies(st: ServiceState, token: Token, collection_id: str, settings: dict[str, Any]) -> str:
    """The intent hierarchies of every topic of a collection the caller may read, built with ``settings`` (as
    ``evalserve hierarchy build``), as JSON; a 422 when the collection lacks what they are built from."""
    with st.db.session() as s:
        collection = visible_row(s, Collection, collection_id, "collection", token, owned=False)
        files = collection_files(s, st.blobs, collection, st.settings.decode_limits)
    try:
        inputs = load_inputs(files.qrels, [], qrels_format=files.qrels_format,
                             intent_weights=files.intent_weights, side=files.side)
        source = HierarchySource(inputs.qrels, intent_slots(inputs.qrels, 1, inputs.intent_weights),
                                 inputs.side, {})
        built = source.hierarchies(HierarchySettings(**settings).normalised())
    except (EvaluationError, InputError) as exc:
        raise ServiceError(422, "missing-inputs", str(exc)) from None
    return to_json(built) + "\n"


def list_runs(st: ServiceState, token: Token, pagination: Any) -> list[dict[str, Any]]:
    """A page of the caller's runs (an admin's: every run), newest first."""
    with st.db.session() as s:
        rows = page_of(s, visible(select(RunRecord), RunRecord, token), RunRecord.created_at.desc(), pagination)
        return [run_out(r) for r in rows]


def one_run(st: ServiceState, token: Token, run_id: str) -> dict[str, Any]:
    """The caller's run, or a 404."""
    with st.db.session() as s:
        return run_out(visible_row(s, RunRecord, run_id, "run", token))
