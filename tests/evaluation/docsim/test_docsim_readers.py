"""Readers of the ``fingerprints`` and ``doc_texts`` side inputs: values, widths, problems (docs/formats.md)."""

from __future__ import annotations

import gzip
import json

import pytest

from evaluation.docsim import (
    DocumentVectors,
    format_fingerprints,
    parse_doc_texts,
    parse_fingerprints,
    read_fingerprints,
)
from evaluation.formats import Blob
from evaluation.problems import InputError
from evaluation.side_registry import SIDE_KINDS


def _fp(text: str) -> tuple[DocumentVectors | None, list[tuple[str, int | None, int | None, str]]]:
    parsed = parse_fingerprints(Blob.from_bytes(text.encode(), "fp.txt"))
    return parsed.value, [(p.code, p.line, p.column, p.severity) for p in parsed.problems]


def test_hex_binary_and_width() -> None:
    v, problems = _fp("#bits=8\nd2 72\n\nd1 0b00111111\n# a comment\nd3\t0x1F\n")
    assert problems == [] and v is not None
    assert v.bits == 8 and v.docnos.tolist() == [b"d1", b"d2", b"d3"]
    assert v.fingerprints.tolist() == [0b00111111, 0x72, 0x1F]
    v64, problems = _fp("clueweb09-en0000-00-03430 8232092408290a0c\nx ffffffffffffffff\n")
    assert problems == [] and v64 is not None and v64.bits == 64
    assert v64.fingerprint("clueweb09-en0000-00-03430") == 0x8232092408290A0C


def test_round_trip_and_gzip() -> None:
    v = DocumentVectors.build(["b", "a", "c"], [5, 0, 2**64 - 1])
    again = read_fingerprints(Blob.from_bytes(gzip.compress(format_fingerprints(v)), "fp.gz"))
    assert again.docnos.tolist() == v.docnos.tolist() and again.fingerprints.tolist() == v.fingerprints.tolist()
    small = DocumentVectors.build(["a"], [0b101], bits=3)
    text = format_fingerprints(small)
    assert text == b"#bits=3\na\t5\n"
    assert read_fingerprints(Blob.from_bytes(text)).bits == 3


def test_fingerprint_problems() -> None:
    v, problems = _fp("d1 zz\nd2 0b1g\nd3 1 extra\nd4 1ffffffffffffffff\nd5 ab\nd5 ab\nd5 ac\n")
    assert v is None
    assert problems == [
        ("fingerprint-not-hex", 1, 4, "error"),
        ("fingerprint-not-hex", 2, 4, "error"),
        ("wrong-column-count", 3, 6, "error"),
        ("fingerprint-too-wide", 4, 4, "error"),
        ("fingerprint-duplicate", 6, 1, "warning"),
        ("fingerprint-conflict", 7, 4, "error"),
    ]
    _, problems = _fp("#bits=4\nd1 1f\n")
    assert problems == [("fingerprint-too-wide", 2, 4, "error")]
    _, problems = _fp("# bits: 65\nd1 1\n")
    assert problems == [("fingerprint-bits", 1, 9, "error")]
    _, problems = _fp("d1 1\n#bits=8\n")
    assert problems == [("fingerprint-bits", 2, 1, "error")]
    _, problems = _fp("# nothing\n\n")
    assert problems == [("empty-fingerprints", None, None, "error")]
    with pytest.raises(InputError, match="fingerprint-not-hex"):
        read_fingerprints(Blob.from_bytes(b"d1 g\n"))


def _texts(data: bytes) -> tuple[object, list[tuple[str, int | None, int | None, str]]]:
    parsed = parse_doc_texts(Blob.from_bytes(data, "texts"))
    return parsed.value, [(p.code, p.line, p.column, p.severity) for p in parsed.problems]


def test_tab_separated_texts() -> None:
    texts, problems = _texts(b"# docs\nd2\tsecond\tdocument\r\n\nd1\tfirst one\nd3\t\n")
    assert problems == []
    assert texts is not None
    assert texts.docnos.tolist() == [b"d1", b"d2", b"d3"]  # type: ignore[attr-defined]
    assert texts.texts == ("first one", "second\tdocument", "")  # type: ignore[attr-defined]


def test_json_lines_texts() -> None:
    lines = [json.dumps({"docno": "d2", "text": "two\nlines", "url": "x"}), "", json.dumps({"docno": "d1",
                                                                                          "text": "one"})]
    texts, problems = _texts("\n".join(lines).encode())
    assert problems == [] and texts is not None
    assert texts.texts == ("one", "two\nlines")  # type: ignore[attr-defined]


def test_text_problems() -> None:
    _, problems = _texts(b"d1 no tab here\n\tempty docno\nd 2\tspace\nd3\tok\nd3\tagain\n")
    assert problems == [
        ("text-no-tab", 1, 1, "error"),
        ("text-bad-docno", 2, 1, "error"),
        ("text-bad-docno", 3, 1, "error"),
        ("text-duplicate", 5, 1, "error"),
    ]
    _, problems = _texts(b'{"docno": "a", "text": "x"}\n{"docno": "b", "text": 3}\n[1]\n{"docno": "c",\n')
    assert problems == [
        ("text-bad-record", 2, 1, "error"),  # lines 2-3: the same problem on consecutive lines is one range
        ("text-bad-json", 4, 15, "error"),
    ]
    texts, problems = _texts(b"d1\tcaf\xe9\n")
    assert problems == [("text-not-utf8", 1, 7, "warning")] and texts is not None
    assert texts.texts == ("caf\ufffd",)  # type: ignore[attr-defined]
    _, problems = _texts(b"\n# only a comment\n")
    assert problems == [("empty-texts", None, None, "error")]


def test_kinds_are_registered() -> None:
    assert SIDE_KINDS["fingerprints"].flag == "--fingerprints"
    assert SIDE_KINDS["doc_texts"].flag == "--doc-texts"
    assert SIDE_KINDS["fingerprints"].reader(Blob.from_bytes(b"d 1\n")).ok
