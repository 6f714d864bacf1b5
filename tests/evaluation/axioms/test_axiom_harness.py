"""``check``: outcomes, smallest counterexamples that reproduce through the ordinary evaluation path, outcomes
that are not verdicts (not applicable, not evaluable), profiles of every registered measure."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from evaluation import IntentWeights, MeasureError, default_registry, read_qrels, read_run
from evaluation.axioms import NAMES, Counterexample, check, constraint_profile, harness_form, profiles, resolve
from evaluation.axioms.harness import check_all
from evaluation.evaluator import evaluate
from evaluation.formats.source import Blob
from evaluation.problems import OptionError

STATUSES = {"satisfied", "violated", "not_applicable", "not_evaluable"}


def rescore(measure: str, ce: Counterexample) -> tuple[float, float]:
    """The counterexample's two rankings scored alone, through the file readers and ``evaluate``."""
    qrels_text = "".join(f"q {t} {d} {g}\n" for d, by in ce.judgments.items() for t, g in by.items())
    run_text = "".join(
        f"{topic} Q0 {d} {i} {1000 - i} ce\n"
        for topic, ranking in (("higher", ce.higher), ("lower", ce.lower))
        for i, d in enumerate(ranking, start=1)
    )
    qrels = read_qrels(Blob.from_bytes(qrels_text.replace("q ", "higher ").encode() +
                                       qrels_text.replace("q ", "lower ").encode(), name="qrels"))
    run = read_run(Blob.from_bytes(run_text.encode(), name="run"))
    weights = IntentWeights({"higher": ce.intents, "lower": ce.intents})
    m = resolve(measure)
    result = evaluate(qrels, [run], [m], intent_weights=weights)[0].per_topic(m.name)
    return result["higher"], result["lower"]


@pytest.mark.parametrize(
    ("measure", "constraint"),
    [
        ("nDCG", "Conf"),
        ("nDCG", "DeepTh"),
        ("AP", "Pri"),
        ("ERR", "CloseTh"),
        ("alpha_nDCG(gain=graded)@20", "Pri"),
        ("alpha_nDCG(gain=graded)@20", "MRed"),
        ("EU", "Pri"),
        ("nDCG_IA", "Red"),
        ("AP_IA(variant=paper)", "Red"),
        ("RBP_IA(p=0.99,gain=graded)", "Sat"),
        ("ERR_IA(variant=paper)@20", "CloseTh"),
        ("CT@20", "Sat"),
        ("CT_amigo", "AspDiv"),
        ("Dsharp_nDCG@20", "MRed"),
        ("RBU", "CloseTh"),
    ],
)
def test_counterexample_reproduces_alone(measure: str, constraint: str) -> None:
    outcome = check(measure, [constraint])[constraint]
    assert outcome.status == "violated" and outcome.counterexample is not None
    ce = outcome.counterexample
    higher, lower = rescore(measure, ce)
    assert higher == pytest.approx(ce.higher_score, abs=1e-12)
    assert lower == pytest.approx(ce.lower_score, abs=1e-12)
    if constraint != "CloseTh":
        assert not higher > lower + 1e-12 if ce.relation == ">" else higher < lower - 1e-12


def test_smallest_counterexample_is_reported() -> None:
    outcomes = check("nDCG", ["Conf", "DeepTh"])
    conf, deep = outcomes["Conf"].counterexample, outcomes["DeepTh"].counterexample
    assert conf is not None and len(conf.higher) == 1 and conf.lower == (*conf.higher, "z")
    assert deep is not None and len(deep.higher) == 2000  # n = 1000, the smallest n of the window
    assert outcomes["Conf"].note == "300 of 300 instances violate the requirement"


def test_outcome_dict_shape() -> None:
    outcomes = check("AP")
    assert list(outcomes) == list(NAMES)
    for name, outcome in outcomes.items():
        d = outcome.to_dict()
        assert set(d) == {"satisfied", "status", "counterexample", "instances", "note"}
        assert d["status"] in STATUSES and d["satisfied"] == (d["status"] == "satisfied")
        assert (d["counterexample"] is None) == (outcome.status != "violated"), name
    ce = outcomes["Pri"].to_dict()["counterexample"]
    assert set(ce) == {"description", "requirement", "higher", "lower", "intents", "judgments"}
    assert set(ce["higher"]) == {"ranking", "score"} and ce["requirement"] == "Q(higher) > Q(lower)"


def test_ad_hoc_measures_are_not_applicable_to_diversity() -> None:
    outcomes = check("RR")
    assert [c for c, o in outcomes.items() if o.status == "not_applicable"] == list(NAMES[5:])
    assert not outcomes["Sat"].satisfied and "ad hoc" in outcomes["Sat"].note


def test_measure_refusing_the_instances_is_not_evaluable() -> None:
    outcomes = check("ERR(gmax=2)", ["Pri", "DeepTh"])
    assert outcomes["Pri"].status == "not_evaluable" and "above the scale maximum" in outcomes["Pri"].note
    assert outcomes["DeepTh"].status == "satisfied"  # binary instances stay within its scale


