"""``Idempotency-Key`` on POST: a retried request (same key, same body) gets the first response again instead of
creating a second collection, run or job; the same key with a different body is refused (422)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import Response, make_response, request
from sqlalchemy.exc import IntegrityError

from service.auth import current_token
from service.models import IdempotencyRecord
from service.problems import ApiProblem
from service.state import state

F = TypeVar("F", bound=Callable[..., Any])
HEADER = "Idempotency-Key"


def idempotent(view: F) -> F:
    """Wrap a POST view (inside authentication) so that its response is stored under the request's key."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        key = request.headers.get(HEADER)
        if not key:
            return view(*args, **kwargs)
        if len(key) > 200:
            raise ApiProblem(400, "bad-idempotency-key", f"{HEADER} may have at most 200 characters")
        owner = current_token().id
        digest = hashlib.sha256(request.method.encode() + request.full_path.encode() + b"\0"
                                + request.get_data(cache=True)).hexdigest()
        db = state().db
        with db.session() as s:
            found = s.get(IdempotencyRecord, (owner, key))
        if found is not None:
            return _replay(found, digest)
        response: Response = make_response(view(*args, **kwargs))
        if response.status_code < 500:
            record = IdempotencyRecord(owner_id=owner, key=key, request_hash=digest, status=response.status_code,
                                       body=response.get_data(),
                                       headers={k: v for k, v in response.headers.items()
                                                if k in ("Content-Type", "Location")})
            try:
                with db.session() as s:
                    s.add(record)
            except IntegrityError:  # a concurrent retry stored its response first
                with db.session() as s:
                    first = s.get(IdempotencyRecord, (owner, key))
                if first is not None:
                    return _replay(first, digest)
        return response

    return wrapper  # type: ignore[return-value]


def _replay(record: IdempotencyRecord, digest: str) -> Response:
    if record.request_hash != digest:
        raise ApiProblem(422, "idempotency-key-reused",
                         f"{HEADER} was already used for a different request; use a new key for a new request")
    response = Response(record.body, status=record.status)
    for k, v in record.headers.items():
        response.headers[k] = v
    response.headers["Idempotent-Replayed"] = "true"
    return response
