"""``Idempotency-Key`` on POST: a retried request (same key, same method, path, query and body) gets the first
response again instead of creating a second collection, run or job; the same key with a different request is
refused (422), and a retry that arrives while the first is still being processed waits for it, then replays it.

The key is reserved (a row with status 0) before the work starts, in the request's unit of work, so two concurrent
requests with one key never both run: the second waits for the first's transaction and replays its response. A
refused or failed request rolls back, its key with it; a committed reservation (left by an older version that
reserved keys in a transaction of their own, and died) expires.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import timedelta
from functools import wraps
from typing import Any, TypeVar

from flask import Response, make_response, request
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.inputs.inflight import before_store, defer_until_store, discard_deferred
from evalserve.service.store.db import savepoint, take_write_lock
from evalserve.service.store.models import IdempotencyRecord, as_utc, utcnow
from evalserve.service.web.auth import current_token
from evalserve.service.web.context import session
from evalserve.service.web.problems import ApiProblem

F = TypeVar("F", bound=Callable[..., Any])
HEADER = "Idempotency-Key"
IN_PROGRESS = 0
#: a reservation older than this belongs to a request whose process died; a retry may take it over
STALE_AFTER = timedelta(minutes=10)
REPLAYED_HEADERS = ("Content-Type", "Location", "Retry-After")


def idempotent(view: F) -> F:
    """Wrap a POST view (inside authentication) so that its response is stored under the request's key, in the
    request's unit of work: the key, the work and the stored response are committed together, or not at all."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        key = request.headers.get(HEADER)
        if not key:
            return view(*args, **kwargs)
        if len(key) > 200:
            raise ApiProblem(400, ProblemCode.BAD_IDEMPOTENCY_KEY, f"{HEADER} may have at most 200 characters")
        owner = current_token().id
        digest = hashlib.sha256(request.method.encode() + request.full_path.encode() + b"\0"
                                + request.get_data(cache=True)).hexdigest()
        s = session()

        def reserve() -> None:
            found = _reserve(s, owner, key, digest)
            if found is not None:
                raise _Replayed(_replay(found, digest))

        # a key whose request was answered is replayed at once, without a lock and before the view's own checks
        # (a retried submission whose quota its first attempt used up gets its first answer, not a 429)
        answered = s.get(IdempotencyRecord, (owner, key))
        if answered is not None and answered.status != IN_PROGRESS:
            return _replay(answered, digest)
        # an upload (``inputs.inflight``) reserves its key once its files are valid, just before it stores them,
        # so that the lock (on SQLite the database's write lock) is not held while they are validated
        deferred = defer_until_store(reserve)
        try:
            if not deferred:
                reserve()
            # a refused or failed request rolls the whole unit of work back, its key with it: the key may be used
            # again
            response: Response = make_response(view(*args, **kwargs))
            if response.status_code < 400:
                before_store()  # a deferred reservation the view did not reach: made now, before the record
        except _Replayed as replayed:
            s.rollback()  # what the view did before it found the key taken is not kept
            return replayed.response
        finally:
            discard_deferred(reserve)
        if response.status_code < 400:
            record = s.get(IdempotencyRecord, (owner, key))
            if record is not None:
                record.status = response.status_code
                record.body = response.get_data()
                record.headers = {k: v for k, v in response.headers.items() if k in REPLAYED_HEADERS}
        return response

    return wrapper  # type: ignore[return-value]


class _Replayed(Exception):
    """The key was used before: answer with its record (raised from a reservation deferred into the view)."""

    def __init__(self, response: Response) -> None:
        super().__init__("replayed")
        self.response = response


def _reserve(s: Session, owner: str, key: str, digest: str) -> IdempotencyRecord | None:
    """Reserve the key for this request in its transaction; returns the existing record instead when there is one.
    A concurrent request with the same key waits for this one's transaction to end (SQLite: the write lock;
    PostgreSQL: the key's unique index), then finds its record and replays it."""
    take_write_lock(s)
    for _ in range(2):
        existing = s.get(IdempotencyRecord, (owner, key))
        if existing is not None:
            created = as_utc(existing.created_at)
            if existing.status == IN_PROGRESS and created is not None and utcnow() - created > STALE_AFTER:
                s.delete(existing)  # left by a process that died before this one took the key over
                s.flush()
            else:
                return existing
        try:
            with savepoint(s):
                s.add(IdempotencyRecord(owner_id=owner, key=key, request_hash=digest, status=IN_PROGRESS,
                                        body=b"", headers={}))
            return None
        except IntegrityError:
            continue  # another request took the key and committed meanwhile: replay it
    raise ApiProblem(409, ProblemCode.IDEMPOTENCY_KEY_IN_PROGRESS, f"a request with this {HEADER} is being processed",
                     headers={"Retry-After": "1"})


def _replay(record: IdempotencyRecord, digest: str) -> Response:
    if record.request_hash != digest:
        raise ApiProblem(422, ProblemCode.IDEMPOTENCY_KEY_REUSED,
                         f"{HEADER} was already used for a different request; use a new key for a new request")
    if record.status == IN_PROGRESS:
        raise ApiProblem(409, ProblemCode.IDEMPOTENCY_KEY_IN_PROGRESS,
                         f"the first request with this {HEADER} is still being processed; retry shortly",
                         headers={"Retry-After": "1"})
    response = Response(record.body, status=record.status)
    for k, v in record.headers.items():
        response.headers[k] = v
    response.headers["Idempotent-Replayed"] = "true"
    return response
