"""Discriminative power with the paired bootstrap test (spec 8.3) and ASL curves (8.4): TV-BOOT-1, the edge
cases and invariants of 8.3, pair counts, and equality with a pair-by-pair, resample-by-resample
implementation written from the algorithm in 8.3."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.meta import (
    ScoreTable,
    all_pairs,
    bootstrap_indices,
    discriminative_power,
    pair_asl,
    paired_bootstrap,
    resample_counts,
)
from evaluation.meta.bootstrap import MEAN_EPS, SD_EPS, borderline_rank, observed_t

X = np.array([0.5, 0.6, 0.3, 0.8])
Y = np.array([0.4, 0.3, 0.35, 0.5])
ALL_RESAMPLES_OF_4 = np.array(list(itertools.product(range(4), repeat=4)))


def test_tv_boot_1_exact_enumeration() -> None:
    z = X - Y
    assert z.mean() == pytest.approx(0.1625, abs=1e-12)
    assert observed_t(z)[0] == pytest.approx(1.909838, abs=1e-6)
    asl, _ = paired_bootstrap(X, Y, indices=ALL_RESAMPLES_OF_4)
    assert asl == 32 / 256 == 0.125


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_tv_boot_1_monte_carlo(seed: int) -> None:
    asl, _ = paired_bootstrap(X, Y, resamples=1000, rng=np.random.default_rng(seed))
    assert abs(asl - 0.125) <= 0.035
    assert asl >= 0.05  # not significant


def naive_test(x: np.ndarray, y: np.ndarray, indices: np.ndarray, alpha: float) -> tuple[float, float]:
    """8.3 as written: one resample at a time; the borderline sample from a stable descending sort."""
    z = x - y
    n = z.size

    def t_of(v: np.ndarray) -> float:
        mean, sd = float(np.mean(v)), float(np.std(v, ddof=1))
        if sd < SD_EPS * max(1.0, abs(mean)):
            return 0.0 if mean == 0 else math.copysign(math.inf, mean)
        return mean / (sd / math.sqrt(n))

    t = 0.0 if abs(z.mean()) <= MEAN_EPS * np.abs(z).mean() else t_of(z)  # a zero mean up to rounding
    w = z - z.mean()
    if float(np.std(z, ddof=1)) < SD_EPS * max(1.0, abs(float(z.mean()))):
        w = np.zeros(n)
    ts, means = [], []
    for idx in indices:
        sample = w[idx]
        ts.append(abs(t_of(sample)))
        means.append(abs(float(np.mean(sample))))
    asl = sum(1 for v in ts if v >= abs(t)) / len(ts)
    order = sorted(range(len(ts)), key=lambda b: -ts[b])  # stable: resample order among equal values
    k = math.ceil(len(ts) * alpha - 1e-9)
    return asl, means[order[k - 1]]


def naive_power(values: np.ndarray, indices: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    m, r, _ = values.shape
    pairs = list(itertools.combinations(range(r), 2))
    asl = np.empty((m, len(pairs)))
    border = np.empty_like(asl)
    for i in range(m):
        for p, (a, b) in enumerate(pairs):
            asl[i, p], border[i, p] = naive_test(values[i, a], values[i, b], indices, alpha)
    return asl, border


def make_table(values: np.ndarray) -> ScoreTable:
    m, r, t = values.shape
    return ScoreTable(
        tuple(f"m{i}" for i in range(m)), tuple(f"r{i}" for i in range(r)), tuple(f"q{i}" for i in range(t)), values
    )


@pytest.mark.parametrize("discrete", [False, True])
def test_vectorised_equals_naive(discrete: bool) -> None:
    rng = np.random.default_rng(11)
    values = rng.random((3, 6, 12))
    if discrete:  # P@10-like scores: ties, constant differences and constant resamples occur
        values = np.round(values * 10) / 10
        values[0, 1] = values[0, 0]  # identical runs
        values[0, 2] = np.minimum(values[0, 0] + 0.1, 2.0)  # nearly constant differences
        values[1, 3] = values[1, 4] + 0.25  # a constant difference
    indices = bootstrap_indices(12, 400, np.random.default_rng(5))
    result = discriminative_power(make_table(values), indices=indices, alpha=0.05)
    asl, border = naive_power(values, indices, 0.05)
    np.testing.assert_array_equal(result.asl, asl)
    np.testing.assert_allclose(result.borderline, border, rtol=1e-9, atol=1e-12)


def test_vectorised_equals_naive_on_exact_enumeration() -> None:
    rng = np.random.default_rng(2)
    values = np.round(rng.random((2, 5, 4)) * 4) / 4
    result = discriminative_power(make_table(values), indices=ALL_RESAMPLES_OF_4, alpha=0.05)
    asl, border = naive_power(values, ALL_RESAMPLES_OF_4, 0.05)
    np.testing.assert_array_equal(result.asl, asl)
    np.testing.assert_allclose(result.borderline, border, rtol=1e-9, atol=1e-12)


def test_edge_cases() -> None:
    indices = bootstrap_indices(6, 200, np.random.default_rng(0))
    x = np.array([0.1, 0.5, 0.3, 0.9, 0.2, 0.4])
    assert paired_bootstrap(x, x, indices=indices)[0] == 1.0  # z identically 0: not significant
    assert paired_bootstrap(x + 0.1, x, indices=indices)[0] == 0.0  # z constant non-zero: significant
    asl, border = paired_bootstrap(np.array([0.3]), np.array([0.2]))
    assert math.isnan(asl) and math.isnan(border)  # N < 2
    one_topic = discriminative_power(make_table(np.array([[[0.1], [0.2]]])))
    assert math.isnan(one_topic.asl[0, 0]) and not one_topic.significant[0, 0]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 15), st.floats(-5, 5))
def test_invariants(seed: int, n: int, shift: float) -> None:
    rng = np.random.default_rng(seed)
    x, y = rng.random(n), rng.random(n)
    counts = resample_counts(bootstrap_indices(n, 100, rng), n)
    scores = np.stack([x, y, x + shift, y + shift])
    asl, _ = pair_asl(scores, np.array([[0, 1], [1, 0], [2, 3]]), counts)
    assert 0.0 <= asl[0] <= 1.0
    assert asl[0] == asl[1]  # symmetric in X and Y
    assert asl[2] == asl[0]  # adding a constant to both runs changes nothing


def test_pair_counts() -> None:
    assert all_pairs(10).shape == (45, 2)
    assert all_pairs(16).shape == (120, 2)
    rng = np.random.default_rng(0)
    years = [discriminative_power(make_table(rng.random((1, 20, 10))), resamples=50) for _ in range(5)]
    assert sum(y.pairs.shape[0] for y in years) == 5 * 20 * 19 // 2 == 950
    assert (all_pairs(5)[:, 0] < all_pairs(5)[:, 1]).all()


def test_common_random_numbers_and_outputs() -> None:
    rng = np.random.default_rng(8)
    base = rng.random((6, 15))
    values = np.stack([base, base, base + rng.normal(0, 0.2, base.shape)])
    table = make_table(values)
    a = discriminative_power(table, rng=np.random.default_rng(3))
    b = discriminative_power(table, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(a.asl, b.asl)
    np.testing.assert_array_equal(a.asl[0], a.asl[1])  # the same resamples for every measure
    assert a.pairs.shape == (15, 2) and a.asl.shape == (3, 15)
    assert a.counts.tolist() == [int((row < 0.05).sum()) for row in a.asl]
    np.testing.assert_allclose(a.power, a.counts / 15)
    np.testing.assert_allclose(a.delta, a.borderline.max(axis=1))
    curves = a.asl_curves()
    assert list(curves) == ["m0", "m1", "m2"]
    for m, row in zip(a.measures, a.asl):
        np.testing.assert_array_equal(curves[m], np.sort(row))
    summary = a.summary()
    assert summary["m0"]["topics"] == 15 and summary["m0"]["pairs"] == 15
    sub = discriminative_power(table, measures=["m2"], runs=["r0", "r1", "r2"], rng=np.random.default_rng(3))
    assert sub.asl.shape == (1, 3)


def test_borderline_rank() -> None:
    assert borderline_rank(1000, 0.05) == 50
    assert borderline_rank(256, 0.05) == 13  # ceil(12.8)
    assert borderline_rank(10, 0.0) == 1
