"""Leaderboard renderers: CSV reads back to the same numbers, LaTeX is a well-formed booktabs table with escaped
labels and TREC-style significance letters, JSON round-trips."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.formats.source import Blob
from evaluation.leaderboard import Entry, Leaderboard, SignificanceSettings, rank_entries, to_csv, to_json, to_latex
from evaluation.pipeline import load_inputs, run_evaluation

MEASURES = ("nDCG@20", "ERR@20", "P@10")
RUN_FILES = (
    "ql-results-cata-filtered.txt",
    "ql-results-cata.txt.gz",
    "ql-results-catb-filtered.txt",
    "ql-results-catb.txt.gz",
)
TRICKY = r"R&D 100% $cheap #1 my_run {x} ~y^2 a\b"


def _blob(path: Path) -> Blob:
    return Blob.from_bytes(path.read_bytes(), path.name.removesuffix(".gz"))


@pytest.fixture(scope="module")
def board(shared_file: Callable[..., Path]) -> Leaderboard:
    """The four real TREC Web 2012 runs as submissions (one document each), catb the baseline, a tricky label."""
    qrels = _blob(shared_file("trec-web-2009-2014", "2012", "qrels.adhoc.txt"))
    runs = [_blob(shared_file("trec-web-2012-runs", "runs", name)) for name in RUN_FILES]
    document = run_evaluation(load_inputs(qrels, runs), MEASURES, topics="complete").as_json(per_topic=True)
    entries = [
        Entry(f"sub-{i}", TRICKY if i == 2 else name, {"runs": {"run": by_measure}},
              baseline=name.startswith("ql-results-catb."),
              extra={"submitted_at": datetime(2024, 5, i + 1, tzinfo=timezone.utc), "participant": f"team {i}"})
        for i, (name, by_measure) in enumerate(document["runs"].items())
    ]
    return rank_entries(entries, MEASURES, "nDCG@20")


def small(labels: list[str], baseline: bool = False) -> Leaderboard:
    entries = [Entry(f"k{i}", label, {"runs": {"r": {"P": {"mean": 0.0, "per_topic": {
        "t1": 0.1 * i, "t2": 0.1 * i + 0.05, "t3": 0.1 * i + 0.02}}}}}, baseline=baseline and i == 0)
        for i, label in enumerate(labels)]
    return rank_entries(entries, ["P"], "P")


# ---- CSV ---------------------------------------------------------------------------------------------------------


def test_csv_reads_back_to_the_same_numbers(board: Leaderboard) -> None:
    text = to_csv(board)
    assert "\r" not in text and text.endswith("\n")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["rank", "key", "label", "baseline", *MEASURES, "delta_best", "delta_baseline", "better_than"]
    assert len(rows) == 1 + len(board.rows)
    by_key = {r.key: r for r in board.rows}
    for line in csv.DictReader(io.StringIO(text)):
        row = by_key[line["key"]]
        assert line["rank"] == ("" if row.rank is None else str(row.rank))
        assert line["label"] == row.label
        assert line["baseline"] == ("true" if row.baseline else "false")
        assert all(float(line[m]) == row.scores[m] for m in MEASURES)  # full precision
        assert float(line["delta_best"]) == row.delta_best
        assert row.delta_baseline is not None and float(line["delta_baseline"]) == row.delta_baseline
        assert line["better_than"].split() == list(row.better_than)  # keys, not ranks (ambiguous under ties)
    assert any(line["better_than"] for line in csv.DictReader(io.StringIO(text)))
    assert TRICKY in text


def test_csv_without_baseline_leaves_the_column_empty() -> None:
    lines = list(csv.DictReader(io.StringIO(to_csv(small(["a", "b"])))))
    assert [line["delta_baseline"] for line in lines] == ["", ""]
    assert [line["key"] for line in lines] == ["k1", "k0"]
    assert to_csv(rank_entries([], ["P", "R"], "P")) == (
        "rank,key,label,baseline,P,R,delta_best,delta_baseline,better_than\n")


# ---- LaTeX -------------------------------------------------------------------------------------------------------


def body_lines(tex: str) -> list[str]:
    lines = tex.splitlines()
    return lines[lines.index(r"\midrule") + 1 : lines.index(r"\bottomrule")]


def braces_balanced(tex: str) -> bool:
    depth = 0
    for c in tex.replace(r"\{", "").replace(r"\}", ""):
        depth += {"{": 1, "}": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0


def unescaped_specials(tex: str) -> list[str]:
    """Special characters in table cells not preceded by a backslash (commands' own braces aside)."""
    stripped = re.sub(r"\\(textasciitilde|textasciicircum|textbackslash)\{\}", "", tex)
    stripped = re.sub(r"\\[&%$#_{}]", "", stripped)
    return re.findall(r"[&%#_~^]", stripped.replace(" & ", " "))


def test_latex_table_structure(board: Leaderboard) -> None:
    tex = to_latex(board, caption="TREC 2012 Web: ad hoc_task (ClueWeb09)")
    assert tex.startswith(r"\begin{table}") and tex.rstrip().endswith(r"\end{table}")
    assert tex.count(r"\begin{tabular}") == tex.count(r"\end{tabular}") == 1
    assert tex.index(r"\toprule") < tex.index(r"\midrule") < tex.index(r"\bottomrule")
    assert braces_balanced(tex)
    assert r"\begin{tabular}{rllrrrr}" in tex
    header = tex.splitlines()[tex.splitlines().index(r"\toprule") + 1]
    assert header == r"Rank &  & System & \textbf{nDCG@20} & ERR@20 & P@10 & $\Delta$ best \\"
    rows = body_lines(tex)
    assert len(rows) == len(board.rows)
    assert all(line.count(" & ") == 3 + len(MEASURES) and line.endswith(r" \\") for line in rows)
    assert r"\caption{TREC 2012 Web: ad hoc\_task (ClueWeb09)}" in tex
    assert "paired t-test, Holm correction, $\\alpha = 0.05$, 50 topics" in tex
    assert "Baseline in italics, unranked and not tested." in tex


def test_latex_escapes_labels(board: Leaderboard) -> None:
    tex = to_latex(board)
    escaped = (r"R\&D 100\% \$cheap \#1 my\_run \{x\} \textasciitilde{}y\textasciicircum{}2 a\textbackslash{}b")
    assert escaped in tex
    assert not unescaped_specials("\n".join(body_lines(tex)))


def test_latex_letters_mark_significant_wins(board: Leaderboard) -> None:
    tex = to_latex(board, digits=3)
    ranked = [r.key for r in board.rows if r.rank is not None]  # only ranked rows get letters
    letters = "abcd"
    for line, row in zip(body_lines(tex), board.rows):
        cells = line.removesuffix(r" \\").split(" & ")
        assert cells[0] == ("--" if row.rank is None else str(row.rank))
        assert cells[1] == ("" if row.rank is None else rf"\textsuperscript{{{letters[ranked.index(row.key)]}}}")
        primary = cells[3]
        expected = "".join(letters[ranked.index(k)] for k in row.better_than)
        score = f"{row.scores['nDCG@20']:.3f}"
        assert primary == (score + rf"\textsuperscript{{{expected}}}" if expected else score)
        assert cells[4] == f"{row.scores['ERR@20']:.3f}"
        assert cells[-1] == f"{row.delta_best:.3f}"
        assert (r"\textit{" in cells[2]) == row.baseline
    assert any(r.better_than for r in board.rows)


def test_latex_of_many_rows_and_other_settings() -> None:
    labels = [f"run{i}" for i in range(30)]
    tex = to_latex(small(labels, baseline=True))
    rows = body_lines(tex)
    assert len(rows) == 30
    assert rows[26].split(" & ")[1] == r"\textsuperscript{aa}"
    entries = [Entry("a", "A", {"runs": {"r": {"P": {"mean": 0, "per_topic": {"1": 0.5, "2": 0.7}}}}})]
    tukey = rank_entries(entries, ["P"], "P", significance=SignificanceSettings("tukey", alpha=0.01))
    tex = to_latex(tukey)
    assert "randomised Tukey HSD test, no correction, $\\alpha = 0.01$" in tex
    assert r"\caption" not in tex and "Baseline" not in tex
    empty = to_latex(rank_entries([], ["P"], "P"))
    assert body_lines(empty) == [] and braces_balanced(empty)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=5))
def test_latex_is_well_formed_for_any_label(labels: list[str]) -> None:
    tex = to_latex(small(labels), caption=labels[0])
    assert braces_balanced(tex)
    rows = body_lines(tex)
    assert len(rows) == len(labels)
    assert not unescaped_specials("\n".join(rows))


# ---- JSON --------------------------------------------------------------------------------------------------------


def test_json_round_trips(board: Leaderboard) -> None:
    text = to_json(board)
    assert text.endswith("}\n")
    data = json.loads(text)
    expected: dict[str, Any] = board.as_dict()
    for row in expected["rows"]:
        row["extra"]["submitted_at"] = row["extra"]["submitted_at"].isoformat()
    assert data == expected
    assert data["rows"][0]["extra"]["submitted_at"].startswith("2024-05-")
    assert [r["key"] for r in data["rows"]] == [r.key for r in board.rows]
    assert json.loads(to_json(small(["a", "b", "c"]))) == small(["a", "b", "c"]).as_dict()
    with pytest.raises(TypeError):
        to_json(rank_entries([Entry("a", "A", {"runs": {"r": {"P": {"mean": 0, "per_topic": {"1": 0.5}}}}},
                                    extra={"odd": object()})], ["P"], "P"))
