"""Agreement between a measure and user preference labels over run pairs (spec 8.7, DOU19 Sec 5.4) and the
robustness of system rankings to incomplete judgments (8.8, CHANDAR13).

Labels are coded ``1`` (left better, ``>``), ``-1`` (right better, ``<``) and ``0`` (``=``). Any different
label is a disagreement, ``=`` against ``>`` or ``<`` included (C-PREF-1).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from evaluation.meta.correlation import kendall_tau
from evaluation.model import FloatArray, IntArray
from evaluation.problems import OptionError

#: a measure says ``=`` when the two scores are equal after rounding to this many decimals (8.7)
EQUAL_DECIMALS = 12

_WORDS = {
    ">": 1,
    "<": -1,
    "=": 0,
    "left": 1,
    "right": -1,
    "equal": 0,
    "l": 1,
    "r": -1,
    "e": 0,
}


@dataclass(frozen=True)
class Agreement:
    """Agreements and disagreements over ``pairs`` labelled pairs, and ``tau = (agree - disagree) / pairs``."""

    agreements: int
    disagreements: int

    @property
    def pairs(self) -> int:
        return self.agreements + self.disagreements

    @property
    def tau(self) -> float:
        return (self.agreements - self.disagreements) / self.pairs if self.pairs else float("nan")


def measure_labels(left: FloatArray, right: FloatArray, decimals: int = EQUAL_DECIMALS) -> IntArray:
    """A measure's label for each pair from its two per-topic scores: the sign of left - right after rounding."""
    a = np.round(np.asarray(left, dtype=np.float64), decimals)
    b = np.round(np.asarray(right, dtype=np.float64), decimals)
    labels: IntArray = np.sign(a - b).astype(np.int64)
    return labels


def parse_labels(labels: Iterable[str | int]) -> IntArray:
    """Labels as codes: ``>``/``left``/``L`` -> 1, ``<``/``right``/``R`` -> -1, ``=``/``equal``/``E`` -> 0."""
    out = []
    for label in labels:
        if isinstance(label, (int, np.integer)) and int(label) in (-1, 0, 1):
            out.append(int(label))
            continue
        code = _WORDS.get(str(label).strip().lower())
        if code is None:
            raise OptionError(f"unknown preference label {label!r}; use >, <, = (or left, right, equal)")
        out.append(code)
    return np.asarray(out, dtype=np.int64)


def preference_agreement(first: Iterable[str | int], second: Iterable[str | int]) -> Agreement:
    """Agreement of two labellings of the same pairs (measure vs user, or user vs user; 8.7)."""
    a, b = parse_labels(first), parse_labels(second)
    if a.shape != b.shape:
        # internal: both label lists are drawn for the same pairs
        raise ValueError(f"label lists of different lengths: {a.size} and {b.size}")
    same = int(np.count_nonzero(a == b))
    return Agreement(same, int(a.size) - same)


def agreement_with_users(labels: Iterable[str | int], users: Mapping[str, Iterable[str | int]]) -> dict[str, float]:
    """``tau`` of one measure's labels against each user's labels of the same pairs, plus their ``average``."""
    mine = parse_labels(labels)
    out = {user: preference_agreement(mine, parse_labels(theirs)).tau for user, theirs in users.items()}
    if out:
        out["average"] = float(np.mean(list(out.values())))
    return out


def inter_user_agreement(users: Mapping[str, Iterable[str | int]]) -> dict[tuple[str, str], float]:
    """``tau`` of every pair of users (each unordered pair once, in the order given)."""
    coded = {u: parse_labels(v) for u, v in users.items()}
    names = list(coded)
    return {(a, b): preference_agreement(coded[a], coded[b]).tau for i, a in enumerate(names) for b in names[i + 1 :]}


def robustness_curve(reference: FloatArray, samples: Mapping[int, FloatArray], variant: str = "a") -> dict[int, float]:
    """8.8: for each sample size ``N``, the mean Kendall tau between the system ranking of each repetition
    (rows of ``samples[N]``, repetitions x systems) and the ``reference`` ranking from all judgments."""
    ref = np.asarray(reference, dtype=np.float64)
    out = {}
    for size, rows in samples.items():
        reps = np.atleast_2d(np.asarray(rows, dtype=np.float64))
        out[size] = float(np.mean([kendall_tau(r, ref, "a" if variant == "a" else "b") for r in reps]))
    return out
