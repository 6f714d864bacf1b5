"""Leaderboards (with their significance tests) and organisers' meta-evaluations computed once and served as
stored (table ``stored_results``): a worker computes a task's leaderboards when their inputs change (a submission
evaluated: the job-finished listener; a setting, a phase or a selection changed: ``evalserve.refresh_task``
published by the API after its commit), and a reader gets the stored bytes. Each stored result has a key (what it
is: kind, task, phase, version, selection or options) and the fingerprint of the inputs it was computed from (what
the served document shows: the task's settings, the phase's window, every submission shown with its stored result),
so a token holder's read tells whether it is current (and computes it if not). An anonymous reader never computes
(a board of fewer than two rows aside: nothing to test): it gets the stored result by its key, or ``None`` (the
API's 202) when there is none yet; the resamples anonymous readers cause are those of one computation per change
of the inputs."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from celery import Celery
from sqlalchemy import case, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from evalserve.service.broker.messages import REFRESH_TASK_TASK, publish
from evalserve.service.shared_tasks.leaderboard import (
    SELECTIONS,
    Candidate,
    candidates,
    disqualification,
    judgments_version,
    pending_count,
    phase_named,
    ranked_board,
    shown,
)
from evalserve.service.shared_tasks.phases import task_phases
from evalserve.service.store.blobs import BlobStore
from evalserve.service.store.db import Database, savepoint, take_write_lock
from evalserve.service.store.models import (
    Job,
    JobState,
    Phase,
    StoredResult,
    Submission,
    SubmissionEvaluation,
    Task,
    as_utc,
    utcnow,
)
from evalserve.service.store.unit_of_work import after_commit
from evaluation.csvcells import safe_cell
from evaluation.leaderboard import to_csv, to_latex

log = logging.getLogger(__name__)

LEADERBOARD = "leaderboard"
META = "meta"
#: the inputs of a stored result whose inputs changed, until a worker stores the new one
STALE = "stale"
#: the stored JSON text's last line but one; the live count of submissions being evaluated replaces the 0
_PENDING = '"pending": 0'


def _digest(*parts: Any) -> str:
    text = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def leaderboard_key(task_id: str, phase: Phase | None, version: int, selection: str) -> str:
    """The stored leaderboard's key: which board it is."""
    return _digest(LEADERBOARD, task_id, None if phase is None else phase.id, version, selection)


def meta_key(task_id: str, phase: Phase | None, version: int, options: Mapping[str, Any]) -> str:
    """The stored meta-evaluation's key: which phase, version and options."""
    return _digest(META, task_id, None if phase is None else phase.id, version, dict(options))


def inputs_of(task: Task, phase: Phase | None, version: int, picked: Sequence[Candidate]) -> str:
    """The fingerprint of everything a stored result shows or was computed from: the task's settings, the phase's
    window and every submission shown (its team, run, description, flags, stored result and disqualification)."""
    final = () if task.finalised_at is None else (as_utc(task.finalised_at),)  # a board of a final task says so
    return _digest(
        *final, task.name, task.description, list(task.measures), task.primary_measure, task.sort_order,
        task.significance, version,
        None if phase is None else (phase.name, as_utc(phase.opens_at), as_utc(phase.closes_at)),
        [(c.submission.id, c.submission.baseline, c.submission.selected, c.submission.description,
          as_utc(c.submission.submitted_at), c.participant.id, c.participant.team, c.run.name, c.job.id,
          c.job.result_sha256, disqualification(c)) for c in picked])


def _store(s: Session, blobs: BlobStore, key: str, kind: str, task_id: str, inputs: str, payload: bytes,
           at: datetime) -> StoredResult:
    """Insert or replace the stored result ``key`` (two workers storing it at once store the same bytes)."""
    sha = blobs.put(s, payload)
    row = s.get(StoredResult, key)
    if row is None:
        try:
            with savepoint(s):
                row = StoredResult(key=key, kind=kind, task_id=task_id, inputs=inputs, blob_sha256=sha, computed_at=at)
                s.add(row)
            return row
        except IntegrityError:  # stored meanwhile by another worker
            row = s.get(StoredResult, key)
            assert row is not None
    row.inputs, row.blob_sha256, row.computed_at = inputs, sha, at
    s.flush()
    return row


def _finalised_meanwhile(s: Session, task_id: str, read: datetime | None) -> bool:
    """Was the task finalised since it was read (``read``: its ``finalised_at`` then)? Asked of the database under
    the task's lock (its row ``FOR UPDATE`` on PostgreSQL, the write lock on SQLite), which finalising holds too,
    so the answer holds until the caller commits."""
    take_write_lock(s)
    finalised = s.execute(select(Task.finalised_at).where(Task.id == task_id).with_for_update()).scalar()
    return finalised is not None and read is None


