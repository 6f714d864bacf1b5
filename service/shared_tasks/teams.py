"""Teams as groups of users, and what organisers and teams do to registrations and submissions (issue 30).

A participant is a team: the users who are its members (``task_participant_members``) all submit for it, with any
of their tokens, within the team's quotas (counted per team, whoever submits). A user is in at most one team of a
task. A registration (``POST /v1/tasks/{id}/participants``) or an invitation makes a new team; an invitation the
organisers bound to a team's name makes its holder a member of that team when it exists already (the organisers'
choice: nobody joins a team by naming it). The organisers remove a team (its members act for it no more, its
submissions leave the leaderboard), disqualify a team or a submission with a public reason (shown on the
leaderboard, unranked), and a team withdraws its own submission while its phase is open (off the leaderboard).
Nothing is deleted: each is a time and a reason on the row, an audit row (``shared_tasks.audit``), and a refresh of
the task's stored leaderboards."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from evalserve.service.core.errors import ServiceError
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.core.state import ServiceState
from evalserve.service.shared_tasks.access import membership, organised_task, participating, task_access
from evalserve.service.shared_tasks.audit import Action, record
from evalserve.service.shared_tasks.final import refuse_if_final
from evalserve.service.shared_tasks.outputs import ParticipantOut, SubmissionOut, participant_outs, submission_outs
from evalserve.service.shared_tasks.stored import request_refresh
from evalserve.service.store.models import (
    Participant,
    ParticipantMember,
    Phase,
    Submission,
    Task,
    Token,
    User,
    as_utc,
    new_id,
    utcnow,
)


def enrol(s: Session, token: Token, task_id: str, team: str, *, join: bool = False,
          via: str = "registration") -> ParticipantOut:
    """Make ``token``'s user a member of the task's team ``team``: a new team, or -- with ``join`` (an invitation
    the organisers bound to that name) -- the existing one. The caller's right to register is checked already
    (``services.register``, ``invitations.redeem``). 409 ``already-registered`` when the user acts for a team of
    the task already, ``team-taken`` for another team's name without ``join``; 403 ``participant-removed`` when
    the organisers removed the user's team (or the team to join); 409 ``task-final`` once the task is final."""
    task = s.get(Task, task_id)
    assert task is not None
    refuse_if_final(task)
    mine = list(s.execute(select(Participant).where(Participant.task_id == task_id, membership(token))).scalars())
    live = [p for p in mine if p.removed_at is None]
    if live:
        raise ServiceError(409, ProblemCode.ALREADY_REGISTERED, f"this user is registered for task {task_id} as team"
                           f" {live[0].team!r}")
    if mine:
        raise ServiceError(403, ProblemCode.PARTICIPANT_REMOVED, f"the organisers removed team {mine[0].team!r} from"
                           f" task {task_id}")
    existing = s.execute(select(Participant).where(Participant.task_id == task_id, Participant.team == team)
                         ).scalar_one_or_none()
    if existing is not None and not join:
        raise ServiceError(409, ProblemCode.TEAM_TAKEN,
                           f"the team name {team!r} is taken in task {task_id}; choose another (or ask its"
                           " organisers for an invitation to that team)")
    if existing is not None:
        if existing.removed_at is not None:
            raise ServiceError(403, ProblemCode.PARTICIPANT_REMOVED,
                               f"the organisers removed team {team!r} from task {task_id}")
        s.add(ParticipantMember(participant_id=existing.id, user_id=token.user_id, task_id=task_id,
                                joined_at=utcnow()))
        record(s, task_id, token, Action.MEMBER_JOINED, existing.id, team=team, via=via)
        s.flush()
        return participant_outs(s, [existing])[0]
    participant = Participant(id=new_id("part"), task_id=task_id, token_id=token.id, team=team,
                              registered_at=utcnow())
    s.add(participant)
    s.flush()
    s.add(ParticipantMember(participant_id=participant.id, user_id=token.user_id, task_id=task_id,
                            joined_at=participant.registered_at))
    record(s, task_id, token, Action.PARTICIPANT_REGISTERED, participant.id, team=team, via=via)
    s.flush()
    return participant_outs(s, [participant])[0]


def _task_participant(s: Session, task_id: str, participant_id: str) -> Participant:
    found = s.get(Participant, participant_id)
    if found is None or found.task_id != task_id:
        raise ServiceError(404, ProblemCode.NOT_FOUND, f"no participant {participant_id} in task {task_id}")
    return found


def members(s: Session, token: Token | None, task_id: str, participant_id: str) -> list[dict[str, Any]]:
    """The users of a team, earliest first: for its members and the organisers (404 for anyone else)."""
    access = task_access(s, task_id, token)
    if not access.organiser and (access.participant is None or access.participant.id != participant_id):
        raise ServiceError(404, ProblemCode.NOT_FOUND, f"no participant {participant_id} in task {task_id}")
    _task_participant(s, task_id, participant_id)
    rows = s.execute(select(ParticipantMember, User).join(User, User.id == ParticipantMember.user_id)
                     .where(ParticipantMember.participant_id == participant_id)
                     .order_by(ParticipantMember.joined_at, ParticipantMember.user_id)).all()
    return [{"user": user.id, "name": user.name, "joined_at": as_utc(member.joined_at)} for member, user in rows]


