"""Every mono-label measure against PyEvALL 0.2.11 itself (tests/pyevall_oracle.py), per test case, per class
and mean, within 1e-9, on seeded random inputs shaped like a shared task's: several labels with skewed shares,
several test cases, records shuffled, predictions missing, predictions for ids the gold lacks, empty values.
Where evalserve deliberately differs (PyEvALL's ICM carries class probabilities from one test case to the
next), the test says so and compares with PyEvALL run one test case at a time (docs/measures.md)."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from evaluation.formats.pyevall_labels import labels_from_records, read_pyevall_labels
from evaluation.formats.source import Blob
from evaluation.measures.classification.mono import MEASURES, MonoResult, evaluate_mono
from tests.pyevall_oracle import results

ALL = list(MEASURES)
TOLERANCE = 1e-9
Run = Callable[..., dict[str, Any]]


def _close(ours: float | None, theirs: float | None) -> bool:
    if ours is None or theirs is None:
        return ours is None and theirs is None
    return math.isclose(ours, float(theirs), rel_tol=0, abs_tol=TOLERANCE)


def shared_task(seed: int, test_cases: int = 4, labels: int = 5) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Gold and predictions as PyEvALL JSON records: skewed labels, a noisy system, gaps and extras."""
    rng = random.Random(seed)
    names = [f"L{j}" for j in range(labels)]
    weights = [2.0 ** -j for j in range(labels)]
    gold: list[dict[str, Any]] = []
    pred: list[dict[str, Any]] = []
    for t in range(test_cases):
        tc = f"T{t}"
        items = rng.randint(20, 60)
        case_gold = {f"{tc}-d{i}": rng.choices(names, weights)[0] for i in range(items)}
        present = sorted(set(case_gold.values()))
        for item, label in case_gold.items():
            gold.append({"test_case": tc, "id": item, "value": "" if rng.random() < 0.03 else label})
            draw = rng.random()
            if draw < 0.1:
                continue  # no prediction
            guess = label if draw < 0.6 else rng.choice(present)  # only labels of this test case's gold
            pred.append({"test_case": tc, "id": item, "value": "" if rng.random() < 0.02 else guess})
        for extra in range(rng.randint(0, 3)):  # predictions for ids the gold lacks
            pred.append({"test_case": tc, "id": f"{tc}-x{extra}", "value": rng.choice(present)})
    rng.shuffle(gold)
    rng.shuffle(pred)
    return gold, pred


def ours(gold: list[dict[str, Any]], pred: list[dict[str, Any]], measures: list[str],
         params: dict[str, dict[str, float]] | None = None) -> dict[str, MonoResult]:
    g, p = labels_from_records(gold, pred)
    return evaluate_mono(g, p, measures, params)


def assert_parity(mine: dict[str, MonoResult], report: dict[str, Any], measures: list[str]) -> None:
    for name in measures:
        per_tc, mean = results(report, name)
        got = mine[name]
        assert _close(got.mean, mean), (name, got.mean, mean)
        assert set(per_tc) <= set(got.per_test_case), name
        for tc, theirs in per_tc.items():
            value = got.per_test_case[tc]
            assert _close(value.value, theirs.get("average")), (name, tc, value.value, theirs.get("average"))
            if "classes" in theirs:
                assert value.classes is not None and set(value.classes) == set(theirs["classes"]), (name, tc)
                for label, v in theirs["classes"].items():
                    assert _close(value.classes[label], v), (name, tc, label, value.classes[label], v)


@pytest.mark.parametrize(("seed", "test_cases", "labels"), [(1, 4, 5), (2, 4, 5), (3, 4, 5), (4, 1, 2), (5, 6, 8),
                                                            (6, 3, 3)])
def test_every_measure_matches_pyevall(pyevall: Run, seed: int, test_cases: int, labels: int) -> None:
    gold, pred = shared_task(seed, test_cases, labels)
    assert_parity(ours(gold, pred, ALL), pyevall(gold, pred, ALL), ALL)


