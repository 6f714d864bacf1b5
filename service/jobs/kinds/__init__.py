"""Job kinds: what each kind of job asks for -- a frozen, typed request, to and from the JSON kept on the job's
row -- and how its result is shown, one module per kind (``evaluation``, ``meta``) gathered in one table
(``KINDS``).

To add a job kind: a module here with its request type (``from_json``, ``to_json``) and its ``JobKind`` (formats,
renderer, whether it splits, its plot), one entry in ``_KINDS``, and the function that runs it in
``jobrun.kinds.RUNS`` (``(ctx, claim, lease) -> result document``); the job document, the result and plot views
and the schemas read the table (docs/architecture.md, "A job kind").
"""

from __future__ import annotations

from evalserve.service.jobs.kinds import evaluation, meta
from evalserve.service.jobs.kinds.base import (
           NO_PLOT,
           PLOT_FORMATS,
           PLOT_REQUESTED,
           REPORT,
           JobKind,
           JobKindName,
           JobRequest,
           NoPlot,
           plot_output,
           report_output,
)
from evalserve.service.jobs.kinds.evaluation import EVALUATION, EvaluationRequest
from evalserve.service.jobs.kinds.meta import META, MetaRequest

_KINDS: tuple[JobKind, ...] = (evaluation.KIND, meta.KIND)

#: every job kind by name (add new ones to ``_KINDS``)
KINDS: dict[str, JobKind] = {k.name: k for k in _KINDS}

__all__ = ["EVALUATION", "KINDS", "META", "NO_PLOT", "PLOT_FORMATS", "PLOT_REQUESTED", "REPORT",
           "EvaluationRequest", "JobKind", "JobKindName", "JobRequest", "MetaRequest", "NoPlot", "plot_output",
           "report_output"]
