"""What the ``/v1/tasks`` routes answer, as plain objects built inside the request's one session and serialised
by the response schemas (``web.task_schemas``) once it is closed. A page of rows is built with one
query per kind of row it refers to (phases, participants, runs, evaluations, result blobs), not one per row."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.shared_tasks.access import TaskAccess
from evalserve.service.store.blobs import BlobStore
from evalserve.service.store.models import (
    BlobRow,
    Job,
    JobState,
    Participant,
    ParticipantMember,
    Phase,
    RunRecord,
    Submission,
    SubmissionEvaluation,
    TaskVersion,
    as_utc,
    utcnow,
)


class _Absent:
    """The type of ``ABSENT``: a field the response leaves out of its JSON (the web layer's schema skips it)."""

    def __repr__(self) -> str:
        return "ABSENT"


#: a field the response schema leaves out of the JSON
ABSENT: Any = _Absent()


@dataclass(frozen=True)
class PhaseOut:
    """A phase and whether it is open now (``PhaseSchema``)."""

    name: str
    opens_at: datetime
    closes_at: datetime
    quota_per_day: int | None
    quota_total: int | None
    open: bool


def phase_out(p: Phase, now: datetime) -> PhaseOut:
    return PhaseOut(name=p.name, opens_at=as_utc(p.opens_at), closes_at=as_utc(p.closes_at),
                    quota_per_day=p.quota_per_day, quota_total=p.quota_total,
                    open=as_utc(p.opens_at) <= now < as_utc(p.closes_at))


@dataclass(frozen=True)
class TaskOut:
    """A task as one caller sees it: their role and team, its phases; organisers' fields for organisers only."""

    id: str
    name: str
    description: str
    role: str
    team: str | None
    measures: list[str]
    primary_measure: str
    order: str
    ties: str
    topics: str
    visibility: str
    blinded_until: datetime | None
    registration: str
    registration_code: str | None
    significance: dict[str, Any]
    per_topic_feedback: bool
    version: int
    collection: str | None
    phases: list[PhaseOut]
    current_phase: str | None
    created_at: datetime
    links: dict[str, str]
    final: dict[str, Any] | None = None


def task_outs(s: Session, accesses: Sequence[TaskAccess]) -> list[TaskOut]:
    """The tasks as their callers see them, with the phases of all of them read in one query."""
    now = utcnow()
    by_task: dict[str, list[Phase]] = defaultdict(list)
    if accesses:
        ids = [a.task.id for a in accesses]
        for p in s.execute(select(Phase).where(Phase.task_id.in_(ids)).order_by(Phase.opens_at)).scalars():
            by_task[p.task_id].append(p)
    return [_task_out(a, [phase_out(p, now) for p in by_task[a.task.id]]) for a in accesses]


def _task_out(access: TaskAccess, phases: list[PhaseOut]) -> TaskOut:
    t = access.task
    return TaskOut(
        id=t.id, name=t.name, description=t.description, role=access.role,
        team=access.participant.team if access.participant else None,
        measures=t.measures, primary_measure=t.primary_measure, order=t.sort_order, ties=t.ties,
        topics=t.topics, visibility=t.visibility, blinded_until=as_utc(t.blinded_until),
        registration=t.registration, registration_code=t.registration_code if access.organiser else None,
        significance=t.significance, per_topic_feedback=t.per_topic_feedback, version=t.version,
        collection=t.collection_id if access.organiser else None, phases=phases,
        current_phase=next((p.name for p in phases if p.open), None), created_at=as_utc(t.created_at),
        links={"self": f"/v1/tasks/{t.id}", "leaderboard": f"/v1/tasks/{t.id}/leaderboard",
               "html": f"/v1/tasks/{t.id}/leaderboard?format=html", "submissions": f"/v1/tasks/{t.id}/submissions",
               **({"meta": f"/v1/tasks/{t.id}/meta"} if access.organiser else {})},
        final=None if t.final is None else dict(t.final),
    )


@dataclass(frozen=True)
class ParticipantOut:
    """A registration and how many submissions it made (``ParticipantSchema``)."""

    id: str
    task: str
    team: str
    registered_at: datetime
    submissions: int
    members: int
    removed: dict[str, Any] | None
    disqualified: dict[str, Any] | None


def marked(at: datetime | None, reason: str | None) -> dict[str, Any] | None:
    """A removal or disqualification as shown: when and why (None: not)."""
    return None if at is None else {"at": as_utc(at), "reason": reason}


def participant_outs(s: Session, participants: Sequence[Participant]) -> list[ParticipantOut]:
    """The participants with their submission and member counts, counted in one query each."""
    counts: dict[str, int] = {}
    members: dict[str, int] = {}
    if participants:
        ids = [p.id for p in participants]
        rows = s.execute(select(Submission.participant_id, func.count()).where(Submission.participant_id.in_(ids))
                         .group_by(Submission.participant_id))
        counts = {participant_id: count for participant_id, count in rows}
        rows = s.execute(select(ParticipantMember.participant_id, func.count())
                         .where(ParticipantMember.participant_id.in_(ids)).group_by(ParticipantMember.participant_id))
        members = {participant_id: count for participant_id, count in rows}
    return [ParticipantOut(id=p.id, task=p.task_id, team=p.team, registered_at=as_utc(p.registered_at),
                           submissions=counts.get(p.id, 0), members=members.get(p.id, 0),
                           removed=marked(p.removed_at, p.removed_reason),
                           disqualified=marked(p.disqualified_at, p.disqualified_reason))
            for p in participants]


@dataclass(frozen=True)
class EvaluationOut:
    """One judgments version's evaluation of a submission (``EvaluationStateSchema``)."""

    version: int
    state: str
    scores: dict[str, Any] | None
    job: str | None


@dataclass(frozen=True)
class SubmissionOut:
    """A submission as the caller may see it (``SubmissionSchema``). ``version`` to ``scores`` are those of the
    current judgments' evaluation (else the first); ``ABSENT`` -- left out -- for a submission with none."""

    id: str
    task: str
    participant: str
    team: str
    phase: str
    description: str
    baseline: bool
    selected: bool
    submitted_at: datetime
    run: dict[str, Any]
    warnings: list[dict[str, Any]]
    version: Any
    state: Any
    stage: Any
    progress: Any
    error: Any
    scores: Any
    scores_hidden_until: datetime | None
    evaluations: list[EvaluationOut]
    withdrawn_at: datetime | None
    disqualified: dict[str, Any] | None
    links: dict[str, str]


def _scores(document: dict[str, Any]) -> dict[str, Any]:
    """The means of a one-run results document, by measure."""
    by_measure = next(iter(document["runs"].values()))
    return {m: item["mean"] for m, item in by_measure.items()}


def submission_outs(s: Session, blobs: BlobStore, subs: Sequence[Submission],
                    access: TaskAccess) -> list[SubmissionOut]:
    """The submissions as the caller may see them: state and progress always, scores unless a blinded task hides
    them. Their participants, runs, phases, evaluations and result blobs are read with one query each."""
    if not subs:
        return []
    participants = _by_id(s, Participant, {sub.participant_id for sub in subs})
    runs = _by_id(s, RunRecord, {sub.run_id for sub in subs})
    phases = _by_id(s, Phase, {sub.phase_id for sub in subs})
    evaluations: dict[str, list[tuple[SubmissionEvaluation, Job]]] = defaultdict(list)
    for evaluation, job in s.execute(
            select(SubmissionEvaluation, Job).join(Job, Job.id == SubmissionEvaluation.job_id)
            .where(SubmissionEvaluation.submission_id.in_([sub.id for sub in subs]))
            .order_by(SubmissionEvaluation.submission_id, SubmissionEvaluation.version)):
        evaluations[evaluation.submission_id].append((evaluation, job))
    show_scores = access.scores_visible()
    results: dict[str, dict[str, Any]] = {}
    if show_scores:
        shas = {job.result_sha256 for rows in evaluations.values() for _, job in rows
                if job.state == JobState.SUCCEEDED and job.result_sha256}
        loaded = _load_blob_rows(s, shas)  # held here: the session's identity map only keeps them while referenced
        results = {sha: _scores(json.loads(blobs.get(s, sha))) for sha in shas}
        del loaded
    return [_submission_out(sub, access, participants[sub.participant_id], runs[sub.run_id], phases[sub.phase_id],
                            evaluations[sub.id], results, show_scores) for sub in subs]


def _by_id(s: Session, model: Any, ids: Iterable[str]) -> dict[str, Any]:
    return {row.id: row for row in s.execute(select(model).where(model.id.in_(list(ids)))).scalars()}


def _load_blob_rows(s: Session, shas: set[str]) -> list[BlobRow]:
    """The blob rows of ``shas`` in one query, so that ``BlobStore.get`` finds them in the session."""
    if not shas:
        return []
    return list(s.execute(select(BlobRow).where(BlobRow.sha256.in_(list(shas)))).scalars())


def _submission_out(sub: Submission, access: TaskAccess, participant: Participant, run: RunRecord, phase: Phase,
                    rows: list[tuple[SubmissionEvaluation, Job]], results: dict[str, dict[str, Any]],
                    show_scores: bool) -> SubmissionOut:
    task = access.task
    evaluations = []
    current: dict[str, Any] = {}
    for evaluation, job in rows:
        scores = None
        if show_scores and job.state == JobState.SUCCEEDED and job.result_sha256:
            scores = results[job.result_sha256]
        evaluations.append(EvaluationOut(version=evaluation.version, state=job.state, scores=scores,
                                         job=job.id if access.organiser else None))
        if evaluation.version == task.version or not current:
            error = job.error if access.organiser else participant_error(job.error)
            current = {"version": evaluation.version, "state": job.state, "stage": job.stage,
                       "progress": job.progress, "error": error, "scores": scores}
    return SubmissionOut(
        id=sub.id, task=task.id, participant=participant.id, team=participant.team, phase=phase.name,
        description=sub.description, baseline=sub.baseline, selected=sub.selected,
        submitted_at=as_utc(sub.submitted_at),
        run={"id": run.id, "name": run.name, "filename": run.filename, "n_topics": run.n_topics,
             "n_rows": run.n_rows},
        warnings=run.warnings,
        **{key: current.get(key, ABSENT) for key in ("version", "state", "stage", "progress", "error", "scores")},
        scores_hidden_until=None if show_scores else as_utc(task.blinded_until),
        evaluations=evaluations,
        withdrawn_at=as_utc(sub.withdrawn_at),
        disqualified=marked(sub.disqualified_at, sub.disqualified_reason)
        or marked(participant.disqualified_at, participant.disqualified_reason),
        links={"self": f"/v1/tasks/{task.id}/submissions/{sub.id}",
               "leaderboard": f"/v1/tasks/{task.id}/leaderboard"},
    )


def participant_error(error: Any) -> Any:
    """A failed evaluation's error as a participant sees it: a run that shares no topic with the judgments (new
    judgments can leave an accepted run so) is said to, without the judged topics the engine's message names --
    the judgments stay hidden (``topics``); any other error as it is."""
    if not isinstance(error, dict) or error.get("code") != ProblemCode.NO_TOPICS_SCORED:
        return error
    message = ("no topic of this run is among the task's judged topics, so it could not be scored; the run and"
               " the judgments have no topic in common")
    return {**error, "message": message,
            "problems": [{**p, "message": message} for p in error.get("problems") or [] if isinstance(p, dict)]}


@dataclass(frozen=True)
class PerTopicOut:
    """A submission's per-topic scores under the official measures (``PerTopicSchema``): the values of its
    evaluation's results document and nothing else of it (no input names or checksums)."""

    submission: str
    task: str
    team: str
    version: int | None
    state: str | None
    measures: list[str]
    topics: list[str]
    scores: dict[str, Any] | None
    per_topic: dict[str, dict[str, Any]] | None
    links: dict[str, str]


def per_topic_out(sub: Submission, participant: Participant, measures: Sequence[str],
                  evaluation: SubmissionEvaluation | None, job: Job | None,
                  document: dict[str, Any] | None) -> PerTopicOut:
    """The per-topic view of one evaluation of a submission; ``document`` is its results (None until it is)."""
    per_topic: dict[str, dict[str, Any]] | None = None
    scores: dict[str, Any] | None = None
    topics: list[str] = []
    if document is not None:
        by_measure = next(iter(document["runs"].values()))
        per_topic = {m: dict(by_measure[m]["per_topic"]) for m in measures}
        scores = {m: by_measure[m]["mean"] for m in measures}
        topics = list(per_topic[measures[0]]) if measures else []
    base = f"/v1/tasks/{sub.task_id}/submissions/{sub.id}"
    return PerTopicOut(submission=sub.id, task=sub.task_id, team=participant.team,
                       version=evaluation.version if evaluation else None, state=job.state if job else None,
                       measures=list(measures), topics=topics, scores=scores, per_topic=per_topic,
                       links={"self": f"{base}/per-topic", "submission": base})


@dataclass(frozen=True)
class JudgmentsVersionOut:
    """One version of a task's judgments (``JudgmentsVersionSchema``)."""

    version: int
    collection: str
    note: str
    current: bool
    created_at: datetime


def judgments_version_out(v: TaskVersion, current_version: int) -> JudgmentsVersionOut:
    return JudgmentsVersionOut(version=v.version, collection=v.collection_id, note=v.note,
                               current=v.version == current_version, created_at=as_utc(v.created_at))


@dataclass(frozen=True)
class ReevaluationOut:
    """New judgments installed and the jobs re-evaluating every submission against them (``ReevaluationSchema``)."""

    version: int
    collection: str
    note: str
    jobs: list[str]
