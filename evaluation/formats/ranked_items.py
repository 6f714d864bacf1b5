"""A ``Run`` from ranked items: (test case, item id, position) rows as EvALL and PyEvALL system outputs give them.

These formats have no score column: the order is the position (PyEvALL's ``value``, EvALL's line order). The run
is built so that every tie policy gives that order: within a topic, rows are sorted by position, equal positions
kept in file order; ``rank`` is 1, 2, 3 ... in that order and ``score`` is ``n - rank + 1`` (n items in the
topic), strictly decreasing, so ``--ties trec``, ``--ties rank`` and ``--ties file`` agree (docs/formats.md).
"""

from __future__ import annotations

import numpy as np

from evaluation.formats.keys import duplicate_rows, intern_labels
from evaluation.model import IntArray, Run
from evaluation.problems import ProblemLog


def ranked_run(name: str, test_case: np.ndarray, item: np.ndarray, position: IntArray,
               item_at: tuple[IntArray, IntArray], position_at: tuple[IntArray, IntArray], log: ProblemLog, *,
               what: str) -> Run:
    """The run of rows ``test_case`` (``S`` array), ``item`` (``S`` array) and ``position`` (smaller first);
    ``item_at`` and ``position_at`` are the (line, column) arrays of each row's item id and position, for
    messages. Reports ``empty-run``, ``duplicate-docno``
    (an error, as for TREC runs) and ``tied-position`` (a warning: equal positions are ranked in file order)."""
    if test_case.size == 0 and not log.has_errors:
        log.add("empty-run", f"the {what} has no items")
    topics, topic = intern_labels(test_case)
    _report_duplicates(topics, topic, item, *item_at, log)
    order = np.lexsort((np.arange(topic.size), position, topic))
    topic, item, position = topic[order], item[order], position[order]
    line, column = position_at[0][order], position_at[1][order]
    starts = np.searchsorted(topic, np.arange(len(topics) + 1))
    counts = np.diff(starts)
    rank = np.arange(topic.size, dtype=np.int64) - starts[topic] + 1
    score = (counts[topic] - rank + 1).astype(np.float64)
    _report_ties(topics, topic, position, line, column, log)
    return Run(name, topics, topic.astype(np.int64), item, score, rank, (), True)


def _report_duplicates(topics: tuple[str, ...], topic: IntArray, item: np.ndarray, line: IntArray,
                       column: IntArray, log: ProblemLog) -> None:
    dup, first = duplicate_rows(topic, item)
    shown = min(int(dup.size), log.room())
    log.count_omitted(int(dup.size) - shown)
    for d, f in zip(dup[:shown].tolist(), first[:shown].tolist()):
        log.add("duplicate-docno",
                f"item {item[d].decode('utf-8', 'replace')} appears twice in test case {topics[topic[d]]}"
                f" (first on line {line[f]})", line=int(line[d]), column=int(column[d]))


def _report_ties(topics: tuple[str, ...], topic: IntArray, position: IntArray, line: IntArray,
                 column: IntArray, log: ProblemLog) -> None:
    """One warning per item that shares its test case's position with the item before it (rows sorted)."""
    tied = np.flatnonzero((topic[1:] == topic[:-1]) & (position[1:] == position[:-1])) + 1
    shown = min(int(tied.size), log.room("warning"))
    log.count_omitted(int(tied.size) - shown, "warning")
    for i in tied[:shown].tolist():
        log.add("tied-position",
                f"position {int(position[i])} of test case {topics[topic[i]]} is also given on line {line[i - 1]};"
                " equal positions are ranked in file order", severity="warning", line=int(line[i]),
                column=int(column[i]))
