"""trec_eval's measure spellings over HTTP: nicknames (``official``, ``all_trec``, ``set``), bare measure
families (``P``, ``ndcg_cut``) and ``name.params`` lists are accepted wherever the API takes a measure list
(evaluation jobs, submissions, shared tasks), expanded as ``evaluation.drop_in.trec_eval.expand_request`` does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluation.drop_in.trec_eval import expand_request
from tests.service.test_api import _is_problem
from tests.service.test_tasks import TaskApi


@pytest.fixture
def api(tmp_path: Path) -> Iterator[TaskApi]:
    made = TaskApi(tmp_path)
    yield made
    made.app.extensions["evalserve"].db.dispose()


def test_an_evaluation_job_takes_trec_eval_nicknames_and_families(api: TaskApi) -> None:
    collection = api.collection()
    asked = ["official", "ndcg_cut", "P.5,10"]
    job = api.call("POST", "/v1/evaluations", json={"collection": collection, "runs": [api.run(collection)],
                                                    "measures": asked, "per_topic": True})
    assert job.status_code == 202, job.get_data(as_text=True)
    api.work()
    result = api.call("GET", f"/v1/jobs/{job.json['id']}/result").json
    (scores,) = result["runs"].values()
    expected = list(dict.fromkeys(piece for name in asked for piece in expand_request(name)))
    assert list(scores) == expected
    assert {"map", "gm_map", "P_10", "iprec_at_recall_0.50", "ndcg_cut_1000", "P.5"} <= set(scores)
    assert scores["P_10"]["mean"] == scores["P.10"]["mean"]


def test_a_shared_task_takes_a_nickname(api: TaskApi) -> None:
    task = api.task(measures=["set"], primary_measure="set_F")
    assert task["measures"][:3] == ["NumRet", "NumRel", "NumRelRet"]
    assert len(task["measures"]) == len(expand_request("set"))


def test_unknown_spellings_are_still_refused(api: TaskApi) -> None:
    collection = api.collection()
    run = api.run(collection)
    for bad in (["all_trek"], ["P.0"], ["official.5"]):
        _is_problem(api.call("POST", "/v1/evaluations", json={"collection": collection, "runs": [run],
                                                              "measures": bad}), 422, "invalid-measure")
