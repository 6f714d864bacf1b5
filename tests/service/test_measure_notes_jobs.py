"""A job's result carries the ``single-intent`` note once, split or not (issue 28): every part of a split job
computes it, the merge keeps the first part's (``service.jobrun.split``), so the document is the one worker's and
the CLI's. SQLite, no broker, as tests/service/test_split.py."""

from __future__ import annotations

import json
from pathlib import Path

from evalserve.service.jobrun.runner import run_job
from tests.evaluation.test_measure_notes import ADHOC, RUN
from tests.service.test_split import Deployment

MEASURES = ["alpha_nDCG@20", "nDCG@20"]


def test_a_split_job_has_the_note_once_as_one_worker_has(tmp_path: Path) -> None:
    files = [(f"r{i}.run", RUN.encode()) for i in range(4)]
    one = Deployment(tmp_path / "one", EVALSERVE_SPLIT_RUNS="0")
    whole = one.job(one.collection(ADHOC.encode()), files, MEASURES)
    assert run_job(one.ctx, whole) == "succeeded"
    split = Deployment(tmp_path / "split", EVALSERVE_SPLIT_RUNS="2")
    job_id = split.job(split.collection(ADHOC.encode()), files, MEASURES)
    assert run_job(split.ctx, job_id) == "split"
    assert split.run_parts(job_id) == ["succeeded"] * 2
    assert split.result(job_id) == one.result(whole)
    notes = [w for w in json.loads(split.result(job_id))["meta"]["warnings"] if w["code"] == "single-intent"]
    assert len(notes) == 1 and notes[0]["message"].startswith("alpha_nDCG@20: every topic of the judgments has one")