def compute_leaderboard(s: Session, blobs: BlobStore, task: Task, phase: Phase | None, version: int,
                        selection: str, cands: list[Candidate], at: datetime) -> bytes:
    """The leaderboard ranked now (the significance tests run here), as the stored payload: the JSON text the API
    serves (its ``pending`` 0), the CSV and the LaTeX table; a final board's CSV has the columns ``final_at`` and
    ``final_hash`` (the same on every line) and its LaTeX table a note saying it is final."""
    board = ranked_board(s, blobs, task, phase, version, selection, cands, at)
    document = {**board.document, "pending": 0}
    text = json.dumps(document, indent=2) + "\n"
    assert text.endswith(f"  {_PENDING}\n}}\n")
    final = document.get("final")
    constant = None if final is None else {"final_at": final["at"], "final_hash": final["hash"]}
    note = None if final is None else (f"Final results (finalised {final['at']}; evalserve {final['evalserve']};"
                                       f" content hash {final['hash']})")
    reasons = {row["key"]: (row["disqualified"] or {}).get("reason") or "disqualified"
               for row in document["rows"] if row.get("disqualified")}
    payload = {"json": text, "csv": with_disqualified_column(to_csv(board.ranked, constant=constant), reasons),
               "latex": to_latex(board.ranked, caption=f"{task.name}: leaderboard", note=note)}
    return json.dumps(payload).encode()


