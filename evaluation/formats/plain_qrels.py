"""TREC qrels in the usual layout, read chunk by chunk: the fast path of ``qrels.parse_qrels``.

Usual layout: ``qid intent docno grade`` on every line, single spaces or tabs between fields, no comments or
blank lines, integer grades, no judgment repeated, fields of ordinary length. Such a file
(nearly every qrels file) is read in spans of whole lines, so every intermediate array stays small and is reused,
instead of being split into fields all at once. Anything else returns None and the general reader reads and
reports it; the result is the same ``Qrels`` either way (tests/evaluation/formats/test_plain_qrels.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation.formats.judgments import row_order
from evaluation.formats.keys import intern_runs, label_runs, unique_word_rows
from evaluation.formats.lexer import PADDED_FACTOR, PADDED_MIN, field_starts, gather_words, simple_rows
from evaluation.formats.numbers import parse_ints
from evaluation.model import Qrels

COLUMNS = 4  # qid intent docno grade
_CHUNK = 1 << 20  # bytes of text per span (cut at the next newline)
_LABEL_MAX = 16  # longest topic or intent label read here (two words)
_DOCNO_MAX = 256


@dataclass(frozen=True)
class _Span:
    """One span's lines: topic and intent as runs of equal labels (their words and lengths), docno words, grades."""

    topic_heads: np.ndarray
    topic_runs: np.ndarray
    intent_heads: np.ndarray
    intent_runs: np.ndarray
    docno: np.ndarray
    grade: np.ndarray


def read_plain_qrels(data: bytes, name: str) -> Qrels | None:
    """The judgments of a problem-free file in the usual layout; None for any other file."""
    buf = np.frombuffer(data, dtype=np.uint8)
    spans: list[_Span] = []
    begin = 0
    while begin < buf.size:
        cut = data.find(b"\n", begin + _CHUNK)
        end = buf.size if cut < 0 else cut + 1
        span = _read_span(buf, begin, end)
        if span is None:
            return None
        spans.append(span)
        begin = end
    if not spans:
        return None
    width = max(s.docno.shape[1] for s in spans)
    words = np.zeros((sum(s.docno.shape[0] for s in spans), width), dtype=np.uint64)
    at = 0
    for s in spans:
        words[at : at + s.docno.shape[0], : s.docno.shape[1]] = s.docno
        at += s.docno.shape[0]
    n = words.shape[0]
    longest = _longest(words)
    if n * 8 * width > max(PADDED_MIN, PADDED_FACTOR * buf.size):
        return None  # the general reader refuses it (field-too-long)
    topics, topic = intern_runs(np.concatenate([s.topic_heads for s in spans]),
                                np.concatenate([s.topic_runs for s in spans]))
    intents, intent = intern_runs(np.concatenate([s.intent_heads for s in spans]),
                                  np.concatenate([s.intent_runs for s in spans]))
    grade = np.concatenate([s.grade for s in spans])
    first, doc = unique_word_rows(words)
    docnos = np.take(words, first, axis=0).view(f"S{8 * width}").ravel().astype(f"S{longest}")
    order = row_order(topic, doc, intent, len(topics), docnos.size, len(intents))
    if order is not None:
        topic, intent, doc, grade = topic[order], intent[order], doc[order], grade[order]
    if bool(((topic[1:] == topic[:-1]) & (doc[1:] == doc[:-1]) & (intent[1:] == intent[:-1])).any()):
        return None  # a judgment repeated: the general reader reports it
    return Qrels(topics, intents, docnos, topic, intent, doc, grade, name)


def _read_span(buf: np.ndarray, begin: int, end: int) -> _Span | None:
    """One span of whole lines in the usual layout; None when anything is unusual."""
    ends = simple_rows(buf, begin, end, COLUMNS)
    if ends is None:
        return None
    starts = [field_starts(ends, j, begin) for j in range(COLUMNS)]
    lengths = [ends[:, j] - starts[j] for j in range(3)]
    if int(lengths[0].max()) > _LABEL_MAX or int(lengths[1].max()) > _LABEL_MAX:
        return None
    longest_docno = int(lengths[2].max())
    if longest_docno > _DOCNO_MAX:
        return None
    grade, bad = parse_ints(buf, starts[3], ends[:, 3])
    if bad.any():
        return None
    topic_heads, topic_runs = label_runs(gather_words(buf, starts[0], lengths[0], 2))
    intent_heads, intent_runs = label_runs(gather_words(buf, starts[1], lengths[1], 2))
    docno = gather_words(buf, starts[2], lengths[2], -(-longest_docno // 8))
    return _Span(topic_heads, topic_runs, intent_heads, intent_runs, docno, grade)


def _longest(words: np.ndarray) -> int:
    """The length in bytes of the longest string held as zero-padded little-endian words."""
    last = words[:, -1]
    top = int(np.bitwise_or.reduce(last))  # any byte used in the last word by some string
    used = (top.bit_length() + 7) // 8
    return max(8 * int(words.shape[1] - 1) + used, 1)
