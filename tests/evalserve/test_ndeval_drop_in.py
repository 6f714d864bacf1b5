"""``evalserve ndeval`` against ndeval 4.5 itself (built from ../shared/oracles by the ``oracles`` fixture):
standard output byte for byte on the real TREC Web runs and qrels and on generated inputs, with and without
``-c``, ``-traditional``, ``-M``, ``-alpha``/``-beta`` and ``-baseline``; and the clear refusals where ndeval
stops with a bare "syntax error" or prints ``-nan`` (spec Appendix E.2).
"""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalserve.cli.main import main

RUNS = ("ql-results-cata-filtered.txt", "ql-results-catb-filtered.txt", "ql-results-cata.txt.gz",
        "ql-results-catb.txt.gz")
QRELS_2012 = ("trec-web-2009-2014", "2012", "qrels-for-ndeval.txt")


def ndeval_c(oracles, args: list[str]) -> subprocess.CompletedProcess[bytes]:  # type: ignore[no-untyped-def]
    return subprocess.run([str(oracles.ndeval), *args], capture_output=True, timeout=60, check=False)


def ours(capsysbinary: pytest.CaptureFixture[bytes], args: list[str]) -> tuple[int, bytes, str]:
    """``evalserve ndeval ARGS`` in this process: exit code, standard output bytes, standard error."""
    capsysbinary.readouterr()
    code = main(["ndeval", *args])
    captured = capsysbinary.readouterr()
    return code, captured.out, captured.err.decode()


def plain_run(shared_data: Path, name: str, tmp: Path) -> Path:
    """The run as a plain file (ndeval cannot read gzip; evalserve can, checked below)."""
    path = shared_data / "trec-web-2012-runs" / "runs" / name
    if name.endswith(".gz"):
        plain = tmp / name.removesuffix(".gz")
        plain.write_bytes(gzip.decompress(path.read_bytes()))
        return plain
    return path


@pytest.mark.parametrize("options", [[], ["-c"], ["-traditional"], ["-c", "-traditional"]])
@pytest.mark.parametrize("run", RUNS)
def test_real_runs_byte_for_byte(oracles, shared_data: Path, capsysbinary, tmp_path: Path, run: str,
                                 options: list[str]) -> None:
    qrels = str(shared_data.joinpath(*QRELS_2012))
    path = str(plain_run(shared_data, run, tmp_path))
    expected = ndeval_c(oracles, [*options, qrels, path])
    assert expected.returncode == 0, expected.stderr
    code, out, err = ours(capsysbinary, [*options, qrels, path])
    assert (code, err) == (0, "")
    assert out == expected.stdout


@pytest.mark.parametrize("options", [
    ["-M", "7", "-alpha", "0.3", "-beta", "0.8"],
    ["-ca", "-M", "12"],
    ["-baseline", "{baseline}"],
    ["-c", "-traditional", "-baseline", "{baseline}", "-riskAlpha", "1.0"],
])
def test_real_run_other_options(oracles, shared_data: Path, capsysbinary, options: list[str]) -> None:
    runs = shared_data / "trec-web-2012-runs" / "runs"
    args = [o.format(baseline=runs / "ql-results-catb-filtered.txt") for o in options]
    args += [str(shared_data.joinpath(*QRELS_2012)), str(runs / "ql-results-cata-filtered.txt")]
    expected = ndeval_c(oracles, args)
    assert expected.returncode == 0, expected.stderr
    code, out, _ = ours(capsysbinary, args)
    assert code == 0
    assert out == expected.stdout


@pytest.mark.parametrize("year, qrels", [("2009", "qrels.diversity"), ("2010", "10.diversity-qrels.final.txt"),
                                         ("2011", "qrels-for-ndeval.txt"), ("2013", "qrels.ndeval.txt"),
                                         ("2014", "qrels.ndeval.txt")])
def test_other_years_qrels_as_judgments(oracles, shared_data: Path, tmp_path: Path, capsysbinary, year: str,
                                        qrels: str) -> None:
    """Every year's diversity qrels (subtopic-0 rows, single-subtopic topics, positive-only files), with the 2012
    run's documents moved onto that year's topics so that they meet."""
    path = str(shared_data / "trec-web-2009-2014" / year / qrels)
    qrels_lines = Path(path).read_bytes().splitlines()
    first = int(qrels_lines[0].split()[0])
    lines = (shared_data / "trec-web-2012-runs" / "runs" / "ql-results-catb-filtered.txt").read_bytes().splitlines()
    moved = tmp_path / "moved.run"
    judged = [line.split()[2] for line in qrels_lines[:3000]]
    out = []
    for i, line in enumerate(lines[:6000]):
        topic, q0, docno, rank, score, tag = line.split()
        docno = judged[i % len(judged)] if i % 3 == 0 else docno  # some judged documents, some not
        out.append(b" ".join([str(first + int(topic) - 151).encode(), q0, docno, rank, score, tag]))
    moved.write_bytes(b"\n".join(out) + b"\n")
    for options in ([], ["-c", "-traditional"]):
        expected = ndeval_c(oracles, [*options, path, str(moved)])
        code, got, _ = ours(capsysbinary, [*options, path, str(moved)])
        if expected.returncode:  # a duplicate docno after the move: both refuse
            assert code == 2
            continue
        assert code == 0
        assert got == expected.stdout


