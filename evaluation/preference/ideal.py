"""The greedy ideal ranking of nPrf (spec 6.5, 10, B.4).

Over the documents with a utility estimate: rank 1 is the document with the highest ``U(d)``; rank i the remaining
one with the highest ``U(d | d*_1 .. d*_{i-1})`` under the same F; ties go to the larger docno (byte-wise).
Greedy is not guaranteed optimal, so a run can beat it (nPrf > 1 is reported as is).

All topics advance together, one rank per step, on ``(topics x pool)`` arrays: each step takes the row-wise first
maximum (documents are stored docno-descending, so the first maximum is the larger docno) and folds the chosen
document's row of conditional utilities into every remaining candidate's running sum/count (avg) or minimum
(min), in placement order -- the order in which ``rank_utilities`` sums a ranking's conditional utilities, so a
run equal to the ideal gets bit-equal utilities.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation.model import FloatArray, IntArray
from evaluation.preference.utilities import AGGREGATES, UtilityTable
from evaluation.problems import OptionError


@dataclass(frozen=True, eq=False)
class IdealRankings:
    """Per table topic: the greedy ideal documents (topic-local indices) and their utilities, in rank order."""

    offsets: IntArray
    local: IntArray
    utility: FloatArray

    def documents(self, table: UtilityTable, topic: str) -> list[str]:
        t = table.topic_index[topic]
        lo, hi = int(self.offsets[t]), int(self.offsets[t + 1])
        names = table.docnos[table.doc_offsets[t] + self.local[lo:hi]]
        return [d.decode("utf-8", "replace") for d in names.tolist()]

    def utilities(self, table: UtilityTable, topic: str) -> list[float]:
        t = table.topic_index[topic]
        return [float(v) for v in self.utility[int(self.offsets[t]) : int(self.offsets[t + 1])]]


def greedy_ideal(table: UtilityTable, aggregate: str = "avg") -> IdealRankings:
    """The greedy ideal ranking of every topic of ``table`` under ``F = aggregate`` (cached on the table)."""
    if aggregate not in AGGREGATES:
        raise OptionError(f"F must be one of {', '.join(AGGREGATES)}, not {aggregate!r}")
    found: IdealRankings = table.memo(("greedy-ideal", aggregate), lambda: _greedy(table, aggregate))
    return found


def _greedy(table: UtilityTable, aggregate: str) -> IdealRankings:
    sizes = table.sizes
    pools = table.pool_sizes
    n_topics = sizes.size
    width = int(sizes.max(initial=0))
    steps = int(pools.max(initial=0))
    offsets = np.concatenate(([0], np.cumsum(pools))).astype(np.int64)
    local_out = np.zeros(int(offsets[-1]), dtype=np.int64)
    utility_out = np.zeros(int(offsets[-1]))
    if steps == 0:
        return IdealRankings(offsets, local_out, utility_out)
    col = np.arange(width)
    inside = col[None, :] < sizes[:, None]
    flat = np.where(inside, table.doc_offsets[:-1, None] + col[None, :], 0)
    remaining = inside & table.estimated[flat]
    base = table.unconditional[flat]
    total = np.zeros((n_topics, width))
    count = np.zeros((n_topics, width), dtype=np.int64)
    least = np.full((n_topics, width), np.inf)
    block = table.block_offsets[:-1]
    for step in range(steps):
        active = np.flatnonzero(pools > step)
        rem = remaining[active]
        has = count[active] > 0
        if aggregate == "avg":
            cond = np.divide(total[active], count[active], out=np.zeros(rem.shape), where=has)
        else:
            cond = least[active]
        util = np.where(has, cond, base[active])
        pick = np.argmax(np.where(rem, util, -np.inf), axis=1)
        chosen = util[np.arange(active.size), pick]
        out = offsets[active] + step
        local_out[out] = pick
        utility_out[out] = chosen
        remaining[active, pick] = False
        # fold in the chosen documents' conditional utilities (row = top document)
        m = sizes[active]
        ok = inside[active]
        entries = np.where(ok, (block[active] + pick * m)[:, None] + col[None, :], 0)
        values = table.conditional[entries] if table.conditional.size else np.full(entries.shape, np.nan)
        present = ok & ~np.isnan(values)
        total[active] += np.where(present, values, 0.0)
        count[active] += present
        least[active] = np.where(present, np.minimum(least[active], values), least[active])
    return IdealRankings(offsets, local_out, utility_out)
