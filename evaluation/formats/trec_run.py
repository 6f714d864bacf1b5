"""Reader for TREC run files: ``qid Q0 docno rank score tag``, whitespace separated, plain or gzip.

Errors (the run is rejected): wrong number of fields, a score that is not a number or is NaN, the same docno
twice within a topic. Warnings: a rank column that is not an integer (it matters only for ``ties=rank``),
more than one run tag. Lines starting with ``#`` and blank lines are skipped.
"""

from __future__ import annotations

import numpy as np

from evaluation.formats.keys import duplicate_rows, intern_labels
from evaluation.formats.lexer import Rows, decode, report_fields, select_rows, tokenize
from evaluation.formats.numbers import parse_floats, parse_ints
from evaluation.formats.source import Blob, SourceLike, display_name, load
from evaluation.model import Run
from evaluation.problems import InputError, Parsed, ProblemLog

COLUMNS = 6


def parse_run(source: SourceLike, name: str | None = None) -> Parsed[Run]:
    """Read a run, collecting every problem; ``name`` defaults to the file name without ``.gz``."""
    try:
        blob = load(source)
    except InputError as exc:
        return Parsed(None, tuple(exc.problems))
    run_name = name or (display_name(blob.name) if not blob.name.startswith("<") else blob.name)
    log = ProblemLog(source=blob.name)
    run = _parse(blob, run_name, log)
    return Parsed.from_log(run, log)


def read_run(source: SourceLike, name: str | None = None) -> Run:
    """Read a run or raise InputError listing its problems."""
    return parse_run(source, name).unwrap()


def _parse(blob: Blob, name: str, log: ProblemLog) -> Run:
    rows = select_rows(tokenize(blob.data), COLUMNS, log, "TREC run")
    if len(rows) == 0 and not log.has_errors:
        log.add("empty-run", "the run has no result lines", severity="warning")
    scores = _scores(rows, log)
    ranks, bad_rank = parse_ints(rows.buf, *rows.column(3))
    if bad_rank.any():
        report_fields(log, rows, bad_rank, 3, "rank-not-integer", "rank {!r} is not an integer", "warning")
    topics, topic = intern_labels(rows.text(0))
    docno = rows.text(2)
    dup, first = duplicate_rows(topic, docno)
    if dup.size:
        shown = min(dup.size, log.room())
        log.count_omitted(int(dup.size - shown))
        lines, cols = rows.line, rows.columns(2)
        for d, f in zip(dup[:shown].tolist(), first[:shown].tolist()):
            log.add(
                "duplicate-docno",
                f"document {docno[d].decode('utf-8', 'replace')} appears twice for topic {topics[topic[d]]}"
                f" (first on line {lines[f]})",
                line=int(lines[d]),
                column=int(cols[d]),
            )
    tags = _tags(rows)
    if len(tags) > 1:
        log.add(
            "multiple-tags",
            f"the run has {len(tags)} different tags ({', '.join(tags[:5])}); results are named by file",
            severity="warning",
        )
    return Run(name, topics, topic, docno, scores, ranks, tuple(tags), not bool(bad_rank.any()))


def _scores(rows: Rows, log: ProblemLog) -> np.ndarray:
    scores, bad = parse_floats(rows.buf, *rows.column(4))
    if bad.any():
        report_fields(log, rows, bad, 4, "score-not-numeric", "score {!r} is not a number")
    nan = np.isnan(scores) & ~bad
    if nan.any():
        report_fields(log, rows, nan, 4, "score-nan", "score {!r} is NaN; ranking would be undefined")
    return scores


def _tags(rows: Rows) -> list[str]:
    if len(rows) == 0:
        return []
    tag = rows.text(5)
    if (tag == tag[0]).all():
        return decode(tag[:1])
    return decode(np.unique(tag))
