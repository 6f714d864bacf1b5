"""Measure advice for organisers (issue 17): ``GET /v1/tasks/{id}/meta`` meta-evaluates the task's official
measures over the submissions its leaderboard shows. Done when a task's meta-evaluation over the TREC Web 2012 runs
of three teams gives the same Metric Unanimity and discriminative power as ``evalserve meta`` offline: the
oracle is the CLI on the same qrels and runs, same measures, topics rule and seed."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalserve.cli.main import main as cli_main
from tests.service.test_api import _file, _is_problem
from tests.service.test_tasks import TaskApi, _three_teams

MEASURES = ["nDCG@20", "ERR@20", "P@10", "AP"]
#: team member -> a real TREC Web 2012 run (the README: name runs by file, every tag is "indri")
TEAMS = {"bob": "ql-results-cata-filtered.txt", "carol": "ql-results-catb-filtered.txt",
         "dave": "ql-results-cata.txt.gz"}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[TaskApi]:
    made = TaskApi(tmp_path)
    yield made
    made.app.extensions["evalserve"].db.dispose()


def _web2012_task(api: TaskApi, shared_data: Path) -> str:
    """A task over the TREC Web 2012 ad hoc judgments with three teams, each submitting one real run."""
    qrels = (shared_data / "trec-web-2009-2014" / "2012" / "qrels.adhoc.txt").read_bytes()
    task_id = str(api.task(collection=api.hidden_collection(qrels), measures=MEASURES,
                           primary_measure="nDCG@20")["id"])
    runs = shared_data / "trec-web-2012-runs" / "runs"
    for who, name in TEAMS.items():
        assert api.register(task_id, who).status_code == 201
        r = api.call("POST", f"/v1/tasks/{task_id}/submissions", who,
                     data={"run": (io.BytesIO((runs / name).read_bytes()), name)})
        assert r.status_code == 202, r.get_data(as_text=True)
    api.work()
    return task_id


def _offline(method: str, shared_data: Path, tmp_path: Path, *options: str) -> dict[str, Any]:
    """``evalserve meta METHOD`` on the same judgments and runs, with the task's topics rule."""
    runs = shared_data / "trec-web-2012-runs" / "runs"
    out = tmp_path / f"{method}.json"
    argv = ["meta", method, "--qrels", str(shared_data / "trec-web-2009-2014" / "2012" / "qrels.adhoc.txt"),
            *(a for name in TEAMS.values() for a in ("--run", str(runs / name))), "-m", *MEASURES,
            "--topics", "complete", *options, "-o", str(out)]
    assert cli_main(argv) == 0
    document: dict[str, Any] = json.loads(out.read_text())
    return document


def test_a_tasks_meta_evaluation_equals_evalserve_meta_offline(api: TaskApi, shared_data: Path,
                                                                tmp_path: Path) -> None:
    task_id = _web2012_task(api, shared_data)
    started = time.perf_counter()
    r = api.call("GET", f"/v1/tasks/{task_id}/meta?seed=7&resamples=1000", "alice")
    took = time.perf_counter() - started
    assert r.status_code == 200, r.get_data(as_text=True)
    doc = r.json
    print(f"GET /meta took {took * 1000:.0f} ms")
    assert took < 5, f"computed inline: {took:.2f} s"
    assert doc["measures"] == MEASURES and doc["version"] == 1 and doc["selection"] == "latest"
    assert [e["team"] for e in doc["runs"]] == ["team-bob", "team-carol", "team-dave"]
    assert [e["label"] for e in doc["runs"]] == doc["methods"]["discriminative-power"]["runs"]

    unanimity = _offline("unanimity", shared_data, tmp_path)
    served = doc["methods"]["unanimity"]
    assert served["pairs"] == unanimity["pairs"] and served["meta"] == unanimity["meta"]
    for m in MEASURES:
        assert served["unanimity"][m] == pytest.approx(unanimity["unanimity"][m], abs=1e-9), m

    power = _offline("discriminative-power", shared_data, tmp_path, "--seed", "7", "--resamples", "1000")
    served = doc["methods"]["discriminative-power"]
    assert {k: served[k] for k in ("resamples", "alpha", "seed", "topics", "meta")} == {
        k: power[k] for k in ("resamples", "alpha", "seed", "topics", "meta")}
    for m in MEASURES:
        mine, theirs = served["discriminative_power"][m], power["discriminative_power"][m]
        assert (mine["significant_pairs"], mine["pairs"]) == (theirs["significant_pairs"], theirs["pairs"]), m
        assert mine["proportion"] == pytest.approx(theirs["proportion"], abs=1e-9), m
        assert mine["delta"] == pytest.approx(theirs["delta"], abs=1e-9), m
        assert mine["asl"] == pytest.approx(theirs["asl"], abs=1e-9), m

    correlation = _offline("correlation", shared_data, tmp_path)
    for m in MEASURES:
        assert doc["methods"]["correlation"]["correlation"][m] == pytest.approx(correlation["correlation"][m]), m
    assert doc["options"] == {"resamples": 1000, "alpha": 0.05, "seed": 7, "correlation": "tau_b"}


