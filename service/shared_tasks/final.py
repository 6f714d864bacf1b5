"""A finalised task's frozen state: the guard every write on a task passes (409 ``task-final`` once the task is
final, for everyone, organisers and admins included), the content hash of a leaderboard and the ``final`` block
every leaderboard of a finalised task carries (``shared_tasks.finalise`` finalises). Flask-free."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from evalserve.service.core.errors import ServiceError
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.store.models import Collection, Task, TaskVersion, as_utc
from evaluation.measures.registry import default_registry
from evaluation.params import format_value

#: the keys of a leaderboard document its content hash covers: what it ranks and how, never when it was computed
#: (``generated_at``), how many are being evaluated (``pending``), the task's text or the ``final`` block itself
HASHED_KEYS = ("phase", "version", "selection", "measures", "primary", "order", "significance", "topics", "rows",
               "pairs")


def refuse_if_final(task: Task) -> None:
    """409 ``task-final`` when the task is finalised: its results are frozen for everyone."""
    if task.finalised_at is not None:
        raise ServiceError(409, ProblemCode.TASK_FINAL,
                           f"task {task.id} was finalised at {as_utc(task.finalised_at).isoformat()}: its results are"
                           " frozen, and no submission, selection, setting, phase, judgments, invitation,"
                           " registration or webhook change is accepted (by anyone)")


def content_hash(document: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON (sorted keys, no spaces, UTF-8) of the document's ``HASHED_KEYS`` and
    its task's id: the same for every read of the same results, whenever and wherever it is computed."""
    task = document.get("task")
    hashed = {"task": task.get("id") if isinstance(task, Mapping) else None,
              **{key: document.get(key) for key in HASHED_KEYS}}
    text = json.dumps(hashed, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def judgments_sha256(s: Session, task: Task, version: int) -> str | None:
    """The SHA-256 of the qrels file of the task's judgments ``version`` (the collection's stored file digest)."""
    row = s.get(TaskVersion, (task.id, version))
    collection = s.get(Collection, row.collection_id) if row is not None else None
    return collection.qrels_sha256 if collection is not None else None


def measure_definitions(measures: Sequence[str]) -> list[dict[str, Any]]:
    """What each official measure is, as the measure catalogue describes it, with the parameters it was computed
    with: enough to recompute the final leaderboard's numbers with another tool."""
    registry = default_registry()
    out = []
    for measure in registry.parse_all(list(measures)):
        d = measure.definition
        out.append({"measure": measure.label, "name": d.name, "family": d.family, "summary": d.summary,
                    "cutoff": measure.cutoff, "parameters": {k: format_value(v) for k, v in measure.values},
                    "formula": d.formula, "reference": d.reference})
    return out


def final_block(s: Session, task: Task, version: int, document: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``final`` block of a leaderboard document of the task (None while the task is not final): when the
    task was finalised, this board's content hash, the evalserve version that finalised it, the SHA-256 of the
    board's judgments and the measures' definitions."""
    record = task.final
    if task.finalised_at is None or record is None:
        return None
    return {"at": record["at"], "hash": content_hash(document), "evalserve": record["evalserve"],
            "judgments_sha256": judgments_sha256(s, task, version), "measures": record["measures"]}
