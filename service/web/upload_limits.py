"""The one check every upload route makes before it stores anything: single-valued fields given once, at most so
many run files and measures per request, and the caller's storage and job quotas (admins exempt from quotas); and
``in_flight``, the bound on uploads being validated at once (``inputs.inflight``), taken before the body is read."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar, cast

from flask import current_app, request

from evalserve.service.access.principal import budget_owner
from evalserve.service.access.quotas import check_jobs, check_storage
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.inputs.inflight import UploadGate, defer_until_store
from evalserve.service.web.auth import current_token, sees_everything
from evalserve.service.web.context import session, state
from evalserve.service.web.problems import PROBLEM_JSON, ApiProblem, ProblemSchema

F = TypeVar("F", bound=Callable[..., Any])
_GATE = "evalserve.uploads"  # the process's UploadGate in app.extensions
#: the OpenAPI response of a route under ``in_flight``
UPLOADS_BUSY = {"schema": ProblemSchema, "content_type": PROBLEM_JSON,
                "description": "the uploads being validated fill the server's memory budget (uploads-busy), with"
                               " Retry-After; nothing is stored"}


def upload_gate() -> UploadGate:
    """This API process's upload gate, made on first use (after gunicorn forked: each process has its own)."""
    gate = current_app.extensions.get(_GATE)
    if gate is None:
        settings = state().settings
        made = UploadGate.build(settings.uploads, settings.max_decompressed_bytes,
                                None if settings.embedded_broker else settings.broker_url, settings.queue)
        gate = current_app.extensions.setdefault(_GATE, made)
    return cast(UploadGate, gate)


def in_flight(view: F) -> F:
    """Decorator, under ``require``: the request holds a reservation in the upload gate while the view reads and
    validates its files (``503 uploads-busy`` with ``Retry-After`` at once when its declared size does not fit,
    before the body is read), released however the view ends -- an answer, an error or a client gone."""

    @functools.wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        declared, largest = request.content_length, current_app.config.get("MAX_CONTENT_LENGTH")
        if declared is not None and largest is not None and declared > largest:
            return view(*args, **kwargs)  # refused as too large (413) before its body is read: nothing to hold
        with upload_gate().reserve(declared, budget_owner(current_token())):
            return view(*args, **kwargs)

    return cast(F, wrapper)


def refuse_duplicate_fields(multi: Iterable[str] = ()) -> None:
    """422 naming a query, form or file field given more than once, unless it is one of ``multi`` (e.g. the
    repeated ``run`` files of ``/v1/submissions``): silently keeping the first would hide a client's mistake."""
    allowed = set(multi)
    for where, values in (("query", request.args), ("form", request.form), ("files", request.files)):
        for name in values:
            if name not in allowed and len(values.getlist(name)) > 1:
                raise ApiProblem(422, ProblemCode.DUPLICATE_FIELD, f"the {where} field {name!r} is given"
                                 f" {len(values.getlist(name))} times; it takes one value (nothing was stored)",
                                 [{"field": name, "code": ProblemCode.DUPLICATE_FIELD, "severity": "error",
                                   "message": "given more than once"}])


def check_upload(*, files: int = 0, measures: int = 0, stored: Sequence[bytes] = (), jobs: int = 0,
                 multi: Iterable[str] = ()) -> None:
    """Refuse a request that carries too much (413 ``too-many-files``, 422 for too many measures) or would take
    the caller over a quota (429 ``quota-exceeded`` with ``Retry-After``): ``files`` run files, ``measures``
    measure names, ``stored`` the files to store, ``jobs`` jobs to queue. Under ``in_flight`` the quotas are
    checked once the files are validated, just before they are stored (their lock is not held meanwhile)."""
    refuse_duplicate_fields(multi)
    st = state()
    limits = st.settings.limits
    if files > limits.max_runs_per_request:
        raise ApiProblem(413, ProblemCode.TOO_MANY_FILES, f"{files} run files in one request; at most"
                         f" {limits.max_runs_per_request} are taken (EVALSERVE_MAX_RUNS_PER_REQUEST): send them in"
                         " several requests; nothing was stored")
    if measures > limits.max_measures:
        message = f"Longer than maximum length {limits.max_measures}."
        raise ApiProblem(422, ProblemCode.INVALID_REQUEST,
                         f"the request has invalid fields: measures: {message} ({measures}"
                         " measures given)",
                         [{"field": "measures", "code": ProblemCode.INVALID_FIELD, "message": message,
                           "severity": "error"}])
    if sees_everything() or not (stored or jobs):
        return
    owner = current_token().id  # counted in the request's transaction, which the inserts they guard are in too
    to_store = list(stored)

    def quotas() -> None:
        if to_store:
            check_storage(session(), limits, owner, to_store)
        if jobs:
            check_jobs(session(), limits, owner, jobs)

    if not defer_until_store(quotas):  # under ``in_flight``: once the files are valid, just before they are stored
        quotas()
