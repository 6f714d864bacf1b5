"""The meta-evaluation job kind: a method (unanimity, discriminative power, ...) over an evaluation job's results
or over runs evaluated first (``POST /v1/meta-evaluations``). Results: JSON or the method's table from the stored
document, HTML/LaTeX reports typeset from the content its worker built, and ASL curves of discriminative power
drawn by its worker."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evalserve.service.jobs.kinds.base import JobKind, JobKindName, JobRequest, NoPlot
from evaluation.result_formats import META_FORMATS, REPORT_FORMATS, ResultFormat, one_of
from evaluation.side_registry import OnDemand

META = JobKindName.META


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


def render(document: dict[str, Any], request: JobRequest, fmt: str, per_topic: bool) -> str:
    """JSON or the method's table (reports are typeset from the stored report content)."""
    if fmt == ResultFormat.JSON:
        return json.dumps(document, indent=2) + "\n"
    text: str = OnDemand("evaluation.meta.render", "render_text")(document)
    return text


def plot(document: dict[str, Any], request: JobRequest, fmt: str) -> bytes:
    """ASL curves of a discriminative-power result (drawn by the worker: matplotlib)."""
    if "discriminative_power" not in document:
        method = getattr(request, "method", "meta-evaluation")
        raise NoPlot(f"a {method} result has no plot; discriminative-power jobs (ASL curves) and evaluation jobs"
                     " (score distributions) have")
    image: bytes = OnDemand("evaluation.meta.plots", "asl_curves")(document, fmt)
    return image


KIND = JobKind(
    META, MetaRequest.from_json,
    META_FORMATS, render, f"a meta-evaluation result is {one_of(META_FORMATS)}",
    plot=plot, reports=REPORT_FORMATS,
)
