"""Kendall's tau-a/tau-b (spec 8.5) and tau_ap (8.6): TV-TAU-1, TV-TAUAP-1, spec 9 property 10, and agreement
with scipy.stats.kendalltau (tau-b) and with tau-a counted pair by pair."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

from evaluation.meta import (
    ScoreTable,
    correlation_matrix,
    kendall_tau,
    pair_counts,
    system_ranking,
    tau_ap,
    tau_ap_scores,
    tau_ap_symmetric,
)

EXACT = 1e-6
G = ("A", "B", "C", "D", "E")


def test_tv_tau_1() -> None:
    x = np.array([5.0, 4, 3, 2, 1])
    assert kendall_tau(x, np.array([5.0, 3, 4, 2, 1]), "a") == pytest.approx(0.8, abs=EXACT)
    assert kendall_tau(x, np.array([5.0, 4, 3, 1, 2]), "a") == pytest.approx(0.8, abs=EXACT)
    assert kendall_tau(x, np.array([5.0, 3, 4, 2, 1]), "b") == pytest.approx(0.8, abs=EXACT)


def test_tv_tauap_1() -> None:
    assert tau_ap(("B", "A", "C", "D", "E"), G) == pytest.approx(0.5, abs=EXACT)
    assert tau_ap(("A", "B", "C", "E", "D"), G) == pytest.approx(0.875, abs=EXACT)
    x = ("B", "C", "A", "D", "E")
    assert tau_ap(x, G) == pytest.approx(0.5, abs=EXACT)
    assert tau_ap(G, x) == pytest.approx(0.25, abs=EXACT)
    assert tau_ap_symmetric(x, G) == pytest.approx(0.375, abs=EXACT)
    assert tau_ap_symmetric(G, x) == pytest.approx(0.375, abs=EXACT)


def test_tv_tauap_1_from_scores() -> None:
    gold = np.array([5.0, 4, 3, 2, 1])  # A > B > C > D > E
    top_swap = np.array([4.0, 5, 3, 2, 1])
    assert tau_ap_scores(top_swap, gold, G) == pytest.approx(0.5, abs=EXACT)
    assert kendall_tau(top_swap, gold, "a") == pytest.approx(0.8, abs=EXACT)


def test_property_10_identity_and_reversal() -> None:
    x = np.array([0.3, 0.1, 0.9, 0.5])
    assert kendall_tau(x, x, "a") == 1.0 and kendall_tau(x, x, "b") == 1.0
    assert kendall_tau(x, -x, "a") == -1.0 and kendall_tau(x, -x, "b") == -1.0
    assert tau_ap(G, G) == 1.0
    assert tau_ap(G[::-1], G) == pytest.approx(-1.0)


def test_ties_in_system_ranking_break_by_identifier() -> None:
    assert system_ranking(np.array([0.5, 0.7, 0.5, 0.7]), ["d", "c", "b", "a"]) == ("a", "c", "b", "d")


def test_tau_ap_rejects_different_systems() -> None:
    with pytest.raises(ValueError):
        tau_ap(("A", "B"), ("A", "C"))
    with pytest.raises(ValueError):
        tau_ap(("A", "A"), ("A", "A"))


def tau_a_by_pairs(x: np.ndarray, y: np.ndarray) -> float:
    c = d = 0
    for i, j in itertools.combinations(range(x.size), 2):
        s = np.sign(x[i] - x[j]) * np.sign(y[i] - y[j])
        c += s > 0
        d += s < 0
    return (c - d) / (x.size * (x.size - 1) / 2)


scores = st.integers(2, 12).flatmap(
    lambda n: st.tuples(
        hnp.arrays(np.float64, n, elements=st.integers(0, 4).map(float)),  # ties likely
        hnp.arrays(np.float64, n, elements=st.integers(0, 4).map(float)),
    )
)


@settings(max_examples=100, deadline=None)
@given(scores)
def test_tau_agrees_with_scipy_and_definition(xy: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = xy
    ref = stats.kendalltau(x, y, variant="b").statistic
    got = kendall_tau(x, y, "b")
    if np.isnan(ref):
        assert np.isnan(got)
    else:
        assert got == pytest.approx(ref, abs=1e-12)
    assert kendall_tau(x, y, "a") == pytest.approx(tau_a_by_pairs(x, y), abs=1e-12)
    assert kendall_tau(y, x, "a") == kendall_tau(x, y, "a")
    counts = pair_counts(x, y)
    assert counts.pairs == x.size * (x.size - 1) // 2


@settings(max_examples=100, deadline=None)
@given(st.permutations(list("ABCDEFG")), st.permutations(list("ABCDEFG")))
def test_tau_ap_properties(a: list[str], b: list[str]) -> None:
    value = tau_ap(a, b)
    assert -1.0 - 1e-12 <= value <= 1.0 + 1e-12
    assert tau_ap_symmetric(a, b) == pytest.approx(tau_ap_symmetric(b, a), abs=1e-12)
    # without ties tau_ap and tau agree on identity and reversal and share a sign convention with tau
    pos_a = {s: i for i, s in enumerate(a)}
    pos_b = {s: i for i, s in enumerate(b)}
    systems = sorted(a)
    tau = kendall_tau(np.array([-pos_a[s] for s in systems]), np.array([-pos_b[s] for s in systems]), "a")
    if tau == 1.0 or tau == -1.0:
        assert value == pytest.approx(tau, abs=1e-12)


def test_correlation_matrix() -> None:
    rng = np.random.default_rng(0)
    base = rng.random((6, 10))
    values = np.stack([base, base + rng.normal(0, 0.05, base.shape), -base])
    table = ScoreTable(("m1", "m2", "m3"), tuple("abcdef"), tuple(f"q{i}" for i in range(10)), values)
    tau = correlation_matrix(table, "tau_b")
    np.testing.assert_allclose(tau, tau.T)
    assert np.diag(tau).tolist() == [1.0, 1.0, 1.0]
    assert tau[0, 2] == -1.0
    means = table.means()
    assert tau[0, 1] == pytest.approx(stats.kendalltau(means[0], means[1]).statistic)
    ap = correlation_matrix(table, "tau_ap")
    assert ap[0, 1] == pytest.approx(tau_ap_scores(means[0], means[1], table.runs))
    assert ap[1, 0] == pytest.approx(tau_ap_scores(means[1], means[0], table.runs))
    sym = correlation_matrix(table, "tau_ap_sym")
    np.testing.assert_allclose(sym, (ap + ap.T) / 2)
    np.testing.assert_allclose(correlation_matrix(table, "tau_a"), tau)  # no ties here: a = b


def _tied_table(*measures: str) -> ScoreTable:
    """Issue 17's example: runs a (0.5, 0.5), b (0.4, 0.6), c (0.2, 0.2) on two topics -- a and b tie in mean."""
    runs = np.array([[0.5, 0.5], [0.4, 0.6], [0.2, 0.2]])
    return ScoreTable(measures, ("a", "b", "c"), ("q1", "q2"), np.stack([runs] * len(measures)))


