"""User preference labels over run pairs (spec 8.7): ``topic left_run right_run label [user]`` per line, label one
of ``>`` (left better), ``<``, ``=`` (or left, right, equal, L, R, E). Small files: read line by line."""

from __future__ import annotations

from evaluation.formats.source import SourceLike, load
from evaluation.problems import Parsed, ProblemLog

LABELS = {">": ">", "<": "<", "=": "=", "l": ">", "r": "<", "e": "=", "left": ">", "right": "<", "equal": "="}


def parse_preferences(source: SourceLike) -> Parsed[list[dict[str, str]]]:
    """Every label as ``{topic, left, right, label, user}`` (user ``user`` when the column is absent)."""
    blob = load(source)
    log = ProblemLog(source=blob.name)
    rows: list[dict[str, str]] = []
    for number, raw in enumerate(blob.data.decode("utf-8", errors="replace").splitlines(), start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        fields = text.split()
        if len(fields) not in (4, 5):
            log.add("preference-fields", f"expected 'topic left_run right_run label [user]', found {len(fields)}"
                    " fields", line=number, column=1)
            continue
        label = LABELS.get(fields[3].lower())
        if label is None:
            log.add("preference-label", f"label {fields[3]!r} is not one of >, <, = (or left, right, equal)",
                    line=number, column=raw.find(fields[3]) + 1)
            continue
        if fields[1] == fields[2]:
            log.add("preference-same-run", f"run {fields[1]} is compared with itself", line=number,
                    column=raw.find(fields[2], raw.find(fields[1]) + len(fields[1])) + 1)
            continue
        rows.append({"topic": fields[0], "left": fields[1], "right": fields[2], "label": label,
                     "user": fields[4] if len(fields) == 5 else "user"})
    if not rows and not log.has_errors:
        log.add("empty-preferences", "the file has no preference labels")
    return Parsed.from_log(rows, log)