def with_disqualified_column(text: str, reasons: Mapping[str, str]) -> str:
    """The engine's CSV with a last column ``disqualified``: the public reason of a disqualified row (its
    ``rank`` is empty: unranked), empty for the others."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for i, line in enumerate(csv.reader(io.StringIO(text))):
        writer.writerow([*line, "disqualified" if i == 0 else safe_cell(reasons.get(line[1], ""))])
    return out.getvalue()


def refresh_board(s: Session, blobs: BlobStore, task: Task, phase: Phase | None, version: int, selection: str,
                  cands: list[Candidate] | None = None) -> StoredResult:
    """The stored leaderboard, computed and stored first unless the stored one is of the current inputs."""
    cands = (candidates(s, task, phase, version) if phase is not None else []) if cands is None else cands
    key = leaderboard_key(task.id, phase, version, selection)
    inputs = inputs_of(task, phase, version, shown(cands, selection))
    row = s.get(StoredResult, key)
    if row is not None and (row.inputs == inputs or _frozen(task, row)):
        return row
    at, read = utcnow(), task.finalised_at
    payload = compute_leaderboard(s, blobs, task, phase, version, selection, cands, at)
    if _finalised_meanwhile(s, task.id, read):  # a worker that read the task before the freeze: its board is not
        log.info("task %s was finalised while a leaderboard was computed: not stored", task.id)  # the final one
        return row or StoredResult(key=key, kind=LEADERBOARD, task_id=task.id, inputs=STALE,
                                   blob_sha256=blobs.put(s, payload), computed_at=at)
    return _store(s, blobs, key, LEADERBOARD, task.id, inputs, payload, at)


def _frozen(task: Task, row: StoredResult) -> bool:
    """A board stored (current) after its task was finalised is never computed again: the final results stay
    byte for byte what they were, whatever happens to their inputs (writes are refused anyway)."""
    return (task.finalised_at is not None and row.inputs != STALE
            and as_utc(row.computed_at) >= as_utc(task.finalised_at))


def refresh_task(db: Database, blobs: BlobStore, task_id: str, version: int | None = None,
                 phase_id: str | None = None) -> int:
    """Bring a task's stored leaderboards up to date (worker side): every phase (or ``phase_id``) and selection at
    the current judgments version (or ``version``); idempotent: a board of unchanged inputs is not computed
    again. Returns how many were computed."""
    computed = 0
    with db.session() as s:
        task = s.get(Task, task_id)
        if task is None:
            return 0
        version = task.version if version is None else version
        for phase in task_phases(s, task_id):
            if phase_id is not None and phase.id != phase_id:
                continue
            cands = candidates(s, task, phase, version)
            for selection in SELECTIONS:
                before = s.get(StoredResult, leaderboard_key(task.id, phase, version, selection))
                seen = None if before is None else (before.inputs, before.blob_sha256)
                row = refresh_board(s, blobs, task, phase, version, selection, cands)
                computed += seen != (row.inputs, row.blob_sha256)
                s.commit()  # each board as soon as it is stored: no write lock held while the next is computed
    if computed:
        log.info("task %s: %d leaderboard(s) computed and stored", task_id, computed)
    return computed


def request_refresh(s: Session, celery: Celery, queue: str, task_id: str) -> None:
    """A setting, a phase or a selection changed: the task's stored leaderboards of the current version are marked
    stale (in the same transaction; anonymous readers are told, ``STALE``) and, after the unit of work of ``s``
    commits, a worker is asked to recompute them; a broker that refuses is logged (a token holder's read then
    computes the board)."""
    task = s.get(Task, task_id)
    if task is not None:
        keys = [leaderboard_key(task_id, phase, task.version, selection)
                for phase in task_phases(s, task_id) for selection in SELECTIONS]
        s.execute(update(StoredResult).where(StoredResult.key.in_(keys)).values(inputs=STALE))

    def send() -> None:
        try:
            publish(celery, REFRESH_TASK_TASK, [task_id], queue=queue)
        except Exception as exc:
            log.warning("could not ask a worker to refresh the leaderboards of task %s (%s)", task_id, exc)

    after_commit(s, send)


@dataclass(frozen=True)
class StoredBoard:
    """A stored leaderboard as served: its payload blob, when it was computed, and the live count of submissions
    not on it yet (being evaluated; for an anonymous reader also those evaluated since it was stored)."""

    sha256: str
    pending: int
    computed_at: datetime
    stale: bool = False  # its inputs changed (a submission evaluated, a setting): a worker is storing the new one

    def tag_parts(self) -> tuple[Any, ...]:
        return LEADERBOARD, self.sha256, self.pending

    def payload(self, s: Session, blobs: BlobStore) -> dict[str, str]:
        data: dict[str, str] = json.loads(blobs.get(s, self.sha256))
        return data

    def json_text(self, payload: Mapping[str, str]) -> str:
        """The JSON document with the live ``pending`` count (byte for byte what ``json.dumps(indent=2)`` gives)."""
        head, _, tail = payload["json"].rpartition(_PENDING)
        return f'{head}"pending": {self.pending}{tail}'

    def document(self, payload: Mapping[str, str]) -> dict[str, Any]:
        document: dict[str, Any] = json.loads(payload["json"])
        document["pending"] = self.pending
        return document


def _pending(s: Session, task: Task, phase: Phase, version: int, computed_at: datetime) -> tuple[int, bool]:
    """How many of the phase's submissions at ``version`` are not on a board stored at ``computed_at``: being
    evaluated, or evaluated since (its worker is storing the new board); and whether any is the latter. One
    query, no rows loaded."""
    running = Job.state.in_([JobState.QUEUED, JobState.RUNNING])
    since = (Job.state == JobState.SUCCEEDED) & (Job.finished_at > computed_at)
    query = (select(func.count(case((running, 1))), func.count(case((since, 1)))).select_from(SubmissionEvaluation)
             .join(Submission, Submission.id == SubmissionEvaluation.submission_id)
             .join(Job, Job.id == SubmissionEvaluation.job_id)
             .where(Submission.task_id == task.id, Submission.phase_id == phase.id,
                    SubmissionEvaluation.version == version, Submission.withdrawn_at.is_(None)))
    counts = s.execute(query).one()
    return int(counts[0] or 0) + int(counts[1] or 0), bool(counts[1])


def served_board(s: Session, blobs: BlobStore, task: Task, *, phase_name: str | None, version: int | None,
                 selection: str, may_compute: bool, at: datetime | None = None) -> StoredBoard | None:
    """The leaderboard a reader gets. An anonymous reader gets the board as a worker last stored it (looked up
    by its key: no submission is read), or None when none is stored yet -- except a board of fewer than two rows
    (no pair to test), which is computed and stored at once. A caller who ``may_compute`` (a token holder) gets
    it current: the stored one if it is of the current inputs, else computed and stored now."""
    at = at or utcnow()
    version = judgments_version(task, version)
    phase = phase_named(s, task, phase_name, at)
    if not may_compute and phase is not None:
        row = s.get(StoredResult, leaderboard_key(task.id, phase, version, selection))
        if row is not None:
            pending, behind = _pending(s, task, phase, version, row.computed_at)
            return StoredBoard(row.blob_sha256, pending, as_utc(row.computed_at), behind or row.inputs == STALE)
    cands = candidates(s, task, phase, version) if phase is not None else []
    if not may_compute and len(shown(cands, selection)) >= 2:
        return None
    row = refresh_board(s, blobs, task, phase, version, selection, cands)
    return StoredBoard(row.blob_sha256, pending_count(cands), as_utc(row.computed_at))


def stored_meta(s: Session, blobs: BlobStore, key: str, inputs: str) -> dict[str, Any] | None:
    """The stored meta-evaluation ``key`` if it is of the current ``inputs``."""
    row = s.get(StoredResult, key)
    if row is None or row.inputs != inputs:
        return None
    document: dict[str, Any] = json.loads(blobs.get(s, row.blob_sha256))
    return document


def store_meta(s: Session, blobs: BlobStore, task_id: str, key: str, inputs: str, document: dict[str, Any]) -> None:
    """Keep a meta-evaluation computed for an organiser under its key (the same options and inputs are served
    from here)."""
    _store(s, blobs, key, META, task_id, inputs, json.dumps(document).encode(), utcnow())


def stored_keys(s: Session, task_id: str) -> list[str]:
    """The keys of a task's stored results (tests, diagnostics)."""
    return list(s.execute(select(StoredResult.key).where(StoredResult.task_id == task_id)).scalars())
