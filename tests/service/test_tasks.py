"""Shared tasks in process (Flask's test client, SQLite, jobs run by ``service.jobrun.runner`` in the test): roles,
phases and deadlines (UTC, at arrival), quotas, hidden judgments, the leaderboard and its formats, blinded and
private visibility, selection of a submission, and re-evaluation against new judgments with its history."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from evalserve.service.jobrun.context import WorkerContext
from evalserve.service.jobrun.runner import run_job
from evalserve.service.store.models import Job
from tests.service.test_api import Api, _file, _is_problem

QRELS = b"1 0 d1 2\n1 0 d2 1\n1 0 d3 0\n2 0 d4 1\n2 0 d5 1\n3 0 d6 1\n"
NEW_QRELS = b"1 0 d1 0\n1 0 d2 2\n1 0 d3 1\n2 0 d4 1\n2 0 d5 1\n3 0 d6 1\n"
#: three systems: good finds the relevant documents first, so it leads on every topic
RUNS = {
    "good": b"1 Q0 d1 1 3 good\n1 Q0 d2 2 2 good\n2 Q0 d4 1 3 good\n2 Q0 d5 2 2 good\n3 Q0 d6 1 1 good\n",
    "mid": b"1 Q0 d3 1 3 mid\n1 Q0 d1 2 2 mid\n2 Q0 d9 1 3 mid\n2 Q0 d4 2 2 mid\n3 Q0 d6 1 1 mid\n",
    "poor": b"1 Q0 d3 1 3 poor\n1 Q0 d8 2 2 poor\n2 Q0 d9 1 3 poor\n2 Q0 d7 2 2 poor\n3 Q0 d0 1 1 poor\n",
}
NOW = datetime.now(timezone.utc)


class TaskApi(Api):
    """The test API plus helpers for tasks; ``work()`` runs every queued job like a worker would."""

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp)
        db = self.app.extensions["evalserve"].db
        from evalserve.service.access.tokens import create_token

        for name in ("carol", "dave"):
            self.tokens[name] = create_token(db, name, ("read", "submit"))[1]
        self.ctx = WorkerContext(self.settings, db, self.app.extensions["evalserve"].blobs)

    def hidden_collection(self, qrels: bytes = QRELS) -> str:
        r = self.call("POST", "/v1/collections", "alice", data={"name": "judgments", "qrels": (_file(qrels), "q")})
        assert r.status_code == 201, r.get_data(as_text=True)
        return str(r.json["id"])

    def task(self, **overrides: Any) -> dict[str, Any]:
        body = {"name": "Web diversity", "collection": self.hidden_collection(),
                "measures": ["nDCG@10", "P@5", "AP"], "primary_measure": "nDCG@10",
                "phases": [{"name": "test", "opens_at": (NOW - timedelta(days=1)).isoformat(),
                            "closes_at": (NOW + timedelta(days=1)).isoformat(), "quota_total": 3}], **overrides}
        r = self.call("POST", "/v1/tasks", "alice", json=body)
        assert r.status_code == 201, r.get_data(as_text=True)
        return dict(r.json)

    def register(self, task: str, who: str, team: str | None = None, **kw: Any) -> Any:
        return self.call("POST", f"/v1/tasks/{task}/participants", who, json={"team": team or f"team-{who}", **kw})

    def submit(self, task: str, who: str, run: str = "good", **form: Any) -> Any:
        return self.call("POST", f"/v1/tasks/{task}/submissions", who,
                         data={"run": (_file(RUNS[run]), f"{run}.run"), **form})

    def work(self) -> None:
        db = self.ctx.db
        with db.session() as s:
            queued = list(s.execute(select(Job.id).where(Job.state == "queued").order_by(Job.created_at)).scalars())
        for job_id in queued:
            assert run_job(self.ctx, job_id) == "succeeded"


@pytest.fixture
def api(tmp_path: Path) -> Iterator[TaskApi]:
    made = TaskApi(tmp_path)
    yield made
    made.app.extensions["evalserve"].db.dispose()


def _three_teams(api: TaskApi, **task: Any) -> str:
    task_id = str(api.task(**task)["id"])
    for who, run in (("bob", "good"), ("carol", "mid"), ("dave", "poor")):
        assert api.register(task_id, who).status_code == 201
        assert api.submit(task_id, who, run, description=f"{run} system").status_code == 202
    api.work()
    return task_id


def test_an_organiser_creates_a_task_whose_judgments_are_hidden(api: TaskApi) -> None:
    task = api.task()
    assert task["role"] == "organiser" and task["current_phase"] == "test" and task["version"] == 1
    collection = task["collection"]
    assert api.call("GET", f"/v1/collections/{collection}", "alice").json["hidden"] is True
    _is_problem(api.call("GET", f"/v1/collections/{collection}", "bob"), 404, "not-found")
    _is_problem(api.call("GET", f"/v1/collections/{collection}/hierarchies", "bob"), 404, "not-found")
    assert collection not in [c["id"] for c in api.call("GET", "/v1/collections", "bob").json]
    _is_problem(api.call("POST", f"/v1/runs?collection={collection}", "bob",
                         data={"run": (_file(RUNS["good"]), "x.run")}), 404, "not-found")
    seen = api.call("GET", f"/v1/tasks/{task['id']}", "bob").json
    assert seen["role"] == "public" and seen["collection"] is None


def test_participants_submit_and_the_leaderboard_ranks_them(api: TaskApi) -> None:
    task_id = _three_teams(api)
    board = api.call("GET", f"/v1/tasks/{task_id}/leaderboard", "bob").json
    assert [r["label"] for r in board["rows"]] == ["team-bob", "team-carol", "team-dave"]
    assert [r["rank"] for r in board["rows"]] == [1, 2, 3]
    assert board["measures"] == ["nDCG@10", "P@5", "AP"] and board["primary"] == "nDCG@10"
    assert board["rows"][0]["delta_best"] == 0.0 and board["rows"][2]["delta_best"] < 0
    assert board["pending"] == 0 and board["phase"]["name"] == "test"
    anonymous = api.client.get(f"/v1/tasks/{task_id}/leaderboard")
    assert anonymous.status_code == 200, "a public leaderboard needs no token"
    text = api.client.get(f"/v1/tasks/{task_id}/leaderboard?format=csv").get_data(as_text=True)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["label"] for r in rows] == ["team-bob", "team-carol", "team-dave"]
    latex = api.client.get(f"/v1/tasks/{task_id}/leaderboard?format=latex").get_data(as_text=True)
    # one LaTeX escape for reports and leaderboards (evaluation.latex): a hyphen is written -{} so that "--" in a
    # label stays two hyphens instead of becoming an en dash
    assert "\\begin{tabular}" in latex and "team-{}carol" in latex
    html = api.client.get(f"/v1/tasks/{task_id}/leaderboard?format=html")
    assert html.mimetype == "text/html" and html.get_data(as_text=True).count('class="entry') == 3


def test_a_submission_shows_state_and_scores_to_its_team_only(api: TaskApi) -> None:
    task_id = str(api.task()["id"])
    api.register(task_id, "bob")
    api.register(task_id, "carol")
    r = api.submit(task_id, "bob", description="BM25")
    assert r.status_code == 202 and r.json["state"] == "queued" and r.json["scores"] is None
    sub = r.json["id"]
    assert r.headers["Location"] == f"/v1/tasks/{task_id}/submissions/{sub}"
    api.work()
    mine = api.call("GET", f"/v1/tasks/{task_id}/submissions/{sub}", "bob").json
    assert mine["state"] == "succeeded" and set(mine["scores"]) == {"nDCG@10", "P@5", "AP"}
    assert mine["evaluations"][0]["job"] is None, "participants do not get the organiser's job"
    _is_problem(api.call("GET", f"/v1/tasks/{task_id}/submissions/{sub}", "carol"), 404, "not-found")
    assert api.call("GET", f"/v1/tasks/{task_id}/submissions", "carol").json == []
    job = api.call("GET", f"/v1/tasks/{task_id}/submissions/{sub}", "alice").json["evaluations"][0]["job"]
    _is_problem(api.call("GET", f"/v1/jobs/{job}", "bob"), 404, "not-found")
    _is_problem(api.call("GET", f"/v1/runs/{mine['run']['id']}", "carol"), 404, "not-found")
    _is_problem(api.call("POST", "/v1/evaluations", "bob", json={
        "collection": api.call("GET", f"/v1/tasks/{task_id}", "alice").json["collection"],
        "runs": [mine["run"]["id"]], "measures": ["AP"], "per_topic": True}), 404, "not-found")


def test_submissions_need_a_registration_and_an_open_phase(api: TaskApi) -> None:
    task_id = str(api.task(phases=[{"name": "dev", "opens_at": (NOW - timedelta(days=3)).isoformat(),
                                    "closes_at": (NOW - timedelta(seconds=1)).isoformat()},
                                   {"name": "test", "opens_at": (NOW + timedelta(days=1)).isoformat(),
                                    "closes_at": (NOW + timedelta(days=2)).isoformat()}])["id"])
    _is_problem(api.submit(task_id, "bob"), 403, "not-registered")
    api.register(task_id, "bob")
    body = _is_problem(api.submit(task_id, "bob"), 409, "phase-not-open")
    assert "'test' opens at" in body["detail"]
    _is_problem(api.submit(task_id, "bob", phase="dev"), 409, "phase-closed")
    r = api.call("PATCH", f"/v1/tasks/{task_id}/phases/test", "alice",
                 json={"opens_at": (NOW - timedelta(seconds=1)).isoformat(),
                       "closes_at": (NOW - timedelta(seconds=2)).isoformat()})
    assert r.status_code == 422, "a phase must close after it opens"
    overlapping = api.call("PATCH", f"/v1/tasks/{task_id}/phases/test", "alice",
                           json={"opens_at": (NOW - timedelta(hours=1)).isoformat()})
    _is_problem(overlapping, 422, "overlapping-phases")
    moved = api.call("PATCH", f"/v1/tasks/{task_id}/phases/test", "alice",
                     json={"opens_at": (NOW - timedelta(seconds=1)).isoformat(),
                           "closes_at": (datetime.now(timezone.utc) - timedelta(milliseconds=100)).isoformat()})
    assert moved.status_code == 200, moved.get_data(as_text=True)
    body = _is_problem(api.submit(task_id, "bob"), 409, "phase-closed")
    assert "ended at" in body["detail"] and "(UTC)" in body["detail"]
    assert api.call("GET", f"/v1/tasks/{task_id}/submissions", "alice").json == [], "nothing stored"


def test_quotas_per_phase_and_per_day(api: TaskApi) -> None:
    task_id = str(api.task()["id"])  # quota_total 3
    api.register(task_id, "bob")
    for _ in range(3):
        assert api.submit(task_id, "bob").status_code == 202
    body = _is_problem(api.submit(task_id, "bob"), 429, "quota-exceeded")
    assert "all 3 submissions" in body["detail"]
    api.call("PATCH", f"/v1/tasks/{task_id}/phases/test", "alice", json={"quota_total": None, "quota_per_day": 3})
    r = api.submit(task_id, "bob")
    _is_problem(r, 429, "quota-exceeded")
    assert 0 < int(r.headers["Retry-After"]) <= 86401
    assert api.submit(task_id, "alice", baseline="true").status_code == 403, "organisers register a team first"
    api.register(task_id, "alice", "organisers")
    for _ in range(4):
        assert api.submit(task_id, "alice", "mid", baseline="true").status_code == 202, "organisers have no quota"


def test_a_bad_run_is_refused_with_every_problem_and_uses_no_quota(api: TaskApi) -> None:
    task_id = str(api.task()["id"])
    api.register(task_id, "bob")
    r = api.call("POST", f"/v1/tasks/{task_id}/submissions", "bob",
                 data={"run": (_file(b"1 Q0 d1 x 3 t\n1 Q0 d2\n"), "bad.run")})
    body = _is_problem(r, 422, "invalid-upload")
    assert len(body["problems"]) >= 2 and all(p["line"] for p in body["problems"])
    assert api.call("GET", f"/v1/tasks/{task_id}/participants", "bob").json[0]["submissions"] == 0


def test_registration_rules(api: TaskApi) -> None:
    task_id = str(api.task(registration="code", registration_code="s3cret-code")["id"])
    _is_problem(api.register(task_id, "bob"), 403, "registration-code")
    _is_problem(api.register(task_id, "bob", code="wrong"), 403, "registration-code")
    assert api.register(task_id, "bob", "blue", code="s3cret-code").status_code == 201
    _is_problem(api.register(task_id, "bob", "blue2", code="s3cret-code"), 409, "already-registered")
    _is_problem(api.register(task_id, "carol", "blue", code="s3cret-code"), 409, "team-taken")
    assert api.call("GET", f"/v1/tasks/{task_id}", "bob").json["registration_code"] is None
    assert api.call("GET", f"/v1/tasks/{task_id}", "alice").json["registration_code"] == "s3cret-code"
    assert [p["team"] for p in api.call("GET", f"/v1/tasks/{task_id}/participants", "bob").json] == ["blue"]


def test_private_and_blinded_tasks(api: TaskApi) -> None:
    private = _three_teams(api, visibility="private")
    _is_problem(api.client.get(f"/v1/tasks/{private}/leaderboard"), 404, "not-found")
    _is_problem(api.call("GET", f"/v1/tasks/{private}", "reader"), 404, "not-found")
    assert private not in [t["id"] for t in api.call("GET", "/v1/tasks", "reader").json]
    assert api.call("GET", f"/v1/tasks/{private}/leaderboard", "carol").status_code == 200
    blinded = _three_teams(api, visibility="blinded", blinded_until=(NOW + timedelta(days=5)).isoformat())
    body = _is_problem(api.call("GET", f"/v1/tasks/{blinded}/leaderboard", "bob"), 403, "leaderboard-blinded")
    assert "blinded until" in body["detail"]
    assert api.call("GET", f"/v1/tasks/{blinded}/leaderboard", "alice").status_code == 200
    mine = api.call("GET", f"/v1/tasks/{blinded}/submissions", "bob").json[0]
    assert mine["state"] == "succeeded" and mine["scores"] is None and mine["scores_hidden_until"]
    api.call("PATCH", f"/v1/tasks/{blinded}", "alice", json={"blinded_until": NOW.isoformat()})
    assert api.call("GET", f"/v1/tasks/{blinded}/leaderboard", "bob").status_code == 200


def test_a_chosen_submission_replaces_the_latest(api: TaskApi) -> None:
    task_id = _three_teams(api)
    first = api.call("GET", f"/v1/tasks/{task_id}/submissions", "bob").json[0]["id"]
    api.submit(task_id, "bob", "poor")
    api.work()
    labels = [r["extra"]["run"] for r in api.call("GET", f"/v1/tasks/{task_id}/leaderboard", "bob").json["rows"]]
    assert labels[-1] == "poor.run" and labels.count("poor.run") == 2, "bob's latest (poor) is shown"
    assert api.call("PATCH", f"/v1/tasks/{task_id}/submissions/{first}", "bob",
                    json={"selected": True}).status_code == 200
    rows = api.call("GET", f"/v1/tasks/{task_id}/leaderboard", "bob").json["rows"]
    assert rows[0]["key"] == first
    everything = api.call("GET", f"/v1/tasks/{task_id}/leaderboard?selection=all", "bob").json["rows"]
    assert len(everything) == 4


def test_new_judgments_reevaluate_every_submission_and_keep_the_history(api: TaskApi) -> None:
    task_id = _three_teams(api)
    before = api.call("GET", f"/v1/tasks/{task_id}/leaderboard", "bob").json
    _is_problem(api.call("POST", f"/v1/tasks/{task_id}/judgments", "bob",
                         data={"qrels": (_file(NEW_QRELS), "new.qrels")}), 403, "organisers-only")
    r = api.call("POST", f"/v1/tasks/{task_id}/judgments", "alice",
                 data={"qrels": (_file(NEW_QRELS), "new.qrels"), "note": "assessor fixes"})
    assert r.status_code == 202 and r.json["version"] == 2 and len(r.json["jobs"]) == 3
    pending = api.call("GET", f"/v1/tasks/{task_id}/leaderboard", "bob").json
    assert pending["version"] == 2 and pending["rows"] == [] and pending["pending"] == 3
    api.work()
    after = api.call("GET", f"/v1/tasks/{task_id}/leaderboard", "bob").json
    old = api.call("GET", f"/v1/tasks/{task_id}/leaderboard?version=1", "bob").json
    assert old["rows"] == before["rows"], "version 1 is kept"
    assert after["rows"] != before["rows"]
    sub = api.call("GET", f"/v1/tasks/{task_id}/submissions", "bob").json[0]
    assert [e["version"] for e in sub["evaluations"]] == [1, 2] and sub["version"] == 2
    history = api.call("GET", f"/v1/tasks/{task_id}/judgments", "alice").json
    assert [(v["version"], v["current"], v["note"]) for v in history] == [
        (1, False, "initial judgments"), (2, True, "assessor fixes")]
    _is_problem(api.call("GET", f"/v1/tasks/{task_id}/judgments", "bob"), 403, "organisers-only")
    new_collection = history[1]["collection"]
    _is_problem(api.call("GET", f"/v1/collections/{new_collection}", "bob"), 404, "not-found")


def test_task_settings_are_checked(api: TaskApi) -> None:
    collection = api.hidden_collection()
    base = {"name": "t", "collection": collection, "measures": ["AP"]}
    _is_problem(api.call("POST", "/v1/tasks", "alice", json={**base, "measures": ["nope@x"]}), 422, "invalid-measure")
    _is_problem(api.call("POST", "/v1/tasks", "alice", json={**base, "primary_measure": "P@5"}), 422,
                "invalid-primary-measure")
    _is_problem(api.call("POST", "/v1/tasks", "alice", json={**base, "visibility": "blinded"}), 422,
                "invalid-visibility")
    window = {"opens_at": NOW.isoformat(), "closes_at": (NOW + timedelta(days=2)).isoformat()}
    _is_problem(api.call("POST", "/v1/tasks", "alice", json={**base, "phases": [
        {"name": "a", **window}, {"name": "b", **window}]}), 422, "overlapping-phases")
    _is_problem(api.call("POST", "/v1/tasks", "bob", json=base), 403, "not-your-collection")
    _is_problem(api.call("PATCH", f"/v1/tasks/{api.task()['id']}", "bob", json={"name": "mine"}), 403,
                "organisers-only")
    naive = api.call("POST", "/v1/tasks", "alice", json={**base, "phases": [
        {"name": "a", "opens_at": "2026-01-01T00:00:00", "closes_at": "2026-02-01T00:00:00"}]})
    assert naive.json["phases"][0]["opens_at"].endswith("+00:00"), "a time without offset is UTC"
