"""Shared tasks' workflow: creating them and their phases, registering participants, taking submissions
(deadlines and quotas enforced on the server, in UTC), re-evaluating every submission when the judgments change,
and what each ``/v1/tasks`` request reads. Flask-free: the caller's token is passed in, refusals are
:class:`~core.errors.ServiceError`, and each function takes the request's database session (it never commits: the
request's unit of work does, once, and publishes the jobs it queued after that) and returns the objects its
response schema serialises (``shared_tasks.outputs``)."""

from __future__ import annotations

import hmac
import json
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, or_, select, update
from sqlalchemy.orm import Session

from evalserve.service.core.errors import ServiceError
from evalserve.service.core.paging import page_of
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.core.state import ServiceState
from evalserve.service.inputs.uploads import check_runs, create_collection, store_run
from evalserve.service.jobs.kinds import EvaluationRequest
from evalserve.service.jobs.lifecycle import create_job
from evalserve.service.jobs.submit import canonical_measures
from evalserve.service.shared_tasks import teams
from evalserve.service.shared_tasks.access import (
    TaskAccess,
    acting_for,
    organised_task,
    participating,
    task_access,
    task_accesses,
)
from evalserve.service.shared_tasks.audit import Action, record
from evalserve.service.shared_tasks.final import refuse_if_final
from evalserve.service.shared_tasks.meta import served_meta
from evalserve.service.shared_tasks.outputs import (
    JudgmentsVersionOut,
    ParticipantOut,
    PerTopicOut,
    PhaseOut,
    ReevaluationOut,
    SubmissionOut,
    TaskOut,
    judgments_version_out,
    participant_outs,
    per_topic_out,
    phase_out,
    submission_outs,
    task_outs,
)
from evalserve.service.shared_tasks.phases import current_phase, phase_at, task_phases
from evalserve.service.shared_tasks.stored import StoredBoard, request_refresh, served_board
from evalserve.service.shared_tasks.topics import check_common_topics
from evalserve.service.store.models import (
    Collection,
    Job,
    JobState,
    Participant,
    Phase,
    RegistrationMode,
    RunRecord,
    Scope,
    SortOrder,
    Submission,
    SubmissionEvaluation,
    Task,
    TaskVersion,
    TaskVisibility,
    Token,
    as_utc,
    new_id,
    utcnow,
)
from evaluation.formats.run_formats import RunFormat
from evaluation.meta.significance import CORRECTIONS, TESTS

DEFAULT_SIGNIFICANCE: dict[str, Any] = {"test": "t", "correction": "holm", "alpha": 0.05}


def _significance(given: dict[str, Any] | None) -> dict[str, Any]:
    """The leaderboard's significance settings, checked: a known test and correction, 0 < alpha < 1."""
    out = {**DEFAULT_SIGNIFICANCE, **(given or {})}
    unknown = set(out) - {"test", "correction", "alpha", "resamples", "seed"}
    if unknown:
        raise ServiceError(422, ProblemCode.INVALID_SIGNIFICANCE,
                           f"unknown significance setting(s): {', '.join(sorted(unknown))}")
    if out["test"] not in TESTS:
        raise ServiceError(422, ProblemCode.INVALID_SIGNIFICANCE,
                           f"unknown test {out['test']!r}; choose one of {', '.join(TESTS)}")
    if out["test"] == "tukey":
        out["correction"] = None  # Tukey's HSD already controls the family-wise error
    if out["correction"] not in (*CORRECTIONS, None):
        raise ServiceError(422, ProblemCode.INVALID_SIGNIFICANCE,
                           f"unknown correction {out['correction']!r}; choose one of"
                           f" {', '.join(CORRECTIONS)} or null")
    if not isinstance(out["alpha"], int | float) or not 0 < float(out["alpha"]) < 1:
        raise ServiceError(422, ProblemCode.INVALID_SIGNIFICANCE, "alpha must be a number between 0 and 1")
    return out


