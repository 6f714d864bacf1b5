"""Pairwise significance tests between runs for one measure, multiple-comparison corrections, effect sizes
and confidence intervals (companions of spec 8.3; the same paired view of per-topic scores).

Tests: the paired t-test, Fisher's randomisation (sign-flip permutation) test, the paired bootstrap test of
8.3 and the randomised Tukey HSD test (which accounts for all runs being compared at once). Corrections: Holm,
Bonferroni and Benjamini-Hochberg. Stochastic tests take a ``numpy.random.Generator`` and share one set of
draws over every pair (common random numbers). Every test is two-sided; pairs are ``(i, j)``, ``i < j``, and
differences are ``run i - run j``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from evaluation.meta.bootstrap import (
    SD_EPS,
    all_pairs,
    bootstrap_indices,
    pair_asl,
    resample_counts,
    studentised,
)
from evaluation.meta.table import ScoreTable
from evaluation.model import FloatArray, IntArray
from evaluation.problems import OptionError

TestName = Literal["t", "randomisation", "bootstrap", "tukey"]
TESTS: tuple[str, ...] = get_args(TestName)
Correction = Literal["holm", "bonferroni", "bh"]
CORRECTIONS: tuple[str, ...] = get_args(Correction)

#: ``|T*| >= |T|`` is decided with this relative slack so that rounding cannot turn an exact tie into a miss
_TIE_RTOL = 1e-9
#: elements of one (pairs x resamples) block of the randomisation test
_BLOCK = 1 << 20


@dataclass(frozen=True, eq=False)
class PairwiseTests:
    """One test over every pair of runs: mean differences, p-values (raw and corrected), effect sizes and
    t-based confidence intervals of the mean difference."""

    runs: tuple[str, ...]
    pairs: IntArray  # (pairs, 2) indices into runs, i < j
    test: str
    correction: str | None
    alpha: float
    mean_difference: FloatArray
    p_value: FloatArray
    p_adjusted: FloatArray
    cohens_d: FloatArray
    hedges_g: FloatArray
    ci_low: FloatArray
    ci_high: FloatArray
    confidence: float

    @property
    def significant(self) -> np.ndarray:
        """Pairs whose corrected p-value is below alpha (NaN: not significant)."""
        with np.errstate(invalid="ignore"):
            return np.asarray(self.p_adjusted < self.alpha)

    def rows(self, *, undefined_as_none: bool = False) -> list[dict[str, object]]:
        """One record per pair, for reports; ``undefined_as_none``: NaN and infinite values as None (for JSON).
        Built column by column: a job of 100 runs x 200 measures has a million pairs."""
        runs = self.runs
        columns = [_column(a, undefined_as_none) for a in (self.mean_difference, self.p_value, self.p_adjusted,
                                                            self.cohens_d, self.hedges_g, self.ci_low, self.ci_high)]
        return [
            {
                "a": runs[i],
                "b": runs[j],
                "mean_difference": diff,
                "p_value": p,
                "p_adjusted": adjusted,
                "significant": significant,
                "cohens_d": d,
                "hedges_g": g,
                "ci": [low, high],
            }
            for (i, j), significant, diff, p, adjusted, d, g, low, high in zip(
                self.pairs.tolist(), self.significant.tolist(), *columns)
        ]


def _column(values: FloatArray, undefined_as_none: bool) -> list[float | None]:
    """An array as Python floats (as ``float(values[k])`` gives them), non-finite ones as None if asked."""
    out: list[float | None] = np.asarray(values, dtype=np.float64).tolist()
    if undefined_as_none and not np.isfinite(values).all():
        out = [v if v is not None and math.isfinite(v) else None for v in out]
    return out


def paired_t_test(z: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Two-sided paired t-test of each row of differences ``z`` (pairs, N): (t, p); NaN when N < 2.

    A zero standard deviation follows 8.3: t = 0 (p = 1) for a zero mean, else t = +-inf (p = 0).
    """
    z = np.atleast_2d(np.asarray(z, dtype=np.float64))
    n = z.shape[1]
    if n < 2:
        nan = np.full(z.shape[0], np.nan)
        return nan, nan.copy()
    from scipy import stats  # here, not at the top: importing scipy.stats takes longer than most evaluations

    t = studentised(z.mean(axis=1), z.std(axis=1, ddof=1), n)
    p = 2.0 * stats.t.sf(np.abs(t), n - 1)
    return t, np.minimum(1.0, p)


