"""Metric Unanimity (spec 8.1, AMIGO18 Sec 6.1): how often a measure agrees with unanimous improvements of others.

Comparisons are the ordered pairs of different runs on the same topic, pooled over topics (C-MU-1). For a pair
``(a, b)`` the event ``M_ab`` holds when every other measure scores ``a >= b`` (``strict``: ``a > b``; C-MU-2);
``MU(m) = log2(P(m_ab, M_ab) / (P(m_ab) P(M_ab)))`` where a tie of ``m`` counts one half (so ``P(m_ab) = 1/2``).
MU is NaN when no pair is unanimous and -inf when ``m`` never agrees with one (C-MU-4). Ties are exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.meta.table import ScoreTable
from evaluation.model import FloatArray
from evaluation.problems import RequestError

#: elements of one (measures x runs x runs x topics) comparison block; topics are processed in chunks of this size
_BLOCK = 1 << 24


@dataclass(frozen=True)
class Unanimity:
    """MU of each measure with its counts: ``joint`` (fractional) and ``unanimous`` pairs out of ``pairs``."""

    measures: tuple[str, ...]
    mu: FloatArray
    joint: FloatArray
    unanimous: FloatArray
    pairs: int

    def as_dict(self) -> dict[str, float]:
        return {m: float(v) for m, v in zip(self.measures, self.mu)}


def metric_unanimity(
    table: ScoreTable,
    *,
    against: Sequence[str] | None = None,
    measures: Sequence[str] | None = None,
    strict: bool = False,
) -> Unanimity:
    """MU of each of ``measures`` (default all) against the other measures of ``against`` (default all; 8.1)."""
    names = tuple(measures) if measures is not None else table.measures
    pool = tuple(against) if against is not None else table.measures
    where = {m: i for i, m in enumerate(table.measures)}
    unknown = [m for m in (*names, *pool) if m not in where]
    if unknown:
        raise RequestError(f"unknown measure(s): {', '.join(dict.fromkeys(unknown))}")
    joint, unanimous, pairs = unanimity_counts(
        table.values, [where[m] for m in names], sorted({where[m] for m in pool}), strict=strict
    )
    return Unanimity(names, mu_from_counts(joint, unanimous), joint, unanimous, pairs)


def unanimity_counts(
    values: FloatArray, targets: Sequence[int], pool: Sequence[int], *, strict: bool = False
) -> tuple[FloatArray, FloatArray, int]:
    """Joint counts, unanimous-pair counts (each target against ``pool`` minus itself) and the number of pairs.

    ``values`` has shape (measures, runs, topics); ``targets`` and ``pool`` index its first axis.
    """
    values = np.asarray(values, dtype=np.float64)
    n_measures, n_runs, n_topics = values.shape
    targets_a = np.asarray(targets, dtype=np.int64)
    pool_a = np.unique(np.asarray(pool, dtype=np.int64))
    joint = np.zeros(targets_a.size)
    unanimous = np.zeros(targets_a.size)
    in_pool = np.isin(targets_a, pool_a)
    off_diagonal = ~np.eye(n_runs, dtype=bool)[:, :, None]
    step = max(1, _BLOCK // max(1, n_measures * n_runs * n_runs))
    for start in range(0, n_topics, step):
        v = values[:, :, start : start + step]
        a, b = v[:, :, None, :], v[:, None, :, :]  # (measures, a, b, topics)
        # a pair fails measure m' when m'(a) < m'(b) (strict: when m'(a) <= m'(b))
        fails = (a <= b) if strict else (a < b)
        failed = fails[pool_a].sum(axis=0, dtype=np.int32)
        for k, (m, own) in enumerate(zip(targets_a, in_pool)):
            others_failed = failed - fails[m] if own else failed
            agree = (others_failed == 0) & off_diagonal
            unanimous[k] += np.count_nonzero(agree)
            joint[k] += np.count_nonzero(agree & (a[m] > b[m])) + 0.5 * np.count_nonzero(agree & (a[m] == b[m]))
    return joint, unanimous, n_topics * n_runs * (n_runs - 1)


def mu_from_counts(joint: FloatArray, unanimous: FloatArray) -> FloatArray:
    """``log2(2 * joint / unanimous)``: NaN where nothing is unanimous, -inf where the joint count is 0."""
    joint = np.asarray(joint, dtype=np.float64)
    unanimous = np.asarray(unanimous, dtype=np.float64)
    out = np.full(joint.shape, np.nan)
    some = unanimous > 0
    with np.errstate(divide="ignore"):
        out[some] = np.log2(2.0 * joint[some] / unanimous[some])
    return out
