"""A caller's jobs as the ``/v1/jobs`` routes show them: a page of them, one job (its document), cancelling one,
its result in a format and its plot (streamed or typeset from what its worker stored: nothing is computed here; a
plot is drawn by a worker when first asked for).
Flask-free: the caller's token is passed in, refusals are :class:`~core.errors.ServiceError`, and each function
takes the request's database session (``job_now``, a long-poll's next look, opens its own: it must see the job as
committed now, not as the request first read it)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from evalserve.service.access.owners import visible, visible_row
from evalserve.service.broker.messages import DRAW_PLOTS_TASK, publish
from evalserve.service.core.errors import ServiceError
from evalserve.service.core.etags import etag_of, matches
from evalserve.service.core.paging import page_of
from evalserve.service.core.problem_codes import EngineCode, ProblemCode
from evalserve.service.core.state import ServiceState
from evalserve.service.jobs import callbacks
from evalserve.service.jobs.document import flat_fields, job_document
from evalserve.service.jobs.kinds import KINDS, NO_PLOT, PLOT_REQUESTED, REPORT, plot_output, report_output
from evalserve.service.jobs.lifecycle import cancel_in
from evalserve.service.store.blobs import BlobStore
from evalserve.service.store.db import savepoint
from evalserve.service.store.models import Job, JobOutput, JobState, Token, utcnow
from evalserve.service.store.unit_of_work import after_commit
from evalserve.service.webhooks.delivery import publish_deliveries
from evaluation.side_registry import OnDemand

log = logging.getLogger(__name__)

#: seconds after which a plot asked for and still not drawn is asked for again (its message was lost)
REDRAW_SECONDS = 60.0


def list_jobs(s: Session, st: ServiceState, token: Token, pagination: Any) -> list[dict[str, Any]]:
    """A page of the caller's jobs (an admin's: every job), newest first."""
    rows = page_of(s, visible(select(Job), Job, token), Job.created_at.desc(), pagination)
    return [job_document(j) for j in rows]


def shown_job(s: Session, st: ServiceState, token: Token, job_id: str) -> dict[str, Any]:
    """The caller's job as the API shows it, or a 404."""
    return job_document(visible_row(s, Job, job_id, "job", token))


def job_now(st: ServiceState, job_id: str) -> dict[str, Any]:
    """A job already shown to the caller, as it is now (a long-poll's next look)."""
    return jobs_now(st, [job_id])[job_id]  # jobs are never deleted


def jobs_now(st: ServiceState, job_ids: list[str]) -> dict[str, dict[str, Any]]:
    """Jobs already shown to their callers, as they are now, in one read (the long-polls' next look)."""
    with st.db.session() as s:
        return {job.id: job_document(job) for job in s.scalars(select(Job).where(Job.id.in_(job_ids)))}


def cancel_job(s: Session, st: ServiceState, token: Token, job_id: str,
               viewer: callbacks.CallbackViewer | None = None) -> dict[str, Any]:
    """Cancel the caller's job -- at once when queued, at its next step when running -- and record its callback
    if that ended it (``viewer``: what it carries, where not the job document); the job as it is then. The
    callback's wake-up is sent after the commit."""
    job = visible_row(s, Job, job_id, "job", token)
    cancel_in(s, job_id)
    s.refresh(job)
    delivery = _record_callback(s, job, st.blobs, viewer)
    document = job_document(job)
    if delivery is not None:
        after_commit(s, lambda: publish_deliveries(st.queue.celery, [delivery]))
    return document


def _record_callback(s: Session, job: Job, blobs: BlobStore, viewer: callbacks.CallbackViewer | None) -> str | None:
    """The job's callback delivery, if cancelling ended it; never fails the cancel (a savepoint keeps a refused
    row, recorded by a worker meanwhile, from undoing it)."""
    try:
        with savepoint(s):
            return callbacks.record_in(s, job, blobs, viewer)
    except Exception:
        log.exception("could not record the callback of job %s", job.id)
        return None


@dataclass(frozen=True)
class RenderedResult:
    """A succeeded job's result in one format, and its ETag; ``text`` is None when the client has it already (bytes:
    as its worker stored it, UTF-8)."""

    tag: str
    text: str | bytes | None


def _succeeded(job: Job, *, with_error: bool) -> str:
    """The job's result blob, or a 409 naming the state it is in."""
    if job.state != JobState.SUCCEEDED or job.result_sha256 is None:
        detail = f"job {job.id} is {job.state}"
        if with_error and job.error:
            detail += f": {job.error['message']}"
        raise ServiceError(409, ProblemCode.of_job(job.state), detail)
    return job.result_sha256


def _outputs(s: Session, job_id: str) -> dict[str, str]:
    """What the job's worker built from its result (name -> blob); none for a job that succeeded before 0011."""
    rows = s.execute(select(JobOutput.name, JobOutput.blob_sha256).where(JobOutput.job_id == job_id))
    return {name: sha for name, sha in rows}


