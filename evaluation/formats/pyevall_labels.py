"""Readers for PyEvALL's classification gold and predictions: JSON (a list of ``{"test_case", "id", "value"}``
objects, ``value`` a label) and PyEvALL's TSV/CSV wrappers (``test_case, id, value`` columns, optional header).

Mono-label only for now: a list value (multi-label) or a label -> probability object (soft labels) is refused,
saying so. PyEvALL's validation (``comparators/formats.py``), reported the evalserve way: an id twice in a test
case is an error (PyEvALL keeps the first and flags the line); an empty value (``""``, or in TSV/CSV ``nan``,
``none``, ``null``) is a warning and the item is left out (a gold item so left out takes its prediction with it);
an integer value is refused in JSON (PyEvALL reads it as a ranking position and scores no classification).
:func:`pairing_problems` reports, as warnings, what PyEvALL silently does with ids and test cases found on one
side only.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from evaluation.formats.pyevall_run import FIELDS, _JsonItems, _kind
from evaluation.formats.source import Blob, SourceLike, parse_source
from evaluation.measures.classification.cases import MonoLabels
from evaluation.problems import Parsed, Problem, ProblemLog

NULLS = {"", "nan", "none", "null"}
#: (test_case, id, label or None when empty, line, column) per item, in file order
Item = tuple[str, str, "str | None", int | None, int | None]


def parse_pyevall_labels(source: SourceLike, gold: bool = False) -> Parsed[MonoLabels]:
    """Read PyEvALL classification labels, JSON or TSV/CSV as PyEvALL tells them apart, collecting every problem."""
    return parse_source(source, lambda blob, log: _read(blob, log, gold))


def read_pyevall_labels(source: SourceLike, gold: bool = False) -> MonoLabels:
    """PyEvALL classification labels, or InputError listing their problems."""
    return parse_pyevall_labels(source, gold).unwrap()


def _read(blob: Blob, log: ProblemLog, gold: bool) -> MonoLabels | None:
    text = blob.data.decode("utf-8", "replace")
    if text.lstrip().startswith("["):
        items = _LabelItems(blob.data, log).items
    else:
        items = _delimited(text, log)
    if not items and not log.has_errors:
        log.add("no-items", "no labelled item at all")
    return None if log.has_errors else _labels(items, log, gold)


class _LabelItems(_JsonItems):
    """PyEvALL JSON items whose value is a label (a string)."""

    def __init__(self, data: bytes, log: ProblemLog) -> None:
        self.items: list[Item] = []
        super().__init__(data, log)

    def _item(self, value: Any, start: int, end: int) -> None:
        ok = self._fields_ok(value, start, end, lambda name: isinstance(name, str), "a string (PyEvALL's schema)")
        if ok is None:
            return
        label = value.get("value")
        at = self._key_at("value", start, end)
        if "value" in value and not _label_ok(label, lambda code, message: self._add(code, message, at)):
            ok = False
        if ok:
            line, column = self._where(at)
            self.items.append((value["test_case"], value["id"], label or None, line, column))


def _label_ok(label: Any, add: Any) -> bool:
    """Whether a JSON value is a label or empty; else says why not (through ``add(code, message)``)."""
    if label is None or isinstance(label, str):
        return True
    if isinstance(label, list):
        add("multi-label-not-supported", "a list of labels is multi-label classification: multi-label /"
            " soft labels not supported yet (mono-label only)")
    elif isinstance(label, dict):
        add("soft-labels-not-supported", "a label -> probability object is learning with disagreement:"
            " multi-label / soft labels not supported yet (mono-label only)")
    elif isinstance(label, int) and not isinstance(label, bool):
        add("label-not-string", f"value {label} is an integer, which PyEvALL reads as a ranking position:"
            " write a classification label as a string")
    else:
        add("label-not-string", f"value must be a label (a string), not {_kind(label)}")
    return False


def _delimited(text: str, log: ProblemLog) -> list[Item]:
    """PyEvALL's TSV (tab-separated: its first try) or CSV wrapper; a header line naming the fields is optional."""
    first = text.split("\n", 1)[0]
    delimiter = "\t" if len(first.split("\t")) >= 3 else ","
    what = "TSV" if delimiter == "\t" else "CSV"
    items: list[Item] = []
    lines = text.splitlines()
    rows = csv.reader(io.StringIO(text), delimiter=delimiter, quotechar='"')
    for number, row in enumerate(rows, 1):
        if number == 1 and [c.strip() for c in row] == list(FIELDS):
            continue
        if not row or (len(row) == 1 and not row[0].strip()):
            if number < len(lines):  # a blank line before the end; the last line's newline is not one
                log.add("blank-line", f"a blank line: PyEvALL reads it as an item with no test case and refuses the"
                        f" whole {what} file; skipped here", severity="warning", line=number)
            continue
        if len(row) != 3:
            log.add("wrong-column-count", f"PyEvALL {what} has 3 columns (test_case, id, value), not {len(row)}",
                    line=number)
            continue
        tc, item, value = row
        if value.startswith(("[", "{")) and value.endswith(("]", "}")):
            try:
                parsed = json.loads(value)
            except ValueError:
                parsed = value
            if not _label_ok(parsed, lambda code, message, n=number: log.add(code, message, line=n, column=3)):
                continue
        label = None if value.strip().lower() in NULLS else value
        if label is not None and _is_int(label):
            log.add("numeric-label", f"label {label!r} is read by PyEvALL as an integer (a ranking position), so"
                    " PyEvALL would score no classification here; evalserve takes it as a label",
                    severity="warning", line=number, column=3)
        items.append((tc, item, label, number, 2))
    return items


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def _labels(items: Iterable[Item], log: ProblemLog, gold: bool) -> MonoLabels | None:
    """Group items by test case (first appearance order), dropping empty values and reporting duplicates."""
    seen: dict[str, dict[str, str]] = {}
    dropped: set[tuple[str, str]] = set()
    for tc, item, label, line, column in items:
        case = seen.setdefault(tc, {})
        if label is None:
            log.add("empty-value", f"item {item!r} of test case {tc!r} has an empty value: it is not evaluated",
                    severity="warning", line=line, column=column)
            dropped.add((tc, item))
            continue
        if item in case:
            log.add("duplicate-id", f"item {item!r} appears twice in test case {tc!r}", line=line, column=column)
            continue
        case[item] = label
    if log.has_errors:
        return None
    return _as_labels(seen, dropped if gold else set())


