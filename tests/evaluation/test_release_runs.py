"""``run_evaluation(release=True)`` (what ``evalserve evaluate`` asks for): the same report, and each run's columns
freed once it is judged -- the peak memory of a one-shot command (bench/RESULTS.md, issue 28 (d))."""

from __future__ import annotations

import gc
import json
import weakref
from pathlib import Path

import pytest

from evaluation.formats import load
from evaluation.formats.trec_run import RunFile
from evaluation.pipeline import load_inputs, run_evaluation
from evaluation.sources import Inputs

SAMPLES = Path(__file__).resolve().parents[2] / "evalserve" / "samples"
QRELS, RUNS = SAMPLES / "sample.qrels", [SAMPLES / "bm25.run", SAMPLES / "neural.run"]
ADHOC = ["AP", "P@10", "nDCG@10", "RR", "Rprec", "Bpref", "num_rel_ret", "gm_map", "iprec_at_recall_0.10"]


def _inputs(threads: int) -> Inputs:
    return load_inputs(load(QRELS), [RunFile(str(r)) for r in RUNS], threads=threads)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("measures", [ADHOC, ["AP", "alpha_nDCG@10"], ["AP", "MAP_IA"]])
def test_released_runs_give_the_same_report(threads: int, measures: list[str]) -> None:
    kept = run_evaluation(_inputs(threads), measures, threads=threads)
    inputs = _inputs(threads)
    released = run_evaluation(inputs, measures, threads=threads, release=True)
    assert inputs.runs == []  # taken out of the inputs
    assert json.dumps(released.as_json(per_topic=True), sort_keys=True) == json.dumps(
        kept.as_json(per_topic=True), sort_keys=True)
    assert released.tags == kept.tags


def test_a_released_run_is_freed() -> None:
    inputs = _inputs(1)
    columns = [weakref.ref(r.docno) for r in inputs.runs] + [weakref.ref(r.score) for r in inputs.runs]
    run_evaluation(inputs, ADHOC, release=True)
    gc.collect()
    assert all(ref() is None for ref in columns)


def test_without_release_the_runs_stay() -> None:
    inputs = _inputs(1)
    run_evaluation(inputs, ADHOC)
    assert len(inputs.runs) == 2
