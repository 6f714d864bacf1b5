"""Spec test vectors of the preference measures: TV-PRF-1 (Prf, greedy ideal, nPrf for four stopping models and
both F), TV-PRF-F, and the stopping-distribution values of spec 6.4 -- through the library, the evaluator with a
judgments side input, and judgments estimated from a file."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from evaluation.evaluator import Evaluator
from evaluation.formats import Blob, parse_qrels, parse_run
from evaluation.formats.pref_judgments import read_preference_judgments
from evaluation.preference import (
    UtilityTable,
    estimate_utilities,
    greedy_ideal,
    ideal_scores,
    nprf,
    prf,
    probabilities,
    rank_utilities,
    table_from_estimates,
)
from evaluation.side_inputs import SideInputs

TOL = 1e-6
RUN = ["p", "q", "r", "s"]
#: TV-PRF-1 (spec 6.5): (stop, K) -> Prf, I_Prf, nPrf with F=avg, then the same with F=min
TV_PRF_1 = {
    ("rbp", 3): (0.574667, 0.686667, 0.836893, 0.574667, 0.654667, 0.877800),
    ("rbp", 4): (0.788000, 0.925600, 0.851340, 0.762400, 0.842400, 0.905033),
    ("dcg", 3): (0.576492, 0.659288, 0.874416, 0.576492, 0.641957, 0.898023),
    ("dcg", 4): (0.667792, 0.761543, 0.876893, 0.656836, 0.722301, 0.909366),
    ("rr", 3): (0.750000, 0.854167, 0.878049, 0.750000, 0.833333, 0.900000),
    ("rr", 4): (0.854167, 0.970833, 0.879828, 0.841667, 0.925000, 0.909910),
    ("uniform", 3): (1.250000, 1.500000, 0.833333, 1.250000, 1.416667, 0.882353),
    ("uniform", 4): (1.458333, 1.708333, 0.853659, 1.395833, 1.520833, 0.917808),
}


@pytest.mark.parametrize(("stop", "k"), list(TV_PRF_1))
def test_tv_prf_1_library(tv1: UtilityTable, stop: str, k: int) -> None:
    expected = TV_PRF_1[stop, k]
    for offset, aggregate in ((0, "avg"), (3, "min")):
        got = (prf(tv1, {"1": RUN}, stop=stop, F=aggregate, cutoff=k)["1"],
               float(ideal_scores(tv1, stop=stop, aggregate=aggregate, cutoff=k)[0]),
               nprf(tv1, {"1": RUN}, stop=stop, F=aggregate, cutoff=k)["1"])
        assert got == pytest.approx(expected[offset : offset + 3], abs=TOL), (stop, k, aggregate)


def test_tv_prf_1_rank_utilities_and_greedy_ideal(tv1: UtilityTable) -> None:
    local = tv1.locate(0, np.array([d.encode() for d in RUN]))
    offsets = np.array([0, 4])
    topic = np.array([0])
    assert rank_utilities(tv1, topic, offsets, local, "avg") == pytest.approx([5 / 6, 0.25, 0.75, 0.25], abs=1e-12)
    assert rank_utilities(tv1, topic, offsets, local, "min") == pytest.approx([5 / 6, 0.25, 0.75, 0.0], abs=1e-12)
    for aggregate, utilities in (("avg", [5 / 6, 0.75, 0.5, 0.25]), ("min", [5 / 6, 0.75, 0.25, 0.0])):
        ideal = greedy_ideal(tv1, aggregate)
        assert ideal.documents(tv1, "1") == ["p", "r", "q", "s"]
        assert ideal.utilities(tv1, "1") == pytest.approx(utilities, abs=1e-12)


def test_tv_prf_1_judgments_estimate_the_vector(
    tv1_judgments: str, tv1_utilities: tuple[dict[str, Fraction], dict[tuple[str, str], Fraction]]
) -> None:
    unconditional, conditional = tv1_utilities
    table = estimate_utilities(read_preference_judgments(Blob.from_bytes(tv1_judgments.encode(), "prefs")))
    for doc, value in unconditional.items():
        assert table.utility("1", doc) == float(value)
    for (doc, top), value in conditional.items():
        assert table.conditional_utility("1", doc, top) == float(value)
    assert table.conditional_utility("1", "p", "d0") is None  # d0 was never a top
    assert table.utility("1", "d0") == 0.0  # never in a pairwise judgment
    assert table.documents("1") == ["s", "r", "q", "p", "d0"]  # docno descending: the tie order of the ideal


@pytest.mark.parametrize(("stop", "k"), list(TV_PRF_1))
def test_tv_prf_1_through_the_evaluator(tv1_files: dict[str, Path], stop: str, k: int) -> None:
    qrels = parse_qrels(Blob.from_bytes(tv1_files["qrels"].read_bytes(), "q")).unwrap()
    run = parse_run(Blob.from_bytes(tv1_files["run"].read_bytes(), "r")).unwrap()
    judgments = read_preference_judgments(str(tv1_files["prefs"]))
    stop_param = "" if stop == "rbp" else f"stop={stop}"
    names = []
    for aggregate in ("avg", "min"):
        params = ",".join(p for p in (stop_param, "" if aggregate == "avg" else "F=min") if p)
        suffix = (f"({params})" if params else "") + f"@{k}"
        names += ["Prf" + suffix, "nPrf" + suffix]
    values = Evaluator.from_names(qrels, names, side=SideInputs({"preference_judgments": judgments})).evaluate(run)
    expected = TV_PRF_1[stop, k]
    got = [values.mean(n) for n in names]
    assert got == pytest.approx([expected[0], expected[2], expected[3], expected[5]], abs=TOL)


def test_tv_prf_f() -> None:
    """Spec 6.3: U(d3 | d2) = 9/10 and U(d3 | d1) = 4/5 give 0.85 under avg and 0.8 under min."""
    nan = float("nan")
    docs = ["d1", "d2", "d3"]
    conditional = np.full((3, 3), nan)
    conditional[0, 2], conditional[1, 2] = 4 / 5, 9 / 10
    table = table_from_estimates({"t": (docs, [1.0, 1.0, 0.5], conditional)})
    local = table.locate(0, np.array([b"d1", b"d2", b"d3"]))
    for aggregate, expected in (("avg", 0.85), ("min", 0.8)):
        got = rank_utilities(table, np.array([0]), np.array([0, 3]), local, aggregate)
        assert got[2] == pytest.approx(expected, abs=1e-12)
        assert got[1] == 1.0  # U(d2 | d1) missing: falls back to U(d2)


def test_stopping_values_of_spec_6_4() -> None:
    k = np.arange(1, 5)
    assert probabilities("rbp", k) == pytest.approx([0.2, 0.16, 0.128, 0.1024], abs=1e-12)
    assert probabilities("dcg", k) == pytest.approx([0.369070, 0.130930, 0.069323, 0.043824], abs=TOL)
    assert probabilities("rr", k) == pytest.approx([0.5, 0.166667, 0.083333, 0.05], abs=TOL)
    assert probabilities("uniform", k, cutoff=4) == pytest.approx([0.25] * 4)
    assert probabilities("none", k, depth=3).tolist() == [0.0, 0.0, 1.0, 0.0]
    n = 5000
    for stop, left_over in (("rbp", 0.8**n), ("dcg", 1 / np.log2(n + 2)), ("rr", 1 / (n + 1))):
        # distributions over all ranks: the first n ranks hold all but the tail's mass
        assert probabilities(stop, np.arange(1, n + 1)).sum() == pytest.approx(1.0 - left_over, abs=1e-9)
