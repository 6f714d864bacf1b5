"""EvALL and PyEvALL runs over HTTP (Flask's test client, SQLite, jobs run by ``evalserve.service.jobrun.runner`` in the
test): uploaded to ``POST /v1/runs``, ``POST /v1/submissions`` and a shared task, they give the job result of the
equivalent TREC run -- the numbers of ``evalserve evaluate`` -- and a bad one is a 422 with every problem
located. Files as in tests/evaluation/formats/test_run_formats.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalserve.cli.main import main
from evalserve.service.jobrun.runner import run_job
from tests.evaluation.formats.test_run_formats import EVALL, PYEVALL_JSON, PYEVALL_TSV, QRELS, TREC
from tests.service.test_api import _file, _is_problem
from tests.service.test_tasks import TaskApi

MEASURES = ["AP", "nDCG@10", "P@2", "RR", "ERR@10"]
FILES = {"sys.tsv": EVALL, "sys.json": PYEVALL_JSON, "sys.pyevall.tsv": PYEVALL_TSV, "sys.run": TREC}
FORMATS = {"sys.tsv": "evall", "sys.json": "pyevall-json", "sys.pyevall.tsv": "pyevall-tsv", "sys.run": "trec"}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[TaskApi]:
    made = TaskApi(tmp_path)
    yield made
    made.app.extensions["evalserve"].db.dispose()


def collection(api: TaskApi) -> str:
    r = api.call("POST", "/v1/collections", data={"name": "c", "qrels": (_file(QRELS.encode()), "qrels.txt")})
    assert r.status_code == 201, r.get_data(as_text=True)
    return str(r.json["id"])


def result(api: TaskApi, job_id: str) -> dict[str, Any]:
    assert run_job(api.ctx, job_id) == "succeeded"
    r = api.call("GET", f"/v1/jobs/{job_id}/result?format=json")
    assert r.status_code == 200, r.get_data(as_text=True)
    return dict(r.json)


def per_run(document: dict[str, Any]) -> dict[str, Any]:
    """Each run's scores (means and per topic), keyed by run name."""
    return dict(document["runs"])


def offline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """``evalserve evaluate`` on the TREC run: the numbers every upload must give."""
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "sys.run").write_text(TREC)
    code = main(["evaluate", "--qrels", str(tmp_path / "qrels.txt"), "--run", str(tmp_path / "sys.run"), "-m",
                 *MEASURES, "--per-topic"])
    assert code == 0
    return dict(json.loads(capsys.readouterr().out)["runs"]["sys.run"])


def test_runs_uploaded_in_every_format_give_the_trec_runs_numbers(api: TaskApi, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    want = offline(tmp_path, capsys)
    col = collection(api)
    ids = []
    for name, text in FILES.items():
        r = api.call("POST", f"/v1/runs?collection={col}", data={"run": (_file(text.encode()), name)})
        assert r.status_code == 201, r.get_data(as_text=True)
        assert r.json["run_format"] == FORMATS[name] and r.json["n_rows"] == 7 and r.json["warnings"] == []
        ids.append(r.json["id"])
    r = api.call("POST", "/v1/evaluations", json={"collection": col, "runs": ids, "measures": MEASURES,
                                                 "per_topic": True})
    assert r.status_code == 202, r.get_data(as_text=True)
    runs = per_run(result(api, r.json["id"]))
    assert set(runs) == set(FILES)
    for name in FILES:
        assert runs[name] == want, name


def test_a_submission_names_its_run_format(api: TaskApi, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    want = offline(tmp_path, capsys)
    col = collection(api)
    r = api.call("POST", "/v1/submissions", data={
        "collection": col, "measures": " ".join(MEASURES), "per_topic": "true", "run_format": "evall",
        "run": (_file(EVALL.encode()), "sys.txt")})
    assert r.status_code == 202, r.get_data(as_text=True)
    assert per_run(result(api, r.json["id"])) == {"sys.txt": want}
    raw = api.call("POST", f"/v1/runs?collection={col}&name=sys.data&run_format=pyevall-json",
                   data=PYEVALL_JSON.encode(), headers={"Content-Type": "application/octet-stream"})
    assert raw.status_code == 201 and raw.json["run_format"] == "pyevall-json", raw.get_data(as_text=True)


def test_a_task_takes_a_pyevall_submission(api: TaskApi) -> None:
    task_id = str(api.task(collection=collection(api), measures=MEASURES, primary_measure="AP")["id"])
    api.register(task_id, "bob")
    api.register(task_id, "carol")
    r = api.call("POST", f"/v1/tasks/{task_id}/submissions", "bob",
                 data={"run": (_file(PYEVALL_JSON.encode()), "bob.json")})
    assert r.status_code == 202, r.get_data(as_text=True)
    r = api.call("POST", f"/v1/tasks/{task_id}/submissions", "carol",
                 data={"run": (_file(TREC.encode()), "carol.run"), "run_format": "trec"})
    assert r.status_code == 202, r.get_data(as_text=True)
    api.work()
    board = api.call("GET", f"/v1/tasks/{task_id}/leaderboard", "bob").json
    scores = {row["label"]: row["scores"] for row in board["rows"]}
    assert scores["team-bob"] == scores["team-carol"]


def test_a_bad_run_is_a_422_with_every_problem_located(api: TaskApi) -> None:
    col = collection(api)
    bad = '[{"test_case": "q1", "id": "d1", "value": 1},\n {"test_case": "q1", "id": "d1", "value": 2}]\n'
    r = api.call("POST", f"/v1/runs?collection={col}", data={"run": (_file(bad.encode()), "bad.json")})
    body = _is_problem(r, 422, "invalid-upload")
    assert [(p["line"], p["column"], p["code"], p["severity"]) for p in body["problems"]] == [
        (2, 22, "duplicate-docno", "error")]
    r = api.call("POST", f"/v1/runs?collection={col}&run_format=pyevall-tsv",
                 data={"run": (_file(EVALL.encode()), "sys.tsv")})
    body = _is_problem(r, 422, "invalid-upload")
    # the same problem on lines 1 to 7: one problem over the range, located at its first line
    assert [(p["line"], p["end_line"], p["column"], p["code"]) for p in body["problems"]] == [
        (1, 7, 6, "wrong-column-count")]
    assert body["problems"][0]["message"].startswith("lines 1-7: ")
    r = api.call("POST", f"/v1/runs?collection={col}&run_format=csv", data={"run": (_file(b"x"), "x")})
    assert r.status_code == 422 and r.headers["Content-Type"] == "application/problem+json"