def _check_phase_times(opens_at: datetime, closes_at: datetime) -> None:
    if closes_at <= opens_at:
        raise ServiceError(422, ProblemCode.INVALID_PHASE,
                           f"a phase must close after it opens ({closes_at.isoformat()} is not"
                           f" after {opens_at.isoformat()})")


def _check_no_overlap(phases: list[Phase], candidate: Phase) -> None:
    """Phases of a task do not overlap, so at any instant at most one is open."""
    for other in phases:
        if other.id != candidate.id and as_utc(other.opens_at) < as_utc(candidate.closes_at) \
                and as_utc(candidate.opens_at) < as_utc(other.closes_at):
            raise ServiceError(422, ProblemCode.OVERLAPPING_PHASES,
                               f"phase {candidate.name!r} overlaps phase {other.name!r};"
                               " phases of a task must not overlap")


def new_phase(task_id: str, body: dict[str, Any], default_quota_per_day: int = 0) -> Phase:
    """A phase as asked; without a ``quota_per_day`` it gets ``default_quota_per_day`` (0: none), so that no
    participant can submit without limit unless the organiser says so (``quota_per_day: null``): every submission
    tells its team a little about the hidden judgments (docs/api.md, "What participants can infer")."""
    _check_phase_times(body["opens_at"], body["closes_at"])
    per_day = body.get("quota_per_day", default_quota_per_day or None)  # an explicit null: no limit
    return Phase(id=new_id("phase"), task_id=task_id, name=body["name"], opens_at=body["opens_at"],
                 closes_at=body["closes_at"], quota_per_day=per_day, quota_total=body.get("quota_total"))


def _read_afresh(s: Session) -> None:
    """Write what the session holds, and read it back from the database from here on (the answer shows the
    rows as stored, not as built); the request's unit of work commits it all once."""
    s.flush()
    s.expire_all()


def list_tasks(s: Session, st: ServiceState, token: Token | None, pagination: Any) -> list[TaskOut]:
    """A page of the tasks the caller may see (public and blinded ones, and private ones they organise or take
    part in; anonymous callers: public and blinded ones), newest first."""
    query = select(Task)
    if token is None:
        query = query.where(Task.visibility != TaskVisibility.PRIVATE)
    elif Scope.ADMIN not in token.scope_set:
        mine = acting_for(token).with_only_columns(Participant.task_id)
        query = query.where(or_(Task.visibility != TaskVisibility.PRIVATE, Task.owner_id == token.id,
                                Task.id.in_(mine)))
    rows = page_of(s, query, Task.created_at.desc(), pagination)
    return task_outs(s, task_accesses(s, rows, token))


def get_task(s: Session, st: ServiceState, token: Token | None, task_id: str) -> TaskOut:
    """The task, its phases and the caller's role (404 for a private task the caller has no part in)."""
    return task_outs(s, [task_access(s, task_id, token)])[0]


