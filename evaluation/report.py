"""Results as documents: the JSON contract shared by the CLI and the service, TSV, and trec_eval's text layout.

JSON shape (a contract other tools rely on)::

    {"meta": {"ties": ..., "topics": ..., "evalserve_version": ..., "inputs": {"<file>": "<sha256>"},
              "warnings": [problem, ...]},
     "runs": {"<run name>": {"<canonical measure>": {"mean": float, "per_topic": {"<qid>": float}}}}}

``per_topic`` is present only when asked for. Runs and measures keep the order they were given in.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from evaluation.evaluator import RunScores
from evaluation.problems import Problem

FORMATS = ("json", "tsv", "trec_eval")


def engine_version() -> str:
    try:
        return metadata.version("evalserve")
    except metadata.PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


@dataclass(frozen=True)
class Report:
    """Everything one evaluation produced, ready to be rendered."""

    scores: Sequence[RunScores]
    measures: Sequence[str]
    ties: str
    topics: str
    inputs: Mapping[str, str] = field(default_factory=dict)  # file name -> sha256
    warnings: Sequence[Problem] = ()

    def as_json(self, per_topic: bool = False) -> dict[str, Any]:
        runs: dict[str, Any] = {}
        for s in self.scores:
            entry: dict[str, Any] = {}
            for m in self.measures:
                item: dict[str, Any] = {"mean": _finite(s.mean(m))}
                if per_topic:
                    item["per_topic"] = {t: _finite(v) for t, v in s.per_topic(m).items()}
                entry[m] = item
            runs[s.run] = entry
        return {
            "meta": {
                "ties": self.ties,
                "topics": self.topics,
                "evalserve_version": engine_version(),
                "inputs": dict(self.inputs),
                "warnings": [p.as_dict() for p in self.warnings],
            },
            "runs": runs,
        }

    def as_tsv(self, per_topic: bool = False) -> str:
        out = io.StringIO()
        out.write("run\tmeasure\ttopic\tvalue\n")
        for s in self.scores:
            for m in self.measures:
                if per_topic:
                    for t, v in s.per_topic(m).items():
                        out.write(f"{s.run}\t{m}\t{t}\t{_finite(v)!r}\n")
                out.write(f"{s.run}\t{m}\tall\t{_finite(s.mean(m))!r}\n")
        return out.getvalue()

    def as_trec_eval(self, per_topic: bool = False) -> str:
        """trec_eval's layout: ``measure<TAB>qid<TAB>value`` (4 decimals), topic blocks then ``all`` lines."""
        out = io.StringIO()
        for s in self.scores:
            if per_topic:
                for i, t in enumerate(s.topics):
                    for m in self.measures:
                        out.write(f"{m:<22}\t{t}\t{s.values[m][i]:.4f}\n")
            out.write(f"{'runid':<22}\tall\t{s.run}\n")
            out.write(f"{'num_q':<22}\tall\t{len(s.topics)}\n")
            for m in self.measures:
                out.write(f"{m:<22}\tall\t{s.mean(m):.4f}\n")
        return out.getvalue()

    def render(self, fmt: str, per_topic: bool = False) -> str:
        if fmt == "json":
            import json

            return json.dumps(self.as_json(per_topic), indent=2) + "\n"
        if fmt == "tsv":
            return self.as_tsv(per_topic)
        if fmt == "trec_eval":
            return self.as_trec_eval(per_topic)
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


def _finite(value: float) -> float:
    """Values are finite by construction; guard JSON against NaN/inf all the same."""
    return value if math.isfinite(value) else 0.0
