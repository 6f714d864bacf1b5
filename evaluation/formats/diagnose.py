"""Saying what a whole file looks like when its lines have the wrong number of fields: a comma-separated file, or
judgments given where a run was expected (or the reverse). One such problem replaces a hundred identical
"6 fields; this one has 1" lines (docs/formats.md, "Problems"). Only lines already found bad are looked at, and
only a sample of them, so a diagnosis costs nothing on good files and little on bad ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from evaluation.formats.lexer import Fields, IntArray
from evaluation.measures.names import is_number

_SAMPLE = 200  # bad lines looked at
_QUOTE = 60  # characters of a line quoted in a message


@dataclass(frozen=True)
class Layout:
    """A whitespace-separated layout a reader expects: what it is called, its fields, and the layout of the file
    users most often give in its place (the run for judgments, the judgments for a run)."""

    name: str  # "TREC run"
    fields: str  # "qid Q0 docno rank score tag"
    called: str  # what such a file is, in a sentence: "a run"

    @property
    def ncols(self) -> int:
        return len(self.fields.split())

    def __call__(self, fields: Fields, bad: IntArray) -> Diagnosis | None:
        """``diagnose`` for this layout: what ``lexer.select_rows`` calls as its ``explain``."""
        return diagnose(fields, bad, self)


#: The TREC run layout (``trec_run``) and the TREC qrels layout (``qrels``; NTCIR's three fields are accepted too).
TREC_RUN = Layout("TREC run", "qid Q0 docno rank score tag", "a run")
TREC_QRELS = Layout("TREC qrels", "qid iter docno rel", "judgments")


class Diagnosis(NamedTuple):
    """One problem said of the whole file, located at its first bad line, in place of one problem per line."""

    message: str
    line: int  # 1-based
    column: int


def diagnose(fields: Fields, bad: IntArray, layout: Layout) -> Diagnosis | None:
    """What the file whose lines ``bad`` (0-based physical lines) have the wrong field count looks like, if it is a
    comma-separated file or (when every content line is bad) a file of the other layout; None otherwise."""
    if bad.size == 0:
        return None
    sample = bad[:_SAMPLE]
    texts = [_line_text(fields, int(i)) for i in sample.tolist()]
    comma = _comma_separated(texts, sample, int(bad.size), layout)
    if comma is not None:
        return comma
    if bad.size == int(np.count_nonzero(fields.content_lines())):
        return _swapped(fields, sample, texts, layout)
    return None


def _comma_separated(texts: list[str], sample: IntArray, n_bad: int, layout: Layout) -> Diagnosis | None:
    """Most bad lines hold commas and the first splits at them into at least the expected fields but one."""
    with_commas = [t for t in texts if "," in t]
    if 2 * len(with_commas) < len(texts) or len(_split_commas(with_commas[0])) < layout.ncols - 1:
        return None
    first = texts.index(with_commas[0])
    line = int(sample[first]) + 1
    many = f"; {n_bad:,} lines have the wrong number of fields" if n_bad > 1 else ""
    return Diagnosis(
        f"this looks comma-separated (line {line}: {_quote(with_commas[0])}{many}); {layout.name} files are"
        f" whitespace-separated `{layout.fields}`",
        line,
        with_commas[0].index(",") + 1,
    )


def _swapped(fields: Fields, sample: IntArray, texts: list[str], layout: Layout) -> Diagnosis | None:
    """Every line has the other layout's shape: a run (``Q0`` second, a number fifth) where judgments were
    expected, or judgments (an integer grade last, four fields) where a run was expected."""
    split = [t.split() for t in texts]
    if layout is TREC_QRELS:
        looks = all(len(f) >= 6 and is_number(f[4]) for f in split)
        other = f"a TREC run (`{TREC_RUN.fields}`)"
    else:
        looks = all(len(f) in (3, 4) and _is_int(f[-1].lstrip("Ll")) for f in split)
        other = f"judgments (`{TREC_QRELS.fields}`)"
    if not looks:
        return None
    line = int(sample[0]) + 1
    return Diagnosis(
        f"this looks like {other}, not {layout.called} (line {line}: {_quote(texts[0])}): were the run and the"
        f" judgments swapped? {layout.name} lines are `{layout.fields}`",
        line,
        1,
    )


def _line_text(fields: Fields, i: int) -> str:
    """Physical line ``i`` (0-based) without its line end, decoded."""
    begin = int(fields.line_start[i])
    end = int(fields.line_start[i + 1]) if i + 1 < fields.line_start.size else int(fields.buf.size)
    return bytes(fields.buf[begin:end]).decode("utf-8", "replace").rstrip("\r\n")


def _split_commas(text: str) -> list[str]:
    return [piece for piece in text.split(",") if piece.strip()]


def _quote(text: str) -> str:
    return repr(text if len(text) <= _QUOTE else text[:_QUOTE] + "...")


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True