def create_task(s: Session, st: ServiceState, token: Token, body: dict[str, Any]) -> TaskOut:
    """A new task over one of the caller's collections, which becomes hidden: only organisers see judgments."""
    measures = canonical_measures(body["measures"])
    primary = canonical_measures([body["primary_measure"]])[0] if body.get("primary_measure") else measures[0]
    if primary not in measures:
        raise ServiceError(422, ProblemCode.INVALID_PRIMARY_MEASURE,
                           f"the primary measure {primary} is not one of the official"
                           f" measures ({', '.join(measures)})")
    _check_visibility(body.get("visibility", TaskVisibility.PUBLIC), body.get("blinded_until"))
    _check_registration(body.get("registration", RegistrationMode.OPEN), body.get("registration_code"))
    admin = Scope.ADMIN in token.scope_set
    collection = s.get(Collection, body["collection"])
    if collection is None or (not admin and collection.owner_id != token.id):
        if collection is not None and not collection.hidden:
            raise ServiceError(403, ProblemCode.NOT_YOUR_COLLECTION,
                               f"collection {collection.id} belongs to another token;"
                               " a task's judgments must be the organiser's own")
        raise ServiceError(404, ProblemCode.NOT_FOUND, f"no collection {body['collection']}")
    collection.hidden = True
    task = Task(
        id=new_id("task"), owner_id=token.id, name=body["name"], description=body.get("description", ""),
        collection_id=collection.id, version=1, measures=measures, primary_measure=primary,
        sort_order=body.get("order", SortOrder.DESC), ties=body.get("ties", "trec"),
        topics=body.get("topics", "complete"),
        visibility=body.get("visibility", TaskVisibility.PUBLIC), blinded_until=body.get("blinded_until"),
        registration=body.get("registration", RegistrationMode.OPEN),
        registration_code=body.get("registration_code"),
        significance=_significance(body.get("significance")),
        per_topic_feedback=body.get("per_topic_feedback", False),  # per-topic scores reveal judgments: opt in
    )
    s.add(task)
    s.flush()  # no ORM relationships: rows that refer to the task are inserted after it
    s.add(TaskVersion(task_id=task.id, version=1, collection_id=collection.id, note="initial judgments"))
    phases: list[Phase] = []
    for item in body.get("phases") or []:
        phase = new_phase(task.id, item, st.settings.task_default_quota_per_day)
        _check_no_overlap(phases, phase)
        phases.append(phase)
    _unique_names(phases)
    s.add_all(phases)
    task_id = task.id
    _read_afresh(s)
    return task_outs(s, [task_access(s, task_id, token)])[0]


def _unique_names(phases: list[Phase]) -> None:
    names = [p.name for p in phases]
    for name in names:
        if names.count(name) > 1:
            raise ServiceError(422, ProblemCode.DUPLICATE_PHASE, f"two phases are named {name!r}")


def _check_visibility(visibility: str, blinded_until: datetime | None) -> None:
    if visibility == TaskVisibility.BLINDED and blinded_until is None:
        raise ServiceError(422, ProblemCode.INVALID_VISIBILITY,
                           "a blinded task needs blinded_until: the date its leaderboard"
                           " opens")


def _check_registration(mode: str, code: str | None) -> None:
    if mode == RegistrationMode.CODE and not code:
        raise ServiceError(422, ProblemCode.INVALID_REGISTRATION, "registration by code needs registration_code")


def update_task(s: Session, st: ServiceState, token: Token, task_id: str, body: dict[str, Any]) -> TaskOut:
    """Change a task's description, visibility, registration, significance or feedback settings (organisers
    only)."""
    task = organised_task(s, task_id, token)
    refuse_if_final(task)
    for key in ("name", "description", "visibility", "blinded_until", "registration", "registration_code",
                "per_topic_feedback"):
        if key in body:
            setattr(task, key, body[key])
    if "significance" in body:
        task.significance = _significance(body["significance"])
    _check_visibility(task.visibility, as_utc(task.blinded_until))
    _check_registration(task.registration, task.registration_code)
    task.updated_at = utcnow()
    record(s, task_id, token, Action.TASK_UPDATED, task_id, fields=sorted(body))
    _read_afresh(s)
    _refresh_later(s, st, task_id)
    return task_outs(s, [task_access(s, task_id, token)])[0]


def list_phases(s: Session, st: ServiceState, token: Token | None, task_id: str) -> list[PhaseOut]:
    """The task's phases in time order, if the caller may see the task."""
    task_access(s, task_id, token)
    now = utcnow()
    return [phase_out(p, now) for p in task_phases(s, task_id)]


