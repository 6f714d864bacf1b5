"""Helpers shared by the resource modules: serialising rows, owner filtering, finding rows or 404."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy import Select, or_
from sqlalchemy.orm import Session

from service.auth import current_token, sees_everything
from service.job_document import job_document
from service.models import Base, Collection, RunRecord, as_utc
from service.problems import ApiProblem

M = TypeVar("M", bound=Base)
#: the job as the API shows it (built without Flask: a job's callback POSTs it too)
job_out = job_document


def get_or_404(session: Session, model: type[M], ident: str, what: str, *, owned: bool = True) -> M:
    """The row, if it exists and the caller may see it (others' private rows are reported as missing)."""
    row = session.get(model, ident)
    private = owned or getattr(row, "hidden", False)  # a hidden collection is private to its owner
    if row is None or (private and not sees_everything() and getattr(row, "owner_id", None) != current_token().id):
        raise ApiProblem(404, "not-found", f"no {what} {ident}")
    return row


def readable_collections(query: Select[Any]) -> Select[Any]:
    """Restrict a collection query to those the caller may read: every collection but others' hidden ones."""
    if sees_everything():
        return query
    return query.where(or_(Collection.hidden.is_(False), Collection.owner_id == current_token().id))


def visible(query: Select[Any], model: Any) -> Select[Any]:
    """Restrict a query to the caller's rows unless the caller is an admin."""
    return query if sees_everything() else query.where(model.owner_id == current_token().id)


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
