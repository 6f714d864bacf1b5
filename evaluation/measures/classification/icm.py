"""ICM and ICMNorm for flat mono-label classification (Amigo and Delgado, "Evaluating Extreme Hierarchical
Multi-label Classification", ACL 2022; PyEvALL's ``ICM``/``ICMNorm``).

ICM(p, g) = alpha_1 IC(p) + alpha_2 IC(g) - beta IC({p, g}); without a hierarchy two classes share no ancestor,
so IC({p, g}) = IC(p) + IC(g) when p != g and IC(g) when p = g. IC(c) = -log2 P(c), P(c) the share of the
test case's gold items in c; a label no gold item of the test case has gets P = 1/|G| (PyEvALL's "minimal
information"), a missing prediction IC = 0. A test case's ICM is the mean over its gold items.
ICMNorm = (ICM + ICM(G, G)) / (2 ICM(G, G)), truncated below at 0; undefined (None) when ICM(G, G) = 0.
"""

from __future__ import annotations

import numpy as np

from evaluation.measures.classification.cases import MISSING, UNSEEN, MonoCase

ALPHA_1 = 2.0
ALPHA_2 = 2.0
BETA = 3.0


def _information(case: MonoCase) -> np.ndarray:
    """IC of each gold class."""
    return -np.log2(np.bincount(case.gold, minlength=case.k) / case.n)


def icm_items(case: MonoCase, alpha_1: float = ALPHA_1, alpha_2: float = ALPHA_2, beta: float = BETA) -> np.ndarray:
    """ICM of each gold item."""
    info = _information(case)
    ic_gold = info[case.gold]
    ic_pred = np.where(case.pred >= 0, info[np.maximum(case.pred, 0)], 0.0)
    ic_pred = np.where(case.pred == UNSEEN, np.log2(case.n), ic_pred)
    same = case.pred == case.gold
    union = np.where(same, ic_gold, ic_gold + ic_pred)
    union = np.where(case.pred == MISSING, ic_gold, union)
    items: np.ndarray = alpha_1 * ic_pred + alpha_2 * ic_gold - beta * union
    return items


def icm(case: MonoCase, alpha_1: float = ALPHA_1, alpha_2: float = ALPHA_2, beta: float = BETA) -> float:
    return float(np.sum(icm_items(case, alpha_1, alpha_2, beta))) / case.n


def icm_gold(case: MonoCase, alpha_1: float = ALPHA_1, alpha_2: float = ALPHA_2, beta: float = BETA) -> float:
    """ICM of the gold against itself, the normaliser."""
    return float(np.sum((alpha_1 + alpha_2 - beta) * _information(case)[case.gold])) / case.n


def icm_norm(case: MonoCase, alpha_1: float = ALPHA_1, alpha_2: float = ALPHA_2,
             beta: float = BETA) -> float | None:
    best = icm_gold(case, alpha_1, alpha_2, beta)
    if best == 0:
        return None
    value = (icm(case, alpha_1, alpha_2, beta) + best) / (2 * best)
    return max(value, 0.0)