def add_phase(s: Session, st: ServiceState, token: Token, task_id: str, body: dict[str, Any]) -> PhaseOut:
    """Add a phase (organisers only); phases do not overlap and have distinct names. Answered as given."""
    refuse_if_final(organised_task(s, task_id, token))
    phases = task_phases(s, task_id)
    phase = new_phase(task_id, body, st.settings.task_default_quota_per_day)
    _unique_names([*phases, phase])
    _check_no_overlap(phases, phase)
    s.add(phase)
    record(s, task_id, token, Action.PHASE_ADDED, phase.name)
    s.flush()
    _refresh_later(s, st, task_id)
    return phase_out(phase, utcnow())


def update_phase(s: Session, st: ServiceState, token: Token, task_id: str, name: str, body: dict[str, Any]) -> PhaseOut:
    """Move a phase's window or change its quotas (organisers only); submissions already taken stay. Answered
    as changed."""
    refuse_if_final(organised_task(s, task_id, token))
    phases = task_phases(s, task_id)
    phase = next((p for p in phases if p.name == name), None)
    if phase is None:
        raise ServiceError(404, ProblemCode.NOT_FOUND, f"task {task_id} has no phase {name!r}")
    for key in ("opens_at", "closes_at", "quota_per_day", "quota_total"):
        if key in body:
            setattr(phase, key, body[key])
    _check_phase_times(as_utc(phase.opens_at), as_utc(phase.closes_at))
    _check_no_overlap(phases, phase)
    record(s, task_id, token, Action.PHASE_UPDATED, phase.name, fields=sorted(body))
    s.flush()
    _refresh_later(s, st, task_id)
    return phase_out(phase, utcnow())


def list_participants(s: Session, st: ServiceState, token: Token | None, task_id: str) -> list[ParticipantOut]:
    """The task's participants (organisers); a participant sees their own registration only."""
    access = task_access(s, task_id, token)
    if access.organiser:
        rows = list(s.execute(select(Participant).where(Participant.task_id == task_id)
                              .order_by(Participant.registered_at)).scalars())
    else:
        rows = [access.participant] if access.participant else []
    return participant_outs(s, rows)


def register(s: Session, st: ServiceState, token: Token, task_id: str, team: str, code: str | None) -> ParticipantOut:
    """Register the caller for a task under a team name (open registration, or with the organiser's code)."""
    task = s.get(Task, task_id)
    if task is None:
        raise ServiceError(404, ProblemCode.NOT_FOUND, f"no task {task_id}")
    organiser = token.id == task.owner_id or Scope.ADMIN in token.scope_set
    code_ok = code is not None and task.registration_code is not None and hmac.compare_digest(
        code.encode(), task.registration_code.encode())
    if not organiser and not code_ok:
        if task.visibility == TaskVisibility.PRIVATE and task.registration != RegistrationMode.OPEN:
            raise ServiceError(404, ProblemCode.NOT_FOUND, f"no task {task_id}")  # a private task is not revealed
        if task.registration == RegistrationMode.CODE:
            raise ServiceError(403, ProblemCode.REGISTRATION_CODE,
                               "this task takes participants by registration code; ask"
                               " its organisers for it" if code is None else "the registration code is not right")
    return enrol(s, token, task_id, team)


def enrol(s: Session, token: Token, task_id: str, team: str) -> ParticipantOut:
    """Register ``token``'s user for the task as a new team ``team``, the caller's right to do so checked already
    (``register``: open registration, the code or an organiser): ``teams.enrol`` (409 ``task-final`` once the
    task is finalised)."""
    return teams.enrol(s, token, task_id, team)


