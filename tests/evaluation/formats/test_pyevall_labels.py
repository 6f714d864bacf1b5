"""PyEvALL classification gold and predictions (evaluation/formats/pyevall_labels.py): JSON and the TSV/CSV
wrappers, mono-label only, every problem with its line, column and code."""

from __future__ import annotations

import json

import numpy as np
import pytest

from evaluation.formats.pyevall_labels import pairing_problems, parse_pyevall_labels, read_pyevall_labels
from evaluation.formats.source import Blob
from evaluation.measures.classification.cases import MonoLabels
from evaluation.measures.classification.mono import evaluate_mono
from evaluation.problems import InputError, Parsed


def parse(text: str, gold: bool = False) -> Parsed[MonoLabels]:
    return parse_pyevall_labels(Blob.from_bytes(text.encode(), "labels"), gold)


def found(parsed: Parsed[MonoLabels]) -> list[tuple[str, str, int | None, int | None]]:
    return [(p.severity, p.code, p.line, p.column) for p in parsed.problems]


def as_dict(labels: MonoLabels) -> dict[str, dict[str, str]]:
    return {tc: dict(zip(ids.tolist(), values.tolist(), strict=True)) for tc, (ids, values) in labels.cases.items()}


JSON = """[
  {"test_case": "T1", "id": "a", "value": "pos"},
  {"test_case": "T1", "id": "b", "value": "neg"},
  {"test_case": "T2", "id": "a", "value": "neu"}
]"""
EXPECTED = {"T1": {"a": "pos", "b": "neg"}, "T2": {"a": "neu"}}


def test_json_tsv_and_csv_give_the_same_labels() -> None:
    tsv = "test_case\tid\tvalue\nT1\ta\tpos\nT1\tb\tneg\nT2\ta\tneu\n"
    csv = "T1,a,pos\nT1,b,neg\nT2,a,neu\n"
    for text in (JSON, tsv, csv):
        parsed = parse(text)
        assert parsed.ok and not parsed.problems, found(parsed)
        assert as_dict(parsed.unwrap()) == EXPECTED


def test_every_problem_with_its_place() -> None:
    text = """[
  {"test_case": "T1", "id": "a", "value": "pos"},
  {"test_case": "T1", "id": "a", "value": "neg"},
  {"test_case": "T1", "id": "c", "value": ["pos", "neg"]},
  {"test_case": "T1", "id": "d", "value": {"pos": 0.7, "neg": 0.3}},
  {"test_case": "T1", "id": "e", "value": 3},
  {"test_case": 1, "id": "f", "value": "pos"},
  {"test_case": "T1", "id": "g", "value": ""},
  {"test_case": "T1", "id": "h", "label": "x"}
]"""
    parsed = parse(text)
    assert not parsed.ok
    assert sorted(found(parsed)) == sorted([
        ("error", "multi-label-not-supported", 4, 34),
        ("error", "soft-labels-not-supported", 5, 34),
        ("error", "label-not-string", 6, 34),
        ("error", "field-not-string", 7, 4),
        ("error", "unknown-field", 9, 34),
        ("error", "missing-field", 9, 3),
    ]), found(parsed)
    assert "not supported yet" in parsed.errors[0].message
    with pytest.raises(InputError):
        read_pyevall_labels(Blob.from_bytes(text.encode(), "labels"))


def test_duplicates_and_empty_values() -> None:
    text = "T1\ta\tpos\nT1\ta\tneg\nT1\tb\tnull\nT1\tc\t\n"
    parsed = parse(text)
    assert found(parsed) == [("error", "duplicate-id", 2, 2), ("warning", "empty-value", 3, 2),
                             ("warning", "empty-value", 4, 2)]
    assert not parsed.ok
    fine = parse("T1\ta\tpos\nT1\tb\tnone\n", gold=True)
    assert fine.ok and as_dict(fine.unwrap()) == {"T1": {"a": "pos"}}
    assert fine.unwrap().ignored == {("T1", "b")}


def test_tsv_problems() -> None:
    parsed = parse("T1\ta\tpos\nT1\tb\nT1\tc\t[\"x\", \"y\"]\nT1\td\t7\n")
    assert found(parsed) == [("error", "wrong-column-count", 2, None), ("error", "multi-label-not-supported", 3, 3),
                             ("warning", "numeric-label", 4, 3)]


def test_a_blank_line_is_a_warning() -> None:
    parsed = parse("T1\ta\tpos\n\nT1\tb\tneg\n")
    assert found(parsed) == [("warning", "blank-line", 2, None)]
    assert as_dict(parsed.unwrap()) == {"T1": {"a": "pos", "b": "neg"}}


def test_an_empty_gold_value_drops_its_prediction() -> None:
    gold = parse("T1\ta\tpos\nT1\tb\t\nT1\tc\tneg\n", gold=True).unwrap()
    pred = parse("T1\ta\tpos\nT1\tb\tneg\nT1\tc\tneg\n").unwrap()
    got = evaluate_mono(gold, pred, ["SystemPrecision"])["SystemPrecision"]
    assert got.mean == 1.0  # b's prediction is not counted, as in PyEvALL


def test_pairing_warnings() -> None:
    gold = parse(JSON, gold=True).unwrap()
    pred = parse(json.dumps([{"test_case": "T1", "id": "a", "value": "pos"},
                             {"test_case": "T1", "id": "z", "value": "pos"},
                             {"test_case": "T9", "id": "a", "value": "pos"}])).unwrap()
    assert [(p.code, p.severity) for p in pairing_problems(gold, pred)] == [
        ("missing-prediction", "warning"), ("unknown-id", "warning"), ("missing-test-case", "warning"),
        ("unknown-test-case", "warning")]


def test_no_items() -> None:
    assert found(parse("[]")) == [("error", "no-items", None, None)]
    assert isinstance(parse("T1\ta\tpos\n").unwrap().cases["T1"][0], np.ndarray)