def test_gzip_run_reads_as_plain(shared_data: Path, tmp_path: Path, capsysbinary) -> None:
    qrels = str(shared_data.joinpath(*QRELS_2012))
    gz = str(shared_data / "trec-web-2012-runs" / "runs" / "ql-results-cata.txt.gz")
    assert ours(capsysbinary, [qrels, gz])[1] == ours(capsysbinary, [qrels, str(plain_run(shared_data,
                                                                  "ql-results-cata.txt.gz", tmp_path))])[1]


def test_as_a_process(oracles, shared_data: Path) -> None:
    qrels = str(shared_data.joinpath(*QRELS_2012))
    run = str(shared_data / "trec-web-2012-runs" / "runs" / "ql-results-catb-filtered.txt")
    expected = ndeval_c(oracles, ["-c", "-traditional", qrels, run])
    done = subprocess.run([sys.executable, "-m", "evalserve.cli.main", "ndeval", "-c", "-traditional", qrels, run],
                          capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected.stdout


# -- generated inputs -----------------------------------------------------------------------------------------

DOCNOS = ["d1", "d2", "d10", "d9", "D5", "doc-3", "x#y", "clueweb09-en0000-00-00001", "a", "ab", "b", "z\xe9"]


def draw_run(draw: st.DrawFn, topics: list[int], tag: str) -> str:
    """A run on some of ``topics`` (always the first): gapped ranks in shuffled lines, tied scores, unjudged and
    odd docnos, topic prefixes and leading zeros, tabs, CRLF and extra fields."""
    lines = []
    for i, topic in enumerate(topics):
        if i and not draw(st.booleans()):
            continue
        shown = draw(st.lists(st.sampled_from(DOCNOS), min_size=1, max_size=12, unique=True))
        ranks = sorted(draw(st.lists(st.integers(0, 40), min_size=len(shown), max_size=len(shown), unique=True)))
        spelled = draw(st.sampled_from([str(topic), f"wt09-{topic}", f"{topic:03d}"]))
        for doc, rank in zip(shown, draw(st.permutations(ranks))):
            score = draw(st.sampled_from(["1", "2.5", "-0.5", "2.50", "1e1", "0", "3"]))
            sep = draw(st.sampled_from([" ", "\t", "  "]))
            extra = draw(st.sampled_from(["", "", " extra"]))
            lines.append(sep.join([spelled, "Q0", doc, str(rank), score, tag]) + extra)
    end = draw(st.sampled_from(["\n", "\r\n"]))
    return "".join(line + end for line in draw(st.permutations(lines)))


@st.composite
def inputs(draw: st.DrawFn) -> tuple[bytes, bytes, bytes | None, list[str]]:
    """(qrels, run, baseline run or None, options): a few topics, some only in one file; judgments 0-3 on
    subtopics 0-4 (some subtopics and topics without a relevant document)."""
    topics = draw(st.lists(st.integers(1, 30), min_size=1, max_size=4, unique=True))
    qrels = []
    for i, topic in enumerate(topics):
        if i == 0 or draw(st.booleans()):
            judged = draw(st.lists(st.sampled_from(DOCNOS), min_size=1, max_size=8, unique=True))
            for doc in judged:
                for sub in draw(st.lists(st.integers(0, 4), min_size=1, max_size=3, unique=True)):
                    qrels.append(f"{topic} {sub} {doc} {draw(st.sampled_from([0, 0, 1, 1, 2, 3]))}")
    run = draw_run(draw, topics, "tag-1")
    baseline = draw_run(draw, draw(st.permutations(topics)), "base") if draw(st.integers(0, 3)) == 0 else None
    options: list[str] = []
    if draw(st.booleans()):
        options.append("-c")
    if draw(st.booleans()):
        options.append("-traditional")
    if draw(st.booleans()):
        options += ["-M", str(draw(st.integers(1, 6)))]
    if draw(st.booleans()):
        options += ["-alpha", draw(st.sampled_from(["0", "0.25", "0.99"])),
                    "-beta", draw(st.sampled_from(["0.1", "1"]))]
    if baseline is not None and draw(st.booleans()):
        options += ["-riskAlpha", draw(st.sampled_from(["0", "1.0", "2"]))]
    qrels_text = "".join(q + "\n" for q in qrels).encode()
    return qrels_text, run.encode(), None if baseline is None else baseline.encode(), options


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=inputs())
def test_generated_inputs_byte_for_byte(oracles, tmp_path: Path, capsysbinary, case) -> None:
    qrels_text, run_text, baseline, options = case
    (tmp_path / "qrels").write_bytes(qrels_text)
    (tmp_path / "run").write_bytes(run_text)
    if baseline is not None:
        (tmp_path / "base").write_bytes(baseline)
        options = ["-baseline", str(tmp_path / "base"), *options]
    args = [*options, str(tmp_path / "qrels"), str(tmp_path / "run")]
    expected = ndeval_c(oracles, args)
    code, out, err = ours(capsysbinary, args)
    if expected.returncode != 0:  # a duplicate docno within -M: ndeval stops, so do we, saying where
        assert code == 2 and "duplicate-docno" in err, (expected.stderr, err)
        return
    amean = expected.stdout.splitlines()[-1]
    if "-c" not in options and amean.count(b"-nan") == 21:  # no judged topic: nothing to average
        assert code == 1 and "no-topics-scored" in err
        return
    assert code == 0, err
    assert out == expected.stdout, (options, qrels_text, run_text, baseline)  # the inputs, to reproduce