def _closed(task_id: str, phases: list[Phase], at: datetime) -> ServiceError:
    """Why a submission at ``at`` is refused: before, between or after the task's phases."""
    stamp = at.isoformat(timespec="seconds")
    upcoming = [p for p in phases if as_utc(p.opens_at) > at]
    if upcoming:
        nxt = upcoming[0]
        return ServiceError(409, ProblemCode.PHASE_NOT_OPEN,
                            f"no phase of task {task_id} is open at {stamp} (UTC); phase"
                            f" {nxt.name!r} opens at {as_utc(nxt.opens_at).isoformat()}")
    if phases:
        last = phases[-1]
        return ServiceError(409, ProblemCode.PHASE_CLOSED,
                            f"submissions to task {task_id} closed: phase {last.name!r} ended at"
                            f" {as_utc(last.closes_at).isoformat()} and it is now {stamp} (UTC)")
    return ServiceError(409, ProblemCode.PHASE_NOT_OPEN, f"task {task_id} has no phases yet; its organisers add them")


def _check_quota(s: Session, phase: Phase, participant: Participant, at: datetime) -> None:
    """429 when the participant used up the phase's per-day (UTC calendar day) or per-phase quota."""
    mine = select(func.count()).select_from(Submission).where(
        Submission.participant_id == participant.id, Submission.phase_id == phase.id)
    if phase.quota_total is not None and (s.execute(mine).scalar() or 0) >= phase.quota_total:
        raise ServiceError(429, ProblemCode.QUOTA_EXCEEDED, f"team {participant.team!r} made all {phase.quota_total}"
                           f" submissions that phase {phase.name!r} allows")
    if phase.quota_per_day is not None:
        day = at.replace(hour=0, minute=0, second=0, microsecond=0)
        tomorrow = day + timedelta(days=1)
        today = mine.where(Submission.submitted_at >= day, Submission.submitted_at < tomorrow)
        if (s.execute(today).scalar() or 0) >= phase.quota_per_day:
            wait = max(1, int((tomorrow - at).total_seconds()) + 1)
            raise ServiceError(429, ProblemCode.QUOTA_EXCEEDED,
                               f"team {participant.team!r} made all {phase.quota_per_day}"
                               f" submissions allowed per day in phase {phase.name!r}; the next is accepted from"
                               f" {tomorrow.isoformat()} (UTC)", headers={"Retry-After": str(wait)})


def _submission_phase(s: Session, access: TaskAccess, requested: str | None, at: datetime) -> Phase:
    """The phase a submission at ``at`` goes to; organisers (baselines) may name any phase at any time."""
    phases = task_phases(s, access.task.id)
    if requested is not None:
        phase = next((p for p in phases if p.name == requested), None)
        if phase is None:
            raise ServiceError(404, ProblemCode.NOT_FOUND, f"task {access.task.id} has no phase {requested!r}")
        if access.organiser or phase_at([phase], at) is not None:
            return phase
        raise _closed(access.task.id, [phase], at)
    phase = phase_at(phases, at)
    if phase is None and access.organiser:
        phase = current_phase(phases, at)
    if phase is None:
        raise _closed(access.task.id, phases, at)
    return phase