def _refresh(s: Session, st: ServiceState, task_id: str) -> None:
    """The task's stored leaderboards show something else now: stale until a worker stores the new ones."""
    s.flush()
    request_refresh(s, st.queue.celery, st.settings.queue, task_id)


def remove_participant(s: Session, st: ServiceState, token: Token, task_id: str, participant_id: str,
                       reason: str | None) -> ParticipantOut:
    """Remove a team (organisers): its members act for it no more and its submissions leave the leaderboard;
    its rows stay. Removing a removed team changes nothing."""
    refuse_if_final(organised_task(s, task_id, token))
    participant = _task_participant(s, task_id, participant_id)
    if participant.removed_at is None:
        participant.removed_at, participant.removed_reason = utcnow(), reason
        record(s, task_id, token, Action.PARTICIPANT_REMOVED, participant.id, reason=reason, team=participant.team)
        _refresh(s, st, task_id)
    return participant_outs(s, [participant])[0]


def _reason(disqualified: bool, reason: str | None) -> None:
    if disqualified and not reason:
        raise ServiceError(422, ProblemCode.INVALID_REQUEST, "a disqualification needs a public reason (\"reason\")")


def disqualify_participant(s: Session, st: ServiceState, token: Token, task_id: str, participant_id: str,
                           disqualified: bool, reason: str | None) -> ParticipantOut:
    """Disqualify a team with a public reason, or reinstate it (organisers): its rows stay on the leaderboard,
    unranked, with the reason."""
    refuse_if_final(organised_task(s, task_id, token))
    _reason(disqualified, reason)
    participant = _task_participant(s, task_id, participant_id)
    _mark(s, token, task_id, participant, disqualified, reason,
          (Action.PARTICIPANT_DISQUALIFIED, Action.PARTICIPANT_REINSTATED), team=participant.team)
    _refresh(s, st, task_id)
    return participant_outs(s, [participant])[0]


def disqualify_submission(s: Session, st: ServiceState, token: Token, task_id: str, submission_id: str,
                          disqualified: bool, reason: str | None) -> Submission:
    """Disqualify a submission with a public reason, or reinstate it (organisers)."""
    refuse_if_final(organised_task(s, task_id, token))
    _reason(disqualified, reason)
    sub = s.get(Submission, submission_id)
    if sub is None or sub.task_id != task_id:
        raise ServiceError(404, ProblemCode.NOT_FOUND, f"no submission {submission_id} in task {task_id}")
    _mark(s, token, task_id, sub, disqualified, reason,
          (Action.SUBMISSION_DISQUALIFIED, Action.SUBMISSION_REINSTATED), participant=sub.participant_id)
    _refresh(s, st, task_id)
    return sub


def _mark(s: Session, token: Token, task_id: str, row: Participant | Submission, disqualified: bool,
          reason: str | None, actions: tuple[Action, Action], **details: Any) -> None:
    """Disqualify a team or a submission (``actions[0]`` in the audit log), or reinstate a disqualified one
    (``actions[1]``); reinstating what is not disqualified changes and records nothing."""
    if disqualified:
        row.disqualified_at, row.disqualified_reason = utcnow(), reason
        record(s, task_id, token, actions[0], row.id, reason=reason, **details)
    elif row.disqualified_at is not None:
        row.disqualified_at, row.disqualified_reason = None, None
        record(s, task_id, token, actions[1], row.id, reason=reason, **details)


def withdraw_submission(s: Session, st: ServiceState, token: Token, task_id: str, submission_id: str,
                        reason: str | None = None) -> SubmissionOut:
    """A team withdraws one of its submissions while its phase is open (organisers: any of the task's): it
    leaves the leaderboard (the team's latest other submission shows) and stays stored; 409 ``phase-closed``
    once the phase closed. Withdrawing a withdrawn submission changes nothing."""
    access = participating(s, task_id, token)
    refuse_if_final(access.task)
    sub = s.get(Submission, submission_id)
    mine = access.organiser or (access.participant is not None and sub is not None
                                and sub.participant_id == access.participant.id)
    if sub is None or sub.task_id != task_id or not mine:
        raise ServiceError(404, ProblemCode.NOT_FOUND, f"no submission {submission_id} in task {task_id}")
    if sub.withdrawn_at is None:
        phase = s.get(Phase, sub.phase_id)
        assert phase is not None
        now = utcnow()
        if as_utc(phase.closes_at) <= now:
            raise ServiceError(409, ProblemCode.PHASE_CLOSED, f"phase {phase.name!r} closed at"
                               f" {as_utc(phase.closes_at).isoformat()}: its submissions can no longer be withdrawn")
        s.execute(update(Submission).where(Submission.id == sub.id).values(withdrawn_at=now, selected=False))
        record(s, task_id, token, Action.SUBMISSION_WITHDRAWN, sub.id, reason=reason, participant=sub.participant_id,
               phase=phase.name)
        _refresh(s, st, task_id)
        s.expire_all()
    access = task_access(s, task_id, token)
    found = s.get(Submission, submission_id)
    assert found is not None
    return submission_outs(s, st.blobs, [found], access)[0]
