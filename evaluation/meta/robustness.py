"""Robustness of system rankings to incomplete preference judgments (spec 8.8, CHANDAR13): for each number ``N``
of triplets per topic, simulate ``per_triplet * N`` preferences per topic (the sampled design of 6.7), score every
run with the preference measures on those alone, and compare the system ranking by mean score with the reference
ranking -- the measure's scores with every available preference, i.e. the evaluated table -- by Kendall's tau,
averaged over repetitions (``robustness_curve``).

Which preferences are sampled: a measure with ``profile=trec`` is scored on triplets simulated with the TREC
profile (as ``profile=all``: the samples hold that one user); any other Prf or nPrf reads the sampled judgments in
place of the ``preference_judgments`` side input, simulated from the ``user_profiles`` side input (else the TREC
profile). Each (N, repetition, profile source) draws from ``default_rng([seed, N, repetition, source])``, so a
point of the curve does not depend on the other sizes asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.measures.base import Measure
from evaluation.measures.preference._prepare import JUDGMENTS, PROFILES
from evaluation.measures.preference._prepare import NAME as PREFERENCES
from evaluation.measures.registry import default_registry
from evaluation.meta.preferences import robustness_curve
from evaluation.meta.table import ScoreTable
from evaluation.model import FloatArray
from evaluation.preference.judgments import UserProfiles
from evaluation.preference.simulate import simulate_triplets
from evaluation.problems import RequestError
from evaluation.side_inputs import SideInputs
from evaluation.sources import Sources

#: where a measure's sampled preferences come from (also the last number of the generator's seed)
TREC_PROFILE, USER_PROFILES = 0, 1
SOURCE_NAMES = {TREC_PROFILE: "trec", USER_PROFILES: "user_profiles"}


@dataclass(frozen=True)
class Robustness:
    """Mean tau per measure (as labelled in the table) and size, and where each measure's samples came from."""

    sizes: tuple[int, ...]
    tau: dict[str, dict[int, float]]
    sampled_from: dict[str, str]


def sampled_measures(labels: Sequence[str]) -> dict[str, tuple[int, Measure]]:
    """Each measure as scored on sampled judgments, with its profile source; RequestError for a measure that does
    not read preference judgments (its ranking could not change)."""
    out: dict[str, tuple[int, Measure]] = {}
    refused = []
    for label in labels:
        measure = default_registry().parse(label)
        if PREFERENCES not in measure.definition.inputs:
            refused.append(label)
        elif measure.params.get("profile") == "trec":
            trec = measure.definition.instance({**measure.params, "profile": "all"}, measure.cutoff)
            out[label] = (TREC_PROFILE, trec.labelled(label))
        else:
            out[label] = (USER_PROFILES, measure)
    if refused:
        raise RequestError(f"robustness samples preference judgments: it takes the preference measures Prf and nPrf,"
                           f" not {', '.join(refused)}")
    return out


def robustness(table: ScoreTable, sources: Sources, *, sizes: Sequence[int], repetitions: int = 10,
               per_triplet: int = 5, seed: int = 0, variant: str = "a",
               progress: Callable[[str, float], None] | None = None) -> Robustness:
    """The robustness curve of every measure of ``table`` (evaluated from ``sources``) over ``sizes``."""
    measures = sampled_measures(table.measures)
    given = sources.side.values.get(PROFILES)
    trec = UserProfiles.trec(sources.qrels)
    profiles = {TREC_PROFILE: trec, USER_PROFILES: given if isinstance(given, UserProfiles) else trec}
    groups = sorted({group for group, _ in measures.values()})
    samples = {label: {n: np.empty((repetitions, len(table.runs))) for n in sizes} for label in measures}
    steps, step = len(sizes) * repetitions, 0
    for n in sizes:
        for r in range(repetitions):
            if progress is not None:
                progress(f"robustness: {n} triplets per topic, repetition {r + 1} of {repetitions}", step / steps)
            step += 1
            for group in groups:
                labels = [label for label, (g, _) in measures.items() if g == group]
                judgments = simulate_triplets(sources.qrels, profiles[group],
                                              np.random.default_rng([seed, n, r, group]), n, per_triplet=per_triplet)
                side = SideInputs({**sources.side.values, JUDGMENTS: judgments})
                means = _means(sources, [measures[label][1] for label in labels], side, table)
                for i, label in enumerate(labels):
                    samples[label][n][r] = means[i]
    reference = table.means()
    tau = {label: robustness_curve(reference[table.measures.index(label)], samples[label], variant)
           for label in measures}
    sources_of = {label: SOURCE_NAMES[TREC_PROFILE if g == TREC_PROFILE or given is None else USER_PROFILES]
                  for label, (g, _) in measures.items()}
    return Robustness(tuple(sizes), tau, sources_of)


def _means(sources: Sources, measures: Sequence[Measure], side: SideInputs, table: ScoreTable) -> FloatArray:
    """Mean scores (measures x runs of ``table``) over the table's topics, on the sampled judgments."""
    scores = {s.run: s for s in sources.evaluate(measures, side=side)}
    out = np.empty((len(measures), len(table.runs)))
    for j, run in enumerate(table.runs):
        found = scores[run]
        at = {t: k for k, t in enumerate(found.topics)}
        rows = [at[t] for t in table.topics]
        for i, m in enumerate(measures):
            out[i, j] = float(np.mean(np.asarray(found.values[m.label])[rows])) if rows else float("nan")
    return out