def submit(s: Session, st: ServiceState, token: Token, task_id: str, upload: tuple[str, bytes], *,
           description: str = "", baseline: bool = False, phase_name: str | None = None,
           arrival: datetime | None = None, run_format: str = RunFormat.AUTO,
           callback: dict[str, Any] | None = None) -> SubmissionOut:
    """Take a participant's run: deadline and quota are checked against the request's arrival time (UTC), the
    run is validated (422 with every problem) and checked to share a topic with the hidden judgments (422
    ``no-topics-scored``, saying no more than that), then stored with its evaluation job in one transaction, and the
    job queued; answered with the submission as the caller sees it then."""
    at = arrival or utcnow()
    # refuse early, before reading a large upload
    access = participating(s, task_id, token)
    refuse_if_final(access.task)
    if baseline and not access.organiser:
        raise ServiceError(403, ProblemCode.ORGANISERS_ONLY, "only organisers submit baselines")
    if access.participant is None:
        raise ServiceError(403, ProblemCode.NOT_REGISTERED, f"register a team for task {task_id} before submitting"
                           " (organisers too): POST /v1/tasks/{task_id}/participants")
    phase = _submission_phase(s, access, phase_name, at)
    if not access.organiser:
        _check_quota(s, phase, access.participant, at)
    participant_id = access.participant.id
    checked = check_runs([upload], st.settings.decode_limits, run_format)[0]
    judgments = s.get(Collection, access.task.collection_id)
    assert judgments is not None
    check_common_topics(s, st, judgments, checked.run, checked.filename)  # else it could only fail: a 422 now
    # first the write that serialises this participant's submissions (a row lock; SQLite's write lock)
    s.execute(update(Participant).where(Participant.id == participant_id)
              .values(submissions_made=Participant.submissions_made + 1))
    task = s.get(Task, task_id, with_for_update={"read": True})  # a new judgments version waits for us
    assert task is not None
    refuse_if_final(task)  # finalised meanwhile
    access = task_access(s, task_id, token)
    participant = access.participant
    if participant is None:  # removed by the organisers meanwhile
        raise ServiceError(403, ProblemCode.PARTICIPANT_REMOVED, f"your team was removed from task {task_id}")
    phase = _submission_phase(s, access, phase_name, at)
    if not access.organiser:
        _check_quota(s, phase, participant, at)
    run = store_run(s, st, token.id, task.collection_id, checked)
    submission = Submission(id=new_id("sub"), task_id=task.id, participant_id=participant.id,
                            phase_id=phase.id, run_id=run.id, description=description, baseline=baseline,
                            submitted_at=at)
    s.add(submission)
    s.flush()
    job_id = _evaluation_job(s, task, submission, run, callback or {}).id
    st.queue.publish_after_commit(s, job_id)
    s.flush()
    s.expunge(submission)  # answered as it was taken; the rest (the job's state first) as stored
    s.expire_all()
    return submission_outs(s, st.blobs, [submission], task_access(s, task_id, token))[0]


def _evaluation_job(s: Session, task: Task, submission: Submission, run: RunRecord,
                    callback: dict[str, Any] | None = None) -> Job:
    """A queued job evaluating the submission against the task's current judgments, owned by the organiser (a
    participant reads its state and scores through the submission, never the per-topic job result); ``callback``:
    the participant's callback columns (``shared_tasks.callbacks``)."""
    request = EvaluationRequest((run.id,), tuple(task.measures), task.ties, task.topics, per_topic=True,
                                task=task.id, submission=submission.id, version=task.version)
    job = create_job(s, Job(id=new_id("job"), owner_id=task.owner_id, collection_id=task.collection_id,
                            request=request.to_json(), **(callback or {})))
    s.add(SubmissionEvaluation(submission_id=submission.id, version=task.version, run_id=run.id, job_id=job.id))
    return job


def list_submissions(s: Session, st: ServiceState, token: Token | None, task_id: str, phase: str | None,
                     pagination: Any) -> list[SubmissionOut]:
    """A page of the caller's submissions to the task (organisers: everyone's), newest first; ``phase`` filters."""
    access = task_access(s, task_id, token)
    q = select(Submission).where(Submission.task_id == task_id)
    if not access.organiser:
        q = q.where(Submission.participant_id == (access.participant.id if access.participant else ""))
    if phase:
        q = q.where(Submission.phase_id.in_(select(Phase.id).where(Phase.task_id == task_id, Phase.name == phase)))
    rows = page_of(s, q, Submission.submitted_at.desc(), pagination)
    return submission_outs(s, st.blobs, rows, access)


def _own_submission(s: Session, access: TaskAccess, submission_id: str) -> Submission:
    """The submission, if it is the caller's (organisers: any of the task's); 404 otherwise."""
    sub = s.get(Submission, submission_id)
    mine = access.organiser or (access.participant is not None and sub is not None
                                and sub.participant_id == access.participant.id)
    if sub is None or sub.task_id != access.task.id or not mine:
        raise ServiceError(404, ProblemCode.NOT_FOUND, f"no submission {submission_id} in task {access.task.id}")
    return sub


