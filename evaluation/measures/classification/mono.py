"""The entry point of the mono-label classification measures: PyEvALL's names, parameters and averaging.

``evaluate_mono(gold, pred, ["ICM", "FMeasure"], {"FMeasure": {"alfa_param": 0.5}})`` returns, per measure, a
:class:`MonoResult`: the value of each test case PyEvALL evaluates (those the gold and the predictions share),
per-class values where PyEvALL reports them, and the mean over test cases as PyEvALL computes it (``evaluation.py``
``evaluate_metric``): a test case whose value is undefined (None) adds 0 to the sum but still counts in the
denominator; a test case that fails a precondition (Kappa's) leaves the mean undefined, with the reason.
Not in the registry yet: its names are unique across ranking measures and ``Precision``/``Recall`` are ranking
aliases there, and its kernels take ranked runs (docs/measures.md, "Mono-label classification").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluation.measures.classification import counts, icm, per_class
from evaluation.measures.classification.cases import MonoCase, MonoLabels, cases
from evaluation.problems import MeasureError


@dataclass(frozen=True)
class MonoMeasure:
    """One PyEvALL mono-label measure: its name, its parameters' defaults, and how it scores a test case."""

    name: str
    summary: str
    params: Mapping[str, float]
    score: Callable[..., Any]  # (case, **params) -> value | (value, per_class)
    per_class: bool = False
    precondition: Callable[[MonoCase], str | None] | None = None


MEASURES: dict[str, MonoMeasure] = {m.name: m for m in (
    MonoMeasure("Accuracy", "correct gold items / gold items", {}, counts.accuracy),
    MonoMeasure("SystemPrecision", "correct gold items / prediction rows", {}, counts.system_precision),
    MonoMeasure("Kappa", "Cohen's kappa over the confusion matrix", {}, counts.kappa,
                precondition=counts.kappa_precondition),
    MonoMeasure("Precision", "macro precision over the gold classes", {}, per_class.precision, per_class=True),
    MonoMeasure("Recall", "macro recall over the gold classes", {}, per_class.recall, per_class=True),
    MonoMeasure("FMeasure", "macro F (alfa_param weighs precision) over the gold classes", {"alfa_param": 0.5},
                per_class.fmeasure, per_class=True),
    MonoMeasure("ICM", "Information Contrast Model", {"alpha_1": icm.ALPHA_1, "alpha_2": icm.ALPHA_2,
                                                       "beta": icm.BETA}, icm.icm),
    MonoMeasure("ICMNorm", "ICM normalised by the gold's own ICM", {"alpha_1": icm.ALPHA_1, "alpha_2": icm.ALPHA_2,
                                                                    "beta": icm.BETA}, icm.icm_norm),
)}


@dataclass(frozen=True)
class TestCaseValue:
    """One test case's value (None: undefined), its per-class values, or why the measure refused it."""

    value: float | None
    classes: dict[str, float | None] | None = None
    refused: str | None = None


@dataclass(frozen=True)
class MonoResult:
    """A measure over a run: per test case, and PyEvALL's mean over test cases (None: undefined, see refused)."""

    measure: str
    mean: float | None
    per_test_case: dict[str, TestCaseValue] = field(default_factory=dict)
    refused: str | None = None


def evaluate_mono(gold: MonoLabels, pred: MonoLabels, measures: Sequence[str],
                  params: Mapping[str, Mapping[str, float]] | None = None) -> dict[str, MonoResult]:
    """Each named measure over the test cases gold and predictions share (MeasureError: unknown name/parameter)."""
    chosen = [_measure(name) for name in measures]
    settings = {m.name: _params(m, (params or {}).get(m.name, {})) for m in chosen}
    found = cases(gold, pred)
    return {m.name: _score(m, found, settings[m.name]) for m in chosen}


def _measure(name: str) -> MonoMeasure:
    if name not in MEASURES:
        raise MeasureError(f"unknown mono-label classification measure {name!r} (known: {', '.join(MEASURES)})")
    return MEASURES[name]


def _params(measure: MonoMeasure, given: Mapping[str, float]) -> dict[str, float]:
    unknown = set(given) - set(measure.params)
    if unknown:
        raise MeasureError(f"{measure.name} has no parameter {', '.join(sorted(unknown))}")
    for key, value in given.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise MeasureError(f"{measure.name}'s {key} must be a number")
    if "alfa_param" in given and not 0 <= given["alfa_param"] <= 1:
        raise MeasureError(f"{measure.name}'s alfa_param must be between 0 and 1")
    return {**measure.params, **given}


def _score(measure: MonoMeasure, found: list[MonoCase], settings: Mapping[str, float]) -> MonoResult:
    if not found:
        return MonoResult(measure.name, None, refused="no test case in common between gold and predictions")
    values: dict[str, TestCaseValue] = {}
    refused = None
    for case in found:
        reason = measure.precondition(case) if measure.precondition else None
        if reason is not None:
            values[case.name] = TestCaseValue(None, refused=reason)
            refused = refused or f"test case {case.name}: {reason}"
            continue
        got = measure.score(case, **settings)
        if measure.per_class:
            values[case.name] = TestCaseValue(got[0], got[1])
        else:
            values[case.name] = TestCaseValue(got)
    if refused is not None:
        return MonoResult(measure.name, None, values, refused)
    total = 0.0
    defined = 0
    for v in values.values():
        if v.value is not None:
            total += float(v.value)
            defined += 1
    return MonoResult(measure.name, total / len(values) if defined else None, values)