@pytest.mark.parametrize("method", ["tau_a", "tau_b", "tau_ap", "tau_ap_sym"])
def test_the_diagonal_is_a_measure_against_an_exact_copy(method: str) -> None:
    """8.5: tied pairs are neither concordant nor discordant, also when a measure meets itself (tau_a: 2/3)."""
    tau = correlation_matrix(_tied_table("M", "Mcopy"), method)  # type: ignore[arg-type]
    assert tau[0, 0] == tau[1, 1] == tau[0, 1] == tau[1, 0]
    assert tau[0, 0] == pytest.approx(2 / 3 if method == "tau_a" else 1.0, abs=1e-12)


@pytest.mark.parametrize("method", ["tau_a", "tau_b", "tau_ap", "tau_ap_sym"])
def test_undefined_diagonals_are_nan_as_off_the_diagonal(method: str) -> None:
    """One run, or (tau_b) a measure tying every run: the copy's correlation is undefined, and so the diagonal."""
    one = ScoreTable(("M", "Mcopy"), ("a",), ("q1",), np.array([[[0.5]], [[0.5]]]))
    assert np.isnan(correlation_matrix(one, method)).all()  # type: ignore[arg-type]
    flat = ScoreTable(("M", "Mcopy"), ("a", "b"), ("q1",), np.full((2, 2, 1), 0.3))
    tau = correlation_matrix(flat, method)  # type: ignore[arg-type]
    assert np.array_equal(np.isnan(tau), np.full((2, 2), method == "tau_b"))