def test_cutoff_without_room_is_not_evaluable() -> None:
    outcomes = check("P@3")
    assert outcomes["Deep"].status == "not_evaluable" and "cutoff 3" in outcomes["Deep"].note
    assert outcomes["Pri"].status == "violated" and outcomes["CloseTh"].status == "violated"


def test_inputs_the_harness_cannot_build_are_not_evaluable() -> None:
    base = default_registry().definition("RBU")
    odd = replace(base, name="Hier", inputs=("hierarchy",))  # type: ignore[arg-type]
    outcomes = check(odd.instance())
    assert {o.status for o in outcomes.values()} == {"not_evaluable"}
    assert "hierarchy" in outcomes["Pri"].note


def test_unknown_names() -> None:
    with pytest.raises(MeasureError, match="unknown measure"):
        check("nDCGx")
    with pytest.raises(MeasureError, match="no parameter"):
        check("RBU(q=1)")
    with pytest.raises(OptionError, match="unknown constraint"):  # a KeyError before typed engine errors
        check("RBU", ["Foo"])


def test_constraint_subset_and_seed() -> None:
    some = check("EU", ["sat", "Pri"])
    assert list(some) == ["Pri", "Sat"]
    a = check("EU", ["Pri"], seed=1)["Pri"].counterexample
    b = check("EU", ["Pri"], seed=1)["Pri"].counterexample
    assert a == b


def test_one_measure_is_fast() -> None:
    start = time.perf_counter()
    check("RBU(p=0.99,e=0.05)")
    assert time.perf_counter() - start < 5.0  # typically well under a second (2 shared cores: generous bound)


# -- profiles -------------------------------------------------------------------------------------------------


def test_harness_forms() -> None:
    registry = default_registry()
    forms = {name: harness_form(registry.definition(name)).name for name in ("P", "P_IA", "StRecall", "RBU",
                                                                                "alpha_nDCG", "NCU", "RR")}
    assert forms == {
        "P": "P@10", "P_IA": "P_IA@10", "StRecall": "StRecall@10", "RBU": "RBU",
        "alpha_nDCG": "alpha_nDCG@10000", "NCU": "NCU(stop=u,beta=1)", "RR": "RR",
    }


def test_constraint_profile() -> None:
    profile = constraint_profile(default_registry().definition("RBU"))
    assert profile["measure"] == "RBU" and list(profile["constraints"]) == list(NAMES)
    # the authors' defaults (p = 0.8, e = 0.03) fail CloseTh only (spec 7.5: p >= ~0.85 needed)
    assert [c for c, s in profile["constraints"].items() if s != "satisfied"] == ["CloseTh"]
    assert constraint_profile("RBU(p=0.99,e=0.05)")["constraints"]["CloseTh"] == "satisfied"


def test_every_registered_measure_has_the_documented_profile() -> None:
    """profiles() covers every registered measure, and docs/axioms.md shows it; only measures that read side
    inputs the harness does not build (item scores, hierarchies, ...) may be not evaluable."""
    every = profiles()
    assert list(every) == [d.name for d in default_registry()]
    for d in default_registry():
        if set(d.inputs) <= {"adhoc", "intents"}:
            assert "not_evaluable" not in every[d.name]["constraints"].values(), d.name
    symbol = {"satisfied": "Y", "violated": ".", "not_applicable": "-", "not_evaluable": "?"}
    computed = [
        (name, p["measure"], " ".join(symbol[s] for s in p["constraints"].values())) for name, p in every.items()
    ]
    text = (Path(__file__).resolve().parents[3] / "docs" / "axioms.md").read_text()
    section = text.split("## Profiles of the registered measures", 1)[1]
    rows = [line.strip("|").split("|") for line in section.splitlines() if line.startswith("| `")]
    documented = [(c[0].strip().strip("`"), c[1].strip().strip("`"), " ".join(x.strip() for x in c[2:])) for c in rows]
    assert documented == computed


def test_check_all_shares_instances_between_measures() -> None:
    results = check_all(["AP", "nDCG"], ["Pri"])
    assert results["AP"]["Pri"].instances == results["nDCG"]["Pri"].instances > 300


def test_profiles_are_check_all_remembered_whatever_is_checked_with_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """``profiles`` (what every job's report asks) gives ``check_all``'s outcomes, in any order and company, and
    checks a measure once per process: asked again, it draws nothing."""
    from evaluation.axioms import harness

    monkeypatch.setattr(harness, "_PROFILES", {})
    names = ["AP", "P@10", "nDCG@10", "ERR_IA@20"]
    expected = harness.check_all(names)
    assert harness.profiles(names[2:3]) == {"nDCG@10": expected["nDCG@10"]}
    assert harness.profiles(names[::-1]) == expected
    monkeypatch.setattr(harness, "check_all", lambda *_a, **_k: pytest.fail("checked twice"))
    assert harness.profiles(names) == expected