# -- refusals -------------------------------------------------------------------------------------------------


def test_negative_judgment_is_refused_clearly(oracles, tmp_path: Path, capsysbinary) -> None:
    (tmp_path / "qrels").write_text("1 1 a 1\n1 2 b -2\n")
    (tmp_path / "run").write_text("1 Q0 a 1 1 r\n")
    args = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    assert ndeval_c(oracles, args).returncode != 0  # ndeval: "syntax error in qrel file ... at line 2"
    code, out, err = ours(capsysbinary, args)
    assert (code, out) == (2, b"")
    assert f"{tmp_path / 'qrels'}:2:7: error: judgment '-2'" in err and "[grade-negative]" in err


def test_duplicate_rank_names_both_lines(tmp_path: Path, capsysbinary) -> None:
    (tmp_path / "qrels").write_text("1 1 a 1\n")
    (tmp_path / "run").write_text("1 Q0 a 1 1 r\n1 Q0 b 1 2 r\n")
    code, _, err = ours(capsysbinary, [str(tmp_path / "qrels"), str(tmp_path / "run")])
    assert code == 2 and "rank 1 appears twice in topic 1 (lines 1 and 2)" in err and "-traditional" in err


def test_repeated_relevant_judgment_is_refused(tmp_path: Path, capsysbinary) -> None:
    (tmp_path / "qrels").write_text("1 1 a 1\n1 1 a 1\n1 2 b 0\n1 2 b 0\n")
    (tmp_path / "run").write_text("1 Q0 a 1 1 r\n")
    code, _, err = ours(capsysbinary, [str(tmp_path / "qrels"), str(tmp_path / "run")])
    assert code == 2 and err.count("[repeated-judgment]") == 1 and ":2:" in err


def test_topic_without_relevant_document_warns(oracles, tmp_path: Path, capsysbinary) -> None:
    (tmp_path / "qrels").write_text("1 1 a 0\n2 1 c 1\n")
    (tmp_path / "run").write_text("1 Q0 a 1 3 r\n2 Q0 c 1 1 r\n")
    args = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    code, out, err = ours(capsysbinary, args)
    assert code == 0 and out == ndeval_c(oracles, args).stdout and b"-nan" in out
    assert "topic 1 of the qrels has no relevant document" in err


def test_usage_and_version(capsysbinary) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["ndeval", "-version"])
    assert stop.value.code == 0
    assert capsysbinary.readouterr().out == b"ndeval: version 4.5 (Mon 29 Apr 2013 20:51:02 EDT)\n"
    for bad in (["-alpha", "1", "q", "r"], ["-beta", "0", "q", "r"], ["-M", "0", "q", "r"], ["q"],
                ["-riskAlpha", "-1", "q", "r"]):
        with pytest.raises(SystemExit) as stop:
            main(["ndeval", *bad])
        assert stop.value.code == 2


def test_no_judged_topic_exits_1_instead_of_nan_means(oracles, tmp_path: Path, capsysbinary) -> None:
    (tmp_path / "qrels").write_text("5 1 a 1\n")
    (tmp_path / "run").write_text("1 Q0 a 1 1 r\n")
    args = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    assert ndeval_c(oracles, args).stdout.splitlines()[-1].count(b"-nan") == 21
    code, out, err = ours(capsysbinary, args)
    assert (code, out) == (1, b"") and "[no-topics-scored]" in err and "-c" in err
    code, out, _ = ours(capsysbinary, ["-c", *args])  # over the qrels' topics the mean is 0, as ndeval's
    assert code == 0 and out == ndeval_c(oracles, ["-c", *args]).stdout
