"""A task's leaderboard as a document: which submissions it shows (each participant's chosen or latest evaluated
submission of a phase, plus the latest baseline), their stored results ranked by the engine
(``evaluation.leaderboard``) with significance marks, and how many are still being evaluated. Flask-free: the API
serves it, the workers announce it in webhooks."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from evalserve.service.core.errors import ServiceError
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.shared_tasks.final import final_block
from evalserve.service.shared_tasks.phases import current_phase, task_phases
from evalserve.service.store.blobs import BlobStore
from evalserve.service.store.models import (
    Job,
    JobState,
    Participant,
    Phase,
    RunRecord,
    Submission,
    SubmissionEvaluation,
    Task,
    as_utc,
    utcnow,
)
from evaluation.leaderboard import Entry, Leaderboard, SignificanceSettings, rank_entries

#: which submissions a leaderboard shows: each participant's chosen or latest one, or every evaluated one
SELECTIONS = ("latest", "all")


@dataclass(frozen=True)
class Candidate:
    """A submission of the phase with its evaluation at the leaderboard's judgments version."""

    submission: Submission
    participant: Participant
    run: RunRecord
    job: Job


def phase_named(s: Session, task: Task, name: str | None, at: datetime) -> Phase | None:
    phases = task_phases(s, task.id)
    if name is None:
        return current_phase(phases, at)
    found = next((p for p in phases if p.name == name), None)
    if found is None:
        raise ServiceError(404, ProblemCode.NOT_FOUND, f"task {task.id} has no phase {name!r}")
    return found


def judgments_version(task: Task, version: int | None) -> int:
    """The judgments version asked for (default: the current one); 404 for one the task never had."""
    version = task.version if version is None else version
    if not 1 <= version <= task.version:
        raise ServiceError(404, ProblemCode.NOT_FOUND, f"task {task.id} has judgments versions 1 to {task.version}")
    return version


def candidates(s: Session, task: Task, phase: Phase, version: int) -> list[Candidate]:
    """Every submission of the phase evaluated (or being evaluated) at ``version``, oldest first; not those
    withdrawn by their team, nor those of a team the organisers removed (``shared_tasks.teams``)."""
    rows = s.execute(
        select(Submission, Participant, RunRecord, Job)
        .join(Participant, Participant.id == Submission.participant_id)
        .join(SubmissionEvaluation, SubmissionEvaluation.submission_id == Submission.id)
        .join(RunRecord, RunRecord.id == SubmissionEvaluation.run_id)
        .join(Job, Job.id == SubmissionEvaluation.job_id)
        .where(Submission.task_id == task.id, Submission.phase_id == phase.id, SubmissionEvaluation.version == version,
               Submission.withdrawn_at.is_(None), Participant.removed_at.is_(None))  # withdrawn, removed: off
        .order_by(Submission.submitted_at, Submission.id)
    ).all()
    return [Candidate(*row) for row in rows]


def shown(cands: list[Candidate], selection: str) -> list[Candidate]:
    """The evaluated submissions a leaderboard ranks: per participant the chosen one (if evaluated) or else the
    latest, or all of them; the latest baseline is always shown and is the reference for differences."""
    done = [c for c in cands if c.job.state == JobState.SUCCEEDED and c.job.result_sha256]
    baselines = [c for c in done if c.submission.baseline]
    others = [c for c in done if not c.submission.baseline]
    if selection == "all":
        picked = others
    else:
        by_participant: dict[str, Candidate] = {}
        for c in others:  # oldest first: the latest wins unless one is chosen
            current = by_participant.get(c.participant.id)
            if current is None or not current.submission.selected or c.submission.selected:
                by_participant[c.participant.id] = c
        picked = list(by_participant.values())
    return picked + baselines[-1:]


def unranked_reason(c: Candidate) -> str | None:
    """Why a shown submission takes no rank (None: it takes one): the one rule deciding which rows are ranked
    (and tested for significance); an unranked row is shown at its score's place and never pushes a team down.
    A disqualified submission plugs in here with its public reason."""
    if c.submission.baseline:
        return "baseline"
    return None


