"""Results as documents: the JSON contract shared by the CLI and the service, TSV, and trec_eval's text layout.

JSON shape (a contract other tools rely on)::

    {"meta": {"ties": ..., "topics": ..., "evalserve_version": ..., "inputs": {"<file>": "<sha256>"},
              "warnings": [problem, ...], "measures": {"<requested name>": "<canonical name>"},
              "tags": {"<run name>": "<run tag>"}},
     "runs": {"<run name>": {"<requested name>": {"mean": float, "per_topic": {"<qid>": float}}}}}

Measures are keyed by the name as requested (``P.10``, ``RBP(p=0.8)``); ``meta.measures`` gives each one's
canonical name. ``per_topic`` is present only when asked for. Runs and measures keep the order they were given in.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evaluation.csvcells import safe_cell
from evaluation.drop_in.trec_eval import NICKNAMES, sequential_sum, table_rank
from evaluation.evaluator import GEOMETRIC_FLOOR, RunScores
from evaluation.measures.names import trec_eval_label
from evaluation.measures.registry import default_registry
from evaluation.problems import FormatError, MeasureError, Problem
from evaluation.result_formats import EVALUATION_FORMATS, REPORT_FORMATS, ResultFormat
from evaluation.version import engine_version as engine_version

#: result formats; html and latex are reports for people, rendered by ``evaluation.reports`` (not this module)
FORMATS: tuple[str, ...] = tuple(f.value for f in EVALUATION_FORMATS)
#: trec_eval's lines before the ``all`` values: the run tag and the number of topics (``render_document``)
HEADER: tuple[str, ...] = ("runid", "num_q")
#: the formats ``render_document`` writes: the data itself, no computation
TEXT_FORMATS: tuple[str, ...] = tuple(f.value for f in EVALUATION_FORMATS if f not in REPORT_FORMATS)


@dataclass(frozen=True)
class Report:
    """Everything one evaluation produced, ready to be rendered."""

    scores: Sequence[RunScores]
    measures: Sequence[str]
    ties: str
    topics: str
    inputs: Mapping[str, str] = field(default_factory=dict)  # file name -> sha256
    warnings: Sequence[Problem] = ()
    canonical: Mapping[str, str] = field(default_factory=dict)  # requested name -> canonical name
    tags: Mapping[str, str] = field(default_factory=dict)  # run name -> its run tag (column 6)

    def as_json(self, per_topic: bool = False) -> dict[str, Any]:
        runs: dict[str, Any] = {}
        for s in self.scores:
            entry: dict[str, Any] = {}
            for m in self.measures:
                item: dict[str, Any] = {"mean": _finite(s.mean(m))}
                if per_topic:
                    item["per_topic"] = _finite_values(s.per_topic(m))
                entry[m] = item
            runs[s.run] = entry
        return {
            "meta": {
                "ties": self.ties,
                "topics": self.topics,
                "evalserve_version": engine_version(),
                "inputs": dict(self.inputs),
                "warnings": [p.as_dict() for p in self.warnings],
                "measures": {m: self.canonical.get(m, m) for m in self.measures},
                "tags": dict(self.tags),
            },
            "runs": runs,
        }

    def render(self, fmt: str, per_topic: bool = False, header: Collection[str] = HEADER) -> str:
        """The report in one of ``TEXT_FORMATS`` (html and latex: ``evaluation.reports.render_report``);
        ``header``: which of trec_eval's ``runid`` and ``num_q`` lines to print (``render_document``)."""
        if fmt == "json":
            return render_document(self.as_json(per_topic), fmt, per_topic)
        return render_document(self.as_json(True), fmt, per_topic, header)



def trec_eval_header(requested: Sequence[str] | None) -> tuple[str, ...]:
    """Which of ``runid`` and ``num_q`` the trec_eval layout prints for measures requested as ``requested``:
    both for the default measures (nothing requested) and for trec_eval's nicknames (whose lists include them),
    else those named -- as trec_eval: ``-m map`` prints neither (docs/cli.md). The CLI and the service share it."""
    names = {name.strip() for name in requested or ()}
    if not requested or names & set(NICKNAMES):
        return HEADER
    return tuple(line for line in HEADER if line in names)

def render_document(doc: Mapping[str, Any], fmt: str, per_topic: bool = False,
                    header: Collection[str] = HEADER) -> str:
    """Render a result document (``Report.as_json``; per-topic values needed for ``per_topic`` or trec_eval's
    ``num_q`` and means) in one of ``TEXT_FORMATS``; html and latex are ``evaluation.reports.render_document``'s.
    ``header``: the trec_eval layout's ``all`` block starts with these of ``runid`` and ``num_q``: both by
    default, as trec_eval prints them for its default measures and its nicknames; ``evalserve evaluate`` asks
    for them only when ``-m`` names them (or a nickname) or is not given, as ``trec_eval -m map`` prints neither."""
    if fmt == ResultFormat.JSON:
        return json.dumps(_without_per_topic(doc) if not per_topic else doc, indent=2) + "\n"
    if fmt in (ResultFormat.TSV, ResultFormat.CSV):
        return _rows(doc, per_topic, "\t" if fmt == ResultFormat.TSV else ",")
    if fmt == ResultFormat.TREC_EVAL:
        return _trec_eval(doc, per_topic, header)
    if fmt in REPORT_FORMATS:
        # internal: a caller's mistake; evaluation.reports.render_document takes every format
        raise ValueError(f"{fmt} is a report for people: render it with evaluation.reports.render_document")
    raise FormatError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


