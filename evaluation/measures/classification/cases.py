"""Mono-label classification inputs as the measures see them: one :class:`MonoCase` per test case, labels coded.

PyEvALL (``comparators.py``) compares a test case's gold and predictions through a confusion matrix over the
*gold* classes of that test case (first-appearance order): a prediction whose label no gold item of the test case
has is counted among the predictions (System Precision, Precision) but never in the matrix; a prediction for an
id the gold lacks is counted among the predictions only. :func:`encode` keeps exactly those counts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: ``MonoCase.pred`` codes for a gold item with no prediction, and for a prediction outside the gold classes
MISSING = -1
UNSEEN = -2


@dataclass(frozen=True)
class MonoLabels:
    """One side (gold or predictions) of a mono-label evaluation: per test case, ids and labels (str arrays)."""

    cases: dict[str, tuple[np.ndarray, np.ndarray]]
    #: (test case, id) of gold items whose value is empty: PyEvALL drops their predictions too
    ignored: frozenset[tuple[str, str]] = frozenset()


@dataclass(frozen=True)
class MonoCase:
    """One test case, coded: ``gold[i]`` is item i's gold class (0..k-1, :attr:`classes` order); ``pred[i]`` its
    predicted class, :data:`MISSING` or :data:`UNSEEN`; ``pred_counts[c]`` predictions labelled c over every
    prediction row (ids the gold lacks included); ``n_pred`` the prediction rows."""

    name: str
    classes: tuple[str, ...]
    gold: np.ndarray
    pred: np.ndarray
    pred_counts: np.ndarray
    n_pred: int
    #: one class in gold and predictions, the same one, and the same ids (PyEvALL refuses Kappa there)
    one_class_same_ids: bool

    @property
    def k(self) -> int:
        return len(self.classes)

    @property
    def n(self) -> int:
        return int(self.gold.size)


def encode(name: str, gold_ids: np.ndarray, gold_labels: np.ndarray, pred_ids: np.ndarray,
           pred_labels: np.ndarray) -> MonoCase:
    """Code one test case (ids unique on each side, empty values already dropped, at least one gold item)."""
    ordered, first = np.unique(gold_labels, return_index=True)
    code_of = np.argsort(np.argsort(first, kind="stable"))  # sorted class j -> its first-appearance rank
    classes = ordered[np.argsort(first, kind="stable")]
    gold = _codes(ordered, code_of, gold_labels)
    pred_code = _codes(ordered, code_of, pred_labels)
    pred_counts = np.bincount(pred_code[pred_code >= 0], minlength=classes.size).astype(np.int64)
    pred = np.full(gold_ids.size, MISSING, dtype=np.int64)
    if pred_ids.size:
        by_id = np.argsort(pred_ids, kind="stable")
        at = np.minimum(np.searchsorted(pred_ids[by_id], gold_ids), pred_ids.size - 1)
        found = pred_ids[by_id][at] == gold_ids
        pred[found] = pred_code[by_id][at][found]
    one = (classes.size == 1 and pred_labels.size > 0 and bool(np.all(pred_labels == classes[0]))
           and np.array_equal(np.unique(gold_ids), np.unique(pred_ids)))
    return MonoCase(name, tuple(str(c) for c in classes), gold, pred, pred_counts, int(pred_labels.size), one)


def _codes(ordered: np.ndarray, code_of: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Each label's class code (first-appearance rank), :data:`UNSEEN` for a label outside ``ordered``."""
    if labels.size == 0:
        return np.zeros(0, dtype=np.int64)
    at = np.minimum(np.searchsorted(ordered, labels), ordered.size - 1)
    return np.where(ordered[at] == labels, code_of[at], UNSEEN).astype(np.int64)


def cases(gold: MonoLabels, pred: MonoLabels) -> list[MonoCase]:
    """The test cases PyEvALL evaluates, in gold order: those with gold items that the predictions also name
    (a test case the predictions omit is skipped, not scored 0: PyEvALL's ``get_pyevall_comparators``)."""
    found = []
    dropped: dict[str, list[str]] = {}  # per test case, the ids whose empty gold drops their prediction too
    for name, item in gold.ignored:
        dropped.setdefault(name, []).append(item)
    for name, (gold_ids, gold_labels) in gold.cases.items():
        if name not in pred.cases or gold_ids.size == 0:
            continue
        pred_ids, pred_labels = pred.cases[name]
        if name in dropped:
            keep = ~np.isin(pred_ids.astype(str), np.array(dropped[name], dtype=str))
            pred_ids, pred_labels = pred_ids[keep], pred_labels[keep]
        found.append(encode(name, gold_ids, gold_labels, pred_ids, pred_labels))
    return found