def randomisation_test(z: FloatArray, *, resamples: int = 10000, rng: np.random.Generator | None = None) -> FloatArray:
    """Fisher's paired randomisation test of each row of ``z`` (pairs, N): p-values, two-sided on the mean.

    Exact (all ``2^N`` sign assignments, the identity included) when ``2^N <= resamples``; otherwise
    ``resamples`` random sign vectors shared by all rows, with ``p = (count + 1) / (resamples + 1)``.
    """
    z = np.atleast_2d(np.asarray(z, dtype=np.float64))
    n = z.shape[1]
    if n == 0:
        return np.full(z.shape[0], np.nan)
    exact = n < 63 and 2**n <= resamples
    if exact:
        codes = np.arange(2**n, dtype=np.int64)[:, None] >> np.arange(n, dtype=np.int64)
        signs = np.where(codes & 1, -1.0, 1.0)
    else:
        gen = rng or np.random.default_rng(0)
        signs = np.where(gen.random((resamples, n)) < 0.5, -1.0, 1.0)
    observed = np.abs(z.mean(axis=1)) * (1.0 - _TIE_RTOL)
    count = np.zeros(z.shape[0])
    signs_t = np.ascontiguousarray(signs.T) / n
    step = max(1, _BLOCK // signs.shape[0])
    for start in range(0, z.shape[0], step):
        means = np.abs(z[start : start + step] @ signs_t)
        count[start : start + step] = np.count_nonzero(means >= observed[start : start + step, None], axis=1)
    if exact:
        p: FloatArray = count / signs.shape[0]
    else:
        p = (count + 1.0) / (signs.shape[0] + 1.0)
    return p


def tukey_hsd(
    scores: FloatArray, *, resamples: int = 1000, rng: np.random.Generator | None = None
) -> tuple[IntArray, FloatArray]:
    """Randomised Tukey HSD over all runs (rows of ``scores``, runs x topics): (pairs, p-values).

    Each trial permutes the runs' scores within every topic and records the range (max - min) of the run
    means; a pair's p-value is the fraction of trials whose range reaches its absolute mean difference.
    """
    scores = np.asarray(scores, dtype=np.float64)
    r, n = scores.shape
    pairs = all_pairs(r)
    if n == 0:
        return pairs, np.full(pairs.shape[0], np.nan)
    gen = rng or np.random.default_rng(0)
    ranges = np.empty(resamples)
    step = max(1, (1 << 22) // max(1, r * n))
    for start in range(0, resamples, step):
        b = min(step, resamples - start)
        shuffled = gen.permuted(np.broadcast_to(scores, (b, r, n)), axis=1)
        means = shuffled.mean(axis=2)
        ranges[start : start + b] = means.max(axis=1) - means.min(axis=1)
    means = scores.mean(axis=1)
    observed = np.abs(means[pairs[:, 0]] - means[pairs[:, 1]]) * (1.0 - _TIE_RTOL)
    ranges.sort()
    below = np.searchsorted(ranges, observed, side="left")
    return pairs, (resamples - below) / resamples


def adjust_p_values(p: FloatArray, method: str | None) -> FloatArray:
    """Multiple-comparison correction of a family of p-values: ``holm``, ``bonferroni`` or ``bh``
    (Benjamini-Hochberg); None returns them unchanged. NaN values are kept and are not counted in the family."""
    p = np.asarray(p, dtype=np.float64)
    if method is None:
        return p.copy()
    if method not in CORRECTIONS:
        raise OptionError(f"unknown correction {method!r}; choose one of {', '.join(CORRECTIONS)}")
    out = np.full(p.shape, np.nan)
    valid = ~np.isnan(p)
    q = p[valid]
    m = q.size
    if m == 0:
        return out
    if method == "bonferroni":
        out[valid] = np.minimum(1.0, q * m)
        return out
    order = np.argsort(q, kind="stable")
    ranked = q[order]
    i = np.arange(1, m + 1)
    if method == "holm":
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - i + 1) * ranked))
    else:
        adjusted = np.minimum.accumulate(np.minimum(1.0, ranked * m / i)[::-1])[::-1]
    result = np.empty(m)
    result[order] = adjusted
    out[valid] = result
    return out


def cohens_d(z: FloatArray) -> FloatArray:
    """Standardised mean difference of paired samples, ``d_z = mean(z) / sd(z)`` per row (NaN when N < 2;
    a zero sd gives 0 for a zero mean and +-inf otherwise)."""
    z = np.atleast_2d(np.asarray(z, dtype=np.float64))
    n = z.shape[1]
    if n < 2:
        return np.full(z.shape[0], np.nan)
    return studentised(z.mean(axis=1), z.std(axis=1, ddof=1), n) / math.sqrt(n)


