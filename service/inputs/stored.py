"""A caller's stored collections and runs as the ``/v1/collections`` and ``/v1/runs`` routes read them: a page,
one of them, and a collection's intent hierarchies built on request (creating them: ``inputs.uploads``).
Flask-free: the caller's token is passed in, refusals are :class:`~core.errors.ServiceError`, and each function
takes the request's database session and returns rows, which the response schemas serialise."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from evalserve.service.access.owners import readable_collections, visible, visible_row
from evalserve.service.core.errors import ServiceError
from evalserve.service.core.paging import page_of
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.core.state import ServiceState
from evalserve.service.inputs.collection_files import collection_files
from evalserve.service.store.models import Collection, RunRecord, Token
from evaluation.hierarchy.jsonio import to_json
from evaluation.hierarchy.model import HierarchySettings
from evaluation.hierarchy.prepare import HierarchySource
from evaluation.intent_ranking import intent_slots
from evaluation.pipeline import load_inputs
from evaluation.problems import EvaluationError, InputError


def list_collections(s: Session, st: ServiceState, token: Token, pagination: Any) -> list[Collection]:
    """A page of the collections the caller may read (every one but others' hidden ones), newest first."""
    rows = page_of(s, readable_collections(select(Collection), token), Collection.created_at.desc(), pagination)
    return rows


def one_collection(s: Session, st: ServiceState, token: Token, collection_id: str) -> Collection:
    """A collection the caller may read, or a 404."""
    return visible_row(s, Collection, collection_id, "collection", token, owned=False)


def collection_hierarchies(s: Session, st: ServiceState, token: Token, collection_id: str,
                           settings: dict[str, Any]) -> str:
    """The intent hierarchies of every topic of a collection the caller may read, built with ``settings`` (as
    ``evalserve hierarchy build``), as JSON; a 422 when the collection lacks what they are built from."""
    collection = visible_row(s, Collection, collection_id, "collection", token, owned=False)
    files = collection_files(s, st.blobs, collection, st.settings.decode_limits)
    try:
        inputs = load_inputs(files.qrels, [], qrels_format=files.qrels_format,
                             intent_weights=files.intent_weights, side=files.side)
        source = HierarchySource(inputs.qrels, intent_slots(inputs.qrels, 1, inputs.intent_weights),
                                 inputs.side, {})
        built = source.hierarchies(HierarchySettings(**settings).normalised())
    except (EvaluationError, InputError) as exc:
        raise ServiceError(422, ProblemCode.MISSING_INPUTS, str(exc)) from None
    return to_json(built) + "\n"


def list_runs(s: Session, st: ServiceState, token: Token, pagination: Any) -> list[RunRecord]:
    """A page of the caller's runs (an admin's: every run), newest first."""
    rows = page_of(s, visible(select(RunRecord), RunRecord, token), RunRecord.created_at.desc(), pagination)
    return rows


def one_run(s: Session, st: ServiceState, token: Token, run_id: str) -> RunRecord:
    """The caller's run, or a 404."""
    return visible_row(s, RunRecord, run_id, "run", token)


def collection_topics(s: Session, st: ServiceState, token: Token, collection_id: str) -> dict[str, Any]:
    """The topic descriptions of a collection the caller may read (catalogue collections have them)."""
    return {"topics": one_collection(s, st, token, collection_id).topics or {}}


def published_sets(s: Session, st: ServiceState) -> list[dict[str, Any]]:
    """The catalogue's sets, each with the collection it was loaded as on this server (None: not loaded)."""
    from evalserve.service.inputs.catalogue.published import PUBLISHED

    loaded = dict(s.execute(select(Collection.catalogue_key, Collection.id)
                            .where(Collection.catalogue_key.is_not(None))).all())
    return [{"key": p.key, "name": p.name, "description": p.description, "citation": p.citation,
             "grade_scale": p.grade_scale, "collection": loaded.get(p.key)} for p in PUBLISHED.values()]


def import_published(s: Session, st: ServiceState, token: Token, keys: list[str]) -> dict[str, Any]:
    """Load published judgment sets from the server's catalogue directory (admins only: the route requires it)."""
    from evalserve.service.inputs.catalogue.loader import load_published

    root = st.settings.catalogue_dir
    if root is None or not root.is_dir():
        raise ServiceError(422, ProblemCode.CATALOGUE_UNAVAILABLE, "this server has no catalogue directory"
                           " (EVALSERVE_CATALOGUE_DIR); an operator can run 'evalserve collections import --from"
                           " DIR' instead")
    return {"loaded": load_published(s, st, token.id, root, keys)}
