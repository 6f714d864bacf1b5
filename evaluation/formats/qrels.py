"""Reader for relevance judgments.

``qid intent docno grade`` (TREC/ndeval; ad hoc qrels use one intent, usually ``0``), or NTCIR's three-field
``qid docno L3`` (grades with or without the ``L`` prefix; one intent ``0``). The layout is chosen from the
first content line. Grades are integers; negative grades are kept (they mean "judged, not relevant" to the
measures and "in the pool, unjudged" to trec_eval's). Errors: wrong field count, non-integer grade, two
different grades for one (qid, intent, docno). Warning: the same judgment repeated.
"""

from __future__ import annotations

import numpy as np

from evaluation.formats.diagnose import TREC_QRELS
from evaluation.formats.judgments import assemble_qrels
from evaluation.formats.keys import intern_labels
from evaluation.formats.lexer import Rows, report_fields, select_rows, tokenize
from evaluation.formats.numbers import parse_ints
from evaluation.formats.plain_qrels import read_plain_qrels
from evaluation.formats.source import Blob, SourceLike, parse_source
from evaluation.model import Qrels
from evaluation.problems import Parsed, ProblemLog

_LETTER_L = (76, 108)  # 'L', 'l'


def parse_qrels(source: SourceLike) -> Parsed[Qrels]:
    """Read judgments, collecting every problem."""
    return parse_source(source, _parse)


def read_qrels(source: SourceLike) -> Qrels:
    """Read judgments or raise InputError listing their problems."""
    return parse_qrels(source).unwrap()


def _parse(blob: Blob, log: ProblemLog) -> Qrels:
    plain = read_plain_qrels(blob.data, blob.name)  # the usual layout, read in small pieces
    if plain is not None:
        return plain
    fields = tokenize(blob.data)
    content = np.flatnonzero(fields.content_lines())  # comments do not decide the layout
    ncols = 3 if content.size and int(fields.counts[content[0]]) == 3 else 4
    rows = select_rows(fields, ncols, log, "qrels", explain=TREC_QRELS)
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
    return assemble_qrels(
        rows, topics, topic, intents, intent, rows.text(doc_col), grade, doc_col=doc_col, log=log, name=blob.name
    )


def _grades(rows: Rows, col: int, *, strip_l: bool, log: ProblemLog) -> np.ndarray:
    starts, ends = rows.column(col)
    if strip_l and starts.size:
        lead = rows.buf[starts]
        starts = starts + np.isin(lead, _LETTER_L)
    grade, bad = parse_ints(rows.buf, starts, ends)
    if bad.any():
        report_fields(log, rows, bad, col, "grade-not-integer", "grade {!r} is not an integer")
    return grade