@pytest.mark.parametrize(("delimiter", "header"), [("\t", True), ("\t", False), (",", True)])
def test_tsv_and_csv_files_read_as_pyevall_reads_them(pyevall: Run, delimiter: str, header: bool) -> None:
    """The same task written in PyEvALL's TSV/CSV wrappers, read by evalserve's reader and by PyEvALL."""
    gold, pred = shared_task(13)

    def text(records: list[dict[str, Any]]) -> str:
        lines = [delimiter.join(("test_case", "id", "value"))] if header else []
        lines += [delimiter.join((r["test_case"], r["id"], r["value"])) for r in records]
        return "\n".join(lines) + "\n"

    g = read_pyevall_labels(Blob.from_bytes(text(gold).encode(), "gold"), gold=True)
    p = read_pyevall_labels(Blob.from_bytes(text(pred).encode(), "pred"))
    assert_parity(evaluate_mono(g, p, ALL), pyevall(text(gold), text(pred), ALL), ALL)


def test_parameters_match_pyevall(pyevall: Run) -> None:
    gold, pred = shared_task(7, test_cases=3, labels=4)
    params = {"FMeasure": {"alfa_param": 0.3}, "ICM": {"alpha_1": 1.5, "alpha_2": 2.5, "beta": 2.0},
              "ICMNorm": {"alpha_1": 1.5, "alpha_2": 2.5, "beta": 2.0}}
    measures = ["FMeasure", "ICM", "ICMNorm"]
    assert_parity(ours(gold, pred, measures, params), pyevall(gold, pred, measures, {"metric_params": params}),
                  measures)


def test_a_test_case_the_predictions_omit_is_skipped_as_pyevall_does(pyevall: Run) -> None:
    gold, pred = shared_task(11)
    pred = [r for r in pred if r["test_case"] != "T2"]
    mine = ours(gold, pred, ALL)
    assert "T2" not in mine["Accuracy"].per_test_case
    assert_parity(mine, pyevall(gold, pred, ALL), ALL)


def test_undefined_precision_counts_as_zero_in_the_mean(pyevall: Run) -> None:
    """A test case whose predictions are all empty has no Precision (None): PyEvALL's mean still divides by
    every test case, so it counts as 0 there; the same here."""
    gold, pred = shared_task(5, test_cases=3)
    pred = [{**r, "value": ""} if r["test_case"] == "T1" else r for r in pred]
    measures = ["Precision", "SystemPrecision", "Accuracy", "FMeasure", "ICM"]
    mine = ours(gold, pred, measures)
    assert mine["Precision"].per_test_case["T1"].value is None
    assert_parity(mine, pyevall(gold, pred, measures), measures)


def test_kappa_preconditions_as_pyevall(pyevall: Run) -> None:
    gold = [{"test_case": "T", "id": str(i), "value": "yes"} for i in range(4)]
    pred = [{"test_case": "T", "id": str(i), "value": "yes"} for i in range(4)]
    mine = ours(gold, pred, ["Kappa"])["Kappa"]
    assert mine.mean is None and mine.refused
    report = pyevall(gold, pred, ["Kappa"])
    assert results(report, "Kappa")[1] is None
    assert report["metrics"]["Kappa"]["status"] == "FAIL"


