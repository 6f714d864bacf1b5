"""Evaluating runs: an Evaluator is built once per (qrels, measures, policies) and applied to each run.

The policies in force (ties, topics) are part of every result (spec 1.3). Warnings about the inputs' fit
(topics in the run but not in the qrels, judged topics missing from the run, with what the other topic policy
would do about them) are returned with the scores.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np

from evaluation.intent_ranking import IntentInputs, IntentSlots, intent_slots
from evaluation.judged_ranking import TopicPolicy, evaluated_topics, judge_ranking, start_join
from evaluation.measures.base import Measure
from evaluation.measures.registry import default_registry
from evaluation.model import FloatArray, IntentWeights, Qrels, Run
from evaluation.problems import InputError, MeasureError, Problem
from evaluation.ranking import TiePolicy, rank_run
from evaluation.side_inputs import PrepareContext, SideInputs
from evaluation.side_registry import PREPARERS
from evaluation.task_pool import TaskPool, in_order

#: Topics named in a message before it says "...".
SHOWN_TOPICS = 10


def shown_topics(topics: Sequence[str]) -> str:
    """The first few topic ids of a list, for messages."""
    return ", ".join(topics[:SHOWN_TOPICS]) + (" ..." if len(topics) > SHOWN_TOPICS else "")


class MeasureValues(dict[str, FloatArray]):
    """Per-topic values keyed by the requested measure name; a canonical name finds them too (the first
    requested spelling of that measure), so code that looks measures up by ``Measure.name`` keeps working."""

    def __init__(self, values: Mapping[str, FloatArray], canonical: Mapping[str, str]) -> None:
        super().__init__(values)
        self.by_canonical: dict[str, str] = {}
        for label, name in canonical.items():
            self.by_canonical.setdefault(name, label)

    def label(self, key: str) -> str:
        """The requested name holding ``key``'s values: ``key`` itself, or the first requested spelling of the
        measure whose canonical name is ``key`` (``key`` unchanged when neither)."""
        return key if dict.__contains__(self, key) else self.by_canonical.get(key, key)

    def __missing__(self, key: str) -> FloatArray:
        label = self.label(key)
        if label == key:
            raise KeyError(key)  # internal: the dict protocol (__missing__ raises KeyError; get relies on it)
        return dict.__getitem__(self, label)

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or (isinstance(key, str) and key in self.by_canonical)

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default


@dataclass(frozen=True)
class RunScores:
    """One run's per-topic values for each measure (requested name -> array aligned with ``topics``).

    ``canonical`` maps each requested name to the measure's canonical name, which also finds the values;
    ``aggregates`` holds the measures whose run value is not the arithmetic mean (``MeasureDef.aggregate``).
    """

    run: str
    topics: tuple[str, ...]
    values: dict[str, FloatArray]
    warnings: tuple[Problem, ...] = ()
    canonical: dict[str, str] = field(default_factory=dict)
    aggregates: dict[str, str] = field(default_factory=dict)

    def mean(self, measure: str) -> float:
        """The run's value over the evaluated topics (0 when no topic is evaluated): the arithmetic mean, or
        trec_eval's sum (counts) or geometric mean (gm_map) where the measure says so."""
        key = self._key(measure)
        v = self.values[key]
        if not v.size:
            return 0.0
        how = self.aggregates.get(key, "mean")
        if how == "sum":
            return float(v.sum())
        if how == "geometric":
            return float(np.exp(np.log(np.maximum(v, GEOMETRIC_FLOOR)).mean()))
        return float(v.mean())

    def per_topic(self, measure: str) -> dict[str, float]:
        return dict(zip(self.topics, self.values[self._key(measure)].tolist()))

    def __post_init__(self) -> None:
        if not isinstance(self.values, MeasureValues):
            object.__setattr__(self, "values", MeasureValues(self.values, self.canonical))

    def _key(self, measure: str) -> str:
        """The requested name, or the first requested name whose canonical name is ``measure``."""
        values = self.values
        return values.label(measure) if isinstance(values, MeasureValues) else measure


