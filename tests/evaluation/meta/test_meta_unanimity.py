"""Metric Unanimity (spec 8.1): TV-MU-1 and its companions, the properties of spec 9 (item 8) and AMIGO18's
Properties 3-4, and agreement with a pair-by-pair count written from the definition."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from evaluation.meta import ScoreTable, metric_unanimity

EXACT = 1e-6
LOG2_4_3 = 0.415037


def table(columns: dict[str, list[float]]) -> ScoreTable:
    """One topic; each measure's scores of systems S1, S2, ..."""
    names = tuple(columns)
    runs = tuple(f"S{i + 1}" for i in range(len(next(iter(columns.values())))))
    values = np.array([[[v] for v in columns[m]] for m in names], dtype=np.float64)
    return ScoreTable(names, runs, ("q1",), values)


TV_MU_1 = {"m1": [1.0, 0.5, 0.2], "m2": [0.8, 0.3, 0.4], "m3": [1.0, 0.2, 0.5]}


def test_tv_mu_1_paper_example() -> None:
    result = metric_unanimity(table(TV_MU_1))
    assert result.pairs == 6
    assert result.as_dict()["m1"] == pytest.approx(LOG2_4_3, abs=EXACT)
    assert result.joint[0] == 2 and result.unanimous[0] == 3  # M = {m2, m3}: (1,2), (1,3), (3,2)


def test_tv_mu_1_asymmetry_companions() -> None:
    mu = metric_unanimity(table(TV_MU_1)).as_dict()
    assert mu["m2"] == pytest.approx(1.0, abs=EXACT)
    assert mu["m3"] == pytest.approx(1.0, abs=EXACT)


def test_tv_mu_1_tie_example() -> None:
    result = metric_unanimity(table({**TV_MU_1, "m1": [0.5, 0.5, 0.2]}), measures=["m1"])
    assert result.joint[0] == pytest.approx(1.5)
    assert result.mu[0] == pytest.approx(0.0, abs=EXACT)


def test_tv_mu_1_weak_unanimity_example() -> None:
    mu = metric_unanimity(table({**TV_MU_1, "m2": [0.8, 0.4, 0.4]})).as_dict()
    assert mu["m1"] == pytest.approx(LOG2_4_3, abs=EXACT)
    assert mu["m2"] == pytest.approx(1.0, abs=EXACT)
    assert mu["m3"] == pytest.approx(LOG2_4_3, abs=EXACT)


def test_tv_mu_1_duplicate_example() -> None:
    mu = metric_unanimity(table({**TV_MU_1, "m4": TV_MU_1["m3"]})).as_dict()
    assert mu["m1"] == pytest.approx(LOG2_4_3, abs=EXACT)


def test_restricted_comparison_set() -> None:
    t = table({**TV_MU_1, "m4": [0.0, 1.0, 0.5]})
    restricted = metric_unanimity(t, against=["m2", "m3"], measures=["m1"]).as_dict()
    assert restricted["m1"] == pytest.approx(LOG2_4_3, abs=EXACT)
    # a measure in its own comparison set is left out of it
    assert metric_unanimity(t, against=["m1", "m2", "m3"], measures=["m2"]).as_dict()["m2"] == pytest.approx(1.0)


def test_strict_unanimity_variant() -> None:
    t = table({**TV_MU_1, "m2": [0.8, 0.4, 0.4]})
    # with '>' the tie of m2 on (S2, S3) breaks unanimity of {m1, m2} on that pair: only (1,2), (1,3) remain
    assert metric_unanimity(t, strict=True).as_dict()["m3"] == pytest.approx(1.0, abs=EXACT)


def test_constant_and_identical_metrics() -> None:
    rng = np.random.default_rng(3)
    base = rng.random((5, 4))  # runs x topics, no ties
    values = np.stack([base, base, np.full((5, 4), 0.3)])
    t = ScoreTable(("a", "b", "const"), tuple("VWXYZ"), ("q1", "q2", "q3", "q4"), values)
    mu = metric_unanimity(t, against=["a", "b"]).as_dict()
    assert mu["const"] == pytest.approx(0.0, abs=1e-12)  # Property 2 / spec 9.8
    assert mu["a"] == pytest.approx(1.0, abs=1e-12)  # identical to every member of M, no ties


def test_degenerate_probabilities() -> None:
    t = table({"m": [1.0, 2.0, 3.0], "rev": [3.0, 2.0, 1.0]})
    mu = metric_unanimity(t).as_dict()
    assert mu["m"] == -math.inf  # never agrees with a unanimous improvement
    nothing = table({"m": [1.0, 2.0], "x": [1.0, 2.0], "y": [2.0, 1.0]})
    assert math.isnan(metric_unanimity(nothing, measures=["m"]).mu[0])  # x and y never agree


def naive_mu(values: np.ndarray, strict: bool = False) -> list[float]:
    """Ordered pairs of different runs per topic, counted one at a time as 8.1 describes."""
    n_m, n_r, n_t = values.shape
    out = []
    for m in range(n_m):
        joint = unanimous = pairs = 0.0
        for q in range(n_t):
            for a, b in itertools.permutations(range(n_r), 2):
                pairs += 1
                others = [o for o in range(n_m) if o != m]
                if strict:
                    agree = all(values[o, a, q] > values[o, b, q] for o in others)
                else:
                    agree = all(values[o, a, q] >= values[o, b, q] for o in others)
                if agree:
                    unanimous += 1
                    va, vb = values[m, a, q], values[m, b, q]
                    joint += 1.0 if va > vb else 0.5 if va == vb else 0.0
        if unanimous == 0:
            out.append(math.nan)
        elif joint == 0:
            out.append(-math.inf)
        else:
            out.append(math.log2((joint / pairs) / (0.5 * unanimous / pairs)))
    return out


small_tables = hnp.arrays(
    np.float64,
    st.tuples(st.integers(1, 4), st.integers(2, 5), st.integers(1, 3)),
    elements=st.integers(0, 3).map(float),  # few values: many ties
)


def as_table(values: np.ndarray) -> ScoreTable:
    m, r, t = values.shape
    return ScoreTable(
        tuple(f"m{i}" for i in range(m)), tuple(f"r{i}" for i in range(r)), tuple(f"q{i}" for i in range(t)), values
    )


@settings(max_examples=60, deadline=None)
@given(small_tables, st.booleans())
def test_agrees_with_pairwise_definition(values: np.ndarray, strict: bool) -> None:
    got = metric_unanimity(as_table(values), strict=strict).mu
    np.testing.assert_allclose(got, naive_mu(values, strict), atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(small_tables, st.data())
def test_invariances(values: np.ndarray, data: st.DataObject) -> None:
    base = metric_unanimity(as_table(values)).mu
    m, r, t = values.shape
    runs = data.draw(st.permutations(range(r)))
    topics = data.draw(st.permutations(range(t)))
    np.testing.assert_allclose(metric_unanimity(as_table(values[:, runs][:, :, topics])).mu, base, atol=1e-12)
    # a strictly increasing transform of one measure's scores changes no comparison
    moved = values.copy()
    moved[0] = np.exp(moved[0]) * 3 + 1
    np.testing.assert_allclose(metric_unanimity(as_table(moved)).mu, base, atol=1e-12)
    # Property 4: duplicating a measure of M leaves MU of every other measure unchanged
    if m >= 2:
        dup = np.concatenate([values, values[-1:]])
        np.testing.assert_allclose(metric_unanimity(as_table(dup)).mu[: m - 1], base[: m - 1], atol=1e-12)
    finite = base[np.isfinite(base)]
    assert (finite <= 1.0 + 1e-12).all()
