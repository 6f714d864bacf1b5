"""A caller's jobs as the ``/v1/jobs`` routes show them: a page of them, one job (its document), cancelling one,
its result in a format and its plot. Flask-free: the caller's token is passed in, refusals are
:class:`~core.errors.ServiceError`, and each function takes the request's database session (``job_now``, a
long-poll's next look, opens its own: it must see the job as committed now, not as the request first read it)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from evalserve.service.access.owners import visible, visible_row
from evalserve.service.core.errors import ServiceError
from evalserve.service.core.etags import etag_of, matches
from evalserve.service.core.paging import page_of
from evalserve.service.core.problem_codes import EngineCode, ProblemCode
from evalserve.service.core.state import ServiceState
from evalserve.service.jobs import callbacks
from evalserve.service.jobs.document import job_document
from evalserve.service.jobs.kinds import KINDS, NoPlot
from evalserve.service.jobs.lifecycle import cancel_in
from evalserve.service.store.db import savepoint
from evalserve.service.store.models import Job, JobState, Token
from evalserve.service.store.unit_of_work import after_commit
from evalserve.service.webhooks.delivery import publish_deliveries
from evaluation.problems import InputError

log = logging.getLogger(__name__)


def list_jobs(s: Session, st: ServiceState, token: Token, pagination: Any) -> list[dict[str, Any]]:
    """A page of the caller's jobs (an admin's: every job), newest first."""
    rows = page_of(s, visible(select(Job), Job, token), Job.created_at.desc(), pagination)
    return [job_document(j) for j in rows]


def shown_job(s: Session, st: ServiceState, token: Token, job_id: str) -> dict[str, Any]:
    """The caller's job as the API shows it, or a 404."""
    return job_document(visible_row(s, Job, job_id, "job", token))


def job_now(st: ServiceState, job_id: str) -> dict[str, Any]:
    """A job already shown to the caller, as it is now (a long-poll's next look)."""
    with st.db.session() as s:
        job = s.get(Job, job_id)
        assert job is not None  # jobs are never deleted
        return job_document(job)


def cancel_job(s: Session, st: ServiceState, token: Token, job_id: str) -> dict[str, Any]:
    """Cancel the caller's job -- at once when queued, at its next step when running -- and record its callback
    if that ended it; the job as it is then. The callback's wake-up is sent after the commit."""
    job = visible_row(s, Job, job_id, "job", token)
    cancel_in(s, job_id)
    s.refresh(job)
    delivery = _record_callback(s, job)
    document = job_document(job)
    if delivery is not None:
        after_commit(s, lambda: publish_deliveries(st.queue.celery, [delivery]))
    return document


def _record_callback(s: Session, job: Job) -> str | None:
    """The job's callback delivery, if cancelling ended it; never fails the cancel (a savepoint keeps a refused
    row, recorded by a worker meanwhile, from undoing it)."""
    try:
        with savepoint(s):
            return callbacks.record_in(s, job)
    except Exception:
        log.exception("could not record the callback of job %s", job.id)
        return None


@dataclass(frozen=True)
class RenderedResult:
    """A succeeded job's result in one format, and its ETag; ``text`` is None when the client has it already."""

    tag: str
    text: str | None


def _succeeded(job: Job, *, with_error: bool) -> str:
    """The job's result blob, or a 409 naming the state it is in."""
    if job.state != JobState.SUCCEEDED or job.result_sha256 is None:
        detail = f"job {job.id} is {job.state}"
        if with_error and job.error:
            detail += f": {job.error['message']}"
        raise ServiceError(409, ProblemCode.of_job(job.state), detail)
    return job.result_sha256


def job_result(s: Session, st: ServiceState, token: Token, job_id: str, fmt: str, per_topic: bool | None,
               known: set[str]) -> RenderedResult:
    """The caller's succeeded job's result in ``fmt`` (per-topic rows as asked, else as the job asked); a result
    never changes, so a client that names its tag in ``known`` gets the tag alone."""
    job = visible_row(s, Job, job_id, "job", token)
    sha256 = _succeeded(job, with_error=True)
    kind = KINDS[job.kind]
    shown_per_topic = kind.parse(job.request).fields()["per_topic"] if per_topic is None else per_topic
    tag = etag_of("result", sha256, fmt, shown_per_topic)
    if matches(tag, known):
        return RenderedResult(tag, None)
    document = json.loads(st.blobs.get(s, sha256))
    if fmt not in kind.formats:
        raise ServiceError(422, ProblemCode.FORMAT_NOT_AVAILABLE, kind.formats_message)
    return RenderedResult(tag, kind.render(document, fmt, shown_per_topic))


def job_plot(s: Session, st: ServiceState, token: Token, job_id: str, fmt: str) -> bytes:
    """A plot of the caller's succeeded job (``png`` or ``svg``), or a 422 when its kind draws none."""
    job = visible_row(s, Job, job_id, "job", token)
    document = json.loads(st.blobs.get(s, _succeeded(job, with_error=False)))
    kind = KINDS[job.kind]
    try:
        if kind.plot is None:
            raise NoPlot(f"a {kind.name} job has no plot")
        image: bytes = kind.plot(document, kind.parse(job.request), fmt)
    except NoPlot as exc:
        raise ServiceError(422, ProblemCode.PLOT_UNAVAILABLE, str(exc)) from None
    except InputError as exc:
        raise ServiceError(422, EngineCode(exc.problems[0].code), exc.problems[0].message) from None
    return image