def job_result(s: Session, st: ServiceState, token: Token, job_id: str, fmt: str, per_topic: bool | None,
               known: set[str]) -> RenderedResult:
    """The caller's succeeded job's result in ``fmt`` (per-topic rows as asked, else as the job asked); a result
    never changes, so a client that names its tag in ``known`` gets the tag alone. A report (``kind.reports``) is
    streamed as its worker typeset it (or typeset from the content it stored), computing nothing here; only a
    job that succeeded before its worker stored outputs has its report built now (and not stored)."""
    job = visible_row(s, Job, job_id, "job", token)
    sha256 = _succeeded(job, with_error=True)
    kind = KINDS[job.kind]
    shown_per_topic = flat_fields(kind.parse(job.request))["per_topic"] if per_topic is None else per_topic
    tag = etag_of("result", sha256, fmt, shown_per_topic)
    if matches(tag, known):
        return RenderedResult(tag, None)
    if fmt not in kind.formats:
        raise ServiceError(422, ProblemCode.FORMAT_NOT_AVAILABLE, kind.formats_message)
    outputs = _outputs(s, job.id) if fmt in kind.reports else {}
    if report_output(fmt) in outputs:  # typeset by the worker
        return RenderedResult(tag, st.blobs.get(s, outputs[report_output(fmt)]))
    content = outputs.get(REPORT)
    stored = st.blobs.get(s, content if content is not None else sha256)
    if content is not None:  # built by the worker, not typeset in this format
        return RenderedResult(tag, typeset(json.loads(stored), fmt))
    document = json.loads(stored)
    if fmt in kind.reports:  # succeeded before outputs were stored: built on demand, as before
        log.info("job %s has no stored report: building it in the API", job.id)
        report: str = OnDemand("evaluation.reports", "render_report")(document, fmt)
        return RenderedResult(tag, report)
    return RenderedResult(tag, kind.render(document, kind.parse(job.request), fmt, shown_per_topic))


def typeset(content: dict[str, Any], fmt: str) -> str:
    """Stored report content in ``fmt``: formatting only (``evaluation.reports.render``)."""
    from evaluation.reports import ReportContent, render  # no numpy, scipy or axioms: the model and typesetting

    return render(ReportContent.from_json(content), fmt)


def job_plot(s: Session, st: ServiceState, token: Token, job_id: str, fmt: str) -> bytes | None:
    """A plot of the caller's succeeded job (``png`` or ``svg``) as its worker drew it, a 422 when its kind draws
    none or its result has nothing to draw, or None while it is not drawn: the first such request asks a worker to
    draw it (``request_plot``; nothing is drawn here)."""
    job = visible_row(s, Job, job_id, "job", token)
    _succeeded(job, with_error=False)
    kind = KINDS[job.kind]
    if kind.plot is None:
        raise ServiceError(422, ProblemCode.PLOT_UNAVAILABLE, f"a {kind.name} job has no plot")
    outputs = _outputs(s, job.id)
    image = _stored_plot(s, st, outputs, fmt)
    if image is None:
        request_plot(s, st, job.id, outputs)
    return image


def plot_now(st: ServiceState, job_id: str, fmt: str) -> tuple[str, bytes | ServiceError | None]:
    """A plot request's next look (its own session, as committed now): the names of the job's outputs as a tag,
    and the plot once drawn, the refusal once the worker found nothing to draw, else None."""
    with st.db.session() as s:
        outputs = _outputs(s, job_id)
        try:
            found: bytes | ServiceError | None = _stored_plot(s, st, outputs, fmt)
        except ServiceError as refused:
            found = refused
    return ",".join(sorted(outputs)), found


def _stored_plot(s: Session, st: ServiceState, outputs: dict[str, str], fmt: str) -> bytes | None:
    """The stored plot in ``fmt``, the 422 of a job whose worker found nothing to draw, or None (not drawn)."""
    if plot_output(fmt) in outputs:
        return st.blobs.get(s, outputs[plot_output(fmt)])
    if NO_PLOT in outputs:  # the worker's refusal: ours (plot-unavailable) or the engine's problem code
        why = json.loads(st.blobs.get(s, outputs[NO_PLOT]))
        raise ServiceError(422, EngineCode(why["code"]), why["detail"])
    return None


def request_plot(s: Session, st: ServiceState, job_id: str, outputs: dict[str, str]) -> None:
    """Ask a worker to draw the job's plot (``evalserve.draw_plots``, published after the commit), once: the
    request is recorded as the output ``PLOT_REQUESTED`` (its time), and asked again only when that is older than
    ``REDRAW_SECONDS`` with nothing drawn (its message was lost). Concurrent first requests: one records it."""
    marker = outputs.get(PLOT_REQUESTED)
    now = utcnow()
    if marker is not None:
        asked = datetime.fromisoformat(json.loads(st.blobs.get(s, marker))["requested_at"])
        if (now - asked).total_seconds() < REDRAW_SECONDS:
            return
    sha = st.blobs.put(s, json.dumps({"requested_at": now.isoformat()}).encode())
    try:
        with savepoint(s):
            if marker is None:
                s.add(JobOutput(job_id=job_id, name=PLOT_REQUESTED, blob_sha256=sha))
            elif s.execute(update(JobOutput).where(JobOutput.job_id == job_id, JobOutput.name == PLOT_REQUESTED,
                                                   JobOutput.blob_sha256 == marker)
                           .values(blob_sha256=sha)).rowcount == 0:  # type: ignore[attr-defined]
                return  # asked again by another request meanwhile
    except IntegrityError:
        return  # asked first by another request

    def send() -> None:
        try:
            publish(st.queue.celery, DRAW_PLOTS_TASK, [job_id], queue=st.settings.queue)
        except Exception as exc:  # asked again by a request after REDRAW_SECONDS
            log.warning("could not ask a worker to draw job %s's plot (%s)", job_id, exc)

    after_commit(s, send)