def test_only_organisers_get_measure_advice(api: TaskApi) -> None:
    task_id = _three_teams(api)
    _is_problem(api.call("GET", f"/v1/tasks/{task_id}/meta", "bob"), 403, "organisers-only")
    _is_problem(api.call("GET", f"/v1/tasks/{task_id}/meta", "reader"), 403, "organisers-only")
    _is_problem(api.client.get(f"/v1/tasks/{task_id}/meta"), 401, "unauthorized")
    private = _three_teams(api, visibility="private")
    _is_problem(api.call("GET", f"/v1/tasks/{private}/meta", "reader"), 404, "not-found")
    doc = api.call("GET", f"/v1/tasks/{task_id}/meta", "alice").json
    assert set(doc["methods"]) == {"unanimity", "discriminative-power", "correlation"}
    assert api.call("GET", f"/v1/tasks/{task_id}", "alice").json["links"]["meta"] == f"/v1/tasks/{task_id}/meta"
    assert "meta" not in api.call("GET", f"/v1/tasks/{task_id}", "bob").json["links"]
    page = api.call("GET", f"/v1/tasks/{task_id}/leaderboard?format=html", "alice").get_data(as_text=True)
    assert f'href="/v1/tasks/{task_id}/meta"' in page, "organisers find the advice beside the leaderboard"
    for who in ("bob", None):
        r = api.call("GET", f"/v1/tasks/{task_id}/leaderboard?format=html", who) if who else \
            api.client.get(f"/v1/tasks/{task_id}/leaderboard?format=html")
        assert r.status_code == 200 and "/meta" not in r.get_data(as_text=True)


def test_meta_options_and_too_few_submissions_are_clear(api: TaskApi) -> None:
    task_id = str(api.task()["id"])
    api.register(task_id, "bob")
    api.submit(task_id, "bob")
    api.work()
    body = _is_problem(api.call("GET", f"/v1/tasks/{task_id}/meta", "alice"), 409, "too-few-submissions")
    assert "1 evaluated" in body["detail"]
    assert api.call("GET", f"/v1/tasks/{task_id}/meta?resamples=5", "alice").status_code == 422
    assert api.call("GET", f"/v1/tasks/{task_id}/meta?correlation=pearson", "alice").status_code == 422
    _is_problem(api.call("GET", f"/v1/tasks/{task_id}/meta?phase=nope", "alice"), 404, "not-found")
    api.register(task_id, "carol")
    api.call("POST", f"/v1/tasks/{task_id}/submissions", "carol",
             data={"run": (_file(b"1 Q0 d2 1 3 x\n2 Q0 d5 1 3 x\n3 Q0 d6 1 1 x\n"), "x.run")})
    api.work()
    doc = api.call("GET", f"/v1/tasks/{task_id}/meta?correlation=tau_ap", "alice").json
    assert doc["methods"]["correlation"]["method"] == "tau_ap" and len(doc["runs"]) == 2
