"""Bounded decoding (``evaluation.formats.source``): gzip is inflated in chunks and every input is refused at the
first cap passed (decompressed bytes, line length, line count) or NUL byte, with a problem code; exactly at a
cap passes; multi-member gzip reads as its concatenation; a refused bomb never holds its output in memory."""

from __future__ import annotations

import gzip
import tracemalloc
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.formats import Blob, load, parse_qrels, parse_run
from evaluation.formats.source import DecodeLimits, decode
from evaluation.problems import InputError

LINE = b"1 Q0 d1 1 1.0 tag\n"  # 18 bytes, 17 before the newline
TEXT = LINE * 100


def _code(data: bytes, limits: DecodeLimits) -> str:
    with pytest.raises(InputError) as caught:
        decode(data, "x", limits)
    (problem,) = caught.value.problems
    assert problem.severity == "error" and problem.source == "x"
    return problem.code


@pytest.mark.parametrize("pack", [lambda b: b, gzip.compress], ids=["plain", "gzip"])
def test_exactly_at_each_cap_passes_and_one_past_it_is_refused(pack: object) -> None:
    data = pack(TEXT)  # type: ignore[operator]
    exact = DecodeLimits(max_bytes=len(TEXT), max_line_bytes=len(LINE) - 1, max_lines=100)
    assert decode(data, "x", exact) == TEXT
    gz = data.startswith(b"\x1f\x8b")
    assert _code(data, DecodeLimits(max_bytes=len(TEXT) - 1)) == ("decompressed-too-large" if gz
                                                                   else "input-too-large")
    assert _code(data, DecodeLimits(max_line_bytes=len(LINE) - 2)) == "line-too-long"
    assert _code(data, DecodeLimits(max_lines=99)) == "too-many-lines"


def test_an_unterminated_last_line_counts_and_its_length_is_checked() -> None:
    data = TEXT + b"2 Q0 d1 1 1.0 tag"
    assert decode(data, "x", DecodeLimits(max_lines=101)) == data
    assert _code(data, DecodeLimits(max_lines=100)) == "too-many-lines"
    assert _code(TEXT + b"x" * 40, DecodeLimits(max_line_bytes=39)) == "line-too-long"


def test_a_long_line_inside_a_window_is_found_and_located() -> None:
    data = TEXT + b"y" * 5000 + b"\n" + TEXT
    with pytest.raises(InputError) as caught:
        decode(data, "x", DecodeLimits(max_line_bytes=4999))
    assert caught.value.problems[0].line == 101
    assert decode(data, "x", DecodeLimits(max_line_bytes=5000)) == data


def test_nul_bytes_are_binary_input_with_their_line() -> None:
    with pytest.raises(InputError) as caught:
        Blob.from_bytes(TEXT + b"\0" * 1000, "z.run")
    problem = caught.value.problems[0]
    assert (problem.code, problem.line, problem.source) == ("binary-input", 101, "z.run")
    assert _code(gzip.compress(b"\0" * (1 << 20)), DecodeLimits()) == "binary-input"


def test_multi_member_gzip_is_the_concatenation_and_damage_is_gzip_corrupt() -> None:
    parts = [LINE * 3, b"", LINE * 5000, b"# end\n"]
    data = b"".join(gzip.compress(p) for p in parts)
    assert decode(data, "x") == b"".join(parts)
    whole = gzip.compress(TEXT)
    for broken in (whole[:-4], whole + b"junk", whole + b"\0\0", b"\x1f\x8b\x08\x00broken"):
        assert _code(broken, DecodeLimits()) == "gzip-corrupt"


def test_a_json_document_may_be_one_long_line_but_not_larger_than_the_cap() -> None:
    doc = b'\xef\xbb\xbf \n{"topics": [' + b'"t",' * 5000 + b'"t"]}'
    assert decode(doc, "h.json", DecodeLimits(max_line_bytes=100)) == doc
    assert _code(doc, DecodeLimits(max_bytes=1000)) == "input-too-large"
    assert _code(b"t" * 1000, DecodeLimits(max_line_bytes=100)) == "line-too-long"


def test_a_large_gzip_input_is_decoded_twice_and_identical() -> None:
    big = LINE * (3 * (1 << 20))  # 54 MiB: past what is kept while checking
    assert decode(gzip.compress(big, 1), "x") == big


