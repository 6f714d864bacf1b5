"""Measure names (spec 1.7): parsing, canonical spellings, trec_eval spellings, error messages, catalogue."""

from __future__ import annotations

import pytest

from evaluation.measures.registry import default_registry, parse_measure
from evaluation.problems import MeasureError

#: canonical names, one or more per registered measure and parameter kind
CANONICAL = [
    "P@1", "P@10", "P(rel=2)@5",
    "R@100", "R", "R(rel=3)@1000",
    "Rprec", "Rprec(rel=2)",
    "RR", "RR@10", "RR(rel=2)@3",
    "AP", "AP@10", "AP(rel=2)",
    "nDCG", "nDCG@20", "nDCG(gain=exp)@20", "nDCG(gain=exp)",
    "ERR@20", "ERR", "ERR(gmax=2)@5", "ERR(gmax=topic)@10", "ERR(gmax=collection)",
    "RBP", "RBP@10", "RBP(p=0.95)", "RBP(rel=graded)", "RBP(p=0.5,rel=graded)@5",
    "Bpref", "Bpref(rel=2)",
    "Success@1", "Success(rel=2)@5", "Success",
    "Judged@10", "Judged",
    "Q", "Q@5", "Q(beta=0.5)", "Q(gain=1:5:10)@10", "Q(beta=0,gain=1:2:4)",
    "NCU(stop=u,beta=0)", "NCU(stop=u,beta=1)", "NCU(stop=rb,beta=1)", "NCU(stop=rb,beta=1,gamma=0.5)",
    "NCU(stop=gu,beta=1)", "NCU(stop=gu,beta=1,gain=1:5:10,stopw=1:1:2)", "NCU(stop=first,beta=0)",
    "NCU(stop=u,beta=10000)",
]


@pytest.mark.parametrize("name", CANONICAL)
def test_round_trip(name: str) -> None:
    measure = parse_measure(name)
    assert str(measure) == name, "the table lists canonical spellings"
    assert parse_measure(str(measure)) == measure
    assert parse_measure(measure.name).values == measure.values


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        # defaults are dropped, numbers lose trailing zeros, parameters follow declaration order
        ("RBP(p=0.80)", "RBP"),
        ("RBP(p=0.8,rel=binary)", "RBP"),
        ("RBP(p=.5)", "RBP(p=0.5)"),
        ("NCU(beta=1.0,stop=rb,gamma=0.5)", "NCU(stop=rb,beta=1,gamma=0.5)"),
        ("NCU(stop=rb,beta=1,gamma=0.7)", "NCU(stop=rb,beta=1)"),
        ("NCU(stop=u,beta=0.50)", "NCU(stop=u,beta=0.5)"),
        ("NCU(gain=1:2:3.0,stop=gu,beta=1)", "NCU(stop=gu,beta=1,gain=1:2:3)"),
        ("P(rel=1)@5", "P@5"),
        ("nDCG(gain=lin)@10", "nDCG@10"),
        ("ERR(gmax=4)@20", "ERR@20"),
        ("Q(beta=1)@5", "Q@5"),
        ("Q(beta=1.0)", "Q"),
        (" nDCG @ 10 ", "nDCG@10"),
        ("P@010", "P@10"),
        # aliases and case-insensitive fallback
        ("MAP", "AP"),
        ("Precision@5", "P@5"),
        ("Recall@100", "R@100"),
        ("NDCG@10", "nDCG@10"),
        ("ndcg(gain=exp)@5", "nDCG(gain=exp)@5"),
        ("MRR", "RR"),
        # trec_eval spellings
        ("P_10", "P@10"),
        ("map", "AP"),
        ("ndcg_cut_20", "nDCG@20"),
        ("ndcg", "nDCG"),
        ("map_cut_100", "AP@100"),
        ("recall_1000", "R@1000"),
        ("recip_rank", "RR"),
        ("bpref", "Bpref"),
        ("Rprec", "Rprec"),
        ("success_5", "Success@5"),
    ],
)
def test_canonical_spelling(given: str, canonical: str) -> None:
    assert parse_measure(given).name == canonical


def test_equal_measures_are_equal_and_hash_alike() -> None:
    a, b = parse_measure("NCU(beta=1.0,stop=rb,gamma=0.5)"), parse_measure("NCU(stop=rb,gamma=.5,beta=1)")
    assert a == b and hash(a) == hash(b)
    assert parse_measure("P@5") != parse_measure("P@10")
    assert parse_measure("RBP") != parse_measure("RBP(rel=graded)")


def test_parse_all_drops_repeats_in_order() -> None:
    """Repeats of a requested name are dropped; each spelling is its own result key (issue 14)."""
    parsed = default_registry().parse_all(["P_10", "AP", "P@10", "map", "nDCG@5", "AP", " P_10 "])
    assert [m.label for m in parsed] == ["P_10", "AP", "P@10", "map", "nDCG@5"]
    assert [m.name for m in parsed] == ["P@10", "AP", "P@10", "AP", "nDCG@5"]


def _error(name: str) -> str:
    with pytest.raises(MeasureError) as info:
        parse_measure(name)
    return str(info.value)


@pytest.mark.parametrize(
    ("name", "close"),
    [("nDGC@10", "nDCG"), ("Presicion@5", "Precision"), ("Bperf", "Bpref"), ("Sucess@5", "Success")],
)
def test_unknown_measure_suggests_a_close_match(name: str, close: str) -> None:
    message = _error(name)
    assert "unknown measure" in message
    assert close in message


