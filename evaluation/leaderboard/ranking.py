"""Shared-task leaderboards: submissions ranked on a primary measure, with pairwise significance marks.

Every entry brings its own results document (one run, per-topic values); the entries become the runs of one
``ScoreTable`` over the topics they share, ranked by the primary mean (competition ranks), and every pair is
tested on the primary measure's per-topic scores with one test and one correction over all pairs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evaluation.meta.significance import CORRECTIONS, TESTS, pairwise_tests
from evaluation.meta.table import ScoreTable
from evaluation.model import FloatArray
from evaluation.problems import InputError, OptionError, RequestError

ORDERS = ("desc", "asc")
#: primary means closer than this share a rank
TIE_TOLERANCE = 1e-12


@dataclass(frozen=True)
class Entry:
    """One submission: its id, the name people see and its results document (exactly one run inside)."""

    key: str
    label: str
    document: Mapping[str, Any]
    baseline: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SignificanceSettings:
    """The pairwise test, its correction over all pairs and alpha; stochastic tests draw from ``seed``.

    Tukey HSD controls the family-wise error itself: with ``test="tukey"`` the correction is always None.
    """

    test: str = "t"
    correction: str | None = "holm"
    alpha: float = 0.05
    resamples: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.test not in TESTS:
            raise OptionError(f"unknown test {self.test!r}; choose one of {', '.join(TESTS)}")
        if self.correction is not None and self.correction not in CORRECTIONS:
            raise OptionError(f"unknown correction {self.correction!r}; choose one of {', '.join(CORRECTIONS)} or None")
        if not 0.0 < self.alpha < 1.0:
            raise OptionError(f"alpha must be between 0 and 1, not {self.alpha}")
        if self.resamples is not None and self.resamples < 1:
            raise OptionError(f"resamples must be positive, not {self.resamples}")
        if self.test == "tukey":
            object.__setattr__(self, "correction", None)

    def as_dict(self) -> dict[str, Any]:
        """The settings as plain values."""
        return {"test": self.test, "correction": self.correction, "alpha": self.alpha, "resamples": self.resamples,
                "seed": self.seed}


@dataclass(frozen=True)
class Row:
    """One ranked entry: means per measure, distances to the leader and the baseline, significance marks."""

    rank: int
    key: str
    label: str
    baseline: bool
    scores: dict[str, float]
    delta_best: float
    delta_baseline: float | None
    better_than: tuple[str, ...]
    worse_than: tuple[str, ...]
    n_topics: int
    extra: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        """The row as JSON-ready values (non-finite numbers as None; ``extra`` as given)."""
        return {
            "rank": self.rank,
            "key": self.key,
            "label": self.label,
            "baseline": self.baseline,
            "scores": {m: _json_float(v) for m, v in self.scores.items()},
            "delta_best": _json_float(self.delta_best),
            "delta_baseline": None if self.delta_baseline is None else _json_float(self.delta_baseline),
            "better_than": list(self.better_than),
            "worse_than": list(self.worse_than),
            "n_topics": self.n_topics,
            "extra": dict(self.extra),
        }


@dataclass(frozen=True)
class PairMark:
    """The test of one pair on the primary measure; ``a`` is ranked above (or with) ``b``."""

    a: str
    b: str
    mean_difference: float  # a - b
    p_value: float
    p_adjusted: float
    significant: bool

    def as_dict(self) -> dict[str, Any]:
        """The pair as JSON-ready values."""
        return {"a": self.a, "b": self.b, "mean_difference": _json_float(self.mean_difference),
                "p_value": _json_float(self.p_value), "p_adjusted": _json_float(self.p_adjusted),
                "significant": self.significant}


@dataclass(frozen=True)
class Leaderboard:
    """Ranked rows (best first), the pairwise tests behind their marks and the settings that produced them."""

    measures: tuple[str, ...]
    primary: str
    order: str
    rows: tuple[Row, ...]
    significance: SignificanceSettings
    topics: tuple[str, ...]
    pairs: tuple[PairMark, ...]

    def as_dict(self) -> dict[str, Any]:
        """The leaderboard as a JSON-ready document (NaN as None), keys in a fixed order."""
        return {
            "measures": list(self.measures),
            "primary": self.primary,
            "order": self.order,
            "significance": self.significance.as_dict(),
            "topics": list(self.topics),
            "rows": [r.as_dict() for r in self.rows],
            "pairs": [p.as_dict() for p in self.pairs],
        }


def rank_entries(
    entries: Sequence[Entry],
    measures: Sequence[str],
    primary: str,
    *,
    order: str = "desc",
    significance: SignificanceSettings = SignificanceSettings(),
) -> Leaderboard:
    """Rank the entries on ``primary`` (``desc``: higher is better) and mark significant pairwise differences."""
    names = tuple(measures)
    if primary not in names:
        raise OptionError(f"the primary measure {primary!r} is not one of the measures ({', '.join(names)})")
    if order not in ORDERS:
        raise OptionError(f"unknown order {order!r}; choose desc (higher is better) or asc (lower is better)")
    keys = [e.key for e in entries]
    if len(set(keys)) != len(keys):
        repeated = sorted({k for k in keys if keys.count(k) > 1})
        raise RequestError(f"entry keys must be unique; repeated: {', '.join(repeated)}")
    baselines = [e.key for e in entries if e.baseline]
    if len(baselines) > 1:
        raise RequestError(f"at most one entry may be the baseline; flagged: {', '.join(baselines)}")
    if not entries:
        return Leaderboard(names, primary, order, (), significance, (), ())

    # a canonical run order (by key) so that the topic order, and hence every sum, ignores the input order
    by_key = sorted(entries, key=lambda e: e.key)
    table = ScoreTable.from_document({"runs": {e.key: _only_run(e) for e in by_key}}, names)
    means = table.means()  # (measures, runs)
    p = names.index(primary)
    ranked, ranks = _rank_order(means, p, [e.label for e in by_key], [e.key for e in by_key], order)
    ordered = [by_key[j] for j in ranked]
    scores = means[:, ranked]  # (measures, entries in rank order)

    better = np.zeros((len(ordered), len(ordered)), dtype=bool)  # better[r, c]: row r beats row c
    marks: tuple[PairMark, ...] = ()
    if len(ordered) >= 2 and len(table.topics) >= 2:
        marks = _pair_marks(table.measure(primary)[ranked], [e.key for e in ordered], significance, order, better)

    primary_scores = scores[p]
    best = float(primary_scores[0])
    base_at = [i for i, e in enumerate(ordered) if e.baseline]
    base = float(primary_scores[base_at[0]]) if base_at else None
    rows = []
    for i, e in enumerate(ordered):
        score = float(primary_scores[i])
        delta_best = 0.0 if ranks[i] == 1 and math.isfinite(score) else score - best
        rows.append(Row(
            rank=ranks[i],
            key=e.key,
            label=e.label,
            baseline=e.baseline,
            scores={m: float(scores[k, i]) for k, m in enumerate(names)},
            delta_best=delta_best,
            delta_baseline=None if base is None else score - base,
            better_than=tuple(ordered[c].key for c in np.flatnonzero(better[i]).tolist()),
            worse_than=tuple(ordered[c].key for c in np.flatnonzero(better[:, i]).tolist()),
            n_topics=len(table.topics),
            extra=dict(e.extra),
        ))
    return Leaderboard(names, primary, order, tuple(rows), significance, table.topics, marks)


def _only_run(entry: Entry) -> Mapping[str, Any]:
    """The one run of an entry's results document (its name inside the document does not matter)."""
    runs = entry.document.get("runs") if isinstance(entry.document, Mapping) else None
    if not isinstance(runs, Mapping) or not runs:
        raise InputError.single("no-runs", f"the results document of entry {entry.key} has no runs", entry.key)
    if len(runs) != 1:
        raise InputError.single(
            "several-runs",
            f"the results document of entry {entry.key} holds {len(runs)} runs; a leaderboard entry holds one",
            entry.key,
        )
    run: Mapping[str, Any] = next(iter(runs.values()))
    return run


