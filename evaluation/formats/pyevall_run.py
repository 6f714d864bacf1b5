"""Readers for PyEvALL's ranking predictions: JSON (a list of ``{"test_case", "id", "value"}`` objects) or TSV
(``test_case, id, value`` columns, an optional header line naming them), plain or gzip.

In PyEvALL's ranking context ``value`` is the item's position in its test case's ranking (1 first), and PyEvALL
orders a test case's predictions by it (docs/formats.md cites the source): so do we, equal positions kept in file
order with a ``tied-position`` warning. ``value`` must be an integer, as PyEvALL's JSON schema requires; ``id``
may be a string or an integer (PyEvALL's documentation allows both) and so may ``test_case``. Errors: malformed
JSON, an item that is not an object, a missing or unknown field, a value that is not an integer (a
classification output), an item twice in one test case, no item at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from evaluation.formats.evall import unquote
from evaluation.formats.lexer import report_fields, select_rows, tokenize
from evaluation.formats.numbers import parse_ints
from evaluation.formats.ranked_items import ranked_run
from evaluation.formats.source import Blob, SourceLike, display_name, parse_source
from evaluation.model import Run
from evaluation.problems import Parsed, ProblemLog

FIELDS = ("test_case", "id", "value")
_HEADER = tuple(f.encode() for f in FIELDS)
_BLANK = re.compile(r"\s*")


def parse_pyevall_tsv(source: SourceLike, name: str | None = None) -> Parsed[Run]:
    """Read PyEvALL ranking predictions as TSV, collecting every problem."""
    return parse_source(source, lambda blob, log: _read_tsv(blob, log, name))


def _read_tsv(blob: Blob, log: ProblemLog, name: str | None) -> Run | None:
    rows = unquote(select_rows(tokenize(blob.data, tabs_only=True), len(FIELDS), log, "PyEvALL TSV"))
    if len(rows) and tuple(rows.take(np.zeros(1, dtype=np.int64)).text(j)[0] for j in range(3)) == _HEADER:
        rows = rows.take(np.arange(1, len(rows)))
    position, bad = parse_ints(rows.buf, *rows.column(2))
    if bad.any():
        report_fields(log, rows, bad, 2, "position-not-integer",
                      "value {!r} is not an integer position: only ranking predictions can be evaluated")
        rows, position = rows.take(~bad), position[~bad]  # not ranked, so not reported as a tie or duplicate
    return ranked_run(_name(blob, name), rows.text(0), rows.strings(1), position, (rows.line, rows.columns(1)),
                     (rows.line, rows.columns(2)), log, what="PyEvALL TSV")


def parse_pyevall_json(source: SourceLike, name: str | None = None) -> Parsed[Run]:
    """Read PyEvALL ranking predictions as JSON, collecting every problem (a syntax error stops the reading)."""
    return parse_source(source, lambda blob, log: _read_json(blob, log, name))


def _read_json(blob: Blob, log: ProblemLog, name: str | None) -> Run | None:
    items = _JsonItems(blob.data, log)
    return ranked_run(_name(blob, name), np.array(items.test_case, dtype=bytes), _padded(items.item),
                     _ints(items.position), (_ints(items.id_line), _ints(items.id_column)),
                     (_ints(items.value_line), _ints(items.value_column)), log, what="PyEvALL JSON")


def read_pyevall_json(source: SourceLike, name: str | None = None) -> Run:
    """Read PyEvALL JSON predictions or raise InputError listing their problems."""
    return parse_pyevall_json(source, name).unwrap()


def read_pyevall_tsv(source: SourceLike, name: str | None = None) -> Run:
    """Read PyEvALL TSV predictions or raise InputError listing their problems."""
    return parse_pyevall_tsv(source, name).unwrap()


def _name(blob: Blob, name: str | None) -> str:
    return name or display_name(blob.name)


def _ints(values: list[int]) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def _padded(values: list[bytes]) -> np.ndarray:
    """Item ids as an ``S`` array padded to a multiple of 8 bytes, as the text readers give them."""
    width = max((len(v) for v in values), default=1)
    return np.array(values, dtype=f"S{8 * max(1, -(-width // 8))}")


class _JsonItems:
    """The items of a PyEvALL JSON document, read one object at a time so that each keeps its line and column."""

    def __init__(self, data: bytes, log: ProblemLog) -> None:
        self.text, self.log = data.decode("utf-8", "replace"), log
        self.test_case: list[bytes] = []
        self.item: list[bytes] = []
        self.position: list[int] = []
        self.id_line: list[int] = []
        self.id_column: list[int] = []
        self.value_line: list[int] = []
        self.value_column: list[int] = []
        if data.isascii():  # character offsets are byte offsets
            self._newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
        else:
            self._newlines = np.array([m.start() for m in re.finditer("\n", self.text)], dtype=np.int64)
        self._read()

    def _where(self, at: int) -> tuple[int, int]:
        """1-based (line, column) of character offset ``at``."""
        line = int(np.searchsorted(self._newlines, at))
        start = int(self._newlines[line - 1]) + 1 if line else 0
        return line + 1, at - start + 1

    def _add(self, code: str, message: str, at: int) -> None:
        line, column = self._where(at)
        self.log.add(code, message, line=line, column=column)

    def _read(self) -> None:
        decoder = json.JSONDecoder()
        at = _BLANK.match(self.text).end()  # type: ignore[union-attr]
        if not self.text.startswith("[", at):
            self._add("not-a-list", "PyEvALL predictions are a JSON list of {test_case, id, value} objects", at)
            return
        at = _BLANK.match(self.text, at + 1).end()  # type: ignore[union-attr]
        if self.text.startswith("]", at):
            self._rest(at + 1)
            return
        while True:
            try:
                value, end = decoder.raw_decode(self.text, at)
            except json.JSONDecodeError as exc:
                self.log.add("json-syntax", f"not valid JSON: {exc.msg}", line=exc.lineno, column=exc.colno)
                return
            self._item(value, at, end)
            at = _BLANK.match(self.text, end).end()  # type: ignore[union-attr]
            if self.text.startswith(",", at):
                at = _BLANK.match(self.text, at + 1).end()  # type: ignore[union-attr]
            elif self.text.startswith("]", at):
                self._rest(at + 1)
                return
            else:
                self._add("json-syntax", "not valid JSON: expected ',' or ']' after an item", at)
                return

    def _rest(self, at: int) -> None:
        """Only blanks may follow the list."""
        at = _BLANK.match(self.text, at).end()  # type: ignore[union-attr]
        if at < len(self.text):
            self._add("json-syntax", "not valid JSON: text after the end of the list", at)

    def _fields_ok(self, value: Any, start: int, end: int, name_ok: Callable[[Any], bool], names: str) -> bool | None:
        """Check an item's fields (every problem reported): None when it is not an object, else whether it has
        exactly test_case, id and value, with a test_case and an id that ``name_ok`` accepts (``names``: what
        they must be, for the message)."""
        if not isinstance(value, dict):
            self._add("item-not-object", f"each item is a {{test_case, id, value}} object, not {_kind(value)}", start)
            return None
        ok = True
        for key in value:
            if key not in FIELDS:
                self._add("unknown-field", f"unknown field {key!r}: an item has only test_case, id and value",
                          self._key_at(key, start, end))
                ok = False
        for key in FIELDS:
            if key not in value:
                self._add("missing-field", f"the item has no {key!r} field", start)
                ok = False
        for key in ("test_case", "id"):
            if key in value and not name_ok(value[key]):
                self._add("field-not-string", f"{key} must be {names}, not {_kind(value[key])}",
                          self._key_at(key, start, end))
                ok = False
        return ok

    def _item(self, value: Any, start: int, end: int) -> None:
        ok = self._fields_ok(value, start, end, _label, "a string or an integer")
        if ok is None:
            return
        position = value.get("value")
        if "value" in value and _position(position) is None:
            self._add("position-not-integer", f"value {json.dumps(position)[:120]} is not an integer position:"
                      " only ranking predictions can be evaluated", self._key_at("value", start, end))
            ok = False
        if ok:
            self.test_case.append(str(value["test_case"]).encode())
            self.item.append(str(value["id"]).encode())
            self.position.append(_position(position))  # type: ignore[arg-type]
            for key, lines, columns in (("id", self.id_line, self.id_column),
                                        ("value", self.value_line, self.value_column)):
                line, column = self._where(self._key_at(key, start, end))
                lines.append(line)
                columns.append(column)

    def _key_at(self, key: str, start: int, end: int) -> int:
        """Where ``"key":`` is written within the item (the item's start when it cannot be found)."""
        found = re.compile(re.escape(json.dumps(key)) + r"\s*:").search(self.text, start, end)
        return found.start() if found else start


def _label(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _position(value: Any) -> int | None:
    """An integer position (``2`` or ``2.0``), else None (booleans, strings, fractions, lists ...)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")
