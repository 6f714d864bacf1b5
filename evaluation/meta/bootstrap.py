"""Discriminative power with the two-sided paired bootstrap test (spec 8.3, SAKAI08 Sec 2.3; ASL curves 8.4).

One set of ``B`` resamples of the topics is drawn per experiment and shared by every run pair and measure
(common random numbers, C-BOOT-1). A resample is held as topic counts ``c_b`` (how often each topic was drawn),
so that for all pairs at once ``sum_q c_bq w_q`` and ``sum_q c_bq w_q^2`` are two matrix products: the mean and
standard deviation of every resampled, null-shifted difference vector ``w*_b`` without a loop over pairs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.meta.table import ScoreTable
from evaluation.model import FloatArray, IntArray

#: ``sd < SD_EPS * max(1, |mean|)`` counts as a zero standard deviation (C-BOOT-3)
SD_EPS = 1e-12
#: an observed mean difference below this fraction of the mean |z| is rounding noise of a zero mean
MEAN_EPS = 1e-12
#: a resampled variance within this fraction of its mean square is cancellation noise: the resample is constant
_VAR_NOISE = 1e-13
#: ``|t*| >= |t|`` is decided with this relative slack, so rounding cannot turn an exact tie into a miss
_TIE_RTOL = 1e-9
#: run pairs handled per block (bounds the (pairs, B) working arrays)
_PAIR_BLOCK = 512


@dataclass(frozen=True, eq=False)
class Bootstrap:
    """Per measure and run pair: the ASL and the borderline mean difference (8.3); pairs are ``runs`` indices."""

    measures: tuple[str, ...]
    runs: tuple[str, ...]
    pairs: IntArray  # (pairs, 2), i < j
    asl: FloatArray  # (measures, pairs)
    borderline: FloatArray  # (measures, pairs): |mean(w*)| of the ceil(B*alpha)-th largest |t*|
    n_topics: int
    resamples: int
    alpha: float

    @property
    def significant(self) -> np.ndarray:
        """Pairs whose ASL is below alpha (NaN ASL: not significant)."""
        with np.errstate(invalid="ignore"):
            return np.asarray(self.asl < self.alpha)

    @property
    def counts(self) -> IntArray:
        """Number of significantly different pairs per measure."""
        return np.asarray(self.significant.sum(axis=1), dtype=np.int64)

    @property
    def power(self) -> FloatArray:
        """Discriminative power: the proportion of significantly different pairs per measure."""
        n = self.pairs.shape[0]
        return self.counts / n if n else np.full(len(self.measures), np.nan)

    @property
    def delta(self) -> FloatArray:
        """The Delta estimate per measure: the largest borderline difference over the pairs (given n_topics)."""
        out = np.full(len(self.measures), np.nan)
        for i, row in enumerate(self.borderline):
            finite = row[~np.isnan(row)]
            if finite.size:
                out[i] = finite.max()
        return out

    def asl_curves(self) -> dict[str, FloatArray]:
        """ASL curves (8.4): each measure's per-pair ASL values sorted ascending."""
        return {m: np.sort(row) for m, row in zip(self.measures, self.asl)}

    def summary(self) -> dict[str, dict[str, float]]:
        """Per measure: significant pairs, their proportion, Delta and the topic count it refers to."""
        return {
            m: {
                "significant": int(c),
                "pairs": int(self.pairs.shape[0]),
                "power": float(p),
                "delta": float(d),
                "topics": self.n_topics,
            }
            for m, c, p, d in zip(self.measures, self.counts, self.power, self.delta)
        }


def all_pairs(n_runs: int) -> IntArray:
    """The ``n (n - 1) / 2`` unordered pairs ``(i, j)``, ``i < j``, in row-major order."""
    i, j = np.triu_indices(n_runs, k=1)
    return np.stack([i, j], axis=1).astype(np.int64)


def bootstrap_indices(n_topics: int, resamples: int, rng: np.random.Generator) -> IntArray:
    """``resamples`` index vectors of ``n_topics`` topics drawn uniformly with replacement, shape (B, N)."""
    return rng.integers(0, n_topics, size=(resamples, n_topics), dtype=np.int64)


def resample_counts(indices: IntArray, n_topics: int) -> FloatArray:
    """How often each topic occurs in each resample: shape (B, N), rows summing to N."""
    indices = np.asarray(indices, dtype=np.int64)
    b = indices.shape[0]
    flat = (np.arange(b, dtype=np.int64)[:, None] * n_topics + indices).ravel()
    return np.bincount(flat, minlength=b * n_topics).reshape(b, n_topics).astype(np.float64)


