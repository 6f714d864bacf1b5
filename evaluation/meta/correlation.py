"""Rank correlation between system rankings: Kendall's tau-a and tau-b (spec 8.5) and the top-heavy tau_ap,
asymmetric and symmetric (8.6).

Kendall's tau compares score vectors; tied pairs count as neither concordant nor discordant (C-TAU-1). tau_ap
compares two orderings of the same systems; from scores, systems are ranked by score descending with ties
broken by system identifier ascending (C-TAUAP-1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from evaluation.meta.table import ScoreTable
from evaluation.model import FloatArray
from evaluation.problems import OptionError

Method = Literal["tau_a", "tau_b", "tau_ap", "tau_ap_sym"]


@dataclass(frozen=True)
class PairCounts:
    """Pairs of systems by their relation in two score vectors (``tied_x``: tied only in x; ``tied_y``: only
    in y; ``tied_both``: in both)."""

    concordant: int
    discordant: int
    tied_x: int
    tied_y: int
    tied_both: int

    @property
    def pairs(self) -> int:
        return self.concordant + self.discordant + self.tied_x + self.tied_y + self.tied_both


def pair_counts(x: FloatArray, y: FloatArray) -> PairCounts:
    """Concordant, discordant and tied pairs of two score vectors of the same systems."""
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.shape != y.shape:
        # internal: both vectors are scores of the same systems
        raise ValueError(f"score vectors of different lengths: {x.size} and {y.size}")
    i, j = np.triu_indices(x.size, k=1)
    sx, sy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    product = sx * sy
    return PairCounts(
        int(np.count_nonzero(product > 0)),
        int(np.count_nonzero(product < 0)),
        int(np.count_nonzero((sx == 0) & (sy != 0))),
        int(np.count_nonzero((sy == 0) & (sx != 0))),
        int(np.count_nonzero((sx == 0) & (sy == 0))),
    )


def kendall_tau(x: FloatArray, y: FloatArray, variant: Literal["a", "b"] = "b") -> float:
    """Kendall's tau between the rankings induced by two score vectors (8.5); NaN when undefined.

    ``a``: ``(C - D) / (L (L - 1) / 2)``; ``b``: ``(C - D) / sqrt((C + D + T_x)(C + D + T_y))``.
    """
    counts = pair_counts(x, y)
    c, d = counts.concordant, counts.discordant
    if variant == "a":
        return (c - d) / counts.pairs if counts.pairs else float("nan")
    if variant != "b":
        raise OptionError(f"unknown tau variant {variant!r}; choose a or b")
    denominator = (c + d + counts.tied_x) * (c + d + counts.tied_y)
    return (c - d) / float(np.sqrt(denominator)) if denominator else float("nan")


def system_ranking(scores: FloatArray, systems: Sequence[str]) -> tuple[str, ...]:
    """Systems best first: score descending, ties broken by identifier ascending (C-TAUAP-1)."""
    scores = np.asarray(scores, dtype=np.float64).ravel()
    if scores.size != len(systems):
        # internal: callers pass one score per system
        raise ValueError(f"{scores.size} scores for {len(systems)} systems")
    by_id = sorted(range(len(systems)), key=lambda i: systems[i])
    order = np.asarray(by_id, dtype=np.int64)
    order = order[np.argsort(-scores[order], kind="stable")]
    return tuple(systems[i] for i in order.tolist())


def tau_ap(ranking: Sequence[str], gold: Sequence[str]) -> float:
    """``tau_ap(A | G) = 2 / (L - 1) * sum_{i=2..L} C(i) / (i - 1) - 1`` (8.6): ``ranking`` is A (best first),
    ``gold`` the reference ordering of the same systems; NaN for fewer than two systems."""
    position = {s: i for i, s in enumerate(gold)}
    if len(position) != len(gold) or len(ranking) != len(gold) or set(ranking) != set(position):
        # internal: both orderings come from system_ranking on the same systems
        raise ValueError("tau_ap needs two orderings of the same distinct systems")
    n = len(ranking)
    if n < 2:
        return float("nan")
    g = np.array([position[s] for s in ranking], dtype=np.int64)
    above = np.tril(g[None, :] < g[:, None], k=-1)  # [i, j]: j above i in A and above a_i in G
    c = above.sum(axis=1)[1:]
    return float(2.0 / (n - 1) * np.sum(c / np.arange(1, n)) - 1.0)


def tau_ap_symmetric(a: Sequence[str], b: Sequence[str]) -> float:
    """``(tau_ap(A | B) + tau_ap(B | A)) / 2`` (8.6, DOU19)."""
    return (tau_ap(a, b) + tau_ap(b, a)) / 2.0


def tau_ap_scores(x: FloatArray, gold: FloatArray, systems: Sequence[str], symmetric: bool = False) -> float:
    """tau_ap between the system rankings of two score vectors (``gold`` ranks the reference)."""
    a, g = system_ranking(x, systems), system_ranking(gold, systems)
    return tau_ap_symmetric(a, g) if symmetric else tau_ap(a, g)


def correlation_matrix(table: ScoreTable, method: Method = "tau_b") -> FloatArray:
    """Correlation of the mean-score system rankings of every pair of measures: entry ``[i, j]`` compares
    measure i with measure j (for ``tau_ap``: measure i's ranking examined against measure j's as gold).

    The diagonal is computed like any other entry -- a measure against an exact copy of itself -- so ties count
    as in 8.5 (tau_a below 1 when runs tie) and an undefined correlation is NaN there too.
    """
    means = table.means()
    m = len(table.measures)
    out = np.empty((m, m))
    for i in range(m):
        for j in range(m):
            if method != "tau_ap" and j < i:
                continue
            if method in ("tau_a", "tau_b"):
                out[i, j] = kendall_tau(means[i], means[j], "a" if method == "tau_a" else "b")
            elif method in ("tau_ap", "tau_ap_sym"):
                out[i, j] = tau_ap_scores(means[i], means[j], table.runs, symmetric=method == "tau_ap_sym")
            else:
                raise OptionError(f"unknown method {method!r}; choose tau_a, tau_b, tau_ap or tau_ap_sym")
            if method != "tau_ap":
                out[j, i] = out[i, j]
    return out
