"""Measure advice (issue 30): the table and sentences say what the figures say -- the measure called most
discriminative has the most significant pairs, ties are named as ties, the conflict between MU and
discriminative power is spelled out -- and the ``advice`` method reads the same figures the other methods give."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.meta.advice import DIVERSITY, RELEVANCE, Figures, advise, figures_from
from evaluation.meta.methods import run_method
from evaluation.meta.render import render_text
from evaluation.meta.table import ScoreTable
from tests.latex import compile_pdf, pdflatex  # noqa: F401

NAMES = ("alpha_nDCG@20", "ERR_IA@20", "NRBP", "nDCG@20")
DIVERSE = {c: "violated" for c in RELEVANCE} | {c: "satisfied" for c in DIVERSITY}
AD_HOC = {c: "satisfied" for c in RELEVANCE} | {c: "not_applicable" for c in DIVERSITY}


def _example() -> list[Figures]:
    """The issue's situation: NRBP has the highest MU and the lowest discriminative power."""
    return [Figures("alpha_nDCG@20", 0.85, 30, 45, 1.0, DIVERSE), Figures("ERR_IA@20", 0.80, 28, 45, 0.93, DIVERSE),
            Figures("NRBP", 0.907, 24, 45, 0.91, DIVERSE), Figures("nDCG@20", 0.70, 30, 45, 0.64, AD_HOC)]


def test_a_fixed_example_names_the_best_the_ties_and_the_conflict() -> None:
    advice = advise(_example(), primary="alpha_nDCG@20", alpha=0.05, resamples=1000, runs=10, topics=50)
    assert advice.best_unanimity == ("NRBP",) and advice.worst_unanimity == ("nDCG@20",)
    assert advice.best_power == ("alpha_nDCG@20", "nDCG@20") and advice.worst_power == ("NRBP",)
    assert advice.most_relevance == ("nDCG@20",)
    assert advice.most_diversity == ("alpha_nDCG@20", "ERR_IA@20", "NRBP")
    text = " ".join(advice.sentences)
    assert "Highest: NRBP (0.907); lowest: nDCG@20 (0.700)" in text
    assert "Most: alpha_nDCG@20 and nDCG@20 (each 30 of 45, 66.7%); fewest: NRBP (24 of 45, 53.3%)" in text
    assert "NRBP has the highest MU but the lowest discriminative power" in text
    assert ("prefer alpha_nDCG@20 and nDCG@20 (ahead by only 2 pairs: close to a tie); nDCG@20 ignores intents: of"
            " the measures that read them, alpha_nDCG@20 (30 of 45, 66.7%) is the most discriminative." in text)
    assert "nDCG@20 ignores intents, so the diversity constraints do not apply" in text
    assert "ERR_IA@20 and NRBP rank the runs equivalently; nDCG@20 ranks them noticeably differently" in text
    assert "The primary measure alpha_nDCG@20 ranks 2 of 4 on MU and 1 of 4 on discriminative power" in text
    assert advice.table()[0] == ("alpha_nDCG@20 (primary)", "0.8500", "30/45", "66.7%", "1.000",
                                 "relevance 0/5, diversity 5/5")
    assert advice.table()[3][-1] == "relevance 5/5, diversity n/a"
    document = advice.to_json()
    assert json.loads(json.dumps(document)) == document
    assert document["measures"]["NRBP"]["discriminative_power"] == pytest.approx(24 / 45)


def test_the_same_figures_give_the_same_advice() -> None:
    one = advise(_example(), primary="NRBP", alpha=0.05, resamples=1000, runs=10, topics=50)
    two = advise(_example(), primary="NRBP", alpha=0.05, resamples=1000, runs=10, topics=50)
    assert one == two


def test_a_primary_not_among_the_measures_is_an_error() -> None:
    with pytest.raises(ValueError, match="primary"):
        advise(_example(), primary="AP", alpha=0.05, resamples=1000, runs=10, topics=50)