def _entry(c: Candidate, document: dict[str, Any], selection: str, baseline: bool) -> Entry:
    label = c.participant.team if selection == "latest" else f"{c.participant.team} ({c.run.name})"
    unranked = unranked_reason(c)
    extra = {"submission": c.submission.id, "participant": c.participant.id, "team": c.participant.team,
             "run": c.run.name, "description": c.submission.description,
             "submitted_at": as_utc(c.submission.submitted_at).isoformat(), "unranked": unranked}
    return Entry(key=c.submission.id, label=label, document=document, baseline=baseline, extra=extra,
                 ranked=unranked is None)


@dataclass(frozen=True)
class TaskLeaderboard:
    """The engine's ranking and the JSON document served for it (the ranking plus the task's context)."""

    ranked: Leaderboard
    document: dict[str, Any]


def task_leaderboard(s: Session, blobs: BlobStore, task: Task, *, phase_name: str | None = None,
                     version: int | None = None, selection: str = "latest",
                     at: datetime | None = None) -> TaskLeaderboard:
    """The leaderboard of a task's phase (default: the open or last phase) at a judgments version (default: the
    current one), computed now (``shared_tasks.stored`` keeps it: readers are served the stored one)."""
    at = at or utcnow()
    version = judgments_version(task, version)
    phase = phase_named(s, task, phase_name, at)
    cands = candidates(s, task, phase, version) if phase is not None else []
    return ranked_board(s, blobs, task, phase, version, selection, cands, at)


def pending_count(cands: list[Candidate]) -> int:
    """How many of the phase's submissions are still being evaluated (shown live beside a stored board)."""
    return sum(c.job.state in (JobState.QUEUED, JobState.RUNNING) for c in cands)


def ranked_board(s: Session, blobs: BlobStore, task: Task, phase: Phase | None, version: int, selection: str,
                 cands: list[Candidate], at: datetime) -> TaskLeaderboard:
    """Rank the submissions ``selection`` shows among ``cands`` (the engine's significance tests: the costly
    part, done by a worker) into the served document; its last key is ``pending``."""
    picked = shown(cands, selection)
    entries = []
    marks: dict[str, dict[str, Any]] = {}
    for c in picked:
        assert c.job.result_sha256 is not None
        result = json.loads(blobs.get(s, c.job.result_sha256))
        entry = _entry(c, result, selection, c.submission.baseline)
        mark = disqualification(c)
        if mark is not None:  # shown, unranked, in no test: it moves nobody (the page shows why)
            marks[entry.key] = mark
            entry = replace(entry, ranked=False, extra={**entry.extra, "unranked": f"disqualified: {mark['reason']}"})
        entries.append(entry)
    board = rank_entries(entries, list(task.measures), task.primary_measure, order=task.sort_order,
                         significance=SignificanceSettings(**{k: v for k, v in task.significance.items()}))
    document: dict[str, Any] = {
        "task": {"id": task.id, "name": task.name, "description": task.description},
        "phase": None if phase is None else {"name": phase.name, "opens_at": as_utc(phase.opens_at).isoformat(),
                                             "closes_at": as_utc(phase.closes_at).isoformat()},
        "version": version,
        "generated_at": at.isoformat(),
        "selection": selection,
        **board.as_dict(),
    }
    for row in document["rows"]:
        if row["key"] in marks:
            row["disqualified"] = marks[row["key"]]
    document["final"] = final_block(s, task, version, document)
    document["pending"] = pending_count(cands)
    return TaskLeaderboard(board, document)


def disqualification(c: Candidate) -> dict[str, Any] | None:
    """Why a shown submission is not ranked: it, or its team, was disqualified (which, why, when); else None."""
    if c.submission.disqualified_at is not None:
        return {"scope": "submission", "reason": c.submission.disqualified_reason,
                "at": as_utc(c.submission.disqualified_at).isoformat()}
    if c.participant.disqualified_at is not None:
        return {"scope": "team", "reason": c.participant.disqualified_reason,
                "at": as_utc(c.participant.disqualified_at).isoformat()}
    return None
