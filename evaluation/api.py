"""The offline Python API: the CLI's evaluation as functions, for notebooks and scripts.

``evaluate`` returns the JSON document ``evalserve evaluate --format json`` prints, ``iter_calc`` yields one
``(run, topic, measure, value)`` record at a time (like ir_measures' ``iter_calc``), ``to_dataframe`` turns
either into a pandas DataFrame (pandas is imported only then). Inputs may be paths, bytes, or parsed objects.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from evaluation.formats.source import Blob, DecodeLimits, load
from evaluation.measures.base import Measure
from evaluation.model import IntentWeights, Qrels, Run
from evaluation.pipeline import Opened, QrelsFormat, build_evaluator, load_inputs, run_evaluation
from evaluation.problems import InputError
from evaluation.report import Report
from evaluation.sources import Inputs

#: One input: a path, its bytes (gzip or not), a ``Blob``, or the object a reader made of it.
Source = str | os.PathLike[str] | bytes | Blob | Qrels | Run | IntentWeights

#: Runs: a list of inputs (named by file name, or by their own name when parsed), or ``{name: input}``.
Runs = Sequence[Source] | Mapping[str, Source]


class TopicValue(NamedTuple):
    """One value of ``iter_calc``: a measure's value on one topic of one run."""

    run: str
    topic: str
    measure: str
    value: float


def evaluate(
    qrels: Source,
    runs: Runs,
    measures: Sequence[str | Measure],
    *,
    per_topic: bool = False,
    ties: str = "trec",
    topics: str = "common",
    qrels_format: str = QrelsFormat.AUTO,
    intent_weights: Source | None = None,
    side: Mapping[str, Source] | None = None,
) -> dict[str, Any]:
    """The result document of ``evalserve evaluate --format json`` (with ``--per-topic`` when ``per_topic``).

    Raises ``InputError`` listing every problem of every input (``NothingScored`` when a run has no judged
    topic), ``MeasureError`` naming bad measures and ``OptionError`` (both ``EvaluationError``) for an unknown ties
    or topics policy; warnings are in ``meta.warnings``."""
    inputs = _inputs(qrels, runs, qrels_format, intent_weights, side)
    return run_evaluation(inputs, measures, ties=ties, topics=topics).as_json(per_topic)


def iter_calc(
    qrels: Source,
    runs: Runs,
    measures: Sequence[str | Measure],
    *,
    ties: str = "trec",
    topics: str = "common",
    qrels_format: str = QrelsFormat.AUTO,
    intent_weights: Source | None = None,
    side: Mapping[str, Source] | None = None,
) -> Iterator[TopicValue]:
    """Every per-topic value, run by run (each run is evaluated when the previous one's values are consumed),
    topic by topic, in the order of ``measures``; names as in ``evaluate``'s document.

    All inputs are read and checked, and the measures parsed, before the first value (and before this returns),
    so bad input fails at the call, not halfway through the iteration."""
    inputs = _inputs(qrels, runs, qrels_format, intent_weights, side)
    evaluator = build_evaluator(inputs, measures, ties=ties, topics=topics)
    names = [m.label for m in evaluator.measures]

    def values() -> Iterator[TopicValue]:
        for run in inputs.runs:
            report = Report([evaluator.evaluate(run)], names, ties, topics)
            for run_name, by_measure in report.as_json(per_topic=True)["runs"].items():
                per_measure = [(m, item["per_topic"]) for m, item in by_measure.items()]
                for topic in per_measure[0][1] if per_measure else ():
                    for measure, by_topic in per_measure:
                        yield TopicValue(run_name, topic, measure, by_topic[topic])

    return values()


def to_dataframe(results: Mapping[str, Any] | Iterable[TopicValue]) -> Any:
    """A long pandas DataFrame with columns run, measure, topic, value.

    From ``evaluate``'s document: each run's per-topic rows (when the document has them) then its mean as topic
    ``all``, as in the TSV output; from ``iter_calc``'s records: one row each. Needs pandas."""
    try:
        pandas = importlib.import_module("pandas")
    except ImportError as exc:
        raise ImportError("to_dataframe needs pandas, which is not installed: pip install pandas") from exc
    if isinstance(results, Mapping):
        rows = [(run, measure, topic, value)
                for run, by_measure in results["runs"].items()
                for measure, item in by_measure.items()
                for topic, value in [*item.get("per_topic", {}).items(), ("all", item["mean"])]]
    else:
        rows = [(r.run, r.measure, r.topic, r.value) for r in results]
    return pandas.DataFrame(rows, columns=["run", "measure", "topic", "value"])


def _inputs(
    qrels: Source,
    runs: Runs,
    qrels_format: str,
    intent_weights: Source | None,
    side: Mapping[str, Source] | None,
) -> Inputs:
    """Open every input as the CLI does (same decode limits) and parse them all, every problem reported at once."""
    named = runs.items() if isinstance(runs, Mapping) else ((None, source) for source in runs)
    return load_inputs(
        _open(qrels, unnamed="<qrels>"),
        [_open_run(source, name, i) for i, (name, source) in enumerate(named)],
        qrels_format=qrels_format,
        intent_weights=_open(intent_weights, unnamed="<intent-weights>") if intent_weights is not None else None,
        side={kind: _open(source, unnamed=f"<{kind}>") for kind, source in (side or {}).items()},
    )


def _open_run(source: Source, name: str | None, index: int) -> Any:
    """A run input; ``name`` (from a mapping) names it, whatever its file name or its parsed name."""
    if isinstance(source, Run):
        return source if name is None else dataclasses.replace(source, name=name)
    return _open(source, name, unnamed=f"<run {index + 1}>")


def _open(source: Source, name: str | None = None, *, unnamed: str = "<bytes>") -> Any:
    """Bytes or a path opened as a ``Blob`` (or the error met, reported with the others); parsed objects as is.
    ``name`` replaces the file name in results and messages; bytes without one are called ``unnamed``."""
    if isinstance(source, (Qrels, Run, IntentWeights, Blob)):
        return source
    opened: Opened
    try:
        if isinstance(source, (bytes, bytearray)):
            opened = Blob.from_bytes(bytes(source), name or unnamed, DecodeLimits.from_env())
        else:
            opened = load(source, name, DecodeLimits.from_env())
    except InputError as exc:
        opened = exc
    return opened