def test_unknown_measure_without_close_match_points_to_the_catalogue() -> None:
    assert "evalserve measures" in _error("Zzyzx@10")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("P(foo=1)@5", "no parameter 'foo'"),
        ("nDCG(gian=exp)@5", "did you mean gain"),
        ("NCU(beta=1,stop=u,gama=0.5)", "did you mean gamma"),
        ("Judged(rel=2)@5", "no parameter 'rel'"),
    ],
)
def test_unknown_parameter(name: str, expected: str) -> None:
    assert expected in _error(name)


@pytest.mark.parametrize(
    ("name", "parameter"),
    [
        ("RBP(p=1.5)", "p"),
        ("RBP(p=0)", "p"),
        ("RBP(p=-0.2)", "p"),
        ("RBP(p=nan)", "p"),
        ("RBP(rel=fuzzy)", "rel"),
        ("P(rel=0)@5", "rel"),
        ("P(rel=1.5)@5", "rel"),
        ("AP(rel=-1)", "rel"),
        ("NCU(stop=rb,beta=1,gamma=0)", "gamma"),
        ("NCU(stop=rb,beta=1,gamma=1.5)", "gamma"),
        ("NCU(stop=x,beta=1)", "stop"),
        ("NCU(stop=u,beta=-1)", "beta"),
        ("NCU(stop=u,beta=inf)", "beta"),
        ("Q(beta=-1)", "beta"),
        ("Q(beta=inf)", "beta"),
        ("Q(beta=nan)", "beta"),
        ("Q(gain=1:-2)", "gain"),
        ("Q(gain=1::2)", "gain"),
        ("ERR(gmax=0)@5", "gmax"),
        ("ERR(gmax=top)@5", "gmax"),
        ("nDCG(gain=log)@5", "gain"),
    ],
)
def test_out_of_range_or_invalid_value(name: str, parameter: str) -> None:
    assert f"parameter {parameter}:" in _error(name)


@pytest.mark.parametrize("name", ["P", "P(rel=2)"])
def test_missing_cutoff(name: str) -> None:
    assert "needs a cutoff" in _error(name)


@pytest.mark.parametrize("name", ["Rprec@5", "Bpref@10", "NCU(stop=u,beta=1)@5"])
def test_forbidden_cutoff(name: str) -> None:
    assert "takes no cutoff" in _error(name)


@pytest.mark.parametrize("name", ["P@0", "P@-1", "P@x", "nDCG@1.5"])
def test_invalid_cutoff(name: str) -> None:
    assert "positive integer" in _error(name)


@pytest.mark.parametrize(("name", "missing"), [("NCU(stop=u)", "beta"), ("NCU(beta=1)", "stop"), ("NCU", "stop")])
def test_missing_required_parameter(name: str, missing: str) -> None:
    message = _error(name)
    assert "needs" in message and missing in message


@pytest.mark.parametrize("name", ["", "P(rel=2", "P(rel)@5", "P(rel=1,rel=2)@5", "P@5@5", "(rel=1)"])
def test_syntax_errors(name: str) -> None:
    _error(name)


def test_every_definition_is_documented() -> None:
    registry = default_registry()
    assert len(registry) > 0
    for definition in registry:
        assert definition.summary.strip(), definition.name
        assert definition.reference.strip(), definition.name
        assert definition.formula.strip(), definition.name
        for param in definition.params:
            assert param.description.strip(), f"{definition.name}.{param.name}"


def test_catalogue_lists_every_definition() -> None:
    registry = default_registry()
    catalogue = registry.catalogue()
    assert [entry["name"] for entry in catalogue] == [d.name for d in registry]
    for entry in catalogue:
        assert entry["summary"] and entry["reference"] and entry["formula"]


def test_every_definition_parses_by_its_example_and_aliases() -> None:
    for definition in default_registry():
        measure = parse_measure(definition.example())
        assert measure.definition is definition
        for alias in definition.aliases:
            assert parse_measure(alias + definition.example()[len(definition.name):]).definition is definition


#: Appendix E.1: names that an established tool already uses, and that tool
FOLLOWS = {
    "AP": "trec_eval", "P": "trec_eval", "nDCG": "trec_eval", "Bpref": "trec_eval", "ERR": "gdeval",
    "alpha_nDCG": "ndeval", "alpha_DCG": "ndeval", "ERR_IA": "ndeval", "nERR_IA": "ndeval", "NRBP": "ndeval",
    "nNRBP": "ndeval", "P_IA": "ndeval", "AP_IA": "ndeval", "StRecall": "ndeval", "RBU": "RBU reference",
}


def test_catalogue_states_whose_numbers_the_defaults_reproduce() -> None:
    entries = {e["name"]: e for e in default_registry().catalogue()}
    for name, tool in FOLLOWS.items():
        assert tool in (entries[name]["default_follows"] or ""), name
    assert entries["EU"]["default_follows"] is None, "research forms claim no tool"


def test_catalogue_says_when_a_parameter_applies() -> None:
    entries = {e["name"]: e for e in default_registry().catalogue()}
    gmax = next(p for p in entries["ERR_IA"]["parameters"] if p["name"] == "gmax")
    assert gmax["applies_when"] == {"variant": ["paper"]}
    gamma = next(p for p in entries["NCU"]["parameters"] if p["name"] == "gamma")
    assert gamma["applies_when"] == {"stop": ["rb"]}


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("NCU(stop=u,beta=1,gamma=0.5)", "gamma=0.5 has no effect with stop=u; it applies with stop=rb"),
        ("NCU(stop=rb,beta=1,stopw=1:2)", "stopw=1:2 has no effect with stop=rb; it applies with stop=gu"),
    ],
)
def test_ineffective_parameters_are_refused(name: str, says: str) -> None:
    with pytest.raises(MeasureError, match=says):
        parse_measure(name)