def test_icm_uses_this_test_cases_gold_only(pyevall: Run) -> None:
    """PyEvALL BUG: one ICM object scores every test case and never clears its class probabilities, so a label
    predicted in a test case whose gold lacks it gets the probability an earlier test case gave it (or 1/|G| of
    the earlier test case), not 1/|G| of this one. evalserve uses this test case's gold only, which is what
    PyEvALL gives for each test case evaluated on its own (checked here), and what its ICMNorm gives."""
    gold = ([{"test_case": "A", "id": f"a{i}", "value": v} for i, v in enumerate("xxxyyz")]
            + [{"test_case": "B", "id": f"b{i}", "value": v} for i, v in enumerate("yyyyyyyy")])
    pred = ([{"test_case": "A", "id": f"a{i}", "value": v} for i, v in enumerate("xyxyzq")]
            + [{"test_case": "B", "id": f"b{i}", "value": v} for i, v in enumerate("yxyzyyqy")])
    mine = ours(gold, pred, ["ICM", "ICMNorm"])
    together, _ = results(pyevall(gold, pred, ["ICM"]), "ICM")
    for tc in ("A", "B"):
        alone, _ = results(pyevall([g for g in gold if g["test_case"] == tc],
                                   [p for p in pred if p["test_case"] == tc], ["ICM"]), "ICM")
        assert _close(mine["ICM"].per_test_case[tc].value, alone[tc]["average"])
    assert _close(mine["ICM"].per_test_case["A"].value, together["A"]["average"])
    assert not _close(mine["ICM"].per_test_case["B"].value, together["B"]["average"])  # the carried probabilities
    only_a = ([g for g in gold if g["test_case"] == "A"], [p for p in pred if p["test_case"] == "A"])
    assert_parity(ours(*only_a, ["ICMNorm"]), pyevall(*only_a, ["ICMNorm"]), ["ICMNorm"])


def test_icmnorm_of_a_one_class_gold_is_undefined(pyevall: Run) -> None:
    """PyEvALL BUG: a test case whose gold has one class has ICM(G, G) = 0 and PyEvALL's ICMNorm divides by it
    (ZeroDivisionError, no report at all). evalserve reports that test case as undefined (None)."""
    gold = [{"test_case": "B", "id": f"b{i}", "value": "y"} for i in range(5)]
    pred = [{"test_case": "B", "id": f"b{i}", "value": v} for i, v in enumerate("yxyzy")]
    assert ours(gold, pred, ["ICMNorm"])["ICMNorm"].per_test_case["B"].value is None
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        pyevall(gold, pred, ["ICMNorm"])


