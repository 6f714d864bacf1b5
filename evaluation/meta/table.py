"""The score table every meta-evaluation method reads: ``score[measure][run][topic]`` (spec section 8).

Topic rule: the table keeps the topics that every run was evaluated on (the intersection), in the order of the
first run (or the first run of the document); ``topics="strict"`` refuses runs whose topic sets differ instead.
Runs and measures keep the order they were given in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from evaluation.evaluator import RunScores
from evaluation.model import FloatArray
from evaluation.problems import InputError, OptionError, RequestError

TopicRule = Literal["intersection", "strict"]


@dataclass(frozen=True, eq=False)
class ScoreTable:
    """Per-topic scores of several runs under several measures; ``values`` has shape (measures, runs, topics)."""

    measures: tuple[str, ...]
    runs: tuple[str, ...]
    topics: tuple[str, ...]
    values: FloatArray

    def __post_init__(self) -> None:
        values = np.array(self.values, dtype=np.float64)  # a private, read-only copy
        shape = (len(self.measures), len(self.runs), len(self.topics))
        if values.shape != shape:
            # internal: the constructors build values of the names' shape
            raise ValueError(f"values have shape {values.shape}; measures x runs x topics is {shape}")
        for label, names in (("measure", self.measures), ("run", self.runs), ("topic", self.topics)):
            if len(set(names)) != len(names):
                raise OptionError(f"a {label} name is repeated: {_repeated(names)}")
        values.flags.writeable = False
        object.__setattr__(self, "measures", tuple(self.measures))
        object.__setattr__(self, "runs", tuple(self.runs))
        object.__setattr__(self, "topics", tuple(self.topics))
        object.__setattr__(self, "values", values)

    @classmethod
    def from_run_scores(
        cls,
        scores: Sequence[RunScores],
        measures: Sequence[str] | None = None,
        *,
        topics: TopicRule = "intersection",
    ) -> ScoreTable:
        """A table from evaluator results (measures default to the first run's, in its order)."""
        if not scores:
            raise InputError.single("no-runs", "a score table needs at least one run")
        names = tuple(measures) if measures is not None else tuple(scores[0].values)
        for s in scores:
            missing = [m for m in names if m not in s.values]
            if missing:
                raise InputError.single("measure-missing", f"run {s.run} has no values for {', '.join(missing)}", s.run)
        kept = _common_topics([(s.run, s.topics) for s in scores], topics)
        values = np.empty((len(names), len(scores), len(kept)))
        for j, s in enumerate(scores):
            at = _positions(s.topics, kept)
            for i, m in enumerate(names):
                values[i, j] = np.asarray(s.values[m], dtype=np.float64)[at]
        return cls(names, tuple(s.run for s in scores), kept, values)

    @classmethod
    def from_document(
        cls,
        doc: Mapping[str, Any],
        measures: Sequence[str] | None = None,
        *,
        topics: TopicRule = "intersection",
    ) -> ScoreTable:
        """A table from a results document (``evaluation.report``) that carries per-topic values."""
        runs = doc.get("runs") if isinstance(doc, Mapping) else None
        if not isinstance(runs, Mapping) or not runs:
            raise InputError.single("no-runs", "the results document has no runs")
        first = next(iter(runs.values()))
        names = tuple(measures) if measures is not None else tuple(first)
        per_run: list[tuple[str, tuple[str, ...]]] = []
        columns: dict[tuple[str, str], Mapping[str, Any]] = {}
        for run, by_measure in runs.items():
            for m in names:
                item = by_measure.get(m) if isinstance(by_measure, Mapping) else None
                if not isinstance(item, Mapping):
                    raise InputError.single("measure-missing", f"run {run} has no values for {m}", str(run))
                per_topic = item.get("per_topic")
                if not isinstance(per_topic, Mapping):
                    raise InputError.single(
                        "per-topic-missing",
                        f"the results document has no per-topic values (run {run}, measure {m}); meta-evaluation"
                        " needs them: evaluate again asking for per-topic values (--per-topic, per_topic=true)",
                        str(run),
                    )
                columns[(run, m)] = per_topic
            per_run.append((str(run), tuple(str(t) for t in columns[(run, names[0])]) if names else ()))
        kept = _common_topics(per_run, topics)
        values = np.empty((len(names), len(per_run), len(kept)))
        for j, (run, _) in enumerate(per_run):
            for i, m in enumerate(names):
                column = columns[(run, m)]
                try:
                    values[i, j] = [float(column[t]) for t in kept]
                except KeyError as missing:
                    raise InputError.single(
                        "topic-missing", f"run {run}, measure {m} has no value for topic {missing}", run
                    ) from None
                except (TypeError, ValueError):
                    raise InputError.single(
                        "not-a-number", f"run {run}, measure {m} has a per-topic value that is not a number", run
                    ) from None
        return cls(names, tuple(r for r, _ in per_run), kept, values)

    def select(self, measures: Sequence[str] | None = None, runs: Sequence[str] | None = None) -> ScoreTable:
        """A sub-table with these measures and runs, in the order given (None keeps all)."""
        mi = _indices(self.measures, measures, "measure")
        ri = _indices(self.runs, runs, "run")
        names_m = tuple(self.measures[i] for i in mi)
        names_r = tuple(self.runs[i] for i in ri)
        return ScoreTable(names_m, names_r, self.topics, self.values[np.ix_(mi, ri)])

    def means(self) -> FloatArray:
        """System-level scores: topic means, shape (measures, runs); NaN when there is no topic."""
        if not self.topics:
            return np.full(self.values.shape[:2], np.nan)
        means: FloatArray = self.values.mean(axis=2)
        return means

    def measure(self, name: str) -> FloatArray:
        """One measure's (runs, topics) matrix."""
        matrix: FloatArray = self.values[_indices(self.measures, [name], "measure")[0]]
        return matrix


def _repeated(names: Sequence[str]) -> str:
    seen: set[str] = set()
    for n in names:
        if n in seen:
            return n
        seen.add(n)
    return ""


def _indices(names: tuple[str, ...], wanted: Sequence[str] | None, label: str) -> list[int]:
    if wanted is None:
        return list(range(len(names)))
    where = {n: i for i, n in enumerate(names)}
    unknown = [w for w in wanted if w not in where]
    if unknown:
        raise RequestError(f"unknown {label}(s): {', '.join(unknown)}")
    return [where[w] for w in wanted]


def _positions(topics: Sequence[str], kept: tuple[str, ...]) -> np.ndarray:
    where = {t: i for i, t in enumerate(topics)}
    return np.array([where[t] for t in kept], dtype=np.int64)


def _common_topics(per_run: Sequence[tuple[str, Sequence[str]]], rule: TopicRule) -> tuple[str, ...]:
    """The topics of the table: the first run's topics that every run has (``strict``: all runs must agree)."""
    if rule not in ("intersection", "strict"):
        raise OptionError(f"unknown topic rule {rule!r}; choose intersection or strict")
    first_run, first = per_run[0]
    common = set(first)
    for run, topics in per_run[1:]:
        if rule == "strict" and set(topics) != set(first):
            diff = sorted(set(topics) ^ set(first))
            shown = ", ".join(diff[:10]) + (" ..." if len(diff) > 10 else "")
            raise InputError.single(
                "topics-differ",
                f"runs {first_run} and {run} were evaluated on different topics ({shown}); evaluate with"
                " topics=complete or build the table with topics='intersection'",
                run,
            )
        common &= set(topics)
    return tuple(t for t in first if t in common)
