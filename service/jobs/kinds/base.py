"""What every job kind declares (``JobKind``) and what its request offers (``JobRequest``); the kinds themselves
are one module each beside this one (``evaluation``, ``meta``), gathered in ``KINDS`` by the package."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from evaluation.enums import StrEnum

#: the formats a plot is drawn in; a worker stores each as the job's output ``plot.<format>``
PLOT_FORMATS = ("png", "svg")
#: the name of the stored report content (``evaluation.reports.ReportContent`` as JSON) among a job's outputs
REPORT = "report"
#: why a job has no plot, ``{"code", "detail"}`` as JSON (the plot view's 422), stored in place of its plots
NO_PLOT = "plot.unavailable"
#: when a job's plot was first asked for, ``{"requested_at"}`` as JSON: a worker is drawing it (``jobrun.drawing``)
PLOT_REQUESTED = "plot.requested"


class JobKindName(StrEnum):
    """The name of a job kind: ``jobs.kind`` in the database and ``kind`` in the job document."""

    EVALUATION = "evaluation"  # evaluate runs with measures
    META = "meta"  # meta-evaluate measures and runs


class JobRequest(Protocol):
    """What every kind's request offers: its JSON, as stored on the job and shown as the job document's
    ``request``. The document's older flat fields (``runs``, ``measures``, ...) are read from the request's
    attributes of those names when it has them (``jobs.document``)."""

    def to_json(self) -> dict[str, Any]: ...


class NoPlot(Exception):
    """This job's result has nothing to draw (the message says which results have)."""


def report_output(fmt: str) -> str:
    """The name of a job's stored report typeset in ``fmt`` (html, latex: streamed as stored)."""
    return f"{REPORT}.{fmt}"


def plot_output(fmt: str) -> str:
    """The name of a job's stored plot in ``fmt``."""
    return f"plot.{fmt}"


@dataclass(frozen=True)
class JobKind:
    """One kind of job: its request type, the result formats it answers (the first is the default), whether it
    may be split over workers (its request then has ``runs``), and what its worker stores beside the result.

    ``render`` turns the stored document into a text format (pure formatting, in the API; the request says
    what was asked, e.g. which trec_eval header lines); ``reports`` are the
    report formats its worker builds (the content, ``REPORT``) and typesets (``report_output``), streamed as
    stored; ``plot`` draws the result (on the worker, in every ``PLOT_FORMATS``; None: no plot; it may raise
    ``NoPlot``)."""

    name: str
    parse: Callable[[Mapping[str, Any]], JobRequest]
    formats: tuple[str, ...]
    render: Callable[[dict[str, Any], JobRequest, str, bool], str]  # (document, request, format, per_topic)
    formats_message: str  # the 422 detail for another format
    splits: bool = False
    plot: Callable[[dict[str, Any], JobRequest, str], bytes] | None = None  # may raise NoPlot
    reports: tuple[str, ...] = ()  # formats rendered from the stored report content