def _rank_order(
    means: FloatArray, primary: int, labels: Sequence[str], keys: Sequence[str], order: str
) -> tuple[list[int], list[int]]:
    """Positions of the runs best first and their competition ranks.

    Primary means within ``TIE_TOLERANCE`` of the first of their group tie (NaN last, tied with each other);
    inside a group the other measures decide in their order, then the label, then the key.
    """
    signed = -means if order == "desc" else means  # smaller is better
    missing = np.isnan(signed)
    runs = signed.shape[1]
    by_primary = sorted(range(runs), key=lambda j: (bool(missing[primary, j]), 0.0 if missing[primary, j]
                                                    else float(signed[primary, j])))
    group = [0] * runs
    current, anchor = 0, float(signed[primary, by_primary[0]])
    for j in by_primary[1:]:
        value = float(signed[primary, j])
        same = (math.isnan(value) and math.isnan(anchor)) or abs(value - anchor) <= TIE_TOLERANCE
        if not same:
            current, anchor = current + 1, value
        group[j] = current
    others = [k for k in range(signed.shape[0]) if k != primary]

    def sort_key(j: int) -> tuple[Any, ...]:
        rest = tuple((bool(missing[k, j]), 0.0 if missing[k, j] else float(signed[k, j])) for k in others)
        return (group[j], rest, labels[j], keys[j])

    ranked = sorted(range(runs), key=sort_key)
    ranks: list[int] = []
    for position, j in enumerate(ranked):
        ranks.append(ranks[-1] if position and group[j] == group[ranked[position - 1]] else position + 1)
    return ranked, ranks


def _pair_marks(
    scores: FloatArray, keys: Sequence[str], settings: SignificanceSettings, order: str, better: np.ndarray
) -> tuple[PairMark, ...]:
    """Test every pair of rows (runs x topics, rank order); fill ``better`` and return one mark per pair."""
    tests = pairwise_tests(
        scores,
        keys,
        test=settings.test,
        correction=settings.correction,
        alpha=settings.alpha,
        resamples=settings.resamples,
        rng=np.random.default_rng(settings.seed),
    )
    significant = tests.significant
    diff = tests.mean_difference
    first, second = tests.pairs[:, 0], tests.pairs[:, 1]
    first_wins = significant & ((diff > 0) if order == "desc" else (diff < 0))
    second_wins = significant & ((diff < 0) if order == "desc" else (diff > 0))
    better[first[first_wins], second[first_wins]] = True
    better[second[second_wins], first[second_wins]] = True
    return tuple(
        PairMark(keys[i], keys[j], d, pv, pa, s)
        for (i, j), d, pv, pa, s in zip(
            tests.pairs.tolist(), diff.tolist(), tests.p_value.tolist(), tests.p_adjusted.tolist(),
            significant.tolist(),
        )
    )


def _json_float(value: float) -> float | None:
    return value if math.isfinite(value) else None
