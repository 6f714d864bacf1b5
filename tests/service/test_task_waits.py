"""Participants wait like everyone else (issue 30), on real processes (gunicorn's ASGI worker and a Celery worker),
both backends: a participant's ``GET .../submissions/{id}?wait=`` is parked and answered within 0.25 s of its
evaluation job finishing (a handful of requests, no polling); ``If-None-Match`` gets ``304``; a client that hangs up
ends its wait (``/health`` counts none open); and the participant's own ``callback_url`` receives a signed
delivery carrying only what that participant may see (its own scores, per-topic ones only when the task gives
per-topic feedback; never the organiser's job, the judgments or another team's scores)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
from evalserve_client.webhooks import verify_signature

from tests.service.conftest import BACKENDS
from tests.service.live import LiveService
from tests.service.webhook_receiver import Receiver

QRELS = b"1 0 d1 2\n1 0 d2 1\n1 0 d3 0\n2 0 d4 1\n2 0 d5 1\n3 0 d6 1\n"
RUNS = {"bob": b"1 Q0 d1 1 3 good\n1 Q0 d2 2 2 good\n2 Q0 d4 1 3 good\n2 Q0 d5 2 2 good\n3 Q0 d6 1 1 good\n",
        "carol": b"1 Q0 d3 1 3 mid\n1 Q0 d1 2 2 mid\n2 Q0 d9 1 3 mid\n2 Q0 d4 2 2 mid\n3 Q0 d6 1 1 mid\n"}
MEASURES = ["nDCG@10", "AP"]
FINAL = ("succeeded", "failed", "cancelled")
#: the done-when's bound between the job's end and the participant's answer (with room for a loaded machine)
ANSWER_BOUND = 0.25


def _task(live: LiveService, tokens: dict[str, str], receiver: Receiver, **settings: Any) -> tuple[str, dict[str, Any]]:
    """A task over hidden judgments; bob and carol register and submit with their own callback URLs (no worker
    runs yet: both stay queued). The 202s by participant."""
    now = datetime.now(timezone.utc)
    with live.client(tokens["alice"]) as alice:
        collection = alice.post("/v1/collections", data={"name": "hidden", "hidden": "true"},
                                files={"qrels": ("qrels.txt", QRELS)}).json()["id"]
        task = alice.post("/v1/tasks", json={
            "name": "waits", "collection": collection, "measures": MEASURES, "primary_measure": MEASURES[0],
            "phases": [{"name": "test", "opens_at": (now - timedelta(hours=1)).isoformat(),
                        "closes_at": (now + timedelta(hours=1)).isoformat()}], **settings})
        assert task.status_code == 201, task.text
    accepted = {}
    for who in ("bob", "carol"):
        with live.client(tokens[who]) as http:
            assert http.post(f"/v1/tasks/{task.json()['id']}/participants", json={"team": who}).status_code == 201
            r = http.post(f"/v1/tasks/{task.json()['id']}/submissions",
                          data={"callback_url": f"{receiver.url}/{who}"},
                          files={"run": (f"{who}.run", RUNS[who])})
            assert r.status_code == 202, r.text
            assert r.json()["callback_url"] == f"{receiver.url}/{who}" and r.json()["callback_secret"]
            accepted[who] = r.json()
    return str(task.json()["id"]), accepted


def _open_waits(live: LiveService) -> int:
    with httpx.Client(base_url=live.url, timeout=10, headers={"Connection": "close"}) as anonymous:
        return sum(int(anonymous.get("/health").json()["waits"]["open"]) for _ in range(8))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_participant_long_polls_its_submission_and_gets_its_own_signed_callback(
        backend: str, stack: Callable[..., LiveService]) -> None:
    live = stack(backend, EVALSERVE_WEBHOOK_ALLOW_NETWORKS="127.0.0.1/32")
    live.start_api()
    tokens = {who: live.user_token(who) for who in ("alice", "bob", "carol")}
    with Receiver() as receiver:
        task, accepted = _task(live, tokens, receiver)
        sub = accepted["bob"]["id"]
        path = f"/v1/tasks/{task}/submissions/{sub}"
        with live.client(tokens["bob"]) as bob:
            first = bob.get(path)
            assert first.status_code == 200 and first.json()["state"] == "queued"
            tag = first.headers["ETag"]
            assert first.headers["Retry-After"] == "1"
            assert bob.get(path, headers={"If-None-Match": tag}).status_code == 304
            started = time.monotonic()
            held = bob.get(path, params={"wait": 1.5}, headers={"If-None-Match": tag})
            assert held.status_code == 304 and time.monotonic() - started >= 1.4, "held for the wait, unchanged"
            assert held.headers["ETag"] == tag
            assert bob.get(f"/v1/tasks/{task}/submissions/{accepted['carol']['id']}").status_code == 404

        # a client that hangs up ends its wait: none left open on the server
        request = (f"GET {path}?wait=30 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {tokens['bob']}\r\n"
                   f"If-None-Match: {tag}\r\n\r\n").encode()
        sockets = [socket.create_connection(("127.0.0.1", live.port), timeout=10) for _ in range(3)]
        for s in sockets:
            s.sendall(request)
        deadline = time.monotonic() + 10
        while _open_waits(live) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _open_waits(live) >= 3, "the three waits are parked"
        for s in sockets:
            s.close()
        hung_up = time.monotonic()
        while _open_waits(live) and time.monotonic() - hung_up < 5:
            time.sleep(0.05)
        assert _open_waits(live) == 0 and time.monotonic() - hung_up < 1.5

        # the long-poll answers as the evaluation ends: a few requests, not a poll every Retry-After
        live.start_worker()
        answers: list[tuple[float, httpx.Response]] = []
        with live.client(tokens["bob"]) as bob:
            state = "queued"
            deadline = time.monotonic() + 120
            while state not in FINAL and time.monotonic() < deadline:
                r = bob.get(path, params={"wait": 25}, headers={"If-None-Match": tag})
                answers.append((time.time(), r))
                if r.status_code == 200:
                    tag, state = r.headers["ETag"], r.json()["state"]
            assert state == "succeeded", live.log("worker")
            final_at, final = answers[-1]
            assert bob.get(path).content == final.content, "a parked answer is the plain answer"
            assert "Retry-After" not in final.headers
        with live.client(tokens["alice"]) as alice:
            job_id = alice.get(path).json()["evaluations"][0]["job"]
            job = alice.get(f"/v1/jobs/{job_id}").json()
        finished = datetime.fromisoformat(job["finished_at"]).timestamp()
        late = final_at - finished
        print(f"\n{backend}: the submission's answer came {late:.3f} s after its job finished"
              f" ({len(answers)} requests)")
        assert -0.05 < late < ANSWER_BOUND, (late, job)
        assert len(answers) <= 8, [r.status_code for _, r in answers]

        # each participant's own callback, signed with its own secret, carrying only what it may see
        receiver.wait_for(2, timeout=60)
        by_path = {}
        for headers, body in receiver.requests:
            delivery = json.loads(body)
            by_path[delivery["data"]["id"]] = (headers, body, delivery)
        for who in ("bob", "carol"):
            headers, body, delivery = by_path[accepted[who]["id"]]
            secret = accepted[who]["callback_secret"]
            other = accepted["carol" if who == "bob" else "bob"]
            assert verify_signature(secret, body, headers["x-evalserve-signature"])
            assert not verify_signature(other["callback_secret"], body, headers["x-evalserve-signature"])
            assert headers["x-evalserve-event"] == delivery["event"] == "submission.finished"
            data = delivery["data"]
            assert data["state"] == "succeeded" and set(data["scores"]) == set(MEASURES)
            assert data["team"] == who and "per_topic" not in data, "the task gives no per-topic feedback"
            assert all(e["job"] is None for e in data["evaluations"]), "never the organiser's job"
            text = body.decode()
            for secret_text in (job_id, other["id"], other["run"]["id"], "qrels", "callback_secret", "per_topic"):
                assert secret_text not in text, secret_text
        assert headers["user-agent"].startswith("evalserve-webhooks/")


@pytest.mark.parametrize("backend", BACKENDS)
def test_per_topic_feedback_reaches_the_callback_and_bad_urls_are_refused(
        backend: str, stack: Callable[..., LiveService]) -> None:
    live = stack(backend, EVALSERVE_WEBHOOK_ALLOW_NETWORKS="127.0.0.1/32")
    live.start_api()
    live.start_worker()
    tokens = {who: live.user_token(who) for who in ("alice", "bob", "carol")}
    with Receiver() as receiver:
        task, _ = _task(live, tokens, receiver, per_topic_feedback=True)
        receiver.wait_for(2, timeout=90)
        for _, body in receiver.requests:
            data = json.loads(body)["data"]
            assert set(data["per_topic"]) == set(MEASURES) and set(data["per_topic"]["AP"]) == {"1", "2", "3"}
            with live.client(tokens[data["team"]]) as http:
                own = http.get(f"/v1/tasks/{task}/submissions/{data['id']}/per-topic").json()
            assert own["per_topic"] == data["per_topic"] and own["scores"] == data["scores"]
    with live.client(tokens["bob"]) as bob:
        refused = bob.post(f"/v1/tasks/{task}/submissions", data={"callback_url": "http://10.0.0.1/hook"},
                           files={"run": ("again.run", RUNS["bob"])})
        assert refused.status_code == 422 and refused.json()["code"] == "webhook-target-refused", refused.text


def test_a_participants_callback_is_recorded_on_its_own_budget_with_its_own_view(tmp_path: Path) -> None:
    """In process: the delivery row of a participant's callback counts against the participant's budget (the
    fairness caps' ``owner``), not the organiser's who owns the evaluation job; its payload is the participant's
    view; a submission without a callback records none."""
    from sqlalchemy import select

    from evalserve.service.access.principal import budget_owner
    from evalserve.service.store.models import Token, WebhookDelivery
    from tests.service.test_api import Api
    from tests.service.test_tasks import TaskApi

    class CallbackApi(TaskApi):
        def __init__(self, tmp: Path) -> None:
            Api.__init__(self, tmp, EVALSERVE_WEBHOOK_ALLOW_NETWORKS="127.0.0.1/32")
            from evalserve.service.access.tokens import create_token
            from evalserve.service.jobrun.context import WorkerContext
            from evalserve.service.shared_tasks.callbacks import submission_callback

            db = self.app.extensions["evalserve"].db
            for name in ("carol", "dave"):
                self.tokens[name] = create_token(db, name, ("read", "submit"))[1]
            self.ctx = WorkerContext(self.settings, db, self.app.extensions["evalserve"].blobs,
                                     callback_viewer=submission_callback)  # as the workers' Celery app sets it

    api = CallbackApi(tmp_path)
    try:
        task = api.task()["id"]
        api.register(task, "bob")
        api.register(task, "carol")
        with_callback = api.submit(task, "bob", callback_url="http://127.0.0.1:9/bob")
        assert with_callback.status_code == 202 and with_callback.json["callback_secret"]
        assert "callback_secret" not in api.submit(task, "carol", "mid").json
        refused = api.submit(task, "carol", "poor", callback_url="http://10.1.2.3/x")
        assert refused.status_code == 422 and refused.json["code"] == "webhook-target-refused"
        api.work()
        db = api.app.extensions["evalserve"].db
        with db.session() as s:
            rows = list(s.execute(select(WebhookDelivery)).scalars())
            bob = s.execute(select(Token).where(Token.name == "bob")).scalar_one()
            assert len(rows) == 1 and rows[0].owner == budget_owner(bob)
            assert rows[0].event == "submission.finished"
            payload = rows[0].payload
        mine = api.call("GET", f"/v1/tasks/{task}/submissions/{with_callback.json['id']}", "bob").json
        assert {k: payload[k] for k in ("id", "state", "scores", "team")} == \
            {k: mine[k] for k in ("id", "state", "scores", "team")}
        assert "per_topic" not in payload and payload["evaluations"][0]["job"] is None
        # a second member of bob's team (joined with a code bound to it): its callback spends its own budget
        [bound] = api.call("POST", f"/v1/tasks/{task}/invitations", "alice", json={"team": "team-bob"}).json
        assert api.call("POST", f"/v1/invitations/{bound['code']}", "dave", json={}).status_code == 201
        by_dave = api.submit(task, "dave", "mid", callback_url="http://127.0.0.1:9/dave")
        assert by_dave.status_code == 202 and by_dave.json["team"] == "team-bob", by_dave.json
        api.work()
        with db.session() as s:
            row = s.execute(select(WebhookDelivery).where(WebhookDelivery.payload["id"].as_string()
                                                          == by_dave.json["id"])).scalar_one()
            dave = s.execute(select(Token).where(Token.name == "dave")).scalar_one()
            assert row.owner == budget_owner(dave) != budget_owner(bob)
    finally:
        api.app.extensions["evalserve"].db.dispose()