def _without_per_topic(doc: Mapping[str, Any]) -> dict[str, Any]:
    runs = {run: {m: {"mean": v["mean"]} for m, v in by_measure.items()} for run, by_measure in doc["runs"].items()}
    return {**doc, "runs": runs}


def _rows(doc: Mapping[str, Any], per_topic: bool, sep: str) -> str:
    """One ``run, measure, topic, value`` row per value (topic ``all`` for the mean); values in full precision."""
    out = io.StringIO()
    writer = csv.writer(out, delimiter=sep, lineterminator="\n")
    writer.writerow(["run", "measure", "topic", "value"])
    for run, by_measure in doc["runs"].items():
        for m, item in by_measure.items():
            if per_topic:
                writer.writerows([safe_cell(run), safe_cell(m), safe_cell(t), repr(v)]
                                 for t, v in item["per_topic"].items())
            writer.writerow([safe_cell(run), safe_cell(m), "all", repr(item["mean"])])
    return out.getvalue()


def _trec_eval(doc: Mapping[str, Any], per_topic: bool, header: Collection[str] = HEADER) -> str:
    """trec_eval's ``-q`` layout, byte for byte: ``%-22s\t%s\t%.4f`` lines, topic blocks then the ``all`` block
    (``runid`` = the run's tag, ``num_q``: those in ``header``). A measure trec_eval also has is printed under
    trec_eval's name and in trec_eval's order (its measure table), counts as integers, and gm_map only in the
    ``all`` block; other measures follow under their requested names. The ``all`` values are computed from the
    per-topic values as trec_eval does: summed left to right in topic order, then divided (or exponentiated)."""
    out = io.StringIO()
    canonical = doc.get("meta", {}).get("measures", {})
    tags = doc.get("meta", {}).get("tags", {})
    for run, by_measure in doc["runs"].items():
        first: Mapping[str, Any] = next(iter(by_measure.values()), {"per_topic": {}})
        topics = list(first.get("per_topic", {}))
        labelled: dict[str, tuple[str, str, str]] = {}  # map and AP: one trec_eval line
        for m in by_measure:
            row = _trec_eval_row(m, canonical.get(m, m))
            labelled.setdefault(row[1], row)
        rows = sorted(labelled.values(), key=lambda row: table_rank(row[1]))
        if per_topic:
            for t in topics:
                for key, label, how in rows:
                    if how != "geometric":
                        out.write(_trec_eval_line(label, t, by_measure[key]["per_topic"][t], how))
        if "runid" in header:
            out.write(f"{'runid':<22}\tall\t{tags.get(run, run)}\n")
        if "num_q" in header:
            out.write(f"{'num_q':<22}\tall\t{len(topics)}\n")
        for key, label, how in rows:
            out.write(_trec_eval_line(label, "all", _summary(by_measure[key], how), how))
    return out.getvalue()


def _summary(item: Mapping[str, Any], how: str) -> float:
    """A measure's ``all`` value as trec_eval computes it from the per-topic values (sequential sums in topic
    order, ``sequential_sum``); the document's mean when it has no per-topic values."""
    per_topic = item.get("per_topic")
    if not per_topic:
        return float(item["mean"])
    values = np.fromiter(per_topic.values(), dtype=np.float64, count=len(per_topic))
    if how == "sum":
        return sequential_sum(values)
    if how == "geometric":
        return math.exp(sequential_sum(np.log(np.maximum(values, GEOMETRIC_FLOOR))) / values.size)
    return sequential_sum(values) / values.size


def _trec_eval_row(key: str, canonical: str) -> tuple[str, str, str]:
    """(result key, label to print, aggregate) of one measure of a document."""
    try:
        how = default_registry().parse(canonical).definition.aggregate
    except MeasureError:  # a document from an older catalogue: print it as it is
        how = "mean"
    return key, trec_eval_label(canonical) or key, how


def _trec_eval_line(label: str, topic: str, value: float, how: str) -> str:
    shown = f"{round(value)}" if how == "sum" else f"{value:.4f}"
    return f"{label:<22}\t{topic}\t{shown}\n"


def _finite(value: float) -> float:
    """Values are finite by construction; guard JSON against NaN/inf all the same."""
    return value if math.isfinite(value) else 0.0


def _finite_values(values: dict[str, float]) -> dict[str, float]:
    """``_finite`` of every per-topic value, checked in one pass at C speed first (20,000 topics x 30 measures
    were half a million Python calls: 0.3 s of a trec_eval-format run whose per-topic values are not even
    printed -- ``num_q`` counts them)."""
    if all(map(math.isfinite, values.values())):
        return values
    return {t: _finite(v) for t, v in values.items()}
