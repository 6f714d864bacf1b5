"""Precision, Recall and F-measure per gold class and their macro averages (PyEvALL's definitions).

Classes are the test case's gold classes. Precision's denominator is every prediction row with the class's label
(ids the gold lacks included); a class nobody predicted has no precision (None) and is left out of the macro
average, which is None when no class has one. F is 1 / (alfa/P + (1-alfa)/R), 0 when P or R is 0 or the class
was never predicted, and the macro F averages over every gold class.
"""

from __future__ import annotations

import numpy as np

from evaluation.measures.classification.cases import MonoCase
from evaluation.measures.classification.counts import confusion

PerClass = tuple[float | None, dict[str, float | None]]


def precision(case: MonoCase) -> PerClass:
    tp, _, _ = confusion(case)
    predicted = case.pred_counts.astype(np.float64)
    defined = predicted > 0
    values = np.divide(tp, predicted, out=np.zeros_like(tp), where=defined)
    per_class = {c: (float(v) if d else None) for c, v, d in zip(case.classes, values, defined, strict=True)}
    mean = _mean(values[defined].tolist()) if defined.any() else None
    return mean, per_class


def recall(case: MonoCase) -> PerClass:
    tp, gold, _ = confusion(case)
    values = tp / gold
    return _mean(values.tolist()), dict(zip(case.classes, values.tolist(), strict=True))


def fmeasure(case: MonoCase, alfa_param: float = 0.5) -> PerClass:
    tp, gold, _ = confusion(case)
    predicted = case.pred_counts.astype(np.float64)
    ok = (predicted > 0) & (tp > 0)
    p = np.divide(tp, predicted, out=np.ones_like(tp), where=ok)
    r = np.divide(tp, gold, out=np.ones_like(tp), where=ok)
    values = np.where(ok, 1 / (alfa_param / p + (1 - alfa_param) / r), 0.0)
    return _mean(values.tolist()), dict(zip(case.classes, values.tolist(), strict=True))


def _mean(values: list[float]) -> float:
    """Summed left to right, as PyEvALL's loop does."""
    total = 0.0
    for v in values:
        total += v
    return total / len(values)
