"""Ranking policies: how a run's rows become an ordered list per topic (spec 1.2).

- ``trec`` (default): score descending, ties broken by docno descending byte-wise (C ``strcmp``), rank column
  ignored -- exactly trec_eval's and gdeval's order and ndeval's with ``-traditional``.
- ``rank``: the rank column ascending (ndeval's default); equal ranks keep file order.
- ``file``: the order of lines in the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from evaluation.formats.keys import byte_order_keys
from evaluation.model import IntArray, Run

TiePolicy = Literal["trec", "rank", "file"]
TIE_POLICIES: tuple[str, ...] = get_args(TiePolicy)


@dataclass(frozen=True, eq=False)
class Ranking:
    """A run ordered by a policy: ``order`` lists run rows topic by topic (topics in ``run.topics`` order),
    each topic's rows best first; ``offsets`` delimit the topics."""

    run: Run
    policy: str
    order: IntArray
    offsets: IntArray


def rank_run(run: Run, policy: str = "trec") -> Ranking:
    """Order a run's rows per topic by the given tie policy."""
    if policy == "trec":
        order = _trec_order(run)
    elif policy == "rank":
        order = np.lexsort((run.rank, run.topic))
    elif policy == "file":
        order = np.argsort(run.topic, kind="stable")
    else:
        raise ValueError(f"unknown ranking policy {policy!r}; choose one of {', '.join(TIE_POLICIES)}")
    counts = np.bincount(run.topic, minlength=len(run.topics))
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return Ranking(run, policy, order.astype(np.int64), offsets)


def _trec_order(run: Run) -> IntArray:
    """Score descending, then docno descending byte-wise; only rows with tied scores pay for docno sorting."""
    order = np.lexsort((-run.score, run.topic))
    if order.size < 2:
        return order
    topic, score = run.topic[order], run.score[order]
    tied = (topic[1:] == topic[:-1]) & (score[1:] == score[:-1])
    if not tied.any():
        return order
    group = np.cumsum(np.concatenate(([True], ~tied)))
    in_tie = np.zeros(order.size, dtype=bool)
    in_tie[1:] |= tied
    in_tie[:-1] |= tied
    at = np.flatnonzero(in_tie)
    rows = order[at]
    keys = [~k for k in reversed(byte_order_keys(run.docno[rows]))]
    order[at] = rows[np.lexsort((*keys, group[at]))]
    return order