def _rows_only(run: Run) -> Run:
    """``run`` with its topics and each row's topic but no other column (empty ones): what ``judge_ranking``
    reads of a ranking's run once the join is done. Internal to ``Evaluator.evaluate``: not a valid run."""
    return Run(run.name, run.topics, run.topic, run.docno[:0], run.score[:0], run.rank[:0], run.tags,
               run.ranks_valid)


#: trec_eval's MIN_GEO_MEAN: values below it count as it in a geometric mean (one zero would make it 0).
GEOMETRIC_FLOOR = 0.00001


@dataclass
class Evaluator:
    """Scores runs against one set of judgments with a fixed list of measures and policies.

    Built once per qrels: run-independent work (intent numbering, greedy ideal rankings) is cached here and
    reused for every run; each run's inputs are prepared once and shared by all measures that read them.
    """

    qrels: Qrels
    measures: list[Measure]
    ties: str = "trec"
    topics: str = "common"
    intent_weights: IntentWeights | None = None
    side: SideInputs = field(default_factory=SideInputs)
    _slots: dict[int, IntentSlots] = field(default_factory=dict, repr=False)
    _cache: dict[object, Any] = field(default_factory=dict, repr=False)  # run-independent work of preparers

    def __post_init__(self) -> None:
        self.ties = TiePolicy(self.ties)  # an OptionError naming the choices
        self.topics = TopicPolicy(self.topics)
        for m in self.measures:
            unknown = [k for k in m.definition.inputs if k not in ("adhoc", "intents") and k not in PREPARERS]
            if unknown:
                raise MeasureError(f"{m.name} reads an input kind evalserve does not know: {', '.join(unknown)}")

    @classmethod
    def from_names(
        cls,
        qrels: Qrels,
        names: Iterable[str | Measure],
        *,
        ties: str = "trec",
        topics: str = "common",
        intent_weights: IntentWeights | None = None,
        side: SideInputs | None = None,
    ) -> Evaluator:
        measures = default_registry().parse_all(names)
        return cls(qrels, measures, ties, topics, intent_weights, side or SideInputs())

    def slots_at(self, level: int) -> IntentSlots:
        """The qrels' relevant intents at a relevance level (computed once per level)."""
        found = self._slots.get(level)
        if found is None:
            found = self._slots[level] = intent_slots(self.qrels, level, self.intent_weights)
        return found

    def warm_up(self) -> None:
        """Do the run-independent work now -- the judgments' join index and ideal lists, intent slots, greedy
        ideal rankings of every judged topic -- by evaluating a run of one document per judged topic (its
        values are dropped), so that the first real run finds it done (``pipeline.load_inputs(on_judgments=)``
        does it while the runs are still being read)."""
        qrels = self.qrels
        n = len(qrels.topics)
        if n == 0 or qrels.docnos.size == 0:
            return
        placeholder = Run("<warm-up>", qrels.topics, np.arange(n, dtype=np.int64), np.repeat(qrels.docnos[:1], n),
                          np.zeros(n), np.ones(n, dtype=np.int64))
        self.evaluate(placeholder)

    def evaluate(self, run: Run, pool: TaskPool | None = None) -> RunScores:
        """Per-topic values of every measure for one run; with a ``pool``, the join's blocks and the measures
        are computed on its threads (the same values)."""
        if self.ties == "rank" and not run.ranks_valid:
            raise InputError.single(
                "rank-not-integer",
                "ties=rank needs an integer rank column; this run has other values there (see its warnings)",
                run.name,
            )
        topics = evaluated_topics(self.qrels, run.topics, self.topics)
        name, warnings = run.name, tuple(self._fit_warnings(run, topics))
        joined = start_join(self.qrels, run, pool)  # its blocks run on the pool while this thread ranks the run
        ranking = rank_run(run, self.ties)
        if all(m.definition.inputs[0] in ("adhoc", "intents") for m in self.measures):
            # Only the judged ranking is read from here on, and judging it needs no more of the run than each
            # row's topic: a caller that let go of the run (``run_evaluation``'s ``release``) has its other
            # columns (docnos, scores, ranks, docno hashes: ~115 MB of a 2 M-line run) freed before the judged
            # ranking's arrays are made.
            found = joined()
            del joined
            ranking = replace(ranking, run=_rows_only(run))
            del run
            judged = judge_ranking(self.qrels, ranking, topics, pool, lambda: found)
            del ranking, found
        else:
            judged = judge_ranking(self.qrels, ranking, topics, pool, joined)
            del joined
        prepared: dict[str, Any] = {"adhoc": judged}

        def prepare(kind: str) -> Any:
            """Each input kind is built once per run, on first use, and shared by the measures reading it."""
            if kind not in prepared:
                if kind == "intents":
                    prepared[kind] = IntentInputs(judged, self.qrels, self.slots_at)
                else:
                    context = PrepareContext(judged, self.qrels, self.side, self._cache, prepare, ranking)
                    prepared[kind] = PREPARERS[kind].build(context)
            return prepared[kind]

        def compute(m: Measure, data: Any) -> FloatArray:
            return np.asarray(m.compute(data), dtype=np.float64)

        # With a pool, ad hoc measures are computed on its threads: they only read the joined ranking (and
        # cache what they derive from it, cheaply, maybe twice). Measures of other inputs share costly
        # memos (novelty gains, ideal profiles) and stay on this thread.
        adhoc = [m for m in self.measures if m.definition.inputs[0] == "adhoc"] if pool is not None else []
        done = dict(zip((m.label for m in adhoc), in_order(pool, [partial(compute, m, judged) for m in adhoc])))
        values = {m.label: done[m.label] if m.label in done else compute(m, prepare(m.definition.inputs[0]))
                  for m in self.measures}
        return RunScores(name, topics, values, warnings,
                         canonical={m.label: m.name for m in self.measures},
                         aggregates={m.label: m.definition.aggregate for m in self.measures
                                     if m.definition.aggregate != "mean"})

    def _fit_warnings(self, run: Run, topics: Sequence[str]) -> list[Problem]:
        out = []
        extra = [t for t in run.topics if t not in self.qrels.topic_index]
        if extra:
            out.append(
                Problem(
                    "topic-not-in-qrels",
                    f"{len(extra)} topic(s) of the run have no judgments and are not evaluated: {shown_topics(extra)}",
                    "warning",
                    source=run.name,
                )
            )
        present = set(run.topics)
        judged = self.qrels.topics
        missing = [t for t in judged if t not in present]
        if missing and (self.topics == "complete" or len(missing) < len(judged)):  # else "no-topics" says it
            out.append(Problem("topic-not-in-run", self._missing_message(missing, len(judged)), "warning",
                               source=run.name))
        if not topics:
            out.append(Problem("no-topics", "no topic is both judged and in the run", "warning", source=run.name))
        return out

    def _missing_message(self, missing: Sequence[str], judged: int) -> str:
        """Which judged topics the run lacks and what the topic policy does about them, naming the other one."""
        head = f"{len(missing)} of {judged} judged topic(s) are missing from the run"
        if self.topics == "complete":
            return f"{head} and score 0: {shown_topics(missing)}"
        return (f"{head} and are left out of its means, which average over the {judged - len(missing)} topic(s)"
                f" it has: {shown_topics(missing)}; --topics complete would score them 0 and average over all"
                f" {judged} judged topics")


def evaluate(
    qrels: Qrels,
    runs: Sequence[Run],
    measures: Iterable[str | Measure],
    *,
    ties: str = "trec",
    topics: str = "common",
    intent_weights: IntentWeights | None = None,
    side: SideInputs | None = None,
) -> list[RunScores]:
    """Evaluate several runs with the same judgments, measures and policies."""
    evaluator = Evaluator.from_names(qrels, measures, ties=ties, topics=topics, intent_weights=intent_weights,
                                     side=side)
    return [evaluator.evaluate(r) for r in runs]
