"""Readers of the preference side inputs (preference judgments, user profiles): layouts, problems with line,
column, code and severity, gzip, writers that read back, and their registration as side-input kinds."""

from __future__ import annotations

import gzip

import numpy as np

from evaluation.formats import Blob
from evaluation.formats.pref_judgments import format_preference_judgments, parse_preference_judgments
from evaluation.formats.user_profiles import format_user_profiles, parse_user_profiles
from evaluation.preference import PreferenceJudgments, UserProfiles
from evaluation.problems import Problem
from evaluation.side_registry import PREPARERS, SIDE_KINDS

GOOD = b"""# topic user [top] left right winner
151 u1 d1 d2 d1
151 u1 d1 d2 d3 d3

151 u2 - d2 d3 d2
152 u2 x9 y1 x9\r
"""


def _codes(problems: tuple[Problem, ...] | list[Problem]) -> list[tuple[str, int | None, int | None, str]]:
    return [(p.code, p.line, p.column, p.severity) for p in problems]


def test_reads_both_layouts() -> None:
    parsed = parse_preference_judgments(Blob.from_bytes(GOOD, "prefs"))
    assert parsed.ok and parsed.problems == ()
    j = parsed.unwrap()
    assert j.records() == [
        ("151", "u1", None, "d1", "d2", "d1"),
        ("151", "u1", "d1", "d2", "d3", "d3"),
        ("151", "u2", None, "d2", "d3", "d2"),
        ("152", "u2", None, "x9", "y1", "x9"),
    ]
    assert j.topics == ("151", "152") and j.users == ("u1", "u2")
    assert j.conditional.tolist() == [False, True, False, False]
    assert j.user_rank().tolist() == [1, 1, 2, 1]  # u2 is the second user of 151 and the first of 152


def test_writer_reads_back_and_gzip_is_detected() -> None:
    j = parse_preference_judgments(Blob.from_bytes(GOOD, "prefs")).unwrap()
    text = format_preference_judgments(j)
    assert text.splitlines()[1] == b"151 u1 d1 d2 d3 d3"
    again = parse_preference_judgments(Blob.from_bytes(gzip.compress(text), "prefs.gz")).unwrap()
    assert again.records() == j.records()
    assert PreferenceJudgments.from_records(j.records()).records() == j.records()


def test_problems_are_located() -> None:
    data = (b"1 u a b a\n"  # fine
            b"1 u a b\n"  # 4 fields
            b"1 u a b c\n"  # winner neither candidate
            b"1 u a a a\n"  # same document
            b"1 u a a b a\n"  # top is a candidate
            b"1 u x a b c d e f\n")  # 8 fields
    parsed = parse_preference_judgments(Blob.from_bytes(data, "p.txt"))
    assert not parsed.ok
    assert _codes(parsed.problems) == [
        ("pref-fields", 2, 1, "error"),
        ("pref-winner", 3, 9, "error"),
        ("pref-same-document", 4, 7, "error"),
        ("pref-top-candidate", 5, 5, "error"),
        ("pref-fields", 6, 1, "error"),
    ]
    assert "has 4" in parsed.problems[0].message and "'c'" in parsed.problems[1].message
    assert str(parsed.problems[1]).startswith("p.txt:3:9: error:")


def test_repeated_judgments_are_one_warning_and_all_count() -> None:
    data = b"1 u a b a\n1 u b a b\n1 v a b a\n1 u x a b a\n1 u x b a a\n1 u a b a\n"
    parsed = parse_preference_judgments(Blob.from_bytes(data, "p"))
    assert parsed.ok
    assert _codes(parsed.problems) == [("pref-repeated", 2, 9, "warning")]
    assert "(line 1)" in parsed.problems[0].message and "3 judgments repeat" in parsed.problems[0].message
    assert len(parsed.unwrap()) == 6


def test_empty_files() -> None:
    for data in (b"", b"# nothing\n\n"):
        parsed = parse_preference_judgments(Blob.from_bytes(data, "p"))
        assert _codes(parsed.problems) == [("empty-pref-judgments", None, None, "error")] and not parsed.ok
    parsed = parse_preference_judgments("/nonexistent/prefs.txt")
    assert [p.code for p in parsed.problems] == ["file-not-found"]


def test_user_profiles() -> None:
    data = b"# topic profile intents\n151 A 1 2\n151 B 3\n151 A 4 2\n152 X 1\n151 bad\n"
    parsed = parse_user_profiles(Blob.from_bytes(data, "profiles"))
    assert _codes(parsed.problems) == [("profile-duplicate-intent", 4, 9, "warning"), ("profile-fields", 6, 1,
                                                                                         "error")]
    assert not parsed.ok
    parsed = parse_user_profiles(Blob.from_bytes(data.replace(b"151 bad\n", b""), "profiles"))
    profiles = parsed.unwrap()
    assert [(p.name, p.intents) for p in profiles.for_topic("151")] == [("A", ("1", "2", "4")), ("B", ("3",))]
    assert profiles.for_topic("153") == () and len(profiles) == 3
    again = parse_user_profiles(Blob.from_bytes(format_user_profiles(profiles), "p")).unwrap()
    assert again.topics == profiles.topics
    assert _codes(parse_user_profiles(Blob.from_bytes(b"\n", "p")).problems) == [("empty-profiles", None, None,
                                                                                   "error")]


def test_trec_profile_of_a_qrels() -> None:
    from evaluation.formats import parse_qrels

    qrels = parse_qrels(Blob.from_bytes(b"1 b d1 1\n1 a d2 0\n2 x d3 1\n", "q")).unwrap()
    trec = UserProfiles.trec(qrels)
    assert [(p.name, p.intents) for p in trec.for_topic("1")] == [("TREC", ("a", "b"))]
    assert [(p.name, p.intents) for p in trec.for_topic("2")] == [("TREC", ("x",))]


def test_registered_as_side_inputs() -> None:
    assert SIDE_KINDS["preference_judgments"].flag == "--preference-judgments"
    assert SIDE_KINDS["user_profiles"].flag == "--user-profiles"
    assert SIDE_KINDS["preference_judgments"].reader(Blob.from_bytes(b"1 u a b a\n")).ok
    assert SIDE_KINDS["user_profiles"].reader(Blob.from_bytes(b"1 p i\n")).ok
    assert "preferences" in PREPARERS
    assert np.array_equal(PreferenceJudgments.from_records([]).topic, np.zeros(0, dtype=np.int64))
