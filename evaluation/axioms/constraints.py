"""The ten formal constraints of Amigo et al. (SIGIR 2018) as executable checks (spec 7.2-7.3).

A constraint is an instance generator plus a pass criterion: a universally quantified constraint holds iff
no generated comparison is violated; the existential one (CloseTh) holds iff some comparison is satisfied.
Strict comparisons need a margin: ``a > b`` iff ``a > b + 1e-12``; ``a >= b`` iff ``a >= b - 1e-12``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from evaluation.axioms import instances
from evaluation.axioms.instances import Comparison, Settings
from evaluation.problems import OptionError

TOLERANCE = 1e-12

Generator = Callable[[random.Random, Settings], list[Comparison]]


@dataclass(frozen=True)
class Constraint:
    """One constraint: its name, group, what it requires, and how its instances are drawn."""

    name: str
    group: Literal["relevance", "diversity"]
    summary: str
    requirement: str
    generate: Generator
    existential: bool = False
    #: draws no random numbers (the same instances every time)
    fixed: bool = False

    def holds(self, higher: npt.NDArray[np.float64], lower: npt.NDArray[np.float64],
              strict: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        """Per comparison: does the pair of scores satisfy the requirement (NaN never does)?"""
        ok_strict = higher > lower + TOLERANCE
        ok_weak = higher >= lower - TOLERANCE
        return np.where(strict, ok_strict, ok_weak)


CONSTRAINTS: tuple[Constraint, ...] = (
    Constraint(
        "Pri", "relevance",
        "Priority: swapping two documents so that the more relevant one comes first raises the score.",
        "Q(d with d_i, d_j swapped) > Q(d) whenever r(d_j) > r(d_i), i < j",
        instances.priority,
    ),
    Constraint(
        "Deep", "relevance",
        "Deepness: the same correcting swap of neighbours gains more near the top than further down.",
        "Q(d with i, i+1 swapped) > Q(d with j, j+1 swapped) when r_i = r_j < r_{i+1} = r_{j+1}, i + 1 < j",
        instances.deepness,
    ),
    Constraint(
        "DeepTh", "relevance",
        "Deepness threshold: one relevant document on top beats n relevant ones after n non-relevant ones,"
        " for every large enough n.",
        "Q(rel, non-rel x (2n-1)) > Q(non-rel x n, rel x n) for n = 1000, 1100, ..., 2000",
        instances.deepness_threshold, fixed=True,
    ),
    Constraint(
        "CloseTh", "relevance",
        "Closeness threshold: for some small m, m relevant documents after m non-relevant ones beat a single"
        " relevant document on top.",
        "Q(non-rel x m, rel x m) > Q(rel, non-rel x (2m-1)) for some m in 1..50",
        instances.closeness_threshold, existential=True, fixed=True,
    ),
    Constraint(
        "Conf", "relevance",
        "Confidence: appending a non-relevant document lowers the score.",
        "Q(d) > Q(d, z) for z non-relevant to every aspect",
        instances.confidence,
    ),
    Constraint(
        "AspDiv", "diversity",
        "Aspect diversity: a document more relevant to every aspect in place of another raises the score.",
        "Q(d with d_n replaced by d'_n) > Q(d) when r(d'_n, t) > r(d_n, t) for every aspect t",
        instances.aspect_diversity,
    ),
    Constraint(
        "Red", "diversity",
        "Redundancy: with binary relevance and balanced aspects, the next document should serve the less"
        " covered aspect.",
        "Q(d, x') > Q(d, x) when d covers x's aspect more often than x''s",
        instances.redundancy,
    ),
    Constraint(
        "MRed", "diversity",
        "Monotonic redundancy: after documents that favour aspect t, an equally relevant document for t' is"
        " worth more than one for t.",
        "Q(d, x') > Q(d, x) when r(d_i, t) > r(d_i, t') for every d_i and r(x, t) = r(x', t')",
        instances.monotonic_redundancy,
    ),
    Constraint(
        "Sat", "diversity",
        "Aspect saturation: once a document fully satisfies an aspect, more documents for that aspect add"
        " nothing.",
        "Q(d) >= Q(d, x) when r(d_n, t) = 1 and x is relevant only to t",
        instances.saturation,
    ),
    Constraint(
        "AspRel", "diversity",
        "Aspect relevance: at a position where neither aspect was served yet, serving the heavier aspect"
        " scores higher.",
        "Q(d, x') > Q(d, x) when x' serves t, x serves t' as much, w(t) > w(t'), neither seen before",
        instances.aspect_relevance,
    ),
)

#: the constraint names in the paper's order
NAMES: tuple[str, ...] = tuple(c.name for c in CONSTRAINTS)


def constraint(name: str) -> Constraint:
    """A constraint by name (case-insensitive)."""
    for c in CONSTRAINTS:
        if c.name.lower() == name.lower():
            return c
    raise OptionError(f"unknown constraint {name!r}; the constraints are {', '.join(NAMES)}")
