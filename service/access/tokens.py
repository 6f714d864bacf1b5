"""Bearer API tokens with scopes (read, submit, admin), stored as SHA-256 hashes: creating, verifying and revoking
them, Flask-free (the CLI and the web layer both call these). A token may expire (``expires_at``).

A token reads ``es_<id>_<secret>``; the id finds the row, the secret's hash must match. A token belongs to a user
(``users``), whose budget -- rate limits, quotas -- all their tokens share; by default each new token gets a new
user of its own, or it is given to an existing user. Every resource has an owner token; a token sees its own runs
and jobs (admin sees all). Collections are readable by every token, except hidden ones (a shared task's
judgments), which only their owner and admins see.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from evalserve.service.store.db import Database
from evalserve.service.store.models import Scope, Token, User, as_utc, new_id, utcnow

SCOPES: tuple[str, ...] = tuple(scope.value for scope in Scope)


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create_token(db: Database, name: str, scopes: tuple[str, ...], *, user_id: str | None = None,
                 user_name: str | None = None, expires_at: datetime | None = None) -> tuple[Token, str]:
    """A new token; the returned plain text is shown once and never stored. It belongs to the user ``user_id``
    (ValueError if there is none), else to a new user named ``user_name`` (default: the token's name)."""
    with db.session() as s:
        return new_token(s, name, scopes, user_id=user_id, user_name=user_name, expires_at=expires_at)


def new_token(s: Session, name: str, scopes: tuple[str, ...], *, user_id: str | None = None,
              user_name: str | None = None, expires_at: datetime | None = None) -> tuple[Token, str]:
    """``create_token`` in the caller's session (a request's unit of work): the row and its plain text."""
    unknown = set(scopes) - set(SCOPES)
    if unknown:
        raise ValueError(f"unknown scope(s) {', '.join(sorted(unknown))}; choose from {', '.join(SCOPES)}")
    token_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    if user_id is None:
        user = User(id=new_id("user"), name=user_name or name, created_at=utcnow())
        s.add(user)
        s.flush()
        user_id = user.id
    elif s.get(User, user_id) is None:
        raise ValueError(f"no user {user_id} (`evalserve tokens list` shows each token's user)")
    row = Token(id=token_id, user_id=user_id, name=name, secret_hash=_hash(secret),
                scopes=" ".join(sorted(set(scopes))), created_at=utcnow(), expires_at=expires_at)
    s.add(row)
    s.flush()
    return row, f"es_{token_id}_{secret}"


def verify(s: Session, presented: str) -> Token | None:
    """The live token matching the presented text, or None (read in the caller's session)."""
    parts = presented.split("_", 2)
    if len(parts) != 3 or parts[0] != "es":
        return None
    row = s.execute(select(Token).where(Token.id == parts[1])).scalar_one_or_none()
    if row is None or row.revoked_at is not None or not hmac.compare_digest(row.secret_hash, _hash(parts[2])):
        return None
    if row.expires_at is not None and as_utc(row.expires_at) <= utcnow():
        return None
    return row


def revoke(db: Database, token_id: str) -> bool:
    with db.session() as s:
        row = s.get(Token, token_id)
        if row is None:
            return False
        row.revoked_at = utcnow()
    return True
