"""The malformed-input corpus (``tests/data/bad/``): each file reports exactly the problems its manifest lists.

``MANIFEST.tsv`` has one row per expected problem (see the corpus README). Every (file, reader) pair is a
test case of its own, checked twice: which problems (severity, code, line) and where (plus the column), so a
wrong column does not hide a missing problem or the reverse. Where a reader does not meet the documented
behaviour yet, ``KNOWN_DEFECTS`` marks the case ``xfail(strict=True)`` with the symptom.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evaluation.formats import parse_evall, parse_intent_weights, parse_qrels, parse_run
from evaluation.formats.evall_run import parse_evall_run
from evaluation.formats.pyevall_run import parse_pyevall_json, parse_pyevall_tsv
from evaluation.formats.source import Blob
from evaluation.problems import MAX_PROBLEMS, InputError, Parsed

BAD = Path(__file__).resolve().parents[2] / "data" / "bad"
MANIFEST = BAD / "MANIFEST.tsv"
NOT_CASES = {"README.md", "MANIFEST.tsv", ".gitattributes"}
MISSING = "does-not-exist.txt"  # named by the manifest, deliberately absent

READERS: dict[str, Callable[[Any], Parsed[Any]]] = {
    "run": parse_run,
    "qrels": parse_qrels,
    "evall": parse_evall,
    "intents": parse_intent_weights,
    "evall-run": parse_evall_run,
    "pyevall-json": parse_pyevall_json,
    "pyevall-tsv": parse_pyevall_tsv,
}

SOURCE_CODES = {"file-not-found", "file-not-readable", "gzip-corrupt"}
QRELS_CODES = {"wrong-column-count", "grade-not-integer", "conflicting-grade", "duplicate-judgment", "empty-qrels"}
#: every documented problem code of each reader; the corpus must exercise all of them
CODES: dict[str, set[str]] = {
    "run": {
        "wrong-column-count", "score-not-numeric", "score-nan", "duplicate-docno",
        "rank-not-integer", "multiple-tags", "empty-run", "extra-fields",
    } | SOURCE_CODES,
    "qrels": QRELS_CODES | SOURCE_CODES,
    "evall": QRELS_CODES | {"weight-not-numeric", "weight-negative", "conflicting-weight"} | SOURCE_CODES,
    "intents": {"wrong-column-count", "weight-not-numeric", "weight-negative", "duplicate-intent"} | SOURCE_CODES,
    "evall-run": {"wrong-column-count", "duplicate-docno", "empty-run"},
    "pyevall-json": {"json-syntax", "not-a-list", "item-not-object", "missing-field", "unknown-field",
                     "field-not-string", "position-not-integer", "tied-position", "empty-run"},
    "pyevall-tsv": {"wrong-column-count", "position-not-integer", "duplicate-docno", "tied-position"},
}

#: capped files: (omitted errors, omitted warnings) beyond the 100 listed (none in the corpus: its many-problem
#: files repeat one problem on consecutive lines, listed once as a range; ``CAP_CASES`` below hold the cap)
CAPPED: dict[tuple[str, str], tuple[int, int]] = {}

#: (file, reader) -> {aspect: symptom}; aspects: "problems" (a problem missing or extra), "column",
#: "outcome" (value present or not), "message"
KNOWN_DEFECTS: dict[tuple[str, str], dict[str, str]] = {
    ("run-utf8-column.run", "run"): {
        "column": "columns count bytes, not characters: 'x' after 'café' is reported at column 14, not 13",
    },
    ("evall-quoted-error.tsv", "evall"): {
        "column": "in quoted fields the column is that of the first character inside the quotes (11, 19), "
        "not where the field starts at its opening quote (10, 18)",
    },
}


@dataclass(frozen=True)
class Expected:
    severity: str
    code: str
    line: int | None
    column: int | None
    end_line: int | None = None  # the last line of one problem over a range of lines (``A-B`` in the manifest)


@dataclass(frozen=True)
class Case:
    file: str
    reader: str
    expected: tuple[Expected, ...]  # empty for a clean file

    @property
    def path(self) -> Path:
        return BAD / self.file

    @property
    def has_errors(self) -> bool:
        return any(e.severity == "error" for e in self.expected)

    def parse(self) -> Parsed[Any]:
        return READERS[self.reader](str(self.path))


def _position(text: str) -> int | None:
    return None if text == "-" else int(text)


def _read_manifest() -> list[dict[str, str]]:
    with MANIFEST.open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _cases() -> list[Case]:
    grouped: dict[tuple[str, str], list[Expected]] = {}
    for row in _read_manifest():
        problems = grouped.setdefault((row["file"], row["reader"]), [])
        if row["expect"] == "ok":
            continue
        line, column = row["line"], _position(row["column"])
        if ".." in line:
            first, last = (int(x) for x in line.split(".."))
            lines: list[int | None] = list(range(first, last + 1))
        elif "-" in line.strip("-"):
            first, last = (int(x) for x in line.split("-"))
            problems.append(Expected(row["expect"], row["code"], first, column, last))
            continue
        else:
            lines = [_position(line)]
        problems.extend(Expected(row["expect"], row["code"], n, column) for n in lines)
    return [Case(f, r, tuple(p)) for (f, r), p in grouped.items()]


CASES = _cases()


def _params(aspects: tuple[str, ...]) -> list[Any]:
    params = []
    for case in CASES:
        defects = KNOWN_DEFECTS.get((case.file, case.reader), {})
        reasons = [defects[a] for a in aspects if a in defects]
        marks = [pytest.mark.xfail(strict=True, reason="; ".join(reasons))] if reasons else []
        params.append(pytest.param(case, id=f"{case.reader}:{case.file}", marks=marks))
    return params


# ----------------------------------------------------------------------------------------- the manifest


def test_manifest_rows_are_well_formed() -> None:
    rows = _read_manifest()
    assert rows, "empty manifest"
    for row in rows:
        assert set(row) == {"file", "reader", "expect", "code", "line", "column"}, row
        assert row["reader"] in READERS, row
        assert row["expect"] in {"error", "warning", "ok"}, row
        if row["expect"] == "ok":
            assert (row["code"], row["line"], row["column"]) == ("-", "-", "-"), row
        else:
            assert row["code"] in CODES[row["reader"]], row
    for case in CASES:
        kinds = {r["expect"] == "ok" for r in rows if (r["file"], r["reader"]) == (case.file, case.reader)}
        assert len(kinds) == 1, f"{case.file} ({case.reader}) is listed both as ok and with problems"


def test_manifest_and_folder_agree() -> None:
    on_disk = {p.name for p in BAD.iterdir()} - NOT_CASES
    listed = {c.file for c in CASES}
    assert on_disk == listed - {MISSING}
    assert not (BAD / MISSING).exists()


def test_corpus_is_big_enough_and_tiny() -> None:
    files = [p for p in BAD.iterdir() if p.is_file() and p.name not in NOT_CASES]
    assert len(files) >= 30
    assert all(p.stat().st_size <= 4096 for p in files)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_code_of_every_reader_is_exercised(reader: str) -> None:
    covered = {e.code for c in CASES if c.reader == reader for e in c.expected}
    assert CODES[reader] - covered == set()
    assert any(not c.expected for c in CASES if c.reader == reader), f"no clean {reader} input"


# ----------------------------------------------------------------------------------------- each file


@pytest.mark.parametrize("case", _params(("problems",)))
def test_reports_exactly_the_listed_problems(case: Case) -> None:
    parsed = case.parse()
    got = Counter((p.severity, p.code, p.line, p.end_line) for p in parsed.problems)
    want = Counter((e.severity, e.code, e.line, e.end_line) for e in case.expected)
    assert got == want


@pytest.mark.parametrize("case", _params(("problems", "column")))
def test_locates_every_problem(case: Case) -> None:
    parsed = case.parse()
    got = Counter((p.severity, p.code, p.line, p.end_line, p.column) for p in parsed.problems)
    want = Counter((e.severity, e.code, e.line, e.end_line, e.column) for e in case.expected)
    assert got == want


@pytest.mark.parametrize("case", _params(("outcome",)))
def test_outcome_and_counts(case: Case) -> None:
    parsed = case.parse()
    omitted = CAPPED.get((case.file, case.reader), (0, 0))
    assert (parsed.omitted_errors, parsed.omitted_warnings) == omitted
    if case.has_errors:
        assert parsed.value is None
        assert not parsed.ok
        with pytest.raises(InputError) as info:
            parsed.unwrap()
        assert info.value.problems == parsed.errors  # every error, not just the first
        assert info.value.omitted == omitted[0]
    else:
        assert parsed.value is not None
        assert parsed.errors == []
        assert parsed.unwrap() is parsed.value


@pytest.mark.parametrize("case", _params(("message",)))
def test_problems_are_named_sorted_and_readable(case: Case) -> None:
    parsed = case.parse()
    assert [p.line or 0 for p in parsed.problems] == sorted(p.line or 0 for p in parsed.problems)
    for p in parsed.problems:
        assert p.source == str(case.path)
        assert p.message and "\n" not in p.message
        assert "np." not in p.message and "b'" not in p.message, p.message
        where = str(case.path) + "".join(f":{n}" for n in (p.line, p.column) if n is not None)
        assert str(p) == f"{where}: {p.severity}: {p.message} [{p.code}]"


def test_repeated_problems_on_consecutive_lines_are_one_range() -> None:
    """130 identical errors (101 identical warnings) on consecutive lines: one problem each, ``lines A-B: ...``,
    nothing omitted (issue 28: not a hundred identical lines)."""
    errors = parse_run(str(BAD / "run-too-many-errors.run"))
    assert [(p.line, p.end_line, p.message) for p in errors.errors] == [
        (2, 131, "lines 2-131: score 'x' is not a number")]
    assert errors.omitted_errors == 0
    assert errors.errors[0].as_dict()["end_line"] == 131
    warnings = parse_run(str(BAD / "run-too-many-warnings.run"))
    assert warnings.ok and [(p.line, p.end_line) for p in warnings.warnings] == [(1, 101)]
    assert warnings.omitted_warnings == 0


def test_ranges_break_where_the_problem_or_the_lines_change() -> None:
    data = b"".join([b"1 Q0 a 1 2\n"] * 3 + [b"1 Q0 b 1 2 t\n"] + [b"1 Q0 c 1 2\n"] * 2 + [b"1 Q0 d 1\n"]
                    + [b"1 Q0 e%d 1 x t\n" % i for i in range(2)] + [b"1 Q0 f%d 1 y t\n" % i for i in range(2)])
    parsed = parse_run(Blob.from_bytes(data, name="ranges.run"))
    got = [(p.code, p.line, p.end_line) for p in parsed.errors]
    assert got == [
        ("wrong-column-count", 1, 3),
        ("wrong-column-count", 5, 6),  # a good line in between
        ("wrong-column-count", 7, None),  # another count
        ("score-not-numeric", 8, 9),
        ("score-not-numeric", 10, 11),  # another value
    ]
    assert [p.message for p in parsed.errors if p.line == 1] == ["lines 1-3: TREC run lines have 6 fields; this"
                                                                 " one has 5"]


def test_ranges_count_towards_the_cap_once() -> None:
    """150 runs of two identical lines each: 100 ranges listed, 50 counted."""
    data = _lines("1 Q0 d{i}a 1 x{i} t\n1 Q0 d{i}b 1 x{i} t\n")
    parsed = parse_run(Blob.from_bytes(data, name="pairs.run"))
    assert len(parsed.errors) == MAX_PROBLEMS
    assert all(p.end_line == p.line + 1 for p in parsed.errors)
    assert parsed.omitted_errors == N_BAD - MAX_PROBLEMS


# ----------------------------------------------------------------------------------------- the cap, per code

N_BAD = 150  # problems generated per case; 100 are listed, 50 counted


def _lines(template: str, n: int = N_BAD) -> bytes:
    return "".join(template.format(i=i) for i in range(n)).encode()


#: distinct problems: the same problem on consecutive lines would be one range (a good line in between, or a
#: different value quoted, keeps them apart)
CAP_CASES: list[tuple[str, str, bytes]] = [
    ("run", "wrong-column-count", _lines("1 Q0 d{i} 1 0.5\n1 Q0 g{i} 1 0.5 t\n")),
    ("run", "score-not-numeric", _lines("1 Q0 d{i} 1 x{i} t\n")),
    ("run", "score-nan", _lines("1 Q0 d{i} 1 nan t\n1 Q0 g{i} 1 1 t\n")),
    ("run", "duplicate-docno", _lines("{i} Q0 d 1 1 t\n{i} Q0 d 2 1 t\n")),
    ("qrels", "grade-not-integer", _lines("1 0 d{i} x{i}\n")),
    ("qrels", "conflicting-grade", _lines("{i} 0 d 1\n{i} 0 d 2\n")),
    ("evall", "weight-negative", _lines("1\td{i}\t1\ta{i}\t-1.{i}\n")),
    ("evall", "conflicting-grade", _lines("{i}\td\t1\ta\t1\n{i}\td\t2\ta\t1\n")),
    ("evall", "conflicting-weight", _lines("{i}\td1\t1\ta\t0.5\n{i}\td2\t1\ta\t0.25\n")),
    ("intents", "weight-not-numeric", _lines("1 i{i} x{i}\n")),
    ("intents", "duplicate-intent", _lines("{i} a 0.5\n{i} a 0.5\n")),
]
CAP_DEFECTS: dict[tuple[str, str], str] = {}  # (reader, code) -> symptom, while a reader lags


@pytest.mark.parametrize(
    ("reader", "code", "data"),
    [
        pytest.param(
            r, c, d, id=f"{r}:{c}",
            marks=[pytest.mark.xfail(strict=True, reason=CAP_DEFECTS[r, c])] if (r, c) in CAP_DEFECTS else [],
        )
        for r, c, d in CAP_CASES
    ],
)
def test_cap_lists_100_and_counts_the_rest(reader: str, code: str, data: bytes) -> None:
    parsed = READERS[reader](Blob.from_bytes(data, name=f"many.{reader}"))
    assert parsed.value is None
    assert [p.code for p in parsed.errors] == [code] * MAX_PROBLEMS
    assert parsed.omitted_errors == N_BAD - MAX_PROBLEMS


def test_cap_spans_codes() -> None:
    """Two kinds of error, 80 of each: 100 listed in all, the other 60 counted."""
    data = _lines("1 Q0 d{i} 1 x t\n1 Q0 e{i} 1 1\n", 80)
    parsed = parse_run(Blob.from_bytes(data, name="mixed.run"))
    assert len(parsed.errors) == 100
    assert parsed.omitted_errors == 60
    assert {p.code for p in parsed.errors} <= {"score-not-numeric", "wrong-column-count"}
