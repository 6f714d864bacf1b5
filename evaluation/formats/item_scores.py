"""Reader for item true scores (spec 1.1, 2.9): ``instance item score`` per line, whitespace separated.

An *instance* is one evaluation instance (a topic, or a query/time slice) and is matched with the run's topic
labels; an *item* is matched with the run's docnos. The file lists every candidate item of an instance (not
only those a run retrieves): nDCG_phi fits its relevance function on all of them. Scores are finite numbers
>= 0, read exactly as C ``strtod`` reads them. Blank lines and lines starting with ``#`` are skipped.

Problems: a line without 3 fields, a score that is not a number, not finite or negative (errors); an item
listed twice for an instance with a different score (error) or with the same score (warning, kept once); a
file without scores (warning).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from evaluation.formats.keys import intern_words, unique_strings
from evaluation.formats.lexer import Rows, report_fields, select_rows, tokenize
from evaluation.formats.numbers import parse_floats
from evaluation.formats.source import SourceLike, load
from evaluation.model import FloatArray, IntArray
from evaluation.problems import InputError, Parsed, ProblemLog, Severity

COLUMNS = 3


@dataclass(frozen=True, eq=False)
class ItemScores:
    """True scores per (instance, item): instances sorted byte-wise, each instance's items sorted byte-wise.

    Instance ``i`` owns ``items[offsets[i]:offsets[i + 1]]`` and the aligned ``scores``.
    """

    instances: tuple[str, ...]
    offsets: IntArray
    items: np.ndarray  # S dtype
    scores: FloatArray
    name: str = "<item-scores>"

    def __len__(self) -> int:
        return int(self.scores.size)

    @cached_property
    def instance_index(self) -> dict[str, int]:
        return {label: i for i, label in enumerate(self.instances)}

    def of(self, instance: str) -> tuple[np.ndarray, FloatArray]:
        """The items of an instance (sorted byte-wise) and their scores; empty arrays for an unknown instance."""
        i = self.instance_index.get(instance)
        if i is None:
            return self.items[:0], self.scores[:0]
        lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
        return self.items[lo:hi], self.scores[lo:hi]

    def lookup(self, instance: str, items: np.ndarray) -> FloatArray:
        """The score of each of ``items`` (an ``S`` array) in ``instance``; NaN for an item without a score."""
        known, scores = self.of(instance)
        out = np.full(items.size, np.nan, dtype=np.float64)
        if known.size == 0 or items.size == 0:
            return out
        at = np.searchsorted(known, items)
        safe = np.minimum(at, known.size - 1)
        found = (at < known.size) & (known[safe] == items)
        out[found] = scores[safe[found]]
        return out


def parse_item_scores(source: SourceLike) -> Parsed[ItemScores]:
    """Read item scores, collecting every problem."""
    try:
        blob = load(source)
    except InputError as exc:
        return Parsed(None, tuple(exc.problems))
    log = ProblemLog(source=blob.name)
    rows = select_rows(tokenize(blob.data), COLUMNS, log, "item score")
    if len(rows) == 0 and not log.has_errors:
        log.add("empty-item-scores", "the file has no item scores", severity="warning")
    score, bad = parse_floats(rows.buf, *rows.column(2))
    if bad.any():
        report_fields(log, rows, bad, 2, "item-score-not-numeric", "score {!r} is not a number")
    infinite = ~bad & ~np.isfinite(score)
    if infinite.any():
        report_fields(log, rows, infinite, 2, "item-score-not-finite", "score {!r} is not a finite number")
    negative = np.isfinite(score) & (score < 0)
    if negative.any():
        report_fields(log, rows, negative, 2, "item-score-negative", "score {!r} is negative; scores must be >= 0")
    valid = np.flatnonzero(np.isfinite(score) & (score >= 0))
    if valid.size < len(rows):
        rows, score = rows.take(valid), score[valid]
    instances, instance = intern_words(rows.words(0))
    vocabulary, item = unique_strings(rows.strings(1))
    key = instance * np.int64(max(vocabulary.size, 1)) + item
    order = np.argsort(key, kind="stable")
    key, score = key[order], score[order]
    keep = _check_repeats(rows, order, key, score, log)
    key, score = key[keep], score[keep]
    owner = key // np.int64(max(vocabulary.size, 1))
    offsets = np.searchsorted(owner, np.arange(len(instances) + 1)).astype(np.int64)
    items = vocabulary[key - owner * np.int64(max(vocabulary.size, 1))]
    return Parsed.from_log(ItemScores(instances, offsets, items, score, blob.name), log)


def read_item_scores(source: SourceLike) -> ItemScores:
    """Read item scores or raise InputError listing their problems."""
    return parse_item_scores(source).unwrap()


def _check_repeats(rows: Rows, order: IntArray, key: IntArray, score: FloatArray, log: ProblemLog) -> np.ndarray:
    """Report an item listed again for its instance (error if the score differs) and return the rows to keep.

    ``key`` and ``score`` are sorted stably by (instance, item), so every repeat follows the line it repeats;
    each repeat is compared with the first line of its item."""
    keep = np.ones(key.size, dtype=bool)
    later = np.flatnonzero(key[1:] == key[:-1]) + 1
    if later.size == 0:
        return keep
    starts_run = np.ones(key.size, dtype=bool)
    starts_run[1:] = key[1:] != key[:-1]
    first = np.maximum.accumulate(np.where(starts_run, np.arange(key.size), 0))  # first row of each item
    conflict = score[later] != score[first[later]]
    lines = rows.line[order]
    cols = rows.columns(1)[order]
    for i in _listed(log, later[conflict], "error"):
        log.add(
            "conflicting-item-score",
            f"item {_field(rows, order, i, 1)} of instance {_field(rows, order, i, 0)} already has score"
            f" {float(score[first[i]])!r} (line {lines[first[i]]}), here {float(score[i])!r}",
            line=int(lines[i]),
            column=int(cols[i]),
        )
    for i in _listed(log, later[~conflict], "warning"):
        log.add(
            "duplicate-item-score",
            f"item {_field(rows, order, i, 1)} of instance {_field(rows, order, i, 0)} already has this score"
            f" (line {lines[first[i]]})",
            severity="warning",
            line=int(lines[i]),
            column=int(cols[i]),
        )
    keep[later] = False
    return keep


def _field(rows: Rows, order: IntArray, i: int, col: int) -> str:
    raw: bytes = rows.take(order[i : i + 1]).text(col)[0]
    return raw.decode("utf-8", "replace")


def _listed(log: ProblemLog, picked: IntArray, severity: Severity) -> list[int]:
    """The indices that still fit in the log; the rest are counted as omitted."""
    room = log.room(severity)
    log.count_omitted(max(0, int(picked.size) - room), severity)
    return [int(i) for i in picked[:room].tolist()]