def test_a_refused_bomb_never_holds_its_output() -> None:
    member = gzip.compress(LINE * ((1 << 20) // len(LINE)), 9)  # ~1 MiB of lines per member
    bomb = member * 300  # ~300 MiB once inflated, built without ever holding it
    tracemalloc.start()
    try:
        assert _code(bomb, DecodeLimits(max_bytes=100 << 20)) == "decompressed-too-large"
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 48 << 20, f"peak {peak >> 20} MiB"


def test_empty_runs_and_qrels_are_errors() -> None:
    for data in (b"", b"# only a comment\n\n"):
        assert [(p.code, p.severity) for p in parse_run(Blob.from_bytes(data, "r")).problems] == [
            ("empty-run", "error")]
        assert [(p.code, p.severity) for p in parse_qrels(Blob.from_bytes(data, "q")).problems] == [
            ("empty-qrels", "error")]


def test_files_are_read_under_the_limits_and_a_run_path_too(tmp_path: Path) -> None:
    plain = tmp_path / "a.run"
    plain.write_bytes(TEXT)
    with pytest.raises(InputError) as caught:
        load(plain, limits=DecodeLimits(max_bytes=len(TEXT) - 1))
    assert caught.value.problems[0].code == "input-too-large"
    assert load(plain, limits=DecodeLimits(max_bytes=len(TEXT))).data == TEXT
    nul = tmp_path / "nul.run"
    nul.write_bytes(TEXT.replace(b" Q0", b"\0Q0", 1))
    assert [p.code for p in parse_run(str(nul)).problems] == ["binary-input"]
    assert [p.code for p in parse_run(str(tmp_path / "gz.run.gz")).problems] == ["file-not-found"]


def test_limits_from_the_environment() -> None:
    assert DecodeLimits.from_env({}) == DecodeLimits(2048 << 20, 8 << 20, 10_000_000)
    assert DecodeLimits.from_env({}, max_bytes=5) == DecodeLimits(max_bytes=5)
    env = {"EVALSERVE_MAX_DECOMPRESSED_MB": "1.5", "EVALSERVE_MAX_LINE_BYTES": "100", "EVALSERVE_MAX_LINES": "7"}
    assert DecodeLimits.from_env(env, max_bytes=5) == DecodeLimits(3 << 19, 100, 7)


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(st.binary(min_size=0, max_size=40).map(lambda b: b.replace(b"\n", b"").replace(b"\0", b"")),
                   max_size=60),
    cuts=st.lists(st.integers(min_value=0, max_value=3000), max_size=4),
    level=st.sampled_from([0, 1, 9]),
    caps=st.tuples(st.integers(0, 3000), st.integers(0, 45), st.integers(0, 70)),
)
def test_gzip_members_anywhere_decode_to_the_text_and_caps_hold_exactly(
        lines: list[bytes], cuts: list[int], level: int, caps: tuple[int, int, int]) -> None:
    text = b"\n".join(lines)
    bounds = sorted({0, len(text), *(min(c, len(text)) for c in cuts)})
    data = b"".join(gzip.compress(text[a:b], level) for a, b in pairwise(bounds)) or gzip.compress(b"")
    assert decode(data, "x") == text
    max_bytes, max_line, max_lines = caps
    n_lines = text.count(b"\n") + (1 if text and not text.endswith(b"\n") else 0)
    longest = max((len(line) for line in text.split(b"\n")), default=0)
    document = text.lstrip(b" \t\r\n")[:1] in (b"{", b"[")
    fits = len(text) <= max_bytes and n_lines <= max_lines and (document or longest <= max_line)
    limits = DecodeLimits(max_bytes, max_line, max_lines)
    try:
        assert decode(data, "x", limits) == text
        assert fits
    except InputError as exc:
        assert not fits, exc


def test_one_long_field_among_many_lines_is_refused_not_padded_into_gigabytes() -> None:
    lines = [b"%d Q0 doc%d %d 1.0 tag\n" % (i // 1000, i, i % 1000) for i in range(200_000)]
    lines[5] = b"0 Q0 " + b"x" * 65536 + b" 5 1.0 tag\n"  # padded to it, the docno column would take 13 GB
    tracemalloc.start()
    try:
        parsed = parse_run(Blob.from_bytes(b"".join(lines), "long.run"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [(p.code, p.line, p.column) for p in parsed.problems] == [("field-too-long", 6, 6)]
    assert peak < 200 << 20, f"peak {peak >> 20} MiB"
    qrels = b"".join(b"1 0 d%d 1\n" % i for i in range(100_000)) + b"1 0 " + b"y" * 65536 + b" 1\n"
    assert [p.code for p in parse_qrels(Blob.from_bytes(qrels, "q")).problems] == ["field-too-long"]


def test_a_quoted_field_is_cut_in_messages() -> None:
    parsed = parse_run(Blob.from_bytes(b"1 Q0 d1 1 " + b"x" * 100_000 + b" tag\n", "r"))
    (problem,) = parsed.errors
    assert problem.code == "score-not-numeric" and len(problem.message) < 300 and "..." in problem.message
