"""Invitations to a shared task (issue 30): an organiser makes codes (``POST /v1/tasks/{id}/invitations``: each for
one or several redemptions, with an expiry, optionally bound to a team name) and hands them out; whoever holds one
redeems it (``POST /v1/invitations/{code}``): with a token, that token is registered as the team; without one, a
user and a token (``read submit``) are created, registered, and the token is in the answer, once. No step needs
the server's shell. A code is shown once, when made; only its SHA-256 is stored. Redemptions are counted by a
conditional update, so a code for n teams registers n, however many redeem it at once."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from evalserve.service.access.accounts import SIGNUP_SCOPES, Issued, token_document
from evalserve.service.access.tokens import new_token
from evalserve.service.core.errors import ServiceError
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.shared_tasks.access import organised_task
from evalserve.service.shared_tasks.audit import Action, record
from evalserve.service.shared_tasks.final import refuse_if_final
from evalserve.service.shared_tasks.outputs import ParticipantOut
from evalserve.service.shared_tasks.teams import enrol
from evalserve.service.store.models import Invitation, Task, Token, as_utc, new_id, utcnow

#: invitations made in one request at most
MAX_PER_REQUEST = 200


def _hash(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


def invitation_document(row: Invitation, code: str | None = None) -> dict[str, Any]:
    """An invitation as shown to its task's organisers (the code only in the answer that makes it)."""
    expires = as_utc(row.expires_at)
    shown = {"id": row.id, "task": row.task_id, "team": row.team, "uses": row.uses, "uses_left": row.uses_left,
             "created_at": as_utc(row.created_at), "expires_at": expires,
             "usable": row.uses_left > 0 and (expires is None or expires > utcnow())}
    if code is not None:
        shown["code"] = code
    return shown


def create_invitations(s: Session, caller: Token, task_id: str, *, count: int, uses: int,
                       expires_in_days: float | None, team: str | None) -> list[dict[str, Any]]:
    """``count`` new invitations to the caller's task (organisers only), each for ``uses`` redemptions; a team name
    binds one invitation (``count`` 1) to that team."""
    task = organised_task(s, task_id, caller)
    refuse_if_final(task)
    if team is not None and count != 1:
        raise ServiceError(422, ProblemCode.INVALID_REQUEST, "an invitation bound to a team is made one at a time"
                           " (count 1)")
    expires = None if expires_in_days is None else utcnow() + timedelta(days=expires_in_days)
    made = []
    for _ in range(count):
        code = f"inv_{secrets.token_urlsafe(18)}"
        row = Invitation(id=new_id("inv"), task_id=task.id, code_hash=_hash(code), team=team, uses=uses,
                         uses_left=uses, created_by=caller.id, created_at=utcnow(), expires_at=expires)
        s.add(row)
        made.append((row, code))
    record(s, task.id, caller, Action.INVITATIONS_CREATED, None, ids=[row.id for row, _ in made], uses=uses,
           team=team)
    s.flush()
    return [invitation_document(row, code) for row, code in made]


def list_invitations(s: Session, caller: Token, task_id: str) -> list[dict[str, Any]]:
    """The task's invitations (organisers only), newest first, without their codes."""
    task = organised_task(s, task_id, caller)
    rows = s.scalars(select(Invitation).where(Invitation.task_id == task.id)
                     .order_by(Invitation.created_at.desc(), Invitation.id))
    return [invitation_document(row) for row in rows]


@dataclass(frozen=True)
class Redeemed:
    """What redeeming gave: the registration, and the new token when the caller had none."""

    participant: ParticipantOut
    issued: Issued | None


def redeem(s: Session, caller: Token | None, code: str, team: str | None, name: str | None) -> Redeemed:
    """Redeem ``code``: register the caller's token (or a new user's token) for its task as its team (or
    ``team``). 404 ``invitation-invalid`` for an unknown, expired or used-up code; 422 when neither the invitation
    nor the request names a team; 409 as registering (registered already, team name taken)."""
    row = s.scalar(select(Invitation).where(Invitation.code_hash == _hash(code)))
    if row is None:
        raise ServiceError(404, ProblemCode.INVITATION_INVALID, "no such invitation (check the code)")
    expires = as_utc(row.expires_at)
    if expires is not None and expires <= utcnow():
        raise ServiceError(404, ProblemCode.INVITATION_INVALID, f"this invitation expired at {expires.isoformat()}")
    task = s.get(Task, row.task_id)
    assert task is not None
    refuse_if_final(task)  # before a use of the invitation is taken
    chosen = row.team or team
    if not chosen:
        raise ServiceError(422, ProblemCode.INVALID_REQUEST, "this invitation names no team: send one (\"team\")")
    if row.team is not None and team not in (None, row.team):
        raise ServiceError(422, ProblemCode.INVALID_REQUEST, f"this invitation is for team {row.team!r}")
    taken = s.execute(update(Invitation).where(Invitation.id == row.id, Invitation.uses_left > 0)
                      .values(uses_left=Invitation.uses_left - 1))
    if taken.rowcount == 0:  # type: ignore[attr-defined]
        raise ServiceError(404, ProblemCode.INVITATION_INVALID, "this invitation has been used up")
    issued = None
    token = caller
    if token is None:
        made, secret = new_token(s, f"{chosen} ({task.name})", SIGNUP_SCOPES, user_name=name or chosen)
        issued, token = Issued(made, secret), made
    # an invitation bound to a team's name (the organisers' choice) makes its holder a member of that team
    participant = enrol(s, token, row.task_id, chosen, join=row.team is not None, via="invitation")
    record(s, row.task_id, token, Action.INVITATION_REDEEMED, row.id, team=chosen, participant=participant.id,
           new_user=issued is not None)
    return Redeemed(participant, issued)


def register_with_invitation(s: Session, caller: Token, task_id: str, code: str, team: str) -> Redeemed:
    """``POST /v1/tasks/{id}/participants`` with an invitation code of that task as its ``code``: redeemed as
    ``POST /v1/invitations/{code}`` (404 ``invitation-invalid`` for a code of another task)."""
    row = s.scalar(select(Invitation).where(Invitation.code_hash == _hash(code)))
    if row is None or row.task_id != task_id:
        raise ServiceError(404, ProblemCode.INVITATION_INVALID, "no such invitation to this task (check the code)")
    return redeem(s, caller, code, team, None)


def is_invitation_code(code: str) -> bool:
    """Does ``code`` look like an invitation code (not a task's registration code)?"""
    return code.startswith("inv_")


def redeemed_document(redeemed: Redeemed) -> dict[str, Any]:
    """The answer to a redemption: the registration, and the new token (shown once) if one was made."""
    out: dict[str, Any] = {"participant": redeemed.participant, "token": None}
    if redeemed.issued is not None:
        out["token"] = {**token_document(redeemed.issued.token), "token": redeemed.issued.secret}
    return out