def hedges_g(z: FloatArray) -> FloatArray:
    """``d_z`` with Hedges' small-sample correction ``J(df) = G(df/2) / (sqrt(df/2) G((df-1)/2))``,
    ``df = N - 1``."""
    z = np.atleast_2d(np.asarray(z, dtype=np.float64))
    df = z.shape[1] - 1
    if df < 2:
        return np.full(z.shape[0], np.nan)
    from scipy import special

    j = math.exp(special.gammaln(df / 2) - special.gammaln((df - 1) / 2)) / math.sqrt(df / 2)
    return cohens_d(z) * j


def t_interval(z: FloatArray, confidence: float = 0.95) -> tuple[FloatArray, FloatArray]:
    """Two-sided t-based confidence interval of each row's mean difference: (low, high); NaN when N < 2."""
    z = np.atleast_2d(np.asarray(z, dtype=np.float64))
    n = z.shape[1]
    if n < 2:
        nan = np.full(z.shape[0], np.nan)
        return nan, nan.copy()
    mean = z.mean(axis=1)
    sd = z.std(axis=1, ddof=1)
    sd = np.where(sd < SD_EPS * np.maximum(1.0, np.abs(mean)), 0.0, sd)
    from scipy import stats

    half = stats.t.ppf(0.5 + confidence / 2, n - 1) * sd / math.sqrt(n)
    return mean - half, mean + half


def bootstrap_interval(
    z: FloatArray,
    *,
    confidence: float = 0.95,
    resamples: int = 1000,
    rng: np.random.Generator | None = None,
    indices: IntArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Percentile bootstrap confidence interval of each row's mean difference, resamples shared by all rows."""
    z = np.atleast_2d(np.asarray(z, dtype=np.float64))
    n = z.shape[1]
    if n == 0:
        nan = np.full(z.shape[0], np.nan)
        return nan, nan.copy()
    idx = indices if indices is not None else bootstrap_indices(n, resamples, rng or np.random.default_rng(0))
    means = z @ resample_counts(idx, n).T / n  # (rows, B)
    low, high = np.quantile(means, [0.5 - confidence / 2, 0.5 + confidence / 2], axis=1)
    return low, high


def pairwise_tests(
    scores: FloatArray,
    runs: Sequence[str] | None = None,
    *,
    test: str = "t",
    correction: str | None = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    resamples: int | None = None,
    rng: np.random.Generator | None = None,
) -> PairwiseTests:
    """Compare every pair of runs (rows of ``scores``, runs x topics) with one test and one correction.

    ``resamples`` defaults to 10000 for the randomisation test and 1000 for the bootstrap and Tukey tests;
    Tukey HSD already controls the family-wise error, so pass ``correction=None`` with it.
    """
    if test not in TESTS:
        raise OptionError(f"unknown test {test!r}; choose one of {', '.join(TESTS)}")
    scores = np.asarray(scores, dtype=np.float64)
    names = tuple(runs) if runs is not None else tuple(str(i) for i in range(scores.shape[0]))
    if len(names) != scores.shape[0]:
        # internal: callers pass one name per row of scores
        raise ValueError(f"{len(names)} run names for {scores.shape[0]} rows of scores")
    pairs = all_pairs(scores.shape[0])
    z = scores[pairs[:, 0]] - scores[pairs[:, 1]]
    n = scores.shape[1]
    if test == "t":
        p = paired_t_test(z)[1]
    elif test == "randomisation":
        p = randomisation_test(z, resamples=resamples or 10000, rng=rng)
    elif test == "bootstrap":
        gen = rng or np.random.default_rng(0)
        counts = resample_counts(bootstrap_indices(n, resamples or 1000, gen), n)
        p = pair_asl(scores, pairs, counts, alpha)[0]
    else:
        p = tukey_hsd(scores, resamples=resamples or 1000, rng=rng)[1]
    low, high = t_interval(z, confidence)
    return PairwiseTests(
        names,
        pairs,
        test,
        correction,
        alpha,
        z.mean(axis=1) if n else np.full(pairs.shape[0], np.nan),
        p,
        adjust_p_values(p, correction),
        cohens_d(z),
        hedges_g(z),
        low,
        high,
        confidence,
    )


def compare_runs(
    table: ScoreTable,
    measure: str,
    *,
    test: str = "t",
    correction: str | None = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    resamples: int | None = None,
    rng: np.random.Generator | None = None,
) -> PairwiseTests:
    """``pairwise_tests`` for one measure of a score table."""
    return pairwise_tests(
        table.measure(measure),
        table.runs,
        test=test,
        correction=correction,
        alpha=alpha,
        confidence=confidence,
        resamples=resamples,
        rng=rng,
    )