def get_submission(s: Session, st: ServiceState, token: Token | None, task_id: str,
                   submission_id: str) -> SubmissionOut:
    """A submission's state, progress and scores (the caller's; organisers: any)."""
    access = task_access(s, task_id, token)
    return submission_outs(s, st.blobs, [_own_submission(s, access, submission_id)], access)[0]


def submission_per_topic(s: Session, st: ServiceState, token: Token | None, task_id: str,
                         submission_id: str) -> PerTopicOut:
    """The per-topic scores of a submission's evaluation at the current judgments (else its first): the caller's
    own submission when the task gives per-topic feedback and shows scores now; organisers any, always."""
    access = task_access(s, task_id, token)
    sub = _own_submission(s, access, submission_id)  # 404 for another team's, as every read of a submission
    task = access.task
    if not access.organiser:
        if not task.per_topic_feedback:
            raise ServiceError(403, ProblemCode.PER_TOPIC_FEEDBACK_OFF, f"task {task_id} gives no per-topic feedback to"
                               " participants; its organisers may turn it on (per_topic_feedback)")
        if not access.scores_visible():
            until = as_utc(task.blinded_until)
            raise ServiceError(403, ProblemCode.SCORES_HIDDEN, f"task {task_id} hides scores until"
                               f" {until.isoformat() if until else 'its organisers open it'}")
    rows = s.execute(select(SubmissionEvaluation, Job).join(Job, Job.id == SubmissionEvaluation.job_id)
                     .where(SubmissionEvaluation.submission_id == sub.id)
                     .order_by(SubmissionEvaluation.version)).all()
    current = next((row for row in rows if row[0].version == task.version), rows[0] if rows else None)
    evaluation, job = current if current is not None else (None, None)
    document = None
    if job is not None and job.state == JobState.SUCCEEDED and job.result_sha256:
        document = json.loads(st.blobs.get(s, job.result_sha256))
    participant = s.get(Participant, sub.participant_id)
    assert participant is not None
    return per_topic_out(sub, participant, list(task.measures), evaluation, job, document)


def select_submission(s: Session, st: ServiceState, token: Token, task_id: str, submission_id: str,
                      selected: bool) -> SubmissionOut:
    """A participant picks which of their submissions in a phase the leaderboard shows (one at a time)."""
    access = participating(s, task_id, token)
    refuse_if_final(access.task)
    sub = s.get(Submission, submission_id)
    if sub is None or sub.task_id != task_id or (
            not access.organiser and (access.participant is None or sub.participant_id != access.participant.id)):
        raise ServiceError(404, ProblemCode.NOT_FOUND, f"no submission {submission_id} in task {task_id}")
    if selected and sub.withdrawn_at is not None:
        raise ServiceError(409, ProblemCode.SUBMISSION_WITHDRAWN, f"submission {submission_id} was withdrawn: it"
                           " cannot be shown on the leaderboard")
    if selected:
        s.execute(update(Submission).where(Submission.participant_id == sub.participant_id,
                                           Submission.phase_id == sub.phase_id).values(selected=False))
    sub.selected = selected
    _read_afresh(s)
    _refresh_later(s, st, task_id)
    access = task_access(s, task_id, token)
    return submission_outs(s, st.blobs, [_own_submission(s, access, submission_id)], access)[0]


def judgments_history(s: Session, st: ServiceState, token: Token | None, task_id: str) -> list[JudgmentsVersionOut]:
    """The history of the task's judgments versions (organisers)."""
    task = organised_task(s, task_id, token)
    rows = s.execute(select(TaskVersion).where(TaskVersion.task_id == task_id)
                     .order_by(TaskVersion.version)).scalars()
    return [judgments_version_out(v, task.version) for v in rows]


