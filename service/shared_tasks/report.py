"""The end-of-task report of a task's phase (issue 30): its description and settings, the leaderboard with
significance on every official measure, the significance matrices, per-topic distributions and ASL curves, the
meta-evaluation (with measure advice when it carries some) and provenance; as HTML, LaTeX and a zip of both with
the CSVs and plots (``report_render``).

Computed once, like stored leaderboards (``shared_tasks.stored``): an organiser's first request records that it
is asked for and publishes ``evalserve.build_report``; a worker gathers the content, draws the plots (matplotlib:
workers only), zips everything and stores the zip as a stored result under the report's key (task, phase,
judgments version) with the fingerprint of its inputs (every evaluated submission of the phase, the task's
settings, whether it is final). A read whose inputs match gets the stored zip; one whose inputs changed gets the
stored one marked stale while a worker builds the new one; none stored: 202. Only organisers read reports (the
zip holds every submission's per-topic scores, which participants of a task without per-topic feedback must not
see): anonymous callers never start a build."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from celery import Celery
from sqlalchemy.orm import Session

from evalserve.service.broker.messages import BUILD_REPORT_TASK, publish
from evalserve.service.core.errors import ServiceError
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.shared_tasks.final import content_hash, measure_definitions
from evalserve.service.shared_tasks.leaderboard import (
    Candidate,
    candidates,
    judgments_version,
    phase_named,
    ranked_board,
    shown,
    unranked_reason,
)
from evalserve.service.shared_tasks.meta import served_meta
from evalserve.service.shared_tasks.stored import _digest, _store, inputs_of
from evalserve.service.store.blobs import BlobStore
from evalserve.service.store.db import Database
from evalserve.service.store.models import (
    Collection,
    JobState,
    Phase,
    StoredResult,
    Task,
    TaskVersion,
    as_utc,
    utcnow,
)
from evalserve.service.store.unit_of_work import after_commit
from evaluation.problems import EvaluationError
from evaluation.version import engine_version

log = logging.getLogger(__name__)

REPORT = "report"
REPORT_REQUESTED = "report.requested"
#: bump when the report's content or typesetting changes: stored reports of an older layout are built again
LAYOUT = 1
#: a build asked for this long ago and not stored (its message lost, its worker gone) is asked for again
REBUILD_SECONDS = 120


def report_status(task: Task) -> tuple[str, datetime | None]:
    """Whether the report's results are "final" (the task is finalised: ``finalised_at``) or "provisional", and
    when it was finalised. The one place the report reads finalisation."""
    finalised = task.finalised_at
    return ("final", as_utc(finalised)) if finalised is not None else ("provisional", None)


def report_key(task_id: str, phase: Phase, version: int) -> str:
    """The stored report's key: which task, phase and judgments version."""
    return _digest(REPORT, task_id, phase.id, version)


def _requested_key(key: str) -> str:
    return _digest(REPORT_REQUESTED, key)


def _evaluated(cands: list[Candidate]) -> list[Candidate]:
    return [c for c in cands if c.job.state == JobState.SUCCEEDED and c.job.result_sha256]


def report_inputs(task: Task, phase: Phase, version: int, cands: list[Candidate]) -> str:
    """The fingerprint of everything the report shows: every evaluated submission of the phase (the per-topic
    CSV has them all), the leaderboard's settings, whether it is final, the layout and the evalserve version."""
    status, finalised = report_status(task)
    return _digest(inputs_of(task, phase, version, _evaluated(cands)), task.ties, task.topics, status, finalised,
                   LAYOUT, engine_version())


@dataclass(frozen=True)
class StoredReport:
    """A stored report zip as served: its blob, when it was built, and whether its inputs changed since."""

    sha256: str
    built_at: datetime
    stale: bool


@dataclass(frozen=True)
class ReportRequest:
    """What an organiser's read of a report found: the stored one (or None: not built yet) and its key and
    current inputs (what a parked request watches)."""

    stored: StoredReport | None
    key: str
    inputs: str


