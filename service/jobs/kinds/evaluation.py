"""The evaluation job kind: measures over runs of a collection (``POST /v1/evaluations``, task submissions).
Results: the CLI's text formats rendered from the stored document, HTML/LaTeX reports typeset from the content
its worker built, and per-topic score distributions drawn by its worker."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalserve.service.jobs.kinds.base import JobKind, JobKindName, JobRequest
from evaluation.result_formats import EVALUATION_FORMATS, REPORT_FORMATS, one_of
from evaluation.side_registry import OnDemand

EVALUATION = JobKindName.EVALUATION


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


def plot(document: dict[str, Any], request: JobRequest, fmt: str) -> bytes:
    """Per-topic score distributions of each run (drawn by the worker: matplotlib)."""
    from evaluation.meta.table import ScoreTable

    image: bytes = OnDemand("evaluation.meta.plots", "score_distributions")(ScoreTable.from_document(document), fmt)
    return image


def render(document: dict[str, Any], request: JobRequest, fmt: str, per_topic: bool) -> str:
    """A text format of the result, as ``evalserve evaluate`` prints it for the same measures (trec_eval's
    ``runid``/``num_q`` lines only for the default measures, ``evaluation.report.trec_eval_header``)."""
    measures = request.measures if isinstance(request, EvaluationRequest) else ()
    header = OnDemand("evaluation.report", "trec_eval_header")(measures)
    text: str = OnDemand("evaluation.report", "render_document")(document, fmt, per_topic, header)
    return text


KIND = JobKind(
    EVALUATION, EvaluationRequest.from_json,
    EVALUATION_FORMATS, render,
    f"an evaluation result is {one_of(EVALUATION_FORMATS)}", splits=True, plot=plot,
    reports=REPORT_FORMATS,
)
