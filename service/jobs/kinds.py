"""Job kinds: what each kind of job asks for -- a frozen, typed request, to and from the JSON kept on the job's
row -- and how it is run and shown, in one table (``KINDS``).

To add a job kind: write its request type (``from_json``, ``to_json``, ``fields``), declare a ``JobKind`` in
``_KINDS`` and add the function that runs it to ``jobrun.runner.RUNS`` (``(ctx, claim, lease) -> result
document``); the result and plot views and the schemas read the table (docs/architecture.md, "A job kind").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from evaluation.enums import StrEnum
from evaluation.result_formats import EVALUATION_FORMATS, META_FORMATS, REPORT_FORMATS, ResultFormat, one_of
from evaluation.side_registry import OnDemand


class JobKindName(StrEnum):
    """The name of a job kind: ``jobs.kind`` in the database and ``kind`` in the job document."""

    EVALUATION = "evaluation"  # evaluate runs with measures
    META = "meta"  # meta-evaluate measures and runs


class JobRequest(Protocol):
    """What every kind's request offers: its JSON (as stored on the job) and the fields the job document shows."""

    def to_json(self) -> dict[str, Any]: ...

    def fields(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class EvaluationRequest:
    """Evaluate ``runs`` of the job's collection with ``measures``; a shared task's submission names its task,
    submission and the task version it was evaluated for."""

    runs: tuple[str, ...]
    measures: tuple[str, ...]
    ties: str = "trec"
    topics: str = "common"
    per_topic: bool = False
    task: str | None = None
    submission: str | None = None
    version: int | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EvaluationRequest:
        version = data.get("version")
        return cls(tuple(data.get("runs", ())), tuple(data.get("measures", ())), data.get("ties", "trec"),
                   data.get("topics", "common"), bool(data.get("per_topic", False)), data.get("task"),
                   data.get("submission"), None if version is None else int(version))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"runs": list(self.runs), "measures": list(self.measures), "ties": self.ties,
                               "topics": self.topics, "per_topic": self.per_topic}
        if self.submission is not None:
            out.update(task=self.task, submission=self.submission, version=self.version)
        return out

    def fields(self) -> dict[str, Any]:
        return {"method": None, "evaluation": None, "runs": list(self.runs), "measures": list(self.measures),
                "ties": self.ties, "topics": self.topics, "per_topic": self.per_topic}


@dataclass(frozen=True)
class MetaRequest:
    """Meta-evaluate with ``method`` (its checked ``options``): the results of a succeeded ``evaluation`` job
    (optionally only some of its ``measures``), or ``runs`` evaluated first with ``measures``."""

    method: str
    options: Mapping[str, Any] = field(default_factory=dict)
    evaluation: str | None = None
    runs: tuple[str, ...] = ()
    measures: tuple[str, ...] = ()
    ties: str = "trec"
    topics: str = "common"

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MetaRequest:
        return cls(data["method"], dict(data.get("options") or {}), data.get("evaluation"),
                   tuple(data.get("runs", ())), tuple(data.get("measures", ())), data.get("ties", "trec"),
                   data.get("topics", "common"))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"method": self.method, "options": dict(self.options)}
        if self.evaluation is not None:
            out.update(evaluation=self.evaluation, measures=list(self.measures))
        else:
            out.update(runs=list(self.runs), measures=list(self.measures), ties=self.ties, topics=self.topics)
        return out

    def fields(self) -> dict[str, Any]:
        return {"method": self.method, "evaluation": self.evaluation, "runs": list(self.runs),
                "measures": list(self.measures), "ties": self.ties, "topics": self.topics, "per_topic": False}


class NoPlot(Exception):
    """This job's result has nothing to draw (the message says which results have)."""


@dataclass(frozen=True)
class JobKind:
    """One kind of job: its request type, the result formats it answers (the first is the default; ``render``
    turns the stored document into one), whether it may be split over workers, and its plot (None: no plot)."""

    name: str
    parse: Callable[[Mapping[str, Any]], JobRequest]
    formats: tuple[str, ...]
    render: Callable[[dict[str, Any], str, bool], str]  # (document, format, per_topic) -> text
    formats_message: str  # the 422 detail for another format
    splits: bool = False
    plot: Callable[[dict[str, Any], JobRequest, str], bytes] | None = None  # may raise NoPlot


def _render_meta(document: dict[str, Any], fmt: str, per_topic: bool) -> str:
    if fmt == ResultFormat.JSON:
        return json.dumps(document, indent=2) + "\n"
    if fmt in REPORT_FORMATS:
        report: str = OnDemand("evaluation.reports", "render_report")(document, fmt)
        return report
    text: str = OnDemand("evaluation.meta.render", "render_text")(document)
    return text


def _plot_evaluation(document: dict[str, Any], request: JobRequest, fmt: str) -> bytes:
    from evaluation.meta.table import ScoreTable  # plots and tables load on first use, not with the API

    image: bytes = OnDemand("evaluation.meta.plots", "score_distributions")(ScoreTable.from_document(document), fmt)
    return image


def _plot_meta(document: dict[str, Any], request: JobRequest, fmt: str) -> bytes:
    if "discriminative_power" not in document:
        method = request.fields()["method"]
        raise NoPlot(f"a {method} result has no plot; discriminative-power jobs (ASL curves) and evaluation jobs"
                     " (score distributions) have")
    image: bytes = OnDemand("evaluation.meta.plots", "asl_curves")(document, fmt)
    return image


_KINDS: tuple[JobKind, ...] = (
    JobKind(
        JobKindName.EVALUATION, EvaluationRequest.from_json,
        EVALUATION_FORMATS, OnDemand("evaluation.reports", "render_document"),
        f"an evaluation result is {one_of(EVALUATION_FORMATS)}", splits=True, plot=_plot_evaluation,
    ),
    JobKind(
        JobKindName.META, MetaRequest.from_json,
        META_FORMATS, _render_meta, f"a meta-evaluation result is {one_of(META_FORMATS)}",
        plot=_plot_meta,
    ),
)

#: every job kind by name (add new ones to ``_KINDS``)
KINDS: dict[str, JobKind] = {k.name: k for k in _KINDS}
