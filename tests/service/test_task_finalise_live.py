"""Finalising a task against real processes (gunicorn + a Celery worker) on both backends (embedded, and PostgreSQL +
Redis; issue 30): the organiser finalises with the client SDK; every write is refused (409 ``task-final``) for a
participant, the organiser and an admin; the final leaderboard's hash is the same in every format and before and
after the API and the worker are restarted, and so are its bytes."""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from evalserve_client import Client

from tests.service.live import LiveService
from tests.service.test_tasks import QRELS, RUNS


@dataclass
class Finalised:
    """A task of two teams and a baseline on a live service, finalised by its organiser."""

    live: LiveService
    task: str = ""
    tokens: dict[str, str] = field(default_factory=dict)
    submissions: dict[str, str] = field(default_factory=dict)
    record: dict[str, Any] = field(default_factory=dict)

    def http(self, who: str | None) -> httpx.Client:
        if who is None:
            return httpx.Client(base_url=self.live.url, timeout=60)
        return self.live.client(self.tokens[who])


def _wait(http: httpx.Client, task: str, sub: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if http.get(f"/v1/tasks/{task}/submissions/{sub}").json()["state"] == "succeeded":
            return
        time.sleep(0.2)
    raise AssertionError(f"submission {sub} was not evaluated")


@pytest.fixture(scope="module")
def finalised(live: LiveService) -> Iterator[Finalised]:
    f = Finalised(live)
    f.tokens = {name: live.user_token(name) for name in ("alice", "bob", "carol")}
    f.tokens["admin"] = live.token
    now = datetime.now(timezone.utc)
    with f.http("alice") as alice:
        collection = alice.post("/v1/collections", data={"name": "judgments", "hidden": "true"},
                                files={"qrels": ("q.txt", QRELS)})
        assert collection.status_code == 201, collection.text
        task = alice.post("/v1/tasks", json={
            "name": "Finalised", "collection": collection.json()["id"], "measures": ["nDCG@10", "P@5", "AP"],
            "phases": [{"name": "test", "opens_at": (now - timedelta(hours=1)).isoformat(),
                        "closes_at": (now + timedelta(hours=1)).isoformat(), "quota_per_day": 5}]})
        assert task.status_code == 201, task.text
        f.task = task.json()["id"]
    for who, run in (("bob", "mid"), ("carol", "poor"), ("alice", "good")):
        with f.http(who) as http:
            team = "organisers" if who == "alice" else f"team-{who}"
            assert http.post(f"/v1/tasks/{f.task}/participants", json={"team": team}).status_code == 201
            r = http.post(f"/v1/tasks/{f.task}/submissions", data={"baseline": str(who == "alice").lower()},
                          files={"run": (f"{run}.run", RUNS[run])})
            assert r.status_code == 202, r.text
            f.submissions[who] = r.json()["id"]
    with f.http("alice") as alice:
        for sub in f.submissions.values():
            _wait(alice, f.task, sub)
    with Client(live.url, f.tokens["alice"]) as organiser:
        f.record = organiser.finalise(f.task)
    yield f


def test_the_final_board_and_its_record(finalised: Finalised) -> None:
    record = finalised.record
    assert record["phase"] == "test" and (record["rows"], record["ranked"]) == (3, 2)
    with finalised.http(None) as anonymous:
        assert anonymous.get(f"/v1/tasks/{finalised.task}").json()["final"] == record
        board = anonymous.get(record["leaderboard"]).json()
        assert board["final"]["hash"] == record["hash"]
        assert [(r["extra"]["team"], r["rank"]) for r in board["rows"]] == [
            ("organisers", None), ("team-bob", 1), ("team-carol", 2)]
        text = anonymous.get(f"/v1/tasks/{finalised.task}/leaderboard?format=csv").text
        assert {line["final_hash"] for line in csv.DictReader(io.StringIO(text))} == {record["hash"]}
        assert record["hash"] in anonymous.get(f"/v1/tasks/{finalised.task}/leaderboard?format=html").text


def test_every_write_is_refused_for_everyone(finalised: Finalised) -> None:
    task = finalised.task
    run = {"run": ("late.run", RUNS["good"])}
    for who in ("bob", "alice", "admin"):
        with finalised.http(who) as http:
            answers = [
                http.post(f"/v1/tasks/{task}/submissions", files=run,
                          data={"baseline": "false" if who == "bob" else "true"}),
                http.patch(f"/v1/tasks/{task}/submissions/{finalised.submissions['bob' if who == 'bob' else 'carol']}",
                           json={"selected": True}),
            ]
            if who != "bob":
                answers += [http.patch(f"/v1/tasks/{task}", json={"description": "changed"}),
                            http.patch(f"/v1/tasks/{task}/phases/test", json={"closes_at": "2040-01-01T00:00:00Z"}),
                            http.post(f"/v1/tasks/{task}/invitations", json={"count": 1})]
            for answer in answers:
                assert answer.status_code == 409 and answer.json()["code"] == "task-final", (who, answer.text)


def test_the_hash_and_bytes_survive_a_restart(finalised: Finalised) -> None:
    live = finalised.live
    path = f"/v1/tasks/{finalised.task}/leaderboard"
    with finalised.http(None) as anonymous:
        before = {fmt: anonymous.get(path, params={"format": fmt}) for fmt in ("json", "csv", "latex")}
    live.restart()
    with finalised.http(None) as anonymous, finalised.http("bob") as bob:
        for fmt, answer in before.items():
            again = anonymous.get(path, params={"format": fmt})
            assert again.status_code == 200 and again.text == answer.text, fmt
            assert again.headers["ETag"] == answer.headers["ETag"]
        assert bob.get(path).json()["final"]["hash"] == finalised.record["hash"], "a token holder's read too"
    with Client(live.url, finalised.tokens["admin"]) as admin:
        assert admin.finalise(finalised.task) == finalised.record, "finalising again answers the same record"
