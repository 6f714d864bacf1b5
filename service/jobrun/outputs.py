"""What a worker builds from a succeeded job's result before marking it succeeded -- the report content and its
typeset formats -- stored as blobs and recorded as the job's outputs (``store.models.JobOutput``), so the API only
streams stored bytes or typesets stored content (``jobs.queries``). Plots are drawn later, when first asked for
(``jobrun.drawing``), by ``plots`` here."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.jobrun.context import WorkerContext
from evalserve.service.jobs.kinds import (
    NO_PLOT,
    PLOT_FORMATS,
    REPORT,
    JobKind,
    JobRequest,
    NoPlot,
    plot_output,
    report_output,
)
from evaluation.problems import InputError

log = logging.getLogger(__name__)

#: (kind, result document, parsed request) -> {output name: bytes}
OutputBuilder = Callable[[JobKind, dict[str, Any], JobRequest], dict[str, bytes]]


def reports(document: dict[str, Any], formats: tuple[str, ...]) -> dict[str, bytes]:
    """The report on a result document, computed (significance tests, axiomatic profiles): its content as JSON
    (``REPORT``: ``evaluation.reports.render`` typesets it without computing) and typeset in each of ``formats``
    (streamed as stored)."""
    from evaluation.reports import build, render  # numpy, scipy and the axioms: on the worker only

    content = build(document)
    out = {REPORT: json.dumps(content.to_json(), separators=(",", ":")).encode()}
    out.update((report_output(fmt), render(content, fmt).encode()) for fmt in formats)
    return out


def plots(kind: JobKind, document: dict[str, Any], request: JobRequest) -> dict[str, bytes]:
    """The kind's plot in every format, or why there is none (``NO_PLOT``)."""
    if kind.plot is None:
        return {}
    try:
        return {plot_output(fmt): kind.plot(document, request, fmt) for fmt in PLOT_FORMATS}
    except NoPlot as exc:
        why = {"code": ProblemCode.PLOT_UNAVAILABLE, "detail": str(exc)}
    except InputError as exc:  # matplotlib missing on the worker
        why = {"code": exc.problems[0].code, "detail": exc.problems[0].message}
    return {NO_PLOT: json.dumps(why).encode()}


def standard_outputs(kind: JobKind, document: dict[str, Any], request: JobRequest) -> dict[str, bytes]:
    """The report (content and typeset) if the kind offers reports; its plot waits until asked for."""
    return reports(document, kind.reports) if kind.reports else {}


def store_outputs(ctx: WorkerContext, kind: JobKind, builder: OutputBuilder, document: dict[str, Any],
                  request: JobRequest) -> dict[str, str]:
    """Build a result's outputs and store each as a blob; ``{name: sha256}`` for ``lifecycle.finish``."""
    built = builder(kind, document, request)
    with ctx.db.session() as s:
        return {name: ctx.blobs.put(s, data) for name, data in built.items()}