def borderline_rank(resamples: int, alpha: float) -> int:
    """The position (1-based, descending ``|t*|``) of the borderline sample: ``ceil(B * alpha)`` (C-BOOT-2)."""
    return min(resamples, max(1, math.ceil(resamples * alpha - 1e-9)))


def studentised(mean: FloatArray, sd: FloatArray, n: int) -> FloatArray:
    """``mean / (sd / sqrt(n))`` with the spec's zero-sd rule: 0 when the mean is 0, else +-inf (8.3)."""
    mean = np.asarray(mean, dtype=np.float64)
    sd = np.asarray(sd, dtype=np.float64)
    zero = sd < SD_EPS * np.maximum(1.0, np.abs(mean))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean * math.sqrt(n) / sd
    t = np.where(zero, np.copysign(np.inf, mean), t)
    return np.where(zero & (mean == 0), 0.0, t)


def observed_t(z: FloatArray) -> FloatArray:
    """The studentised statistic of each row of per-topic differences ``z`` (rows: pairs).

    A mean below ``MEAN_EPS`` times the mean ``|z|`` is taken as 0 (equal mean scores computed with
    rounding), so that such a pair gets ``t = 0`` and ``ASL = 1`` exactly."""
    z = np.atleast_2d(np.asarray(z, dtype=np.float64))
    return studentised(_observed_mean(z), z.std(axis=1, ddof=1), z.shape[1])


def _observed_mean(z: FloatArray) -> FloatArray:
    mean: FloatArray = z.mean(axis=1)
    mean[np.abs(mean) <= MEAN_EPS * np.abs(z).mean(axis=1)] = 0.0
    return mean


def pair_asl(
    scores: FloatArray, pairs: IntArray, counts: FloatArray, alpha: float = 0.05
) -> tuple[FloatArray, FloatArray]:
    """ASL and borderline ``|mean(w*)|`` of every pair of rows of ``scores`` (runs, topics) under the
    resamples ``counts`` (B, topics) (8.3). With fewer than 2 topics both are NaN."""
    scores = np.asarray(scores, dtype=np.float64)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    n = scores.shape[1]
    asl = np.full(pairs.shape[0], np.nan)
    border = np.full(pairs.shape[0], np.nan)
    if n < 2 or pairs.shape[0] == 0:
        return asl, border
    counts_t = np.ascontiguousarray(np.asarray(counts, dtype=np.float64).T)  # (N, B)
    work = _Workspace(min(_PAIR_BLOCK, pairs.shape[0]), counts_t.shape[1])
    k = borderline_rank(counts_t.shape[1], alpha)
    for start in range(0, pairs.shape[0], _PAIR_BLOCK):
        block = pairs[start : start + _PAIR_BLOCK]
        z = scores[block[:, 0]] - scores[block[:, 1]]
        work.test(z, counts_t, k, asl[start : start + block.shape[0]], border[start : start + block.shape[0]])
    return asl, border


