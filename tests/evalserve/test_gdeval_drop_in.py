"""``evalserve gdeval`` against gdeval.pl 1.3 itself (``oracles.gdeval``, run with perl): standard output byte
for byte on real TREC Web runs and on generated inputs, with and without ``-c``, at several ``-k``, with
``-baseline``; the amean leaves out topics without a relevant document, as gdeval's does (spec Appendix E.1).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalserve.cli.main import main

QRELS_2012 = ("trec-web-2009-2014", "2012", "qrels.adhoc.txt")


def gdeval_pl(oracles, args: list[str]) -> subprocess.CompletedProcess[bytes]:  # type: ignore[no-untyped-def]
    return subprocess.run([*oracles.gdeval, *args], capture_output=True, timeout=120, check=False)


def ours(capsysbinary: pytest.CaptureFixture[bytes], args: list[str]) -> tuple[int, bytes, str]:
    """``evalserve gdeval ARGS`` in this process: exit code, standard output bytes, standard error."""
    capsysbinary.readouterr()
    code = main(["gdeval", *args])
    captured = capsysbinary.readouterr()
    return code, captured.out, captured.err.decode()


@pytest.mark.parametrize("run, options", [
    ("ql-results-cata-filtered.txt", []),
    ("ql-results-cata-filtered.txt", ["-c", "-k", "10"]),
    ("ql-results-catb.txt.gz", ["-c"]),
    ("ql-results-catb-filtered.txt", ["-k", "5", "-baseline", "{runs}/ql-results-cata-filtered.txt",
                                      "-riskAlpha", "2"]),
    ("ql-results-catb-filtered.txt", ["-c", "-baseline", "{runs}/ql-results-cata.txt.gz"]),
])
def test_real_runs_byte_for_byte(oracles, shared_data: Path, capsysbinary, run: str, options: list[str]) -> None:
    runs = shared_data / "trec-web-2012-runs" / "runs"
    args = [o.format(runs=runs) for o in options] + [str(shared_data.joinpath(*QRELS_2012)), str(runs / run)]
    expected = gdeval_pl(oracles, args)
    assert expected.returncode == 0, expected.stderr
    code, out, err = ours(capsysbinary, args)
    assert (code, err) == (0, "")
    assert out == expected.stdout


def test_published_reference_rows(shared_data: Path, capsysbinary) -> None:
    """The gdeval -c output shipped with the runs (made by the TREC tools), byte for byte."""
    runs = shared_data / "trec-web-2012-runs"
    args = ["-c", str(shared_data.joinpath(*QRELS_2012)), str(runs / "runs" / "ql-results-catb-filtered.txt")]
    reference = runs / "reference" / "gdeval-c" / "ql-results-catb-filtered.csv"
    assert ours(capsysbinary, args)[1] == reference.read_bytes()


def test_as_a_process(oracles, shared_data: Path) -> None:
    args = ["-k", "10", str(shared_data.joinpath(*QRELS_2012)),
            str(shared_data / "trec-web-2012-runs" / "runs" / "ql-results-cata-filtered.txt")]
    done = subprocess.run([sys.executable, "-m", "evalserve.cli.main", "gdeval", *args], capture_output=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == gdeval_pl(oracles, args).stdout


# -- generated inputs -----------------------------------------------------------------------------------------

DOCNOS = ["d1", "d2", "d10", "d9", "D5", "doc-3", "x#y", "clueweb09-en0000-00-00001", "a", "ab", "b"]


def draw_run(draw: st.DrawFn, topics: list[int]) -> str:
    """A run on some of ``topics`` (always the first): tied scores spelled several ways, unjudged and odd
    docnos, topic prefixes, tabs, CRLF, extra fields, the tag of its last line differing."""
    lines = []
    for i, topic in enumerate(topics):
        if i and not draw(st.booleans()):
            continue
        spelled = draw(st.sampled_from([str(topic), f"wt10-{topic}"]))
        for rank, doc in enumerate(draw(st.lists(st.sampled_from(DOCNOS), min_size=1, max_size=12, unique=True))):
            score = draw(st.sampled_from(["1", "1.0", "2.5", "-0.5", "1e0", "0", "3", "-2", "2x"]))
            sep = draw(st.sampled_from([" ", "\t"]))
            extra = draw(st.sampled_from(["", "", " extra"]))
            tag = draw(st.sampled_from(["tagA", "tagA", "tagB"]))
            lines.append(sep.join([spelled, "Q0", doc, str(rank), score, tag]) + extra)
    end = draw(st.sampled_from(["\n", "\r\n"]))
    return "".join(line + end for line in draw(st.permutations(lines)))


@st.composite
def inputs(draw: st.DrawFn) -> tuple[bytes, bytes, bytes | None, list[str]]:
    """(qrels, run, baseline run or None, options): a few topics, some only in one file, some without a
    relevant document; grades -2 to 4."""
    topics = draw(st.lists(st.integers(1, 30), min_size=1, max_size=4, unique=True))
    qrels = []
    for i, topic in enumerate(topics):
        if i == 0 or draw(st.booleans()):
            for doc in draw(st.lists(st.sampled_from(DOCNOS), min_size=1, max_size=8, unique=True)):
                qrels.append(f"{draw(st.sampled_from([str(topic), f'wt10-{topic}']))} 0 {doc}"
                             f" {draw(st.sampled_from([-2, 0, 0, 1, 1, 2, 3, 4]))}")
    run = draw_run(draw, topics)
    baseline = draw_run(draw, draw(st.permutations(topics))) if draw(st.integers(0, 3)) == 0 else None
    options: list[str] = []
    if draw(st.booleans()):
        options.append("-c")
    if draw(st.booleans()):
        options += ["-k", str(draw(st.sampled_from([1, 2, 3, 5, 10])))]
    if baseline is not None and draw(st.booleans()):
        options += ["-riskAlpha", draw(st.sampled_from(["0", "1.0", "2"]))]
    qrels_text = "".join(q + "\n" for q in qrels).encode()
    return qrels_text, run.encode(), None if baseline is None else baseline.encode(), options


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=inputs())
def test_generated_inputs_byte_for_byte(oracles, tmp_path: Path, capsysbinary, case) -> None:
    qrels_text, run_text, baseline, options = case
    (tmp_path / "qrels").write_bytes(qrels_text)
    (tmp_path / "run").write_bytes(run_text)
    if baseline is not None:
        (tmp_path / "base").write_bytes(baseline)
        options = ["-baseline", str(tmp_path / "base"), *options]
    args = [*options, str(tmp_path / "qrels"), str(tmp_path / "run")]
    expected = gdeval_pl(oracles, args)
    assert expected.returncode == 0, expected.stderr
    code, out, err = ours(capsysbinary, args)
    assert code == 0, err
    assert out == expected.stdout


def test_amean_leaves_out_topics_without_relevant_documents(oracles, tmp_path: Path, capsysbinary) -> None:
    (tmp_path / "qrels").write_text("1 0 a 2\n2 0 b 0\n3 0 c -2\n")
    (tmp_path / "run").write_text("1 Q0 a 1 1 r\n2 Q0 b 1 1 r\n3 Q0 x 1 1 r\n")
    for options in ([], ["-c"]):
        args = [*options, str(tmp_path / "qrels"), str(tmp_path / "run")]
        code, out, _ = ours(capsysbinary, args)
        assert code == 0 and out == gdeval_pl(oracles, args).stdout
        assert out.splitlines()[1:] == [b"r,1,1.00000,0.18750", b"r,amean,1.00000,0.18750"]


# -- refusals -------------------------------------------------------------------------------------------------


def test_what_gdeval_would_miscount_is_refused(tmp_path: Path, capsysbinary) -> None:
    (tmp_path / "qrels").write_text("1 0 a 2\n1 0 a 3\n7 0 b 1\n")
    (tmp_path / "run").write_text("1 Q0 a 1 1 r\n1 Q0 a 2 0 r\n")
    code, out, err = ours(capsysbinary, [str(tmp_path / "qrels"), str(tmp_path / "run")])
    assert (code, out) == (2, b"")
    assert "[repeated-judgment]" in err and "[duplicate-docno]" in err
    (tmp_path / "qrels").write_text("7 0 b 1\n")
    (tmp_path / "run").write_text("007 Q0 b 1 1 r\n")
    code, _, err = ours(capsysbinary, [str(tmp_path / "qrels"), str(tmp_path / "run")])
    assert code == 2 and "topic 7 is spelled 007 and 7" in err


def test_format_errors_are_located(oracles, tmp_path: Path, capsysbinary) -> None:
    (tmp_path / "qrels").write_text("1 0 a 2\n1 0 b 5\n1 3 c 1\n")
    (tmp_path / "run").write_text("1 Q0 a 1 1 r\n1 XX b 2 0 r\n")
    args = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    assert gdeval_pl(oracles, args).returncode != 0
    code, _, err = ours(capsysbinary, args)
    assert code == 2
    assert ":2:7: error: grade 5 is above 4" in err and ":3:3: error: second field '3' is not 0" in err
    assert ":2:3: error: second field 'XX' is not Q0" in err


def test_usage_and_version(capsysbinary) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["gdeval", "-version"])
    assert stop.value.code == 0
    assert capsysbinary.readouterr().out == b"gdeval: version 1.3 (Mon Apr 29 20:50:24 EDT 2013)\n"
    for bad in (["-k", "0", "q", "r"], ["-k", "x", "q", "r"], ["q"], ["-riskAlpha", "-1", "q", "r"]):
        with pytest.raises(SystemExit) as stop:
            main(["gdeval", *bad])
        assert stop.value.code == 2
