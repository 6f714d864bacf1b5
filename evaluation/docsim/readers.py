"""Readers for the two document side inputs, following ``evaluation.formats`` conventions (gzip detected by
content, every problem ``{line, column, code, message, severity}``, all problems collected in one pass).

**Fingerprints** (``--fingerprints FILE``): one document per line, ``docno<whitespace>fingerprint``.
The fingerprint is hexadecimal (``3f``, ``0x3f``, any number of digits, leading zeros optional) or binary with a
``0b`` prefix (``0b00111111``); a value starting with ``0b`` is binary when all its other digits are 0 or 1, and
hexadecimal otherwise (``0b3f`` is 0xb3f). The width f is 64 bits unless a comment line ``#bits=N`` (``# bits: N`` also
accepted, 1 <= N <= 64) comes before the first fingerprint; every value must fit in f bits. Blank lines and
other ``#`` lines are ignored. The same docno twice with the same value is a warning, with another value an error.

**Document texts** (``--doc-texts FILE``): UTF-8, one document per line, either ``docno<TAB>text`` (split at the
first tab; the text runs to the end of the line and may contain tabs; ``#`` lines are comments) or JSON Lines
``{"docno": "...", "text": "..."}`` (other keys ignored; use it for texts with newlines). The file is JSON Lines
when its first non-blank line starts with ``{``. A docno must be non-empty without whitespace (runs could never
name it otherwise) and appear once.
"""

from __future__ import annotations

import json
import re

import numpy as np

from evaluation.docsim.simhash import DEFAULT_BITS
from evaluation.docsim.vectors import DocumentTexts, DocumentVectors
from evaluation.formats.lexer import decode, select_rows, tokenize
from evaluation.formats.source import SourceLike, load
from evaluation.problems import InputError, Parsed, ProblemLog

_BITS = re.compile(rb"^[ \t]*#[ \t]*bits[ \t]*[=:][ \t]*(\S*)[ \t\r]*$", re.MULTILINE | re.IGNORECASE)
_HEX = re.compile(r"(?:0[xX])?([0-9a-fA-F]+)")
_BIN = re.compile(r"0[bB]([01]+)")


def parse_fingerprints(source: SourceLike) -> Parsed[DocumentVectors]:
    """Read SimHash fingerprints, collecting every problem."""
    try:
        blob = load(source)
    except InputError as exc:
        return Parsed(None, tuple(exc.problems))
    log = ProblemLog(source=blob.name)
    fields = tokenize(blob.data)
    rows = select_rows(fields, 2, log, "fingerprint")
    first_data = int(rows.line_start[0]) if len(rows) else len(blob.data)
    bits = _width(blob.data, first_data, log)
    seen: dict[bytes, tuple[int, int]] = {}
    docnos: list[bytes] = []
    values: list[int] = []
    for line, column, docno, text in zip(rows.line.tolist(), rows.columns(1).tolist(), rows.text(0).tolist(),
                                         decode(rows.text(1))):
        value = _value(text)
        if value is None:
            log.add("fingerprint-not-hex", f"fingerprint {text!r} is not a hexadecimal (or 0b binary) number",
                    line=line, column=column)
            continue
        if value >> bits:
            log.add("fingerprint-too-wide", f"fingerprint {text!r} does not fit in {bits} bits (a '#bits=N' line"
                    " before the first fingerprint sets the width)",
                    line=line, column=column)
            continue
        earlier = seen.get(docno)
        if earlier is not None:
            name = docno.decode("utf-8", "replace")
            if earlier[0] == value:
                log.add("fingerprint-duplicate", f"document {name} listed again (line {earlier[1]}); kept once",
                        severity="warning", line=line, column=1)
            else:
                log.add("fingerprint-conflict", f"document {name} already has another fingerprint"
                        f" (line {earlier[1]})", line=line, column=column)
            continue
        seen[docno] = (value, line)
        docnos.append(docno)
        values.append(value)
    if not docnos and not log.has_errors:
        log.add("empty-fingerprints", "the file has no fingerprints")
    vectors = DocumentVectors.build(np.array(docnos, dtype=bytes) if docnos else np.zeros(0, dtype="S1"),
                                    np.array(values, dtype=np.uint64), bits, blob.name)
    return Parsed.from_log(vectors, log)


def read_fingerprints(source: SourceLike) -> DocumentVectors:
    """Read fingerprints or raise InputError listing their problems."""
    return parse_fingerprints(source).unwrap()