class _Workspace:
    """Buffers of shape (pairs, B) reused by every block: fresh arrays of this size would cost a page fault
    per 4 KiB on each allocation, which is most of the time otherwise."""

    def __init__(self, rows: int, resamples: int) -> None:
        shape = (rows, resamples)
        self.mean, self.s2, self.m2, self.ss, self.t2, self.tmp = (np.empty(shape) for _ in range(6))
        self.zero, self.flag = np.empty(shape, dtype=bool), np.empty(shape, dtype=bool)
        self.rank = np.empty(shape, dtype=np.int64)

    def test(self, z: FloatArray, counts_t: FloatArray, k: int, asl: FloatArray, border: FloatArray) -> None:
        """The bootstrap test for difference rows ``z`` (pairs, N) under resample counts (N, B), written to
        ``asl`` and ``border``."""
        p, n = z.shape
        b = counts_t.shape[1]
        mean, s2, m2, ss, t2, tmp = (a[:p] for a in (self.mean, self.s2, self.m2, self.ss, self.t2, self.tmp))
        zero, flag, rank = self.zero[:p], self.flag[:p], self.rank[:p]
        zbar = z.mean(axis=1)
        sd = z.std(axis=1, ddof=1)
        t_obs = np.abs(studentised(_observed_mean(z), sd, n))
        w = z - zbar[:, None]
        w[sd < SD_EPS * np.maximum(1.0, np.abs(zbar))] = 0.0  # z constant (up to rounding): w is exactly 0
        np.matmul(w, counts_t, out=mean)  # resampled sums ...
        mean *= 1.0 / n  # ... made means of w*
        np.matmul(w * w, counts_t, out=s2)  # resampled sums of squares
        np.multiply(mean, mean, out=m2)
        # (n - 1) var(w*) = s2 - n mean^2 =: ss, and t*^2 = n (n - 1) mean^2 / ss
        np.multiply(m2, -n, out=ss)
        ss += s2
        # sd = 0 when ss is rounding noise of s2, or when sd < SD_EPS * max(1, |mean|) (C-BOOT-3)
        np.maximum(m2, 1.0, out=tmp)
        tmp *= SD_EPS * SD_EPS * (n - 1)
        np.multiply(s2, _VAR_NOISE, out=t2)
        np.maximum(tmp, t2, out=tmp)
        np.less_equal(ss, tmp, out=zero)
        np.logical_not(zero, out=flag)
        np.divide(m2, ss, out=t2, where=flag)
        t2 *= n * (n - 1)
        np.copyto(t2, 0.0, where=zero)  # sd = 0 and mean = 0: t* = 0 ...
        np.greater(m2, 0.0, out=flag)
        flag &= zero
        np.copyto(t2, np.inf, where=flag)  # ... sd = 0 and mean != 0: |t*| = inf
        threshold = t_obs * (1.0 - _TIE_RTOL)
        np.greater_equal(t2, (threshold * threshold)[:, None], out=flag)
        asl[:] = np.count_nonzero(flag, axis=1) / b
        # the borderline sample: position k of a stable descending sort of |t*| (resample order among equal
        # values), i.e. the (k - #larger)-th resample whose t*^2 equals the k-th largest; then its |mean(w*)|
        np.negative(t2, out=tmp)
        tmp.partition(k - 1, axis=1)
        kth = -tmp[:, k - 1 : k]
        np.greater(t2, kth, out=flag)
        larger = np.count_nonzero(flag, axis=1)
        np.equal(t2, kth, out=flag)
        np.cumsum(flag, axis=1, out=rank)
        np.equal(rank, (k - larger)[:, None], out=flag)
        at = flag.argmax(axis=1)
        border[:] = np.abs(mean[np.arange(p), at])


def paired_bootstrap(
    x: FloatArray,
    y: FloatArray,
    *,
    resamples: int = 1000,
    rng: np.random.Generator | None = None,
    indices: IntArray | None = None,
    alpha: float = 0.05,
) -> tuple[float, float]:
    """ASL of the two-sided paired bootstrap test of one pair and its borderline ``|mean(w*)|`` (8.3)."""
    scores = np.stack([np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)])
    n = scores.shape[1]
    idx = indices if indices is not None else bootstrap_indices(n, resamples, rng or np.random.default_rng(0))
    asl, border = pair_asl(scores, np.array([[0, 1]]), resample_counts(idx, n), alpha)
    return float(asl[0]), float(border[0])


def discriminative_power(
    table: ScoreTable,
    *,
    resamples: int = 1000,
    alpha: float = 0.05,
    rng: np.random.Generator | None = None,
    indices: IntArray | None = None,
    measures: Sequence[str] | None = None,
    runs: Sequence[str] | None = None,
) -> Bootstrap:
    """The paired bootstrap test for every pair of runs under every measure, with shared resamples (8.3).

    The resamples are ``indices`` (B, topics) if given, else drawn from ``rng`` (default: seed 0).
    """
    table = table.select(measures, runs)
    n = len(table.topics)
    idx = indices if indices is not None else bootstrap_indices(n, resamples, rng or np.random.default_rng(0))
    idx = np.asarray(idx, dtype=np.int64)
    counts = resample_counts(idx, n)
    pairs = all_pairs(len(table.runs))
    asl = np.empty((len(table.measures), pairs.shape[0]))
    border = np.empty_like(asl)
    for i in range(len(table.measures)):
        asl[i], border[i] = pair_asl(table.values[i], pairs, counts, alpha)
    return Bootstrap(table.measures, table.runs, pairs, asl, border, n, int(idx.shape[0]), alpha)