def _as_labels(seen: Mapping[str, Mapping[str, str]], ignored: set[tuple[str, str]]) -> MonoLabels:
    return MonoLabels({tc: (np.array(list(c), dtype=str), np.array(list(c.values()), dtype=str))
                       for tc, c in seen.items()}, frozenset(ignored))


def labels_from_records(gold: Sequence[Mapping[str, Any]],
                        pred: Sequence[Mapping[str, Any]]) -> tuple[MonoLabels, MonoLabels]:
    """Gold and predictions from PyEvALL records already in memory (the first of a duplicated id kept, empty
    values dropped, and a prediction for a gold item with an empty value dropped too, as PyEvALL does)."""
    ignored: set[tuple[str, str]] = set()
    sides = []
    for records, is_gold in ((gold, True), (pred, False)):
        seen: dict[str, dict[str, str]] = {}
        for r in records:
            tc, item, value = str(r["test_case"]), str(r["id"]), r["value"]
            case = seen.setdefault(tc, {})
            if value in (None, ""):
                if is_gold:
                    ignored.add((tc, item))
                continue
            case.setdefault(item, value)
        sides.append(seen)
    return _as_labels(sides[0], ignored), _as_labels(sides[1], set())


def pairing_problems(gold: MonoLabels, pred: MonoLabels) -> list[Problem]:
    """Warnings for what PyEvALL does silently with ids or test cases on one side only."""
    found: list[Problem] = []
    for tc, (gold_ids, _) in gold.cases.items():
        if tc not in pred.cases:
            found.append(Problem("missing-test-case", f"the predictions have no test case {tc!r}: it is not"
                                 " evaluated (nor counted in the mean, as in PyEvALL)", "warning"))
            continue
        pred_ids = pred.cases[tc][0]
        missing = np.setdiff1d(gold_ids, pred_ids)
        extra = np.setdiff1d(pred_ids, gold_ids)
        if missing.size:
            found.append(Problem("missing-prediction", f"{missing.size} gold item(s) of test case {tc!r} have no"
                                 f" prediction (scored as wrong), e.g. {missing[0]!r}", "warning"))
        if extra.size:
            found.append(Problem("unknown-id", f"{extra.size} prediction(s) in test case {tc!r} are for ids the gold"
                                 f" lacks (counted as predictions by SystemPrecision and Precision, as in PyEvALL),"
                                 f" e.g. {extra[0]!r}", "warning"))
    for tc in pred.cases:
        if tc not in gold.cases:
            found.append(Problem("unknown-test-case", f"the gold has no test case {tc!r}: its predictions are"
                                 " ignored", "warning"))
    return found
