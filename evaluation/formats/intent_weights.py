"""Reader for NTCIR intent-probability files: ``topic intent probability`` (whitespace separated).

Probabilities are non-negative numbers; they are used as given and renormalised over the intents that have
relevant documents when a measure needs it (spec 1.4). Errors: wrong field count, non-numeric or negative
probability, an intent listed twice for a topic.
"""

from __future__ import annotations

from evaluation.formats.lexer import decode, report_fields, select_rows, tokenize
from evaluation.formats.numbers import parse_floats
from evaluation.formats.source import SourceLike, load
from evaluation.model import IntentWeights
from evaluation.problems import InputError, Parsed, ProblemLog


def parse_intent_weights(source: SourceLike) -> Parsed[IntentWeights]:
    """Read intent probabilities, collecting every problem."""
    try:
        blob = load(source)
    except InputError as exc:
        return Parsed(None, tuple(exc.problems))
    log = ProblemLog(source=blob.name)
    rows = select_rows(tokenize(blob.data), 3, log, "intent-probability")
    prob, bad = parse_floats(rows.buf, *rows.column(2))
    if bad.any():
        report_fields(log, rows, bad, 2, "weight-not-numeric", "probability {!r} is not a number")
    negative = ~bad & ~(prob >= 0)
    if negative.any():
        report_fields(log, rows, negative, 2, "weight-negative", "probability {!r} must be >= 0")
    weights: dict[str, dict[str, float]] = {}
    seen: dict[tuple[str, str], int] = {}
    for line, column, topic, intent, p in zip(
        rows.line.tolist(), rows.columns(1).tolist(), decode(rows.text(0)), decode(rows.text(1)), prob.tolist()
    ):
        if (topic, intent) in seen:
            log.add(
                "duplicate-intent",
                f"intent {intent} of topic {topic} already has a probability (line {seen[topic, intent]})",
                line=line,
                column=column,
            )
            continue
        seen[topic, intent] = line
        weights.setdefault(topic, {})[intent] = p
    return Parsed.from_log(IntentWeights(weights, blob.name), log)


def read_intent_weights(source: SourceLike) -> IntentWeights:
    """Read intent probabilities or raise InputError listing their problems."""
    return parse_intent_weights(source).unwrap()


