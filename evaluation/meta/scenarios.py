"""The simulated scenarios used with Metric Unanimity (spec 8.2, AMIGO18 Sec 6.3), seeded and reproducible.

Each primitive perturbs the official inputs once with a ``numpy.random.Generator`` and returns objects of
``evaluation.model`` that the evaluator scores as usual:

1. ``random_grades``: every judgment ``g > 0`` becomes ``g' ~ Uniform(0, g)``, one draw per (topic, intent, doc).
2. ``random_intent_weights``: ``w(t) = u_t / sum u``, ``u_t ~ Uniform(0, 1)`` per (topic, intent).
3. ``truncate_runs``: each (run, topic) ranking is cut to ``L' ~ UniformInteger{0..|d|}``;
4. with ``max_length=50``: ``L' ~ UniformInteger{0..50}`` capped at ``|d|`` (C-MU-5).

``simulate`` combines them as the spec's scenarios do (truncation and short lists come with 1 and 2) and draws
in a fixed order: grades, then weights, then truncation lengths (runs in the order given, topics in run order).
``scenario_table`` scores one scenario of an evaluation's inputs with a generator derived from the seed and the
scenario (``scenario_rng``), so a scenario's draws do not depend on which other scenarios are run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, get_args

import numpy as np

from evaluation.evaluator import evaluate
from evaluation.meta.table import ScoreTable
from evaluation.model import DOCNO_HASHES, FloatArray, IntentWeights, Qrels, Run
from evaluation.problems import OptionError
from evaluation.ranking import rank_run
from evaluation.sources import Sources

ScenarioName = Literal["graded_relevance", "aspect_weights", "random_truncation", "short_lists"]
SCENARIOS: tuple[str, ...] = get_args(ScenarioName)

#: the list length of the short-lists scenario (AMIGO18 Table 2, third column)
SHORT_LIST_LENGTH = 50


@dataclass(frozen=True, eq=False)
class RandomGrades:
    """Scenario 1: the real-valued grades drawn per qrels row (``grades``, aligned with ``qrels.grade`` rows)
    and ``qrels``, the same judgments with the integer grades the engine scores: ``ceil(resolution * g')``.

    The engine's grades are integers; with ``resolution = 1`` each judged-relevant grade ``g`` becomes a uniform
    integer in ``1..g`` (binary relevance ``g' > 0`` is exactly preserved, and every gain mapping keeps its scale).
    """

    qrels: Qrels
    grades: FloatArray
    resolution: int


@dataclass(frozen=True, eq=False)
class ScenarioInputs:
    """Perturbed inputs of one scenario, ready for ``evaluation.evaluator.evaluate``."""

    scenario: str
    qrels: Qrels
    runs: tuple[Run, ...]
    intent_weights: IntentWeights | None
    grades: FloatArray | None = None  # the real-valued draws of scenario 1, when it is part of the scenario


def random_grades(qrels: Qrels, rng: np.random.Generator, *, resolution: int = 1) -> RandomGrades:
    """Scenario 1 (8.2): ``g' ~ Uniform(0, g)`` for every judgment ``g > 0``; grades ``<= 0`` are kept."""
    if resolution < 1:
        raise OptionError("resolution must be a positive integer")
    grade = np.asarray(qrels.grade)
    draws = rng.random(grade.size)  # one per row, drawn for every row so the stream does not depend on grades
    real = np.where(grade > 0, draws * grade, grade).astype(np.float64)
    coded = np.where(grade > 0, np.maximum(1, np.ceil(real * resolution)), grade).astype(np.int64)
    return RandomGrades(replace(qrels, grade=coded, derived={}), real, resolution)


def random_intent_weights(qrels: Qrels, rng: np.random.Generator) -> IntentWeights:
    """Scenario 2 (8.2): per topic, intent weights ``u_t / sum u`` with ``u_t ~ Uniform(0, 1)``.

    The intents of a topic are those its judgments name; pairs are drawn in (topic, intent) order.
    """
    n_intents = max(1, len(qrels.intents))
    key = np.unique(np.asarray(qrels.topic) * n_intents + np.asarray(qrels.intent))
    topic, intent = key // n_intents, key % n_intents
    u = rng.random(key.size)
    total = np.bincount(topic, weights=u, minlength=len(qrels.topics))
    w = u / total[topic]
    weights: dict[str, dict[str, float]] = {}
    for t, i, v in zip(topic.tolist(), intent.tolist(), w.tolist()):
        weights.setdefault(qrels.topics[t], {})[qrels.intents[i]] = v
    return IntentWeights(weights, name=f"{qrels.name}:random-weights")


def truncate_runs(
    runs: Sequence[Run],
    rng: np.random.Generator,
    *,
    max_length: int | None = None,
    ties: str = "trec",
) -> list[Run]:
    """Scenarios 3-4 (8.2): cut each (run, topic) ranking to a random length.

    ``L' ~ UniformInteger{0..|d|}``, or with ``max_length``: ``UniformInteger{0..max_length}`` capped at ``|d|``.
    Rows are kept in ranked order (by the ``ties`` policy the evaluation will use, so that it ranks them the
    same way); a topic cut to length 0 stays among the run's topics as an empty ranking (it scores 0).
    """
    return [_truncate(run, rng, max_length, ties) for run in runs]


def _truncate(run: Run, rng: np.random.Generator, max_length: int | None, ties: str) -> Run:
    ranking = rank_run(run, ties)
    lengths = np.diff(ranking.offsets)
    high = lengths if max_length is None else np.full(lengths.shape, int(max_length))
    cut = np.minimum(rng.integers(0, high + 1), lengths)
    position = np.arange(ranking.order.size) - np.repeat(ranking.offsets[:-1], lengths)
    rows = ranking.order[position < np.repeat(cut, lengths)]
    docno = run.docno[rows]
    derived: dict[str, object] = {}
    hashes = run.derived.get(DOCNO_HASHES)
    if hashes is not None and not run.docno.flags.writeable:
        docno.flags.writeable = False
        derived[DOCNO_HASHES] = np.asarray(hashes)[rows]
    return Run(
        run.name,
        run.topics,
        run.topic[rows],
        docno,
        run.score[rows],
        run.rank[rows],
        run.tags,
        run.ranks_valid,
        derived,
    )


def simulate(
    scenario: str,
    qrels: Qrels,
    runs: Sequence[Run],
    rng: np.random.Generator,
    *,
    intent_weights: IntentWeights | None = None,
    ties: str = "trec",
    resolution: int = 1,
) -> ScenarioInputs:
    """The inputs of one scenario of 8.2: ``graded_relevance`` (1), ``aspect_weights`` (2),
    ``random_truncation`` (1, 2 and 3) or ``short_lists`` (1, 2 and 4)."""
    if scenario not in SCENARIOS:
        raise OptionError(f"unknown scenario {scenario!r}; choose one of {', '.join(SCENARIOS)}")
    grades = None
    if scenario != "aspect_weights":
        drawn = random_grades(qrels, rng, resolution=resolution)
        qrels, grades = drawn.qrels, drawn.grades
    if scenario != "graded_relevance":
        intent_weights = random_intent_weights(qrels, rng)
    out = list(runs)
    if scenario == "random_truncation":
        out = truncate_runs(out, rng, ties=ties)
    elif scenario == "short_lists":
        out = truncate_runs(out, rng, max_length=SHORT_LIST_LENGTH, ties=ties)
    return ScenarioInputs(scenario, qrels, tuple(out), intent_weights, grades)


def score_scenario(
    inputs: ScenarioInputs, measures: Sequence[str], *, ties: str = "trec", topics: str = "common"
) -> ScoreTable:
    """Evaluate a scenario's inputs with ``measures`` and return the score table."""
    scores = evaluate(
        inputs.qrels, list(inputs.runs), measures, ties=ties, topics=topics, intent_weights=inputs.intent_weights
    )
    return ScoreTable.from_run_scores(scores)


def scenario_rng(seed: int, scenario: str) -> np.random.Generator:
    """The generator of one scenario: seeded by (seed, the scenario's position in ``SCENARIOS``)."""
    if scenario not in SCENARIOS:
        raise OptionError(f"unknown scenario {scenario!r}; choose one of {', '.join(SCENARIOS)}")
    return np.random.default_rng([seed, SCENARIOS.index(scenario)])


def scenario_table(sources: Sources, measures: Sequence[str], scenario: str, seed: int) -> ScoreTable:
    """The scores of ``measures`` on one scenario of an evaluation's inputs (its side inputs and policies kept;
    the given intent weights are those of the graded-relevance scenario, which draws none)."""
    inputs = simulate(scenario, sources.qrels, sources.runs, scenario_rng(seed, scenario),
                      intent_weights=sources.intent_weights, ties=sources.ties)
    return ScoreTable.from_run_scores(sources.evaluate(measures, qrels=inputs.qrels, runs=inputs.runs,
                                                       intent_weights=inputs.intent_weights))
