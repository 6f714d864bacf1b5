"""The per-topic export of a task (``GET /v1/tasks/{task_id}/per-topic``, issue 30) in process: organisers only;
CSV, JSON and Parquet hold the same rows; the values are those ``evalserve evaluate --per-topic`` gives offline
for the same runs and judgments (TREC Web 2012, exactly: the same float repr); a server without pyarrow says how
to get Parquet. Also a submission's ETag and ``?wait=`` where the test client answers at once."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest

from evalserve.cli.main import main as cli_main
from tests.service.test_api import _file, _is_problem
from tests.service.test_tasks import TaskApi

MEASURES = ["alpha_nDCG@20", "ERR_IA@20", "nDCG@20"]
TEAMS = {"bob": "ql-results-cata-filtered.txt", "carol": "ql-results-catb-filtered.txt",
         "dave": "ql-results-cata.txt.gz"}
BASELINE = "ql-results-catb.txt.gz"
COLUMNS = ["submission", "team", "run", "baseline", "measure", "topic", "value"]


@pytest.fixture(scope="module")
def web2012(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> tuple[TaskApi, str, Path]:
    """TREC Web 2012 as a task: three teams and the organiser's baseline submit real runs, evaluated."""
    api = TaskApi(tmp_path_factory.mktemp("export"))
    qrels = shared_data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt"
    runs = shared_data / "trec-web-2012-runs" / "runs"
    collection = api.hidden_collection(qrels.read_bytes())
    task = api.task(collection=collection, measures=MEASURES, primary_measure=MEASURES[0])["id"]
    for who, filename in [*TEAMS.items(), ("alice", BASELINE)]:
        assert api.register(task, who).status_code == 201
        r = api.call("POST", f"/v1/tasks/{task}/submissions", who, data={
            "run": (_file((runs / filename).read_bytes()), filename), "baseline": str(who == "alice").lower()})
        assert r.status_code == 202, r.get_data(as_text=True)
    api.work()
    return api, task, shared_data


def _csv(api: TaskApi, task: str, who: str = "alice", query: str = "") -> list[dict[str, str]]:
    r = api.call("GET", f"/v1/tasks/{task}/per-topic?format=csv{query}", who)
    assert r.status_code == 200, r.get_data(as_text=True)
    assert r.mimetype == "text/csv" and r.headers["ETag"]
    return list(csv.DictReader(io.StringIO(r.get_data(as_text=True))))


def test_the_export_equals_the_offline_per_topic_evaluation_exactly(
        web2012: tuple[TaskApi, str, Path], tmp_path: Path) -> None:
    api, task, data = web2012
    rows = _csv(api, task)
    assert list(rows[0]) == COLUMNS
    assert {r["team"] for r in rows} == {"team-bob", "team-carol", "team-dave", "team-alice"}
    assert {r["baseline"] for r in rows if r["team"] == "team-alice"} == {"True"}
    qrels = data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt"
    runs = data / "trec-web-2012-runs" / "runs"
    for who, filename in [*TEAMS.items(), ("alice", BASELINE)]:
        out = tmp_path / f"{filename}.csv"
        assert cli_main(["evaluate", "--qrels", str(qrels), "--run", str(runs / filename), "-m", *MEASURES,
                         "--per-topic", "--format", "csv", "-o", str(out), "-q"]) == 0
        offline = [(r["measure"], r["topic"], r["value"]) for r in csv.DictReader(out.open())]
        served = [(r["measure"], r["topic"], r["value"]) for r in rows if r["team"] == f"team-{who}"]
        assert sorted(served) == sorted(offline), filename  # the same values, written as the same float repr
        assert len(served) == len(offline) > 3 * 40


def test_json_and_parquet_hold_the_csv_rows(web2012: tuple[TaskApi, str, Path]) -> None:
    api, task, _ = web2012
    rows = [[r[c] for c in COLUMNS] for r in _csv(api, task)]
    r = api.call("GET", f"/v1/tasks/{task}/per-topic?format=json", "alice")
    assert r.status_code == 200 and r.mimetype == "application/json"
    document = json.loads(r.get_data(as_text=True))
    assert document["columns"] == COLUMNS and document["measures"] == MEASURES and document["phase"] == "test"
    assert document["version"] == 1 and document["selection"] == "latest" and document["mean_topic"] == "all"
    assert [[str(v) for v in row] for row in document["rows"]] == rows
    import pyarrow.parquet as pq

    r = api.call("GET", f"/v1/tasks/{task}/per-topic?format=parquet", "alice")
    assert r.status_code == 200 and r.mimetype == "application/vnd.apache.parquet"
    table = pq.read_table(io.BytesIO(r.get_data()))
    assert table.column_names == COLUMNS and str(table.schema.field("value").type) == "double"
    assert [[str(v) for v in row.values()] for row in table.to_pylist()] == rows


