"""The readers' whole-file diagnoses over HTTP (issue 28): a run uploaded as a collection's judgments, judgments
uploaded as a run, a comma-separated run -- each a 422 ``invalid-upload`` with one problem saying what the file
looks like, nothing stored. Flask's test client over SQLite, as tests/service/test_run_formats.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.evaluation.formats.test_diagnose import QRELS, RUN
from tests.service.test_api import _file, _is_problem
from tests.service.test_tasks import TaskApi


@pytest.fixture
def api(tmp_path: Path) -> Iterator[TaskApi]:
    made = TaskApi(tmp_path)
    yield made
    made.app.extensions["evalserve"].db.dispose()


def test_a_run_uploaded_as_judgments_is_called_swapped(api: TaskApi) -> None:
    r = api.call("POST", "/v1/collections", data={"name": "c", "qrels": (_file(RUN.encode()), "sys.run")})
    body = _is_problem(r, 422, "invalid-upload")
    [problem] = body["problems"]
    assert problem["line"] == 1 and "were the run and the judgments swapped?" in problem["message"]
    assert api.call("GET", "/v1/collections").json == []


def test_judgments_uploaded_as_a_run_and_a_csv_run_get_one_problem_each(api: TaskApi) -> None:
    r = api.call("POST", "/v1/collections", data={"name": "c", "qrels": (_file(QRELS.encode()), "qrels.txt")})
    assert r.status_code == 201, r.get_data(as_text=True)
    col = r.json["id"]
    r = api.call("POST", f"/v1/runs?collection={col}", data={"run": (_file(QRELS.encode()), "qrels.txt")})
    [problem] = _is_problem(r, 422, "invalid-upload")["problems"]
    assert problem["message"].startswith("this looks like judgments (`qid iter docno rel`), not a run")
    r = api.call("POST", f"/v1/runs?collection={col}",
                 data={"run": (_file(RUN.replace(" ", ",").encode()), "sys.csv")})
    [problem] = _is_problem(r, 422, "invalid-upload")["problems"]
    assert problem["message"].startswith("this looks comma-separated (line 1: '300,Q0,doc0,1,10.5,myrun'")
    assert api.call("GET", f"/v1/runs?collection={col}").json == []