def new_judgments(s: Session, st: ServiceState, token: Token, task_id: str, form: dict[str, Any],
                  qrels: tuple[str, bytes],
                  intent_weights: tuple[str, bytes] | None, side: dict[str, tuple[str, bytes]]) -> ReevaluationOut:
    """Install new judgments as the task's next version and queue a re-evaluation of every submission against
    them; earlier versions' evaluations are kept (the history, and leaderboards of older versions)."""
    refuse_if_final(organised_task(s, task_id, token))
    # the judgments are checked and stored as a hidden collection, in the same transaction as the new version
    collection = create_collection(s, st, token.id, {**form, "hidden": True}, qrels, intent_weights, side)
    task = s.get(Task, task_id, with_for_update=True)  # submissions in flight finish first
    assert task is not None
    refuse_if_final(task)  # finalised meanwhile
    task.version += 1
    task.collection_id = collection.id
    task.updated_at = utcnow()
    version = TaskVersion(task_id=task.id, version=task.version, collection_id=collection.id,
                          note=form.get("note", ""))
    s.add(version)
    record(s, task.id, token, Action.JUDGMENTS_INSTALLED, str(version.version), note=version.note)
    s.flush()
    job_ids = []
    submissions = s.execute(select(Submission).where(Submission.task_id == task.id)
                            .order_by(Submission.submitted_at)).scalars()
    for sub in submissions:
        original = s.get(RunRecord, sub.run_id)
        assert original is not None
        run = RunRecord(id=new_id("run"), owner_id=original.owner_id, collection_id=collection.id,
                        name=original.name, filename=original.filename, sha256=original.sha256,
                        n_topics=original.n_topics, n_rows=original.n_rows, warnings=original.warnings,
                        run_format=original.run_format)
        s.add(run)
        s.flush()
        job_ids.append(_evaluation_job(s, task, sub, run).id)
    for job_id in job_ids:
        st.queue.publish_after_commit(s, job_id)
    return ReevaluationOut(version=version.version, collection=version.collection_id, note=version.note,
                           jobs=job_ids)


def _refresh_later(s: Session, st: ServiceState, task_id: str) -> None:
    """The task's leaderboards may show something else now: a worker recomputes them after the commit."""
    request_refresh(s, st.queue.celery, st.settings.queue, task_id)


def leaderboard(s: Session, st: ServiceState, token: Token | None, task_id: str, *, phase_name: str | None,
                version: int | None, selection: str) -> tuple[Task, StoredBoard | None]:
    """The task and its stored leaderboard, if the caller may read it now (403 ``leaderboard-blinded`` before a
    blinded task's date, except for organisers): computed by a worker when its inputs changed; a token holder's
    read computes and stores a board whose inputs changed since, an anonymous read never computes (the stored
    board, marked stale, or None: none stored yet -- ``shared_tasks.stored``)."""
    access = task_access(s, task_id, token)
    if not access.leaderboard_open():
        until = as_utc(access.task.blinded_until)
        raise ServiceError(403, ProblemCode.LEADERBOARD_BLINDED, f"the leaderboard of task {task_id} is blinded until"
                           f" {until.isoformat() if until else 'its organisers open it'}")
    board = served_board(s, st.blobs, access.task, phase_name=phase_name, version=version, selection=selection,
                         may_compute=token is not None)
    return access.task, board


def meta_evaluation(s: Session, st: ServiceState, token: Token | None, task_id: str, *, phase_name: str | None,
                    version: int | None, options: dict[str, Any], selection: str = "latest") -> dict[str, Any]:
    """Measure advice (organisers): MU, discriminative power and rank correlations of the official measures over
    the submissions the leaderboard shows (``selection``: or every evaluated one) and the advice built from them
    (``shared_tasks.meta``), stored under its options and inputs."""
    task = organised_task(s, task_id, token)
    return served_meta(s, st.blobs, task, phase_name=phase_name, version=version, options=options,
                       selection=selection)