def _width(data: bytes, first_data: int, log: ProblemLog) -> int:
    """The width set by a ``#bits=N`` line before the first fingerprint (64 without one)."""
    bits = DEFAULT_BITS
    for match in _BITS.finditer(data):
        line = data.count(b"\n", 0, match.start()) + 1
        raw = match.group(1).decode("utf-8", "replace")
        column = match.start(1) - match.start() + 1
        if match.start() > first_data:
            log.add("fingerprint-bits", "'#bits=N' must come before the first fingerprint", line=line, column=1)
            continue
        if not raw.isdigit() or not 1 <= int(raw) <= 64:
            log.add("fingerprint-bits", f"fingerprint width {raw!r} is not an integer in 1..64", line=line,
                    column=column)
            continue
        bits = int(raw)
    return bits


def _value(text: str) -> int | None:
    binary = _BIN.fullmatch(text)
    if binary is not None:
        return int(binary.group(1), 2)
    hexadecimal = _HEX.fullmatch(text)
    return int(hexadecimal.group(1), 16) if hexadecimal is not None else None


def format_fingerprints(vectors: DocumentVectors) -> bytes:
    """The fingerprint file of ``vectors`` (``#bits=N`` first when f != 64; zero-padded hex), for
    ``parse_fingerprints`` to read back."""
    digits = -(-vectors.bits // 4)
    head = b"" if vectors.bits == DEFAULT_BITS else f"#bits={vectors.bits}\n".encode()
    lines = [d + b"\t" + format(int(v), f"0{digits}x").encode() for d, v in
             zip(vectors.docnos.tolist(), vectors.fingerprints.tolist())]
    return head + b"".join(line + b"\n" for line in lines)


def parse_doc_texts(source: SourceLike) -> Parsed[DocumentTexts]:
    """Read document texts (``docno<TAB>text`` lines or JSON Lines), collecting every problem."""
    try:
        blob = load(source)
    except InputError as exc:
        return Parsed(None, tuple(exc.problems))
    log = ProblemLog(source=blob.name)
    try:
        text = blob.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = blob.data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (blob.data.rfind(b"\n", 0, exc.start) + 1) + 1
        log.add("text-not-utf8", "the file is not valid UTF-8; undecodable bytes were replaced",
                severity="warning", line=line, column=column)
        text = blob.data.decode("utf-8", "replace")
    lines = text.split("\n")
    jsonl = next((raw.lstrip().startswith("{") for raw in lines if raw.strip()), False)
    seen: dict[str, int] = {}
    pairs: list[tuple[str, str]] = []
    for number, raw in enumerate(lines, start=1):
        raw = raw[:-1] if raw.endswith("\r") else raw
        if not raw.strip() or (not jsonl and raw.startswith("#")):
            continue
        found = _json_record(raw, number, log) if jsonl else _tsv_record(raw, number, log)
        if found is None:
            continue
        docno, body = found
        if not docno or any(c.isspace() for c in docno):
            log.add("text-bad-docno", f"docno {docno!r} is empty or contains whitespace", line=number, column=1)
            continue
        if docno in seen:
            log.add("text-duplicate", f"document {docno} already has a text (line {seen[docno]})", line=number,
                    column=1)
            continue
        seen[docno] = number
        pairs.append((docno, body))
    if not pairs and not log.has_errors:
        log.add("empty-texts", "the file has no document texts")
    return Parsed.from_log(DocumentTexts.build(pairs, blob.name), log)


def read_doc_texts(source: SourceLike) -> DocumentTexts:
    """Read document texts or raise InputError listing their problems."""
    return parse_doc_texts(source).unwrap()


def _tsv_record(raw: str, number: int, log: ProblemLog) -> tuple[str, str] | None:
    docno, tab, body = raw.partition("\t")
    if not tab:
        log.add("text-no-tab", "document text lines are 'docno<TAB>text'; this one has no tab", line=number,
                column=1)
        return None
    return docno.strip(" "), body


def _json_record(raw: str, number: int, log: ProblemLog) -> tuple[str, str] | None:
    try:
        record = json.loads(raw)
    except json.JSONDecodeError as exc:
        log.add("text-bad-json", f"not a JSON object: {exc.msg}", line=number, column=exc.colno)
        return None
    except RecursionError:
        log.add("text-bad-json", "not a JSON object: nested too deeply", line=number, column=1)
        return None
    if not isinstance(record, dict) or not isinstance(record.get("docno"), str) \
            or not isinstance(record.get("text"), str):
        log.add("text-bad-record", 'each JSON line must be an object with string "docno" and "text"',
                line=number, column=1)
        return None
    return record["docno"], record["text"]
