"""Who is calling, over HTTP: the ``Authorization: Bearer`` header checked once per request (``access.tokens``
verifies it), the ``require`` decorator for a route's scope, and the caller's token for the views."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import g, request

from evalserve.service.access.principal import budget_owner
from evalserve.service.access.tokens import SCOPES, create_token, revoke, verify
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.store.models import Scope, Token
from evalserve.service.web.context import session
from evalserve.service.web.problems import ApiProblem

F = TypeVar("F", bound=Callable[..., Any])
__all__ = ["ANYONE", "SCOPES", "caller_is_admin", "caller_key", "caller_or_none", "create_token", "current_token",
           "require", "revoke", "sees_everything", "verify"]

#: the OpenAPI security of an operation that works with a token or without one (public tasks, sign-up, invitations)
ANYONE: list[dict[str, list[str]]] = [{}, {"bearerAuth": []}]


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
        s = session()
        token = verify(s, header[7:].strip())
        if token is not None:  # a value for the request, untouched by what its unit of work expires or rolls back
            s.expunge(token)
    g._verified_token = token
    return token


def caller_key() -> str:
    """Who a request counts against for rate limits: its valid token's user (``principal.budget_owner``: one budget
    whichever of the user's tokens is used), else (anonymous, or an invalid token, which gets a 401 anyway) the
    remote address."""
    token = _verified_header()
    return budget_owner(token) if token is not None else f"addr:{request.remote_addr or '-'}"


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
        raise ApiProblem(401, ProblemCode.UNAUTHORIZED, "send an API token: 'Authorization: Bearer <token>'",
                         headers={"WWW-Authenticate": 'Bearer realm="evalserve"'})
    token = _verified_header()
    if token is None:
        raise ApiProblem(401, ProblemCode.UNAUTHORIZED, "the API token is not valid (unknown, revoked or mistyped)",
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
                raise ApiProblem(401, ProblemCode.UNAUTHORIZED, "send an API token: 'Authorization: Bearer <token>'",
                                 headers={"WWW-Authenticate": 'Bearer realm="evalserve"'})
            if needed not in token.scope_set and Scope.ADMIN not in token.scope_set:
                raise ApiProblem(403, ProblemCode.FORBIDDEN, f"this token lacks the {needed.value!r} scope")
            g.token = token
            return view(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
