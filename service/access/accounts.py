"""Users and their tokens over HTTP (``/v1/users``, ``/v1/tokens``), Flask-free: an admin manages users; every
user lists, creates and revokes their own tokens, never with a scope the calling token lacks (so no token can
make a stronger one); with sign-up open (``EVALSERVE_SIGNUP=open``) anyone may create a user with ``read`` and
``submit``. A token's plain text is in the answer that creates it and nowhere else. No step needs the server's
shell (``evalserve tokens create`` stays for the operator's first admin token)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from evalserve.service.access.tokens import new_token
from evalserve.service.core.errors import ServiceError
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.store.models import Scope, Token, User, as_utc, utcnow

#: the scopes of a user who signed up, and the default of a user an admin creates
SIGNUP_SCOPES = (Scope.READ.value, Scope.SUBMIT.value)
#: the longest expiry a token may be given (days); None in a request: never expires
MAX_EXPIRY_DAYS = 3650


@dataclass(frozen=True)
class Issued:
    """A token just made: its row and its plain text (shown once)."""

    token: Token
    secret: str


def token_document(token: Token, current: Token | None = None) -> dict[str, Any]:
    """A token as ``/v1/tokens`` shows it (never its secret or hash)."""
    now = utcnow()
    expires = as_utc(token.expires_at)
    return {"id": token.id, "name": token.name, "user": token.user_id, "scopes": sorted(token.scope_set),
            "created_at": as_utc(token.created_at), "expires_at": expires, "revoked_at": as_utc(token.revoked_at),
            "active": token.revoked_at is None and (expires is None or expires > now),
            "current": current is not None and token.id == current.id}


def user_document(s: Session, user: User) -> dict[str, Any]:
    """A user as ``/v1/users`` shows it: with how many live tokens they hold."""
    live = s.scalar(select(func.count()).select_from(Token).where(Token.user_id == user.id,
                                                                   Token.revoked_at.is_(None))) or 0
    return {"id": user.id, "name": user.name, "created_at": as_utc(user.created_at), "tokens": int(live)}


def _is_admin(token: Token) -> bool:
    return Scope.ADMIN.value in token.scope_set


def _granted(caller: Token | None, scopes: list[str] | None, default: tuple[str, ...]) -> tuple[str, ...]:
    """The scopes a new token gets: those asked (default ``default``), each one the caller's token holds (an admin
    token holds every scope); a 403 ``scope-not-held`` naming the others."""
    wanted = tuple(sorted(set(scopes))) if scopes else default
    held = set(Scope) if caller is not None and _is_admin(caller) else set(caller.scope_set if caller else ())
    missing = [scope for scope in wanted if scope not in held]
    if missing:
        raise ServiceError(403, ProblemCode.SCOPE_NOT_HELD,
                           f"a token cannot grant a scope it lacks: {', '.join(missing)}"
                           f" (this token has {', '.join(sorted(held)) or 'none'})")
    return wanted


def _expiry(days: float | None) -> Any:
    return None if days is None else utcnow() + timedelta(days=days)


def list_tokens(s: Session, caller: Token) -> list[dict[str, Any]]:
    """The caller's user's tokens (revoked and expired ones included), newest first."""
    rows = s.scalars(select(Token).where(Token.user_id == caller.user_id).order_by(Token.created_at.desc(),
                                                                                   Token.id))
    return [token_document(row, caller) for row in rows]


def create_token(s: Session, caller: Token, name: str, scopes: list[str] | None,
                 expires_in_days: float | None) -> Issued:
    """A new token of the caller's user, with at most the caller's scopes (default: the caller's own)."""
    granted = _granted(caller, scopes, tuple(sorted(caller.scope_set)))
    row, secret = new_token(s, name, granted, user_id=caller.user_id, expires_at=_expiry(expires_in_days))
    return Issued(row, secret)


def revoke_token(s: Session, caller: Token, token_id: str) -> dict[str, Any]:
    """Revoke one of the caller's user's tokens (an admin: anyone's); a 404 for any other. Revoking a revoked
    token changes nothing."""
    row = s.get(Token, token_id)
    if row is None or (row.user_id != caller.user_id and not _is_admin(caller)):
        raise ServiceError(404, ProblemCode.NOT_FOUND, f"no token {token_id}")
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        s.flush()
    return token_document(row, caller)


def list_users(s: Session) -> list[dict[str, Any]]:
    """Every user (admins only), oldest first."""
    return [user_document(s, user) for user in s.scalars(select(User).order_by(User.created_at, User.id))]


def create_user(s: Session, caller: Token | None, signup_open: bool, name: str, scopes: list[str] | None,
                token_name: str | None, expires_in_days: float | None) -> tuple[dict[str, Any], Issued]:
    """A new user and their first token: by an admin (any scopes; default ``read submit``), or by anyone when
    sign-up is open (``read submit`` only). A 403 ``signup-closed`` otherwise."""
    if caller is None or not _is_admin(caller):
        if not signup_open:
            raise ServiceError(403, ProblemCode.SIGNUP_CLOSED, "creating users takes an admin token on this"
                               " server (sign-up is closed: EVALSERVE_SIGNUP)")
        caller = None
    granted = _granted(caller, scopes, SIGNUP_SCOPES) if caller is not None else _signup_scopes(scopes)
    row, secret = new_token(s, token_name or name, granted, user_name=name, expires_at=_expiry(expires_in_days))
    user = s.get(User, row.user_id)
    assert user is not None
    return user_document(s, user), Issued(row, secret)


def _signup_scopes(scopes: list[str] | None) -> tuple[str, ...]:
    if scopes and not set(scopes) <= set(SIGNUP_SCOPES):
        raise ServiceError(403, ProblemCode.SCOPE_NOT_HELD, f"a user who signs up gets {' and '.join(SIGNUP_SCOPES)}"
                           " at most")
    return tuple(sorted(set(scopes))) if scopes else SIGNUP_SCOPES
