"""Accuracy, System Precision and Cohen's Kappa over one mono-label test case (PyEvALL's definitions)."""

from __future__ import annotations

import numpy as np

from evaluation.measures.classification.cases import MonoCase


def confusion(case: MonoCase) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per gold class: true positives, gold items, and gold items predicted as it (the matrix's column sums)."""
    tp = np.bincount(case.gold[case.pred == case.gold], minlength=case.k).astype(np.float64)
    gold = np.bincount(case.gold, minlength=case.k).astype(np.float64)
    column = np.bincount(case.pred[case.pred >= 0], minlength=case.k).astype(np.float64)
    return tp, gold, column


def accuracy(case: MonoCase) -> float:
    """Correct gold items over gold items (a missing prediction is wrong)."""
    return float(np.count_nonzero(case.pred == case.gold)) / case.n


def system_precision(case: MonoCase) -> float | None:
    """Correct gold items over prediction rows (predictions for ids the gold lacks included); None with none."""
    return float(np.count_nonzero(case.pred == case.gold)) / case.n_pred if case.n_pred else None


def kappa_precondition(case: MonoCase) -> str | None:
    """Why PyEvALL refuses Kappa for this test case, or None."""
    if case.n_pred == 0:
        return "empty predictions"
    if case.one_class_same_ids:
        return "one class in gold and predictions, the same one, over the same ids"
    return None


def kappa(case: MonoCase) -> float:
    """(Accuracy - Pe) / (1 - Pe), Pe = sum_c (predicted c / |G|)(gold c / |G|), over the confusion matrix
    (so a prediction outside the gold classes or ids counts for no class); 0 when Pe = 1, as PyEvALL."""
    _, gold, column = confusion(case)
    n = float(case.n)
    acc = accuracy(case)
    pe = 0.0
    for predicted, actual in zip((column / n).tolist(), (gold / n).tolist(), strict=True):
        pe += predicted * actual  # PyEvALL's summation order, class by class
    return (acc - pe) / (1 - pe) if 1 - pe != 0 else 0.0
