"""Shared-task leaderboards: submissions ranked on a primary measure, with pairwise significance marks.

Every entry brings its own results document (one run, per-topic values); the entries become the runs of one
``ScoreTable`` over the topics they share, ordered by the primary mean. Only the entries that take a rank
(:func:`takes_rank`: not a baseline, not flagged ``ranked=False`` -- a disqualified submission, say) get
competition ranks and significance marks; the others are shown at their score's place with ``rank`` None and never
push a ranked entry down. On every measure, every pair of ranked entries is tested on its per-topic scores with
one test and one correction over that measure's pairs.
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
    """One submission: its id, the name people see and its results document (exactly one run inside);
    ``ranked=False`` shows it without a rank (as a baseline is), whatever the reason (the caller's)."""

    key: str
    label: str
    document: Mapping[str, Any]
    baseline: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)
    ranked: bool = True


def takes_rank(entry: Entry) -> bool:
    """Whether an entry takes a rank and significance marks: the one rule (baselines never do)."""
    return entry.ranked and not entry.baseline


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
    """One row: its rank (None: shown, not ranked), means per measure, distances to the leader and the baseline,
    significance marks (keys of the rows it is significantly better or worse than: on the primary measure, and on
    every measure in ``better_than_by_measure``)."""

    rank: int | None
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
    better_than_by_measure: dict[str, tuple[str, ...]] = field(default_factory=dict)

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
            "better_than_by_measure": {m: list(keys) for m, keys in self.better_than_by_measure.items()},
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
    """Rank the entries that take a rank on ``primary`` (``desc``: higher is better), show the others at their
    score's place unranked, and mark significant pairwise differences between ranked entries on every measure."""
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

    ranking = [i for i, e in enumerate(ordered) if takes_rank(e)]  # positions of the rows that take a rank
    rank_of = _ranks_among(ranking, [ranks[i] for i in range(len(ordered))])
    keys_ranked = [ordered[i].key for i in ranking]
    better = {m: np.zeros((len(ordered), len(ordered)), dtype=bool) for m in names}  # [m][r, c]: r beats c on m
    marks: tuple[PairMark, ...] = ()
    if len(ranking) >= 2 and len(table.topics) >= 2:
        for m in names:
            values = table.measure(m)[[ranked[i] for i in ranking]]
            within = np.zeros((len(ranking), len(ranking)), dtype=bool)
            found = _pair_marks(values, keys_ranked, significance, order, within)
            better[m][np.ix_(ranking, ranking)] = within
            if m == primary:
                marks = found

    primary_scores = scores[p]
    leader = ranking[0] if ranking else 0
    best = float(primary_scores[leader]) if len(ordered) else math.nan
    base_at = [i for i, e in enumerate(ordered) if e.baseline]
    base = float(primary_scores[base_at[0]]) if base_at else None
    rows = []
    for i, e in enumerate(ordered):
        score = float(primary_scores[i])
        rank = rank_of.get(i)
        delta_best = 0.0 if rank == 1 and math.isfinite(score) else score - best
        rows.append(Row(
            rank=rank,
            key=e.key,
            label=e.label,
            baseline=e.baseline,
            scores={m: float(scores[k, i]) for k, m in enumerate(names)},
            delta_best=delta_best,
            delta_baseline=None if base is None else score - base,
            better_than=_beaten(better[primary][i], ordered),
            worse_than=_beaten(better[primary][:, i], ordered),
            n_topics=len(table.topics),
            extra=dict(e.extra),
            better_than_by_measure={m: _beaten(better[m][i], ordered) for m in names},
        ))
    return Leaderboard(names, primary, order, tuple(rows), significance, table.topics, marks)


def _ranks_among(ranking: Sequence[int], groups: Sequence[int]) -> dict[int, int]:
    """Competition ranks of the rows at ``ranking`` (positions in rank order) counting only those rows: rows of one
    tie group (the same rank in ``groups``, the order over every row) share a rank."""
    out: dict[int, int] = {}
    for n, i in enumerate(ranking):
        previous = ranking[n - 1] if n else None
        out[i] = out[previous] if previous is not None and groups[previous] == groups[i] else n + 1
    return out


def _beaten(flags: np.ndarray, ordered: Sequence[Entry]) -> tuple[str, ...]:
    """The keys of the rows flagged, in rank order."""
    return tuple(ordered[c].key for c in np.flatnonzero(flags).tolist())


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
