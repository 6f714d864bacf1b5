"""Assembling judgments into the canonical Qrels: interning, sorting, and checking repeated judgments.

Shared by every judgment reader (TREC/NTCIR qrels, EvALL gold) so repeats are reported the same way.
"""

from __future__ import annotations

import numpy as np

from evaluation.formats.keys import unique_strings
from evaluation.formats.lexer import Rows
from evaluation.model import IntArray, Qrels
from evaluation.problems import ProblemLog, Severity


def assemble_qrels(
    rows: Rows,
    topics: tuple[str, ...],
    topic: IntArray,
    intents: tuple[str, ...],
    intent: IntArray,
    docno: np.ndarray,
    grade: IntArray,
    *,
    doc_col: int,
    log: ProblemLog,
    name: str,
    scope: str = "topic and intent",
) -> Qrels:
    """Build Qrels from per-row fields; repeated (topic, intent, docno) rows are errors when their grades
    differ and warnings otherwise (kept once). ``scope`` names the key in messages."""
    if len(rows) == 0 and not log.has_errors:
        log.add("empty-qrels", "the judgments file has no judgments")
    docnos, doc = unique_strings(docno)
    doc = doc.astype(np.int64).ravel()
    order = row_order(topic, doc, intent, len(topics), docnos.size, len(intents))
    if order is not None:
        topic, intent, doc, grade = topic[order], intent[order], doc[order], grade[order]
    same = (topic[1:] == topic[:-1]) & (doc[1:] == doc[:-1]) & (intent[1:] == intent[:-1])
    if same.any():
        if order is None:
            order = np.arange(grade.size, dtype=np.int64)
        keep = _check_repeats(rows, order, same, grade, doc_col, log, scope)
        topic, intent, doc, grade = topic[keep], intent[keep], doc[keep], grade[keep]
    return Qrels(topics, intents, docnos, topic, intent, doc, grade, name)


def row_order(
    topic: IntArray, doc: IntArray, intent: IntArray, n_topics: int, n_docs: int, n_intents: int
) -> IntArray | None:
    """The stable order of the rows by (topic, doc, intent), or None when they already are in that order (files
    are usually written sorted). A packed key is sorted when it fits in 63 bits, a lexsort otherwise."""
    span = max(n_topics, 1) * max(n_docs, 1) * max(n_intents, 1)
    if span >= 1 << 62:
        order: IntArray = np.lexsort((intent, doc, topic))
        return order
    key = (topic * np.int64(max(n_docs, 1)) + doc) * np.int64(max(n_intents, 1)) + intent
    if key.size < 2 or bool((key[1:] >= key[:-1]).all()):
        return None
    position_bits = int(key.size - 1).bit_length()
    if (span - 1).bit_length() + position_bits > 63:
        return np.argsort(key, kind="stable").astype(np.int64)
    key <<= position_bits  # key and position in one word: one plain sort is the stable order
    key |= np.arange(key.size, dtype=np.int64)
    key.sort()
    key &= (1 << position_bits) - 1
    return key


def _check_repeats(
    rows: Rows,
    order: IntArray,
    same: np.ndarray,
    grade: IntArray,
    doc_col: int,
    log: ProblemLog,
    scope: str,
) -> np.ndarray:
    """Report repeated judgments (an error when grades differ) and return the rows to keep."""
    later = np.flatnonzero(same) + 1
    conflict = grade[later] != grade[later - 1]
    lines = rows.line[order]
    cols = rows.columns(doc_col)[order]
    for i in _listed(log, later[conflict], "error"):
        log.add(
            "conflicting-grade",
            f"this document was already judged {grade[i - 1]} for the same {scope}"
            f" (line {lines[i - 1]}), here {grade[i]}",
            line=int(lines[i]),
            column=int(cols[i]),
        )
    for i in _listed(log, later[~conflict], "warning"):
        log.add(
            "duplicate-judgment",
            f"the same judgment already appears on line {lines[i - 1]}",
            severity="warning",
            line=int(lines[i]),
            column=int(cols[i]),
        )
    keep = np.ones(grade.size, dtype=bool)
    keep[later] = False
    return keep


def _listed(log: ProblemLog, picked: IntArray, severity: Severity) -> list[int]:
    """The indices that still fit in the log; the rest are counted as omitted."""
    room = log.room(severity)
    log.count_omitted(max(0, int(picked.size) - room), severity)
    return [int(i) for i in picked[:room].tolist()]
