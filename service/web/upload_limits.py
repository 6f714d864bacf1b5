"""The one check every upload route makes before it stores anything: single-valued fields given once, at most so
many run files and measures per request, and the caller's storage and job quotas (admins exempt from quotas)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from flask import request

from evalserve.service.access.quotas import check_jobs, check_storage
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.web.auth import current_token, sees_everything
from evalserve.service.web.context import session, state
from evalserve.service.web.problems import ApiProblem


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
    measure names, ``stored`` the files to store, ``jobs`` jobs to queue."""
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
    if stored:
        check_storage(session(), limits, owner, list(stored))
    if jobs:
        check_jobs(session(), limits, owner, jobs)