def served_report(s: Session, blobs: BlobStore, celery: Celery, queue: str, task: Task, *,
                  phase_name: str | None, version: int | None) -> ReportRequest:
    """The report of a task's phase (default: the open or last one) at a judgments version (default: the current
    one) as stored; when none is stored of the current inputs, a worker is asked to build it (once)."""
    at = utcnow()
    version = judgments_version(task, version)
    phase = phase_named(s, task, phase_name, at)
    cands = candidates(s, task, phase, version) if phase is not None else []
    if phase is None or not _evaluated(cands):
        raise ServiceError(409, ProblemCode.TOO_FEW_SUBMISSIONS, f"task {task.id} has no evaluated submission to"
                           f" report on at judgments version {version}")
    key, inputs = report_key(task.id, phase, version), report_inputs(task, phase, version, cands)
    row = s.get(StoredResult, key)
    stored = None if row is None else StoredReport(row.blob_sha256, as_utc(row.computed_at), row.inputs != inputs)
    if stored is None or stored.stale:
        request_build(s, blobs, celery, queue, task.id, phase.id, version, key, inputs)
    return ReportRequest(stored, key, inputs)


def request_build(s: Session, blobs: BlobStore, celery: Celery, queue: str, task_id: str, phase_id: str,
                  version: int, key: str, inputs: str) -> None:
    """Ask a worker to build the report (``evalserve.build_report``, published after the commit), once per
    inputs: the request is recorded as the stored result ``REPORT_REQUESTED`` (its inputs and time) and asked
    again only for new inputs, or when older than ``REBUILD_SECONDS`` with nothing stored."""
    now = utcnow()
    marker = s.get(StoredResult, _requested_key(key))
    if (marker is not None and marker.inputs == inputs
            and now - as_utc(marker.computed_at) < timedelta(seconds=REBUILD_SECONDS)):
        return
    _store(s, blobs, _requested_key(key), REPORT_REQUESTED, task_id, inputs,
           json.dumps({"requested_at": now.isoformat()}).encode(), now)

    def send() -> None:
        try:
            publish(celery, BUILD_REPORT_TASK, [task_id, phase_id, version], queue=queue)
        except Exception as exc:  # asked again by a read after REBUILD_SECONDS
            log.warning("could not ask a worker to build the report of task %s (%s)", task_id, exc)

    after_commit(s, send)


def report_now(db: Database, key: str, inputs: str) -> tuple[str, str | None]:
    """A parked report request's next look (its own session): the stored report's blob once one of ``inputs``
    is stored, else None; the tag is what is stored now."""
    with db.session() as s:
        row = s.get(StoredResult, key)
        if row is None:
            return "", None
        return f"{row.blob_sha256}:{row.inputs}", row.blob_sha256 if row.inputs == inputs else None


def build_report(db: Database, blobs: BlobStore, task_id: str, phase_id: str, version: int) -> str:
    """Build and store the report (worker side) unless one of the current inputs is stored; what happened."""
    from evalserve.service.shared_tasks import report_render  # matplotlib on use, in workers only

    with db.session() as s:
        task, phase = s.get(Task, task_id), s.get(Phase, phase_id)
        if task is None or phase is None or phase.task_id != task_id:
            return "skipped"
        cands = candidates(s, task, phase, version)
        if not _evaluated(cands):
            return "skipped"
        key, inputs = report_key(task_id, phase, version), report_inputs(task, phase, version, cands)
        row = s.get(StoredResult, key)
        if row is not None and row.inputs == inputs:
            return "built before"
        content = report_content(s, blobs, task, phase, version, cands, utcnow())
        s.commit()  # the meta-evaluation, stored for the organisers' next read
    try:
        plots = report_render.draw_plots(content)
    except Exception:  # a drawing bug must not keep the report from its readers: it is built without plots
        log.exception("task %s: the report's plots could not be drawn", task_id)
        plots = {}
    archive = report_render.build_zip(content, plots)
    with db.session() as s:
        _store(s, blobs, key, REPORT, task_id, inputs, archive, utcnow())
        s.commit()
    log.info("task %s: report of phase %s at version %d built (%d bytes)", task_id, phase_id, version, len(archive))
    return "built"


