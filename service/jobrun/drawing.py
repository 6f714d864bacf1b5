"""Drawing a succeeded job's plot when it is first asked for (task ``evalserve.draw_plots``, published by the plot
view: ``jobs.queries.job_plot``), not with every job: matplotlib takes about a second per job in both formats, 20
times what evaluating a TREC-size run takes, and most results are never drawn (issue 29's deadline rush). The
plots (every ``PLOT_FORMATS``), or why there is none (``NO_PLOT``), are stored as the job's outputs; drawing is
idempotent (a job drawn before, or by another worker meanwhile, is left as stored)."""

from __future__ import annotations

import json
import logging

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.jobrun.context import WorkerContext
from evalserve.service.jobrun.outputs import plots
from evalserve.service.jobs.kinds import KINDS, NO_PLOT, PLOT_FORMATS, plot_output
from evalserve.service.store.db import savepoint
from evalserve.service.store.models import Job, JobOutput, JobState

log = logging.getLogger(__name__)


def drawn(names: set[str] | dict[str, str]) -> bool:
    """Whether a job's outputs (their names) hold its plot in every format, or why it has none."""
    return NO_PLOT in names or all(plot_output(fmt) in names for fmt in PLOT_FORMATS)


def draw_plots(ctx: WorkerContext, job_id: str) -> str:
    """Draw and store job ``job_id``'s plots unless stored already; what happened (for logs and tests)."""
    with ctx.db.session() as s:
        job = s.get(Job, job_id)
        if job is None or job.state != JobState.SUCCEEDED or job.result_sha256 is None:
            return "skipped"
        if drawn(set(s.scalars(select(JobOutput.name).where(JobOutput.job_id == job_id)))):
            return "drawn before"
        kind = KINDS[job.kind]
        document = json.loads(ctx.blobs.get(s, job.result_sha256))
        request = kind.parse(job.request)
    try:
        built = plots(kind, document, request)
    except Exception as exc:  # a drawing bug must not leave the plot's readers waiting for ever
        log.exception("job %s: its plot could not be drawn", job_id)
        built = {NO_PLOT: json.dumps({"code": ProblemCode.PLOT_UNAVAILABLE,
                                      "detail": f"the plot could not be drawn ({type(exc).__name__})"}).encode()}
    with ctx.db.unit_of_work() as unit:
        s = unit.session
        for name, data in built.items():
            sha = ctx.blobs.put(s, data)
            try:
                with savepoint(s):
                    s.add(JobOutput(job_id=job_id, name=name, blob_sha256=sha))
            except IntegrityError:  # drawn by another worker meanwhile: the same bytes
                pass
    log.info("job %s: plot drawn (%s)", job_id, ", ".join(sorted(built)))
    return "drawn"