def test_pyevall_readme_example(pyevall: Run) -> None:
    """The example of PyEvALL's README (mono-label, one test case, ids as strings)."""
    labels = ["sexist", "non-sexist"]
    gold = [{"test_case": "EXIST2023", "id": str(i), "value": labels[i % 2]} for i in range(1, 11)]
    pred = [{"test_case": "EXIST2023", "id": str(i), "value": labels[(i * 7 // 3) % 2]} for i in range(1, 11)]
    assert_parity(ours(gold, pred, ALL), pyevall(gold, pred, ALL), ALL)


def test_many_items_vectorised() -> None:
    """The measures run on 100,000 items without a per-item Python loop (a smoke check, no oracle)."""
    rng = np.random.default_rng(0)
    ids = np.array([f"d{i}" for i in range(100_000)])
    gold_labels = rng.choice(np.array(["a", "b", "c", "d"]), size=ids.size, p=[0.4, 0.3, 0.2, 0.1])
    pred_labels = np.where(rng.random(ids.size) < 0.7, gold_labels, rng.choice(np.array(["a", "b", "c", "d"]),
                                                                                  size=ids.size))
    from evaluation.measures.classification.cases import MonoLabels

    got = evaluate_mono(MonoLabels({"T": (ids, gold_labels)}), MonoLabels({"T": (ids[::-1], pred_labels[::-1])}),
                        ALL)
    assert got["Accuracy"].mean == pytest.approx(float(np.mean(gold_labels == pred_labels)))


PYEVALL_REPO = "EVALSERVE_PYEVALL_REPO"


def test_pyevall_own_classification_tests(pyevall: Run) -> None:
    """PyEvALL's own classification test inputs (its GitHub repository's ``test/resources/metric/test/
    classification``, 25 gold/system pairs; not in the PyPI package, and under a research-only licence, so not
    copied here): set ``$EVALSERVE_PYEVALL_REPO`` to a checkout of UNEDLENAR/PyEvALL to run them. Every pair,
    every measure, against PyEvALL 0.2.11 within 1e-9 (the measures with PyEvALL's bugs above excepted where
    they fire)."""
    import os
    from pathlib import Path

    root = os.environ.get(PYEVALL_REPO)
    if not root:
        pytest.skip(f"set {PYEVALL_REPO} to a checkout of github.com/UNEDLENAR/PyEvALL to run its own tests")
    folder = Path(root) / "test" / "resources" / "metric" / "test" / "classification"
    for i in range(1, 26):
        gold_text = (folder / "gold" / "1" / f"GOLD{i}.txt").read_text()
        pred_text = (folder / "predictions" / "1" / f"SYS{i}.txt").read_text()
        g = read_pyevall_labels(Blob.from_bytes(gold_text.encode(), "gold"), gold=True)
        p = read_pyevall_labels(Blob.from_bytes(pred_text.encode(), "pred"))
        measures = [m for m in ALL if m != "ICMNorm" or len(set(g.cases[next(iter(g.cases))][1].tolist())) > 1]
        assert_parity(evaluate_mono(g, p, measures), pyevall(gold_text, pred_text, measures), measures)


def test_pyevall_double_implementation_case_23() -> None:
    """PyEvALL's test case 23 (its repository's ``test/``: gold 1 TRUE, 2 TRUE, 3-5 B; system 1 TRUE, 2 TRUE,
    3 B and 7 B, an id the gold lacks) against the values of PyEvALL's independent double implementation
    (``Double_imp_2.txt``, 3 decimals): no oracle needed."""
    gold = "test_case\tid\tvalue\n23\t1\tTRUE\n23\t2\tTRUE\n23\t3\tB\n23\t4\tB\n23\t5\tB"
    pred = "test_case\tid\tvalue\n23\t1\tTRUE\n23\t2\tTRUE\n23\t3\tB\n23\t7\tB"
    got = evaluate_mono(read_pyevall_labels(Blob.from_bytes(gold.encode(), "gold"), gold=True),
                        read_pyevall_labels(Blob.from_bytes(pred.encode(), "pred")), ALL)
    expected = {"Accuracy": 0.6, "SystemPrecision": 0.75, "Kappa": 0.444, "ICM": 0.381}
    for name, value in expected.items():
        assert round(got[name].mean or 0.0, 3) == value, name
    for name in ("Precision", "Recall", "FMeasure"):  # Precision_TRUE, Recall_TRUE, Fmeasure_TRUE
        classes = got[name].per_test_case["23"].classes
        assert classes is not None and classes["TRUE"] == 1.0, name


def test_validation_flags_the_records_pyevall_flags(pyevall: Run) -> None:
    """PyEvALL's format checks (duplicated id: an error; empty value: a warning) name the same records as the
    reader's problems (PyEvALL counts records from 1; one record per line after the ``[`` line here)."""
    import json

    from evaluation.formats.pyevall_labels import parse_pyevall_labels

    gold = [{"test_case": "T", "id": "a", "value": "x"}, {"test_case": "T", "id": "a", "value": "y"},
            {"test_case": "T", "id": "b", "value": ""}, {"test_case": "T", "id": "c", "value": "y"},
            {"test_case": "U", "id": "c", "value": "y"}, {"test_case": "U", "id": "c", "value": ""}]
    text = "[\n" + ",\n".join(json.dumps(r) for r in gold) + "\n]\n"
    files = pyevall(gold, gold[3:], ["Accuracy"])["files"]["gold"]["errors"]
    theirs = {"duplicate-id": files["FORMAT_IDS_REPEATED_ROW_ERROR"]["lines"],
              "empty-value": files["FORMAT_EMPTY_VALUE_ROW_WARNING"]["lines"]}
    parsed = parse_pyevall_labels(Blob.from_bytes(text.encode(), "gold"), gold=True)
    mine: dict[str, list[int]] = {}
    for problem in parsed.problems:
        assert problem.line is not None
        mine.setdefault(problem.code, []).append(problem.line - 1)
    assert mine == theirs
