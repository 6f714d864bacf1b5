"""User preference labels over run pairs (spec 8.7): ``topic left_run right_run label [user]`` per line, label one
of ``>`` (left better), ``<``, ``=`` (or left, right, equal, L, R, E). Split by the shared lexer, so problems
carry exact line and column; files are small, so the labels themselves are checked line by line."""

from __future__ import annotations

from evaluation.formats.lexer import tokenize
from evaluation.formats.source import SourceLike, load
from evaluation.problems import InputError, Parsed, ProblemLog

LABELS = {">": ">", "<": "<", "=": "=", "l": ">", "r": "<", "e": "=", "left": ">", "right": "<", "equal": "="}


def parse_preferences(source: SourceLike) -> Parsed[list[dict[str, str]]]:
    """Every label as ``{topic, left, right, label, user}`` (user ``user`` when the column is absent)."""
    try:
        blob = load(source)
    except InputError as exc:
        return Parsed(None, tuple(exc.problems))
    log = ProblemLog(source=blob.name)
    fields = tokenize(blob.data)
    rows: list[dict[str, str]] = []
    content = fields.content_lines().tolist()
    for line, (count, first) in enumerate(zip(fields.counts.tolist(), fields.first.tolist()), start=1):
        if not content[line - 1]:
            continue
        base = int(fields.line_start[line - 1])
        column = [int(fields.starts[first + j]) - base + 1 for j in range(count)]
        text = [bytes(blob.data[fields.starts[first + j]:fields.ends[first + j]]).decode("utf-8", "replace")
                for j in range(count)]
        if count not in (4, 5):
            log.add("preference-fields", f"expected 'topic left_run right_run label [user]', found {count} fields",
                    line=line, column=1)
            continue
        label = LABELS.get(text[3].lower())
        if label is None:
            log.add("preference-label", f"label {text[3]!r} is not one of >, <, = (or left, right, equal)",
                    line=line, column=column[3])
            continue
        if text[1] == text[2]:
            log.add("preference-same-run", f"run {text[1]} is compared with itself", line=line, column=column[2])
            continue
        rows.append({"topic": text[0], "left": text[1], "right": text[2], "label": label,
                     "user": text[4] if count == 5 else "user"})
    if not rows and not log.has_errors:
        log.add("empty-preferences", "the file has no preference labels")
    return Parsed.from_log(rows, log)
