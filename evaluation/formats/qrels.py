"""Reader for relevance judgments.

``qid intent docno grade`` (TREC/ndeval; ad hoc qrels use one intent, usually ``0``), or NTCIR's three-field
``qid docno L3`` (grades with or without the ``L`` prefix; one intent ``0``). The layout is chosen from the
first content line. Grades are integers; negative grades are kept (they mean "judged, not relevant" to the
measures and "in the pool, unjudged" to trec_eval's). Errors: wrong field count, non-integer grade, two
different grades for one (qid, intent, docno). Warning: the same judgment repeated.
"""

from __future__ import annotations

import numpy as np

from evaluation.formats.keys import intern_labels
from evaluation.formats.lexer import Rows, report_fields, select_rows, tokenize
from evaluation.formats.numbers import parse_ints
from evaluation.formats.source import Blob, SourceLike, load
from evaluation.model import Qrels
from evaluation.problems import InputError, Parsed, ProblemLog

_LETTER_L = (76, 108)  # 'L', 'l'


def parse_qrels(source: SourceLike) -> Parsed[Qrels]:
    """Read judgments, collecting every problem."""
    try:
        blob = load(source)
    except InputError as exc:
        return Parsed(None, tuple(exc.problems))
    log = ProblemLog(source=blob.name)
    qrels = _parse(blob, log)
    return Parsed.from_log(qrels, log)


def read_qrels(source: SourceLike) -> Qrels:
    """Read judgments or raise InputError listing their problems."""
    return parse_qrels(source).unwrap()


def _parse(blob: Blob, log: ProblemLog) -> Qrels:
    fields = tokenize(blob.data)
    content = np.flatnonzero(fields.counts > 0)
    ncols = 4
    if content.size and int(fields.counts[content[0]]) == 3:
        ncols = 3
    rows = select_rows(fields, ncols, log, "qrels")
    if len(rows) == 0 and not log.has_errors:
        log.add("empty-qrels", "the qrels have no judgments", severity="warning")
    if ncols == 4:
        topic_col, intent_col, doc_col, grade_col = 0, 1, 2, 3
    else:
        topic_col, intent_col, doc_col, grade_col = 0, -1, 1, 2
    grade = _grades(rows, grade_col, strip_l=ncols == 3, log=log)
    topics, topic = intern_labels(rows.text(topic_col))
    if intent_col >= 0:
        intents, intent = intern_labels(rows.text(intent_col))
    else:
        intents, intent = ("0",), np.zeros(len(rows), dtype=np.int64)
    docnos, doc = np.unique(rows.text(doc_col), return_inverse=True)
    doc = doc.astype(np.int64).ravel()
    order = np.lexsort((intent, doc, topic))
    topic, intent, doc, grade = topic[order], intent[order], doc[order], grade[order]
    same = (topic[1:] == topic[:-1]) & (doc[1:] == doc[:-1]) & (intent[1:] == intent[:-1])
    if same.any():
        keep = _check_repeats(rows, order, same, grade, doc_col, log)
        topic, intent, doc, grade = topic[keep], intent[keep], doc[keep], grade[keep]
    return Qrels(topics, intents, docnos, topic, intent, doc, grade, blob.name)


def _grades(rows: Rows, col: int, *, strip_l: bool, log: ProblemLog) -> np.ndarray:
    starts, ends = rows.column(col)
    if strip_l and starts.size:
        lead = rows.buf[starts]
        starts = starts + np.isin(lead, _LETTER_L)
    grade, bad = parse_ints(rows.buf, starts, ends)
    if bad.any():
        report_fields(log, rows, bad, col, "grade-not-integer", "grade {!r} is not an integer")
    return grade


def _check_repeats(
    rows: Rows, order: np.ndarray, same: np.ndarray, grade: np.ndarray, doc_col: int, log: ProblemLog
) -> np.ndarray:
    """Report repeated judgments (an error when grades differ) and return the rows to keep."""
    later = np.flatnonzero(same) + 1
    conflict = grade[later] != grade[later - 1]
    lines = rows.line[order]
    cols = rows.columns(doc_col)[order]
    for kind, picked in (("error", later[conflict]), ("warning", later[~conflict])):
        shown = picked[: log.room(kind)]  # type: ignore[arg-type]
        log.count_omitted(int(picked.size - shown.size), kind)  # type: ignore[arg-type]
        for i in shown.tolist():
            if kind == "error":
                log.add(
                    "conflicting-grade",
                    f"this document was already judged {grade[i - 1]} for the same topic and intent"
                    f" (line {lines[i - 1]}), here {grade[i]}",
                    line=int(lines[i]),
                    column=int(cols[i]),
                )
            else:
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