def test_the_export_is_conditional_and_follows_the_selection(web2012: tuple[TaskApi, str, Path]) -> None:
    api, task, _ = web2012
    first = api.call("GET", f"/v1/tasks/{task}/per-topic", "alice")
    again = api.call("GET", f"/v1/tasks/{task}/per-topic", "alice", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and again.get_data() == b""
    other = api.call("GET", f"/v1/tasks/{task}/per-topic?format=json", "alice",
                     headers={"If-None-Match": first.headers["ETag"]})
    assert other.status_code == 200, "each format has its own tag"
    assert {r["submission"] for r in _csv(api, task, query="&selection=all")} == \
        {r["submission"] for r in _csv(api, task)}, "one submission each: all shows the same ones"
    _is_problem(api.call("GET", f"/v1/tasks/{task}/per-topic?phase=nope", "alice"), 404, "not-found")
    _is_problem(api.call("GET", f"/v1/tasks/{task}/per-topic?version=2", "alice"), 404, "not-found")
    _is_problem(api.call("GET", f"/v1/tasks/{task}/per-topic?format=xlsx", "alice"), 422, "invalid-request")


def test_only_organisers_export(web2012: tuple[TaskApi, str, Path]) -> None:
    api, task, _ = web2012
    for who in ("bob", "reader"):  # a participant; a caller who takes no part in the public task
        problem = _is_problem(api.call("GET", f"/v1/tasks/{task}/per-topic", who), 403, "organisers-only")
        assert "per-topic" in problem["detail"]
    assert api.client.get(f"/v1/tasks/{task}/per-topic").status_code == 401
    assert api.call("GET", f"/v1/tasks/{task}/per-topic", "admin").status_code == 200, "admins organise every task"
    private = api.task(visibility="private")["id"]
    _is_problem(api.call("GET", f"/v1/tasks/{private}/per-topic", "bob"), 404, "not-found")
    empty = api.call("GET", f"/v1/tasks/{private}/per-topic", "alice")
    assert empty.status_code == 200 and empty.get_data(as_text=True) == ",".join(COLUMNS) + "\n"


def test_parquet_without_pyarrow_says_how_to_install_it(web2012: tuple[TaskApi, str, Path],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    api, task, _ = web2012
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    problem = _is_problem(api.call("GET", f"/v1/tasks/{task}/per-topic?format=parquet", "alice"), 422,
                          "parquet-unavailable")
    assert "pip install 'evalserve[parquet]'" in problem["detail"]


def test_a_submission_has_an_etag_and_a_wait_on_a_final_one_answers_at_once(
        web2012: tuple[TaskApi, str, Path]) -> None:
    api, task, _ = web2012
    sub = api.call("GET", f"/v1/tasks/{task}/submissions", "bob").json[0]["id"]
    path = f"/v1/tasks/{task}/submissions/{sub}"
    first = api.call("GET", path, "bob")
    assert first.status_code == 200 and first.json["state"] == "succeeded" and "Retry-After" not in first.headers
    tag = first.headers["ETag"]
    assert api.call("GET", path, "bob", headers={"If-None-Match": tag}).status_code == 304
    waited = api.call("GET", f"{path}?wait=5", "bob", headers={"If-None-Match": tag})
    assert waited.status_code == 304 and waited.headers["ETag"] == tag, "a final submission does not hold the wait"
    assert api.call("GET", f"{path}?wait=5", "bob").json == first.json
    assert api.call("GET", path, "alice").headers["ETag"] != tag, "the organiser sees more (the job): another tag"
    _is_problem(api.call("GET", f"{path}?wait=31", "bob"), 422, "invalid-request")
    _is_problem(api.call("GET", path, "carol"), 404, "not-found")


def test_a_waiting_submission_answers_when_its_evaluation_ends(tmp_path: Path) -> None:
    """The test client cannot park: the view waits itself (a plain WSGI server), and sees the job end."""
    import threading

    api = TaskApi(tmp_path)
    try:
        task = api.task()["id"]
        api.register(task, "bob")
        r = api.submit(task, "bob")
        assert r.status_code == 202 and r.json["state"] == "queued"
        threading.Timer(0.5, api.work).start()
        waited = api.call("GET", f"/v1/tasks/{task}/submissions/{r.json['id']}?wait=20", "bob",
                          headers={"If-None-Match": api.call("GET", r.headers["Location"], "bob").headers["ETag"]})
        assert waited.status_code == 200 and waited.json["state"] in ("running", "succeeded")
    finally:
        api.app.extensions["evalserve"].db.dispose()