def report_content(s: Session, blobs: BlobStore, task: Task, phase: Phase, version: int,
                   cands: list[Candidate], at: datetime) -> dict[str, Any]:
    """Everything the report shows, as JSON-ready values (``report_render`` typesets it): the leaderboard as the
    leaderboard route computes it (its ranked and unranked rows, its ``final`` block), every pair of ranked
    submissions tested on every official measure (the engine's ``rank_entries``, each measure as the primary),
    every evaluated submission's stored per-topic scores, the meta-evaluation and the provenance."""
    from evaluation.leaderboard import Entry, SignificanceSettings, rank_entries

    measures = list(task.measures)
    evaluated = _evaluated(cands)
    picked = shown(cands, "latest")
    on_board = {c.submission.id for c in picked}
    documents = {}
    for c in evaluated:
        assert c.job.result_sha256 is not None
        documents[c.submission.id] = json.loads(blobs.get(s, c.job.result_sha256))
    board = ranked_board(s, blobs, task, phase, version, "latest", cands, at)
    leaderboard = {k: v for k, v in board.document.items() if k != "pending"}
    entries = [Entry(key=c.submission.id, label=c.participant.team, document=documents[c.submission.id],
                     baseline=c.submission.baseline, ranked=unranked_reason(c) is None) for c in picked]
    settings = SignificanceSettings(**dict(task.significance))
    significance = {}
    for m in measures:
        pairs = board.ranked.pairs if m == task.primary_measure else rank_entries(
            entries, measures, m, order=task.sort_order, significance=settings).pairs
        significance[m] = {"better_than": {r.key: list(r.better_than_by_measure.get(m, ())) for r in board.ranked.rows},
                           "pairs": [p.as_dict() for p in pairs]}
    try:
        meta: dict[str, Any] | None = served_meta(s, blobs, task, phase_name=phase.name, version=version)
        meta_note = ""
    except ServiceError as exc:
        meta, meta_note = None, f"No meta-evaluation: {exc.detail}"
    status, finalised = report_status(task)
    task_version = s.get(TaskVersion, (task.id, version))
    collection = s.get(Collection, task_version.collection_id if task_version else task.collection_id)
    return {
        "status": status,
        "task": {"id": task.id, "name": task.name, "description": task.description, "measures": measures,
                 "primary_measure": task.primary_measure, "sort_order": task.sort_order, "ties": task.ties,
                 "topics": task.topics, "visibility": task.visibility},
        "phase": {"name": phase.name, "opens_at": as_utc(phase.opens_at).isoformat(),
                  "closes_at": as_utc(phase.closes_at).isoformat()},
        "version": version,
        "measures": measures,
        "leaderboard": leaderboard,
        "significance": significance,
        "per_topic": [_per_topic(c, documents[c.submission.id], measures, c.submission.id in on_board)
                      for c in evaluated],
        "meta": meta,
        "meta_note": meta_note,
        "definitions": _definitions(measures),
        "provenance": {
            "evalserve_version": engine_version(), "generated_at": at.isoformat(),
            "task_created_at": as_utc(task.created_at).isoformat(),
            "finalised_at": None if finalised is None else finalised.isoformat(),
            "final_hash": (task.final or {}).get("hash") if finalised is not None else None,
            "leaderboard_hash": content_hash(leaderboard),
            "collection": None if collection is None else collection.id,
            "judgments_sha256": None if collection is None else collection.qrels_sha256,
            "runs": [{"submission": c.submission.id, "team": c.participant.team, "run": c.run.name,
                      "sha256": c.run.sha256, "submitted_at": as_utc(c.submission.submitted_at).isoformat(),
                      "job": c.job.id, "result_sha256": c.job.result_sha256} for c in evaluated],
        },
    }


def _per_topic(c: Candidate, document: dict[str, Any], measures: list[str], on_board: bool) -> dict[str, Any]:
    """A submission's stored per-topic scores, read as ``GET .../submissions/{id}/per-topic`` reads them."""
    by_measure = next(iter(document["runs"].values()))
    return {"submission": c.submission.id, "team": c.participant.team, "run": c.run.name,
            "baseline": c.submission.baseline, "shown": on_board,
            "label": c.participant.team if on_board else f"{c.participant.team} ({c.run.name})",
            "scores": {m: dict(by_measure[m]["per_topic"]) for m in measures},
            "means": {m: by_measure[m]["mean"] for m in measures}}


def _definitions(measures: list[str]) -> list[dict[str, str]]:
    """The official measures' definitions as the final leaderboard records them (``shared_tasks.final``)."""
    try:
        found = measure_definitions(measures)
    except EvaluationError:
        return [{"name": m, "summary": "", "formula": "", "reference": ""} for m in measures]
    return [{"name": d["measure"], "summary": d["summary"] or "", "formula": d["formula"] or "",
             "reference": d["reference"] or ""} for d in found]
