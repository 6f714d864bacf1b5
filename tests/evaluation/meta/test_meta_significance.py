"""Pairwise significance tests, corrections, effect sizes and intervals, checked against scipy where scipy has
the method (ttest_rel, permutation_test with paired samples, false_discovery_control) and against
definitions elsewhere."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

from evaluation.meta import (
    ScoreTable,
    adjust_p_values,
    bootstrap_interval,
    cohens_d,
    compare_runs,
    hedges_g,
    paired_bootstrap,
    paired_t_test,
    pairwise_tests,
    randomisation_test,
    t_interval,
    tukey_hsd,
)


def test_t_test_agrees_with_scipy() -> None:
    rng = np.random.default_rng(0)
    x, y = rng.random((2, 30, 25))
    t, p = paired_t_test(x - y)
    for i in range(30):
        ref = stats.ttest_rel(x[i], y[i])
        assert t[i] == pytest.approx(ref.statistic, rel=1e-10)
        assert p[i] == pytest.approx(ref.pvalue, rel=1e-10)


def test_t_interval_agrees_with_scipy() -> None:
    rng = np.random.default_rng(1)
    x, y = rng.random((2, 5, 12))
    for level in (0.9, 0.95, 0.99):
        low, high = t_interval(x - y, level)
        for i in range(5):
            ci = stats.ttest_rel(x[i], y[i]).confidence_interval(level)
            assert (low[i], high[i]) == pytest.approx((ci.low, ci.high), rel=1e-10)


def test_t_test_degenerate_differences() -> None:
    t, p = paired_t_test(np.array([[0.0, 0.0, 0.0], [0.2, 0.2, 0.2]]))
    assert t.tolist() == [0.0, math.inf] and p.tolist() == [1.0, 0.0]
    t, p = paired_t_test(np.array([[0.3]]))
    assert math.isnan(t[0]) and math.isnan(p[0])


def scipy_randomisation(x: np.ndarray, y: np.ndarray) -> float:
    result = stats.permutation_test(
        (x, y),
        lambda a, b, axis: np.mean(a - b, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=np.inf,
        alternative="two-sided",
    )
    return float(result.pvalue)


@pytest.mark.parametrize("n", [3, 6, 9])
def test_exact_randomisation_agrees_with_scipy(n: int) -> None:
    rng = np.random.default_rng(n)
    x, y = rng.random((2, 4, n))
    p = randomisation_test(x - y)
    assert p.tolist() == pytest.approx([scipy_randomisation(x[i], y[i]) for i in range(4)], abs=1e-12)


def test_randomisation_exact_by_enumeration_and_monte_carlo() -> None:
    z = np.array([0.3, -0.1, 0.25, 0.4, 0.05])
    flips = np.array(list(itertools.product([1, -1], repeat=5)))
    expected = np.mean(np.abs((flips * z).mean(axis=1)) >= abs(z.mean()) - 1e-12)
    assert randomisation_test(z)[0] == pytest.approx(expected)
    approx = randomisation_test(z, resamples=20, rng=np.random.default_rng(0))[0]  # 2^5 > 20: Monte Carlo
    assert 1 / 21 <= approx <= 1.0
    big = np.random.default_rng(1).normal(0.5, 1.0, 40)
    p1 = randomisation_test(big, resamples=2000, rng=np.random.default_rng(2))[0]
    assert p1 == pytest.approx(stats.ttest_1samp(big, 0).pvalue, abs=0.03)


def test_benjamini_hochberg_agrees_with_scipy() -> None:
    rng = np.random.default_rng(3)
    for size in (1, 5, 40):
        p = rng.random(size) ** 3
        np.testing.assert_allclose(adjust_p_values(p, "bh"), stats.false_discovery_control(p, method="bh"))


def holm_by_definition(p: list[float]) -> list[float]:
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


@settings(max_examples=50, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 12), elements=st.floats(0, 1)))
def test_corrections(p: np.ndarray) -> None:
    holm = adjust_p_values(p, "holm")
    np.testing.assert_allclose(holm, holm_by_definition(p.tolist()))
    bonferroni = adjust_p_values(p, "bonferroni")
    np.testing.assert_allclose(bonferroni, np.minimum(1, p * p.size))
    bh = adjust_p_values(p, "bh")
    np.testing.assert_allclose(bh, stats.false_discovery_control(p, method="bh"))
    assert (p <= bh + 1e-15).all() and (bh <= holm + 1e-15).all() and (holm <= bonferroni + 1e-15).all()
    np.testing.assert_array_equal(adjust_p_values(p, None), p)


def test_corrections_skip_nan() -> None:
    p = np.array([0.01, np.nan, 0.04])
    adjusted = adjust_p_values(p, "bonferroni")
    assert adjusted[0] == pytest.approx(0.02) and math.isnan(adjusted[1]) and adjusted[2] == pytest.approx(0.08)
    with pytest.raises(ValueError):
        adjust_p_values(p, "sidak")


def test_effect_sizes() -> None:
    z = np.array([[0.1, 0.3, -0.05, 0.3, 0.2]])
    d = z.mean() / z.std(ddof=1)
    assert cohens_d(z)[0] == pytest.approx(d)
    df = 4
    j = math.gamma(df / 2) / (math.sqrt(df / 2) * math.gamma((df - 1) / 2))
    assert hedges_g(z)[0] == pytest.approx(d * j)
    assert abs(hedges_g(z)[0]) < abs(d)
    wide = np.random.default_rng(0).normal(0.2, 1, (1, 2000))
    assert hedges_g(wide)[0] == pytest.approx(cohens_d(wide)[0], rel=1e-3)
    assert cohens_d(np.array([[0.2, 0.2]]))[0] == math.inf


def test_tukey_hsd() -> None:
    rng = np.random.default_rng(4)
    scores = rng.random((5, 20)) * 0.3
    scores[0] += 0.5  # run 0 is clearly better
    scores[4] = scores[3]  # runs 3 and 4 identical
    pairs, p = tukey_hsd(scores, resamples=500, rng=np.random.default_rng(1))
    assert pairs.shape == (10, 2)
    by_pair = {tuple(pq): v for pq, v in zip(pairs.tolist(), p.tolist())}
    assert by_pair[(0, 1)] < 0.01 and by_pair[(3, 4)] == 1.0
    assert ((p >= 0) & (p <= 1)).all()
    diff = np.abs(scores.mean(axis=1)[pairs[:, 0]] - scores.mean(axis=1)[pairs[:, 1]])
    order = np.argsort(diff)
    assert (np.diff(p[order]) <= 0).all()  # a larger difference never has a larger p-value
    _, again = tukey_hsd(scores, resamples=500, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(p, again)
    # HSD is more conservative than uncorrected pairwise t-tests on the same data
    assert (p >= paired_t_test(scores[pairs[:, 0]] - scores[pairs[:, 1]])[1] - 0.05).mean() > 0.5


def test_bootstrap_interval() -> None:
    z = np.random.default_rng(5).normal(0.1, 0.2, (1, 50))
    low, high = bootstrap_interval(z, resamples=2000, rng=np.random.default_rng(0))
    t_low, t_high = t_interval(z)
    assert low[0] == pytest.approx(t_low[0], abs=0.02) and high[0] == pytest.approx(t_high[0], abs=0.02)


def test_pairwise_tests_and_compare_runs() -> None:
    rng = np.random.default_rng(6)
    scores = rng.random((4, 15))
    scores[2] += 0.4
    table = ScoreTable(("AP",), ("a", "b", "c", "d"), tuple(f"q{i}" for i in range(15)), scores[None])
    for test in ("t", "randomisation", "bootstrap", "tukey"):
        result = compare_runs(
            table, "AP", test=test, correction=None if test == "tukey" else "holm", rng=np.random.default_rng(0)
        )
        assert result.pairs.shape == (6, 2) and result.runs == ("a", "b", "c", "d")
        assert result.significant.tolist()[1]  # (a, c)
        assert (result.p_adjusted >= result.p_value - 1e-15).all()
        rows = result.rows()
        assert rows[1]["a"] == "a" and rows[1]["b"] == "c" and rows[1]["mean_difference"] < 0
    boot = pairwise_tests(scores, test="bootstrap", correction=None, rng=np.random.default_rng(9))
    asl, _ = paired_bootstrap(scores[0], scores[1], rng=np.random.default_rng(9))
    assert boot.p_value[0] == asl
    with pytest.raises(ValueError):
        pairwise_tests(scores, test="wilcoxon")
