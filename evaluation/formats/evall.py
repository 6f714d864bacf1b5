"""Reader for EvALL's diversity gold standard: tab-separated ``test case, id, relevance, aspect, aspect weight``.

Fields may be double-quoted (as EvALL exports them) or bare. The result is per-intent qrels (intent = aspect)
and intent weights (one weight per test case and aspect). Errors: wrong field count, non-integer relevance,
non-numeric or negative weight, and one aspect given two different weights within a test case.
"""

from __future__ import annotations

import numpy as np

from evaluation.formats.judgments import assemble_qrels
from evaluation.formats.keys import intern_labels
from evaluation.formats.lexer import Rows, report_fields, select_rows, tokenize
from evaluation.formats.numbers import parse_floats, parse_ints
from evaluation.formats.source import Blob, SourceLike, parse_source
from evaluation.model import IntentWeights, Qrels
from evaluation.problems import Parsed, ProblemLog

COLUMNS = 5
_QUOTE = 34


def parse_evall(source: SourceLike) -> Parsed[tuple[Qrels, IntentWeights]]:
    """Read an EvALL gold standard into per-intent qrels and intent weights, collecting every problem."""
    return parse_source(source, _read_gold)


def _read_gold(blob: Blob, log: ProblemLog) -> tuple[Qrels, IntentWeights] | None:
    rows = unquote(select_rows(tokenize(blob.data, tabs_only=True), COLUMNS, log, "EvALL gold"))
    grade, bad = parse_ints(rows.buf, *rows.column(2))
    if bad.any():
        report_fields(log, rows, bad, 2, "grade-not-integer", "relevance {!r} is not an integer")
    weight, bad_w = parse_floats(rows.buf, *rows.column(4))
    if bad_w.any():
        report_fields(log, rows, bad_w, 4, "weight-not-numeric", "aspect weight {!r} is not a number")
    negative = ~bad_w & ~(weight >= 0)
    if negative.any():
        report_fields(log, rows, negative, 4, "weight-negative", "aspect weight {!r} must be >= 0")
    topics, topic = intern_labels(rows.text(0))
    intents, intent = intern_labels(rows.text(3))
    weights = _weights(rows, topics, intents, topic, intent, weight, log)
    qrels = assemble_qrels(
        rows, topics, topic, intents, intent, rows.text(1), grade,
        doc_col=1, log=log, name=blob.name, scope="test case and aspect",
    )
    return (qrels, IntentWeights(weights, blob.name))


def read_evall(source: SourceLike) -> tuple[Qrels, IntentWeights]:
    """Read an EvALL gold standard or raise InputError listing its problems."""
    return parse_evall(source).unwrap()


def unquote(rows: Rows) -> Rows:
    """Drop one pair of surrounding double quotes from every field that has them."""
    starts, ends = rows.starts.copy(), rows.ends.copy()
    quoted = (ends - starts >= 2) & (rows.buf[starts] == _QUOTE) & (rows.buf[np.maximum(ends - 1, 0)] == _QUOTE)
    starts[quoted] += 1
    ends[quoted] -= 1
    return Rows(rows.buf, starts, ends, rows.line, rows.line_start)


def _weights(
    rows: Rows,
    topics: tuple[str, ...],
    intents: tuple[str, ...],
    topic: np.ndarray,
    intent: np.ndarray,
    weight: np.ndarray,
    log: ProblemLog,
) -> dict[str, dict[str, float]]:
    key = topic * max(1, len(intents)) + intent
    order = np.argsort(key, kind="stable")
    k, w = key[order], weight[order]
    heads = np.concatenate(([0], np.flatnonzero(k[1:] != k[:-1]) + 1)) if k.size else np.zeros(0, np.int64)
    differs = np.flatnonzero((k[1:] == k[:-1]) & (w[1:] != w[:-1]) & ~np.isnan(w[1:]) & ~np.isnan(w[:-1])) + 1
    log.count_omitted(max(0, int(differs.size) - log.room()))
    cols = rows.columns(4)
    for i in differs[: log.room()].tolist():
        log.add(
            "conflicting-weight",
            f"aspect {intents[intent[order[i]]]} of test case {topics[topic[order[i]]]} has two weights:"
            f" {float(w[i - 1])!r} and {float(w[i])!r}",
            line=int(rows.line[order[i]]),
            column=int(cols[order[i]]),
        )
    out: dict[str, dict[str, float]] = {}
    for h in heads.tolist():
        t, a = topics[int(topic[order[h]])], intents[int(intent[order[h]])]
        out.setdefault(t, {})[a] = float(w[h])
    return out
