"""Bearer API tokens with scopes (read, submit, admin), stored as SHA-256 hashes.

A token reads ``es_<id>_<secret>``; the id finds the row, the secret's hash must match. Every resource has an
owner token; a token sees its own runs and jobs (admin sees all). Collections are readable by every token, except
hidden ones (a shared task's judgments), which only their owner and admins see.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import current_app, g, request
from sqlalchemy import select

from service.db import Database
from service.models import Scope, Token, utcnow
from service.problems import ApiProblem

SCOPES: tuple[str, ...] = tuple(scope.value for scope in Scope)
F = TypeVar("F", bound=Callable[..., Any])


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create_token(db: Database, name: str, scopes: tuple[str, ...]) -> tuple[Token, str]:
    """A new token; the returned plain text is shown once and never stored."""
    unknown = set(scopes) - set(SCOPES)
    if unknown:
        raise ValueError(f"unknown scope(s) {', '.join(sorted(unknown))}; choose from {', '.join(SCOPES)}")
    token_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    row = Token(id=token_id, name=name, secret_hash=_hash(secret), scopes=" ".join(sorted(set(scopes))))
    with db.session() as s:
        s.add(row)
    return row, f"es_{token_id}_{secret}"


def verify(db: Database, presented: str) -> Token | None:
    """The live token matching the presented text, or None."""
    parts = presented.split("_", 2)
    if len(parts) != 3 or parts[0] != "es":
        return None
    with db.session() as s:
        row = s.execute(select(Token).where(Token.id == parts[1])).scalar_one_or_none()
    if row is None or row.revoked_at is not None or not hmac.compare_digest(row.secret_hash, _hash(parts[2])):
        return None
    return row


def revoke(db: Database, token_id: str) -> bool:
    with db.session() as s:
        row = s.get(Token, token_id)
        if row is None:
            return False
        row.revoked_at = utcnow()
    return True


def current_token() -> Token:
    token: Token = g.token
    return token


def sees_everything() -> bool:
    return Scope.ADMIN in current_token().scope_set


def caller_or_none() -> Token | None:
    """The caller's token on a route that anonymous callers may use too (``require(..., anonymous=True)``)."""
    token: Token | None = g.get("token")
    return token


_UNCHECKED = object()


def _verified_header() -> Token | None:
    """The token of a well-formed ``Authorization: Bearer`` header if it is valid, else None; looked up once per
    request (the rate limiter keys by it before the view's ``require`` checks it)."""
    cached = g.get("_verified_token", _UNCHECKED)
    if cached is not _UNCHECKED:
        found: Token | None = cached
        return found
    header = request.headers.get("Authorization", "")
    token = None
    if header.lower().startswith("bearer "):
        token = verify(current_app.extensions["evalserve"].db, header[7:].strip())
    g._verified_token = token
    return token


def caller_key() -> str:
    """Who a request counts against for rate limits: its valid token's id, else (anonymous, or an invalid token,
    which gets a 401 anyway) the remote address."""
    token = _verified_header()
    return f"token:{token.id}" if token is not None else f"addr:{request.remote_addr or '-'}"


def caller_is_admin() -> bool:
    """Whether the request carries a valid admin token (exempt from rate limits and quotas)."""
    token = _verified_header()
    return token is not None and Scope.ADMIN in token.scope_set


def _presented_token() -> Token | None:
    """The request's valid bearer token; None without an Authorization header; 401 for a bad one."""
    header = request.headers.get("Authorization", "")
    if not header:
        return None
    if not header.lower().startswith("bearer "):
        raise ApiProblem(401, "unauthorized", "send an API token: 'Authorization: Bearer <token>'",
                         headers={"WWW-Authenticate": 'Bearer realm="evalserve"'})
    token = _verified_header()
    if token is None:
        raise ApiProblem(401, "unauthorized", "the API token is not valid (unknown, revoked or mistyped)",
                         headers={"WWW-Authenticate": 'Bearer realm="evalserve", error="invalid_token"'})
    return token


def require(scope: Scope | str, *, anonymous: bool = False) -> Callable[[F], F]:
    """Decorator: the request must carry a valid bearer token with ``scope`` (admin implies every scope; an
    unknown scope fails when the view is declared). ``anonymous``: a request without a token is let through too
    (public leaderboards); the view decides."""
    needed = Scope(scope)

    def decorate(view: F) -> F:
        @wraps(view)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            token = _presented_token()
            if token is None:
                if anonymous:
                    g.token = None
                    return view(*args, **kwargs)
                raise ApiProblem(401, "unauthorized", "send an API token: 'Authorization: Bearer <token>'",
                                 headers={"WWW-Authenticate": 'Bearer realm="evalserve"'})
            if needed not in token.scope_set and Scope.ADMIN not in token.scope_set:
                raise ApiProblem(403, "forbidden", f"this token lacks the {needed.value!r} scope")
            g.token = token
            return view(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