figures = st.lists(
    st.tuples(st.one_of(st.none(), st.floats(-3, 1)), st.integers(0, 45), st.one_of(st.none(), st.floats(-1, 1))),
    min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(figures)
def test_the_best_and_worst_are_exactly_the_measures_sharing_the_extreme_values(
        given_rows: list[tuple[float | None, int, float | None]]) -> None:
    rows = [Figures(f"m{i}", mu, significant, 45, tau, DIVERSE) for i, (mu, significant, tau) in enumerate(given_rows)]
    advice = advise(rows, primary="m0", alpha=0.05, resamples=1000, runs=10, topics=50)
    counts = {f.measure: f.significant for f in rows}
    assert set(advice.best_power) == {m for m, c in counts.items() if c == max(counts.values())}
    assert set(advice.worst_power) == {m for m, c in counts.items() if c == min(counts.values())}
    defined = {f.measure: f.unanimity for f in rows if f.unanimity is not None}
    if defined:
        top = max(defined.values())
        assert set(advice.best_unanimity) == {m for m, v in defined.items() if v >= top - 1e-9}
        highest = advice.sentences[0].split("Highest: ")[1]
        assert highest.startswith(_and(advice.best_unanimity) + (" (tied, " if len(advice.best_unanimity) > 1
                                                                 else " ("))
    else:
        assert advice.best_unanimity == () and "undefined for every measure" in advice.sentences[0]
    text = " ".join(advice.sentences)
    if len(advice.best_power) == len(rows):
        assert "To separate systems" not in text
        assert "Every measure finds the same number" in text
    else:
        assert f"prefer {_and(advice.best_power)}" in text
    if 1 < len(advice.best_power) < len(rows):
        assert "each" in text
    assert "(primary)" in advice.table()[0][0]


def _and(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _table() -> ScoreTable:
    rng = np.random.default_rng(3)
    quality = rng.normal(0, 0.1, (8, 1))
    values = np.clip(rng.uniform(0, 0.5, (1, 8, 40)) + quality[None] + rng.normal(0, 0.08, (4, 8, 40)), 0, 1)
    return ScoreTable(NAMES, tuple(f"run{i}" for i in range(8)), tuple(str(t) for t in range(40)), values)


def test_the_advice_method_reads_what_the_other_methods_compute() -> None:
    table = _table()
    options = {"resamples": 300, "alpha": 0.05, "seed": 4}
    doc = run_method("advice", table, {**options, "primary": "NRBP"})
    unanimity = run_method("unanimity", table)
    power = run_method("discriminative-power", table, options)
    correlation = run_method("correlation", table, {"method": "tau_b"})
    expected = advise(figures_from(unanimity, power, correlation, "NRBP"), primary="NRBP", alpha=0.05,
                      resamples=300, runs=8, topics=40)
    assert list(doc["advice"]) == list(NAMES) and doc["primary"] == "NRBP"
    for row in expected.rows:
        served = doc["advice"][row.measure]
        assert served["unanimity"] == row.unanimity and served["significant_pairs"] == row.significant
        assert served["tau_with_primary"] == row.tau
        assert served["axioms"]  # every one of these measures is checked by the harness
    assert doc["advice"]["NRBP"]["tau_with_primary"] == pytest.approx(1.0)
    assert doc == run_method("advice", table, {**options, "primary": "NRBP"})  # seeded: the same document
    text = render_text(doc)
    assert "NRBP (primary)" in text and doc["sentences"][0] in text


def test_the_advice_method_refuses_an_unknown_primary_measure() -> None:
    from evaluation.problems import MetaOptionError

    with pytest.raises(MetaOptionError, match="primary must be one of the measures"):
        run_method("advice", _table(), {"primary": "AP"})


def test_the_advice_methods_report_shows_the_table_first_then_the_sentences(pdflatex: str,  # noqa: F811
                                                                           tmp_path: Path) -> None:
    from evaluation.reports import render_report

    doc = run_method("advice", _table(), {"resamples": 200, "primary": "NRBP"})
    page = render_report(doc, "html")
    assert page.index("Recommendation table") < page.index("What the figures say") < page.index("Axiomatic profiles")
    assert "NRBP (primary)" in page and doc["sentences"][0].replace("'", "&#x27;") in page
    pdf, log = compile_pdf(pdflatex, render_report(doc, "latex"), tmp_path)
    assert pdf.startswith(b"%PDF") and "Overfull \\hbox" not in log
