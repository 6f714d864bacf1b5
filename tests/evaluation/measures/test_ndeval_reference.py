"""ndeval parity on real data: every column ndeval 4.5 printed for the four TREC Web 2012 runs, per topic.

`reference/ndeval-default` was made with ndeval's default (rank-column order, topics in run and qrels):
our ``--ties rank --topics common``; `reference/ndeval-c-traditional` with ``-c -traditional``: our
``--ties trec --topics complete``. ndeval prints 6 decimals, so the tolerance is half a unit of the 6th.
"""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path

import pytest

from evaluation import Evaluator, read_qrels, read_run

RUNS = ("ql-results-cata", "ql-results-catb", "ql-results-cata-filtered", "ql-results-catb-filtered")
MODES = {"ndeval-default": ("rank", "common"), "ndeval-c-traditional": ("trec", "complete")}
#: ndeval's column -> our canonical name
COLUMNS = {
    **{f"ERR-IA@{k}": f"ERR_IA@{k}" for k in (5, 10, 20)},
    **{f"nERR-IA@{k}": f"nERR_IA@{k}" for k in (5, 10, 20)},
    **{f"alpha-DCG@{k}": f"alpha_DCG@{k}" for k in (5, 10, 20)},
    **{f"alpha-nDCG@{k}": f"alpha_nDCG@{k}" for k in (5, 10, 20)},
    "NRBP": "NRBP",
    "nNRBP": "nNRBP",
    "MAP-IA": "AP_IA",
    **{f"P-IA@{k}": f"P_IA@{k}" for k in (5, 10, 20)},
    **{f"strec@{k}": f"StRecall@{k}" for k in (5, 10, 20)},
}
TOLERANCE = 5e-7 + 1e-12


def _run_path(data: Path, name: str) -> Path:
    plain = data / "trec-web-2012-runs" / "runs" / f"{name}.txt"
    return plain if plain.exists() else plain.with_suffix(".txt.gz")


@cache
def _ours(data: Path, mode: str, run: str) -> dict[str, dict[str, float]]:
    ties, topics = MODES[mode]
    qrels = read_qrels(data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt")
    scores = Evaluator.from_names(qrels, COLUMNS.values(), ties=ties, topics=topics).evaluate(
        read_run(_run_path(data, run))
    )
    table = {m: scores.per_topic(m) for m in COLUMNS.values()}
    for m in COLUMNS.values():
        table[m]["amean"] = scores.mean(m)
    return table


def _reference(data: Path, mode: str, run: str) -> list[dict[str, str]]:
    with open(data / "trec-web-2012-runs" / "reference" / mode / f"{run}.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("mode", list(MODES))
def test_every_ndeval_column_per_topic(shared_data: Path, mode: str, run: str) -> None:
    ours = _ours(shared_data, mode, run)
    rows = _reference(shared_data, mode, run)
    assert {r["topic"] for r in rows} - {"amean"} == set(ours["AP_IA"]) - {"amean"}
    wrong = []
    for row in rows:
        for column, name in COLUMNS.items():
            expected, got = float(row[column]), ours[name][row["topic"]]
            if abs(expected - got) > TOLERANCE:
                wrong.append(f"topic {row['topic']} {name}: ndeval {expected}, evalserve {got:.8f}")
    assert not wrong, f"{len(wrong)} values differ, e.g.\n" + "\n".join(wrong[:15])
