"""Reader for EvALL's ranking system output: tab-separated ``test case, item id``, no header, plain or gzip.

The order of the lines within a test case is the ranking (EvALL's "ranking task" input format; docs/formats.md).
Fields may be double-quoted, as in EvALL's gold standards. Errors: a line without exactly two fields, an item
twice in one test case (EvALL only warns; a TREC run refuses it, and so do we), no item at all. Blank lines and
lines starting with ``#`` are skipped.
"""

from __future__ import annotations

import numpy as np

from evaluation.formats.evall import unquote
from evaluation.formats.lexer import select_rows, tokenize
from evaluation.formats.ranked_items import ranked_run
from evaluation.formats.source import Blob, SourceLike, display_name, parse_source
from evaluation.model import Run
from evaluation.problems import Parsed, ProblemLog

COLUMNS = 2


def parse_evall_run(source: SourceLike, name: str | None = None) -> Parsed[Run]:
    """Read an EvALL ranking output, collecting every problem; ``name`` defaults to the file name without .gz."""
    return parse_source(source, lambda blob, log: _read_evall_run(blob, log, name))


def _read_evall_run(blob: Blob, log: ProblemLog, name: str | None) -> Run | None:
    rows = unquote(select_rows(tokenize(blob.data, tabs_only=True), COLUMNS, log, "EvALL run"))
    order = np.arange(len(rows), dtype=np.int64)
    at = (rows.line, rows.columns(1))
    return ranked_run(name or display_name(blob.name), rows.text(0), rows.strings(1), order, at, at, log,
                     what="EvALL run")


def read_evall_run(source: SourceLike, name: str | None = None) -> Run:
    """Read an EvALL ranking output or raise InputError listing its problems."""
    return parse_evall_run(source, name).unwrap()
