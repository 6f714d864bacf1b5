"""Task webhooks in process: signatures, recording events, one delivery attempt at a time against a real HTTP
receiver on localhost (retries with backoff, giving up, unreachable receivers, concurrent workers), the sweeper's
view of lost deliveries, the Celery task, and the organiser-only routes (Flask's test client, SQLite)."""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from evalserve_client.webhooks import verify_signature
from flask.testing import FlaskClient

from evalserve.service.access.tokens import create_token
from evalserve.service.core.config import Settings
from evalserve.service.jobrun.context import WorkerContext
from evalserve.service.store.db import Database
from evalserve.service.store.models import (
    WEBHOOK_EVENTS,
    BlobRow,
    Collection,
    Participant,
    Task,
    Webhook,
    WebhookDelivery,
    as_utc,
    new_id,
    utcnow,
)
from evalserve.service.web.app import create_app
from evalserve.service.webhooks import delivery as webhooks
from evalserve.service.webhooks import targets as webhook_targets
from evaluation.report import engine_version
from tests.service.webhook_receiver import Receiver

SECRET = "whsec-test-0123456789abcdef"
#: the test receivers listen on 127.0.0.1: the operator's allow-list lets webhooks reach them
RECEIVERS = "127.0.0.1/32"
#: no DNS here beyond localhost: example.org names stand for a public host (never connected to in these tests)
PUBLIC_ADDRESS = "93.184.216.34"
PAYLOAD = {"submission": "sub_1", "version": 1, "scores": {"AP": 0.25}}


class World:
    """An app on a fresh SQLite database with tokens, two tasks (public and private) and helpers that add rows."""

    def __init__(self, tmp: Path, **env: str) -> None:
        self.settings = Settings.from_env({"EVALSERVE_DATA_DIR": str(tmp), "EVALSERVE_WEBHOOK_BACKOFF_SECONDS": "0.01",
                                           "EVALSERVE_WEBHOOK_TIMEOUT_SECONDS": "5",
                                           "EVALSERVE_WEBHOOK_ALLOW_NETWORKS": RECEIVERS, **env})
        self.app = create_app(self.settings, migrate=True)
        self.db: Database = self.app.extensions["evalserve"].db
        self.client: FlaskClient = self.app.test_client()
        self.tokens: dict[str, str] = {}
        self.ids: dict[str, str] = {}
        for name, scopes in [("organiser", ("read", "submit")), ("participant", ("read", "submit")),
                             ("stranger", ("read", "submit")), ("reader", ("read",)), ("admin", ("admin",))]:
            row, self.tokens[name] = create_token(self.db, name, scopes)
            self.ids[name] = row.id
        self.task = self.add_task("organiser", "public")
        self.private_task = self.add_task("organiser", "private")
        with self.db.session() as s:
            s.add(Participant(id=new_id("par"), task_id=self.task, token_id=self.ids["participant"], team="p"))

    def add_task(self, owner: str, visibility: str) -> str:
        with self.db.session() as s:
            sha = hashlib.sha256(b"1 0 d1 1\n").hexdigest()
            if s.get(BlobRow, sha) is None:
                s.add(BlobRow(sha256=sha, size=9, data=b"1 0 d1 1\n"))
                s.flush()
            collection = Collection(id=new_id("col"), owner_id=self.ids[owner], name="judgments", qrels_sha256=sha,
                                    qrels_filename="qrels", qrels_format="trec", n_topics=1, n_judgments=1,
                                    n_intents=0, hidden=True)
            s.add(collection)
            s.flush()
            task = Task(id=new_id("task"), owner_id=self.ids[owner], name="t", collection_id=collection.id,
                        measures=["AP"], primary_measure="AP", visibility=visibility)
            s.add(task)
            return task.id

    def add_webhook(self, url: str, *, task: str | None = None, events: tuple[str, ...] = WEBHOOK_EVENTS,
                    active: bool = True) -> str:
        with self.db.session() as s:
            hook = Webhook(id=new_id("whk"), task_id=task or self.task, url=url, secret=SECRET, events=list(events),
                           active=active)
            s.add(hook)
            return hook.id

    def event(self, event: str = "submission.evaluated", task: str | None = None) -> list[str]:
        with self.db.session() as s:
            return webhooks.record_event(s, task or self.task, event, PAYLOAD)

    def delivery(self, delivery_id: str) -> WebhookDelivery:
        with self.db.session() as s:
            row = s.get(WebhookDelivery, delivery_id)
            assert row is not None
            return row

    def settings_with(self, **changes: Any) -> Settings:
        from dataclasses import replace

        return replace(self.settings, **changes)

    def call(self, method: str, path: str, who: str | None = "organiser", **kw: Any) -> Any:
        headers = {"Authorization": f"Bearer {self.tokens[who]}"} if who else {}
        return self.client.open(path, method=method, headers={**headers, **kw.pop("headers", {})}, **kw)


@pytest.fixture(autouse=True)
def example_org_resolves(monkeypatch: pytest.MonkeyPatch) -> None:
    """``example.org`` and its subdomains resolve to a public address; other names as the machine resolves them."""
    real = webhook_targets.resolve

    def resolve(host: str, port: int) -> list[str]:
        return [PUBLIC_ADDRESS] if host == "example.org" or host.endswith(".example.org") else real(host, port)

    monkeypatch.setattr(webhook_targets, "resolve", resolve)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    made = World(tmp_path)
    yield made
    made.db.dispose()


def _problem(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.headers["Content-Type"] == "application/problem+json"
    assert response.json["code"] == code


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_until_due(world: World, delivery_id: str) -> None:
    due = as_utc(world.delivery(delivery_id).next_attempt_at)
    assert due is not None
    time.sleep(max(0.0, (due - utcnow()).total_seconds()) + 0.01)


# --- signatures ----------------------------------------------------------------------------------------------------


def test_a_signature_verifies_with_its_secret() -> None:
    body = b'{"id":"dlv_1","event":"ping"}'
    header = webhooks.sign(SECRET, body, int(time.time()))
    assert header.startswith("t=") and ",v1=" in header
    assert verify_signature(SECRET, body, header)


def test_a_tampered_body_or_another_secret_fails() -> None:
    body = b'{"score":0.25}'
    header = webhooks.sign(SECRET, body, int(time.time()))
    assert not verify_signature(SECRET, b'{"score":0.95}', header)
    assert not verify_signature("another-secret-0123456789", body, header)
    t, _, digest = header.partition(",v1=")
    assert not verify_signature(SECRET, body, f"{t},v1={digest[:-1]}0" if digest[-1] != "0"
                                         else f"{t},v1={digest[:-1]}1")


def test_a_stale_or_future_timestamp_fails() -> None:
    body = b"{}"
    now = 1_700_000_000.0
    assert verify_signature(SECRET, body, webhooks.sign(SECRET, body, int(now) - 299), now=now)
    assert not verify_signature(SECRET, body, webhooks.sign(SECRET, body, int(now) - 301), now=now)
    assert not verify_signature(SECRET, body, webhooks.sign(SECRET, body, int(now) + 301), now=now)
    assert verify_signature(SECRET, body, webhooks.sign(SECRET, body, int(now) - 3000), now=now,
                                     tolerance=3600)


def test_the_signature_is_hmac_sha256_of_timestamp_dot_body() -> None:
    body = b'{"id":"dlv_0","event":"ping","task":"task_0","created_at":"2026-01-01T00:00:00+00:00","data":{}}'
    expected = "446cc9491e8ce2b1346985d2dd0e9862b47892759f738a7b6c1f8aa64a259424"
    assert hmac.new(SECRET.encode(), b"1700000000." + body, hashlib.sha256).hexdigest() == expected
    assert webhooks.sign(SECRET, body, 1_700_000_000) == f"t=1700000000,v1={expected}"
    assert verify_signature(SECRET, body, f"t=1700000000,v1={expected}", now=1_700_000_100)


@pytest.mark.parametrize("header", ["", "garbage", "t=abc,v1=00", "v1=00", "t=1700000000", "t=1700000000,v1",
                                   "t=1700000000,v0=abc"])
def test_malformed_signature_headers_are_refused(header: str) -> None:
    assert not verify_signature(SECRET, b"{}", header, now=1_700_000_000)


def test_any_of_several_v1_signatures_may_match() -> None:
    """During a secret rotation a sender may sign with both secrets."""
    body = b"{}"
    old = webhooks.sign("old-secret-0123456789", body, 1_700_000_000)
    new = webhooks.sign(SECRET, body, 1_700_000_000)
    header = old + "," + new.partition(",")[2]
    assert verify_signature(SECRET, body, header, now=1_700_000_000)


def test_backoff_doubles_with_small_jitter_and_is_capped_at_an_hour() -> None:
    for attempt, base in [(1, 30.0), (2, 30.0), (3, 30.0), (7, 30.0), (3, 0.01)]:
        wait = webhooks.backoff_seconds(attempt, base)
        assert base * 2 ** (attempt - 1) <= wait <= base * 2 ** (attempt - 1) * 1.1
    assert webhooks.backoff_seconds(20, 30.0) == 3600.0
    assert webhooks.backoff_seconds(10_000, 30.0) == 3600.0


# --- recording -----------------------------------------------------------------------------------------------------


def test_an_event_adds_one_pending_delivery_per_subscribed_active_webhook(world: World) -> None:
    both = world.add_webhook("http://127.0.0.1:9/a")
    board_only = world.add_webhook("http://127.0.0.1:9/b", events=("leaderboard.changed",))
    world.add_webhook("http://127.0.0.1:9/c", active=False)
    world.add_webhook("http://127.0.0.1:9/d", task=world.private_task)
    ids = world.event("submission.evaluated")
    assert len(ids) == 1 and world.delivery(ids[0]).webhook_id == both
    ids = world.event("leaderboard.changed")
    assert sorted(world.delivery(i).webhook_id for i in ids) == sorted([both, board_only])
    row = world.delivery(ids[0])
    assert row.state == "pending" and row.attempts == 0 and row.log == [] and row.payload == PAYLOAD
    next_at, created = as_utc(row.next_attempt_at), as_utc(row.created_at)
    assert next_at is not None and created is not None and next_at <= utcnow()


def test_unknown_events_and_payloads_json_cannot_hold_are_refused(world: World) -> None:
    with world.db.session() as s:
        with pytest.raises(ValueError, match="unknown webhook event"):
            webhooks.record_event(s, world.task, "ping", {})
        with pytest.raises(ValueError):
            webhooks.record_event(s, world.task, "submission.created", {})
        with pytest.raises(TypeError):
            webhooks.record_event(s, world.task, "leaderboard.changed", {"when": object()})


def test_publishing_sends_one_message_per_delivery_on_the_webhook_queue_and_survives_a_broker_failure(
        caplog: pytest.LogCaptureFixture) -> None:
    sent: list[tuple[str, Any, dict[str, Any]]] = []
    conf = SimpleNamespace(evalserve_settings=Settings(Path("/nonexistent"), "sqlite://", "sqlite://", queue="q1"))
    app = SimpleNamespace(conf=conf, send_task=lambda name, args, **kw: sent.append((name, args, kw)))
    webhooks.publish_deliveries(app, ["dlv_a", "dlv_b"])
    assert [(name, args, kw["queue"]) for name, args, kw in sent] == [
        ("evalserve.deliver_webhook", ["dlv_a"], "q1.webhooks"),
        ("evalserve.deliver_webhook", ["dlv_b"], "q1.webhooks")]

    def broken(*_: Any, **__: Any) -> None:
        raise ConnectionError("broker down")

    webhooks.publish_deliveries(SimpleNamespace(conf=conf, send_task=broken), ["dlv_c"])
    assert "dlv_c" in caplog.text and "broker down" in caplog.text


# --- delivering ----------------------------------------------------------------------------------------------------


def test_a_delivery_is_posted_signed_and_marked_delivered(world: World) -> None:
    with Receiver() as receiver:
        hook = world.add_webhook(receiver.url)
        [delivery_id] = world.event("submission.evaluated")
        assert webhooks.deliver(world.db, delivery_id, world.settings) == "delivered"
        [(headers, body)] = receiver.requests
    assert headers["content-type"] == "application/json"
    assert headers["user-agent"] == f"evalserve-webhooks/{engine_version()}"
    assert headers["x-evalserve-event"] == "submission.evaluated"
    assert headers["x-evalserve-delivery"] == delivery_id
    assert verify_signature(SECRET, body, headers["x-evalserve-signature"])
    assert not verify_signature("not-the-secret-0123", body, headers["x-evalserve-signature"])
    document = json.loads(body)
    row = world.delivery(delivery_id)
    assert document == {"id": delivery_id, "event": "submission.evaluated", "task": world.task,
                        "created_at": as_utc(row.created_at).isoformat(), "data": PAYLOAD}
    assert body == json.dumps(document, separators=(",", ":")).encode(), "compact JSON, the exact bytes signed"
    assert row.webhook_id == hook and row.state == "delivered" and row.attempts == 1 and row.last_status == 200
    assert row.delivered_at is not None and row.next_attempt_at is None and row.last_error is None
    [entry] = row.log
    assert entry["attempt"] == 1 and entry["status"] == 200 and entry["error"] is None and entry["duration_ms"] >= 0
    assert webhooks.deliver(world.db, delivery_id, world.settings) == "skipped", "a repeated message is harmless"


def test_failed_attempts_are_retried_with_backoff_until_delivered(world: World) -> None:
    base = 0.2
    settings = world.settings_with(webhook_backoff_seconds=base)
    with Receiver([500, 503, 200]) as receiver:
        world.add_webhook(receiver.url)
        [delivery_id] = world.event()
        for attempt in (1, 2):
            assert webhooks.deliver(world.db, delivery_id, settings) == "retry"
            row = world.delivery(delivery_id)
            entry = row.log[-1]
            started = as_utc(datetime.fromisoformat(entry["at"]))
            next_at = as_utc(row.next_attempt_at)
            assert started is not None and next_at is not None
            waited = (next_at - started).total_seconds() - entry["duration_ms"] / 1000
            expected = base * 2 ** (attempt - 1)
            assert expected - 0.01 <= waited <= expected * 1.1 + 0.05, (attempt, waited)
            assert webhooks.deliver(world.db, delivery_id, settings) == "skipped", "not due yet"
            _wait_until_due(world, delivery_id)
        assert webhooks.deliver(world.db, delivery_id, settings) == "delivered"
        assert len(receiver.requests) == 3
    row = world.delivery(delivery_id)
    assert row.state == "delivered" and row.attempts == 3
    assert [(e["attempt"], e["status"], e["error"]) for e in row.log] == [
        (1, 500, "http-status"), (2, 503, "http-status"), (3, 200, None)]
    assert [h["x-evalserve-delivery"] for h, _ in receiver.requests] == [delivery_id] * 3
    assert len({b for _, b in receiver.requests}) == 1, "every attempt sends the same body"


def test_a_delivery_fails_after_max_attempts(world: World) -> None:
    settings = world.settings_with(webhook_max_attempts=3)
    with Receiver(default=500) as receiver:
        world.add_webhook(receiver.url)
        [delivery_id] = world.event()
        outcomes = []
        for _ in range(3):
            _wait_until_due(world, delivery_id)
            outcomes.append(webhooks.deliver(world.db, delivery_id, settings))
        assert outcomes == ["retry", "retry", "failed"]
        assert webhooks.deliver(world.db, delivery_id, settings) == "skipped"
        assert len(receiver.requests) == 3
    row = world.delivery(delivery_id)
    assert row.state == "failed" and row.attempts == 3 and row.next_attempt_at is None and row.delivered_at is None
    assert row.last_status == 500 and len(row.log) == 3


def test_an_unreachable_receiver_is_recorded_and_retried(world: World, caplog: pytest.LogCaptureFixture) -> None:
    world.add_webhook(f"http://127.0.0.1:{_closed_port()}/hook")
    [delivery_id] = world.event()
    with caplog.at_level("INFO", logger="evalserve.service.webhooks.delivery"):
        assert webhooks.deliver(world.db, delivery_id, world.settings) == "retry"
    row = world.delivery(delivery_id)
    assert row.state == "pending" and row.last_status is None and row.attempts == 1
    assert row.last_error == "no-response", "which error (refused, timed out) is logged on the server only"
    assert row.log[0]["status"] is None and row.log[0]["error"] == row.last_error
    assert "ConnectError" in caplog.text


def test_a_slow_receiver_times_out(world: World) -> None:
    settings = world.settings_with(webhook_timeout_seconds=0.2)
    with Receiver(delay=1.0) as receiver:
        world.add_webhook(receiver.url)
        [delivery_id] = world.event()
        assert webhooks.deliver(world.db, delivery_id, settings) == "retry"
    assert world.delivery(delivery_id).last_error == "no-response", "the same as a refused connection"


def test_redirects_are_not_followed(world: World) -> None:
    with Receiver([302, 200]) as receiver:
        world.add_webhook(receiver.url)
        [delivery_id] = world.event()
        assert webhooks.deliver(world.db, delivery_id, world.settings) == "retry"
        assert len(receiver.requests) == 1
    row = world.delivery(delivery_id)
    assert row.last_status == 302 and row.last_error == "redirect-not-followed"


def test_two_workers_on_one_due_delivery_send_it_once(world: World) -> None:
    with Receiver(delay=0.3) as receiver:
        world.add_webhook(receiver.url)
        [delivery_id] = world.event()
        start = threading.Barrier(2)
        outcomes: list[str] = []

        def worker() -> None:
            start.wait()
            outcomes.append(webhooks.deliver(world.db, delivery_id, world.settings))

        threads = [threading.Thread(target=worker) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        time.sleep(0.2)
        assert sorted(outcomes) == ["delivered", "skipped"]
        assert len(receiver.requests) == 1
    row = world.delivery(delivery_id)
    assert row.attempts == 1 and len(row.log) == 1


def test_a_deleted_webhook_gets_nothing_more(world: World) -> None:
    with Receiver() as receiver:
        hook = world.add_webhook(receiver.url)
        [delivery_id] = world.event()
        with world.db.session() as s:
            found = s.get(Webhook, hook)
            assert found is not None
            found.active = False
        assert webhooks.deliver(world.db, delivery_id, world.settings) == "failed"
        assert receiver.requests == []
    row = world.delivery(delivery_id)
    assert row.state == "failed" and row.attempts == 0 and row.last_error == "webhook-deleted"


def test_an_attempt_whose_worker_died_is_found_by_the_sweeper_and_counts(world: World) -> None:
    settings = world.settings_with(webhook_max_attempts=2)
    with Receiver() as receiver:
        world.add_webhook(receiver.url)
        [delivery_id] = world.event()
        with world.db.session() as s:  # claimed by a worker that died: attempts bumped, its hold now expired
            row = s.get(WebhookDelivery, delivery_id)
            assert row is not None
            row.attempts, row.next_attempt_at = 1, utcnow() - timedelta(seconds=60)
        assert webhooks.due_deliveries(world.db, overdue_seconds=30) == [delivery_id]
        assert webhooks.deliver(world.db, delivery_id, settings) == "delivered"
        assert world.delivery(delivery_id).attempts == 2
        [second] = world.event()
        with world.db.session() as s:  # its last allowed attempt died too
            row = s.get(WebhookDelivery, second)
            assert row is not None
            row.attempts, row.next_attempt_at = 2, utcnow() - timedelta(seconds=60)
        assert webhooks.deliver(world.db, second, settings) == "failed"
        assert len(receiver.requests) == 1
    assert world.delivery(second).last_error == "worker-lost"


def test_due_deliveries_returns_overdue_ones_once_per_grace_period(world: World) -> None:
    world.add_webhook("http://127.0.0.1:9/hook")
    late, soon, done = world.event(), world.event(), world.event()
    with world.db.session() as s:
        for ids, delta, state in ((late, -60, "pending"), (soon, 60, "pending"), (done, -60, "delivered")):
            row = s.get(WebhookDelivery, ids[0])
            assert row is not None
            row.next_attempt_at, row.state = utcnow() + timedelta(seconds=delta), state
    assert webhooks.due_deliveries(world.db, overdue_seconds=30) == late
    assert webhooks.due_deliveries(world.db, overdue_seconds=30) == [], "bumped: other sweepers leave it alone"
    assert webhooks.due_deliveries(world.db) == late, "but it is still due"
    assert webhooks.seconds_until_due(world.db, late[0]) == 0.0
    wait = webhooks.seconds_until_due(world.db, soon[0])
    assert wait is not None and 50 < wait <= 60
    assert webhooks.seconds_until_due(world.db, done[0]) is None


# --- the worker side -----------------------------------------------------------------------------------------------


def test_the_celery_task_delivers_and_republishes_a_retry_for_its_time(world: World,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import evalserve.workers.tasks as tasks

    state = world.app.extensions["evalserve"]
    settings = world.settings_with(webhook_backoff_seconds=30.0)
    monkeypatch.setattr(tasks, "context_for", lambda app: WorkerContext(settings, world.db, state.blobs))
    published: list[tuple[list[str], float | None]] = []
    monkeypatch.setattr(webhooks, "publish_deliveries",
                        lambda app, ids, countdown=None: published.append((ids, countdown)))
    with Receiver([500, 200]) as receiver:
        world.add_webhook(receiver.url)
        [delivery_id] = world.event()
        assert tasks.deliver_webhook(delivery_id) == "retry"
        [(ids, countdown)] = published
        assert ids == [delivery_id] and countdown is not None and 29 < countdown <= 33
        assert tasks.deliver_webhook(delivery_id) == "skipped"
        assert len(published) == 1
    assert tasks.deliver_webhook.acks_late


def test_the_sweeper_republishes_overdue_deliveries(world: World) -> None:
    from evalserve.service.jobrun.recovery import delivery_grace_seconds, sweep_deliveries

    world.add_webhook("http://127.0.0.1:9/hook")
    [lost] = world.event()
    with world.db.session() as s:
        row = s.get(WebhookDelivery, lost)
        assert row is not None
        row.next_attempt_at = utcnow() - timedelta(seconds=120)
    sent: list[Any] = []
    app = SimpleNamespace(conf=SimpleNamespace(evalserve_settings=world.settings),
                          send_task=lambda name, args, **kw: sent.append(args))
    assert sweep_deliveries(world.db, app, delivery_grace_seconds(10)) == [lost]
    assert sent == [[lost]]
    assert sweep_deliveries(world.db, app, delivery_grace_seconds(10)) == []
    assert delivery_grace_seconds(0.5) == 5.0 and delivery_grace_seconds(10) == 20.0


# --- the routes ----------------------------------------------------------------------------------------------------


def test_an_organiser_creates_lists_and_deletes_webhooks(world: World) -> None:
    base = f"/v1/tasks/{world.task}/webhooks"
    created = world.call("POST", base, json={"url": "https://hooks.example.org/evalserve"})
    assert created.status_code == 201, created.get_data(as_text=True)
    hook = created.json
    assert hook["events"] == list(WEBHOOK_EVENTS) and hook["active"] is True and hook["task"] == world.task
    assert len(hook["secret"]) >= 32, "a generated secret, shown once"
    assert created.headers["Location"] == f"{base}/{hook['id']}"
    listed = world.call("GET", base)
    assert listed.status_code == 200
    assert [h["id"] for h in listed.json] == [hook["id"]] and "secret" not in listed.json[0]
    one = world.call("GET", f"{base}/{hook['id']}")
    assert one.status_code == 200 and "secret" not in one.json and one.json["url"] == hook["url"]
    with world.db.session() as s:
        stored = s.get(Webhook, hook["id"])
        assert stored is not None and stored.secret == hook["secret"]
    assert world.call("DELETE", f"{base}/{hook['id']}").status_code == 204
    assert world.call("DELETE", f"{base}/{hook['id']}").status_code == 204, "deleting again is harmless"
    assert world.call("GET", base).json == []
    assert world.call("GET", f"{base}/{hook['id']}").json["active"] is False
    assert world.call("GET", f"{base}/{hook['id']}/deliveries").json == [], "the log stays readable"


def test_a_given_secret_and_events_are_kept(world: World) -> None:
    created = world.call("POST", f"/v1/tasks/{world.task}/webhooks",
                         json={"url": "http://127.0.0.1:8080/hook", "secret": "s" * 16,
                               "events": ["leaderboard.changed", "leaderboard.changed"]})
    assert created.status_code == 201, created.get_data(as_text=True)
    assert created.json["secret"] == "s" * 16 and created.json["events"] == ["leaderboard.changed"]


@pytest.mark.parametrize("body", [
    {"url": "ftp://example.org/hook"}, {"url": "file:///etc/passwd"}, {"url": "not a url"}, {},
    {"url": "https://example.org/", "events": []}, {"url": "https://example.org/", "events": ["ping"]},
    {"url": "https://example.org/", "events": ["submission.created"]},
    {"url": "https://example.org/", "secret": "too-short"},
])
def test_invalid_webhooks_are_refused(world: World, body: dict[str, Any]) -> None:
    _problem(world.call("POST", f"/v1/tasks/{world.task}/webhooks", json=body), 422, "invalid-request")


def test_only_organisers_manage_webhooks(world: World) -> None:
    base = f"/v1/tasks/{world.task}/webhooks"
    body = {"url": "https://example.org/hook"}
    hook = world.call("POST", base, json=body).json["id"]
    for who in ("participant", "stranger"):
        _problem(world.call("POST", base, who, json=body), 403, "organisers-only")
        _problem(world.call("GET", base, who), 403, "organisers-only")
        _problem(world.call("DELETE", f"{base}/{hook}", who), 403, "organisers-only")
        _problem(world.call("GET", f"{base}/{hook}/deliveries", who), 403, "organisers-only")
        _problem(world.call("POST", f"{base}/{hook}/ping", who), 403, "organisers-only")
    _problem(world.call("POST", base, "reader", json=body), 403, "forbidden")
    _problem(world.call("GET", base, None), 401, "unauthorized")
    private = f"/v1/tasks/{world.private_task}/webhooks"
    _problem(world.call("POST", private, "stranger", json=body), 404, "not-found")
    _problem(world.call("GET", private, "stranger"), 404, "not-found")
    _problem(world.call("GET", "/v1/tasks/task_nope/webhooks"), 404, "not-found")
    assert world.call("POST", private, "admin", json=body).status_code == 201, "admins organise every task"
    assert [h["id"] for h in world.call("GET", base, "admin").json] == [hook]


def test_a_webhook_of_another_task_is_not_found(world: World) -> None:
    other = world.call("POST", f"/v1/tasks/{world.private_task}/webhooks",
                       json={"url": "https://example.org/hook"}).json["id"]
    base = f"/v1/tasks/{world.task}/webhooks/{other}"
    _problem(world.call("GET", base), 404, "not-found")
    _problem(world.call("DELETE", base), 404, "not-found")
    _problem(world.call("GET", f"{base}/deliveries"), 404, "not-found")
    _problem(world.call("POST", f"{base}/ping"), 404, "not-found")
    assert world.call("GET", f"/v1/tasks/{world.private_task}/webhooks/{other}").status_code == 200


def test_too_many_webhooks_are_refused(tmp_path: Path) -> None:
    world = World(tmp_path, EVALSERVE_MAX_WEBHOOKS_PER_TASK="2")
    base = f"/v1/tasks/{world.task}/webhooks"
    ids = [world.call("POST", base, json={"url": f"https://example.org/{i}"}).json["id"] for i in range(2)]
    _problem(world.call("POST", base, json={"url": "https://example.org/3"}), 422, "too-many-webhooks")
    assert world.call("DELETE", f"{base}/{ids[0]}").status_code == 204
    assert world.call("POST", base, json={"url": "https://example.org/3"}).status_code == 201
    world.db.dispose()


def test_a_ping_records_a_delivery_that_shows_in_the_log(world: World) -> None:
    with Receiver() as receiver:
        created = world.call("POST", f"/v1/tasks/{world.task}/webhooks",
                             json={"url": receiver.url, "events": ["leaderboard.changed"]}).json
        base = f"/v1/tasks/{world.task}/webhooks/{created['id']}"
        ping = world.call("POST", f"{base}/ping")
        assert ping.status_code == 202, ping.get_data(as_text=True)
        assert ping.json["event"] == "ping" and ping.json["state"] == "pending" and ping.json["attempts"] == 0
        assert webhooks.deliver(world.db, ping.json["id"], world.settings) == "delivered"
        [(headers, body)] = receiver.requests
    assert headers["x-evalserve-event"] == "ping"
    assert verify_signature(created["secret"], body, headers["x-evalserve-signature"])
    assert json.loads(body)["data"]["webhook"] == created["id"]
    [logged] = world.call("GET", f"{base}/deliveries").json
    assert logged["id"] == ping.json["id"] and logged["state"] == "delivered" and logged["last_status"] == 200
    assert logged["log"][0]["attempt"] == 1 and logged["delivered_at"] is not None
    assert logged["payload"]["webhook"] == created["id"]
    assert world.call("DELETE", base).status_code == 204
    _problem(world.call("POST", f"{base}/ping"), 404, "not-found")


def test_the_delivery_log_is_paginated_newest_first(world: World) -> None:
    hook = world.add_webhook("http://127.0.0.1:9/hook")
    ids = []
    for _ in range(3):
        ids += world.event()
        time.sleep(0.002)
    response = world.call("GET", f"/v1/tasks/{world.task}/webhooks/{hook}/deliveries?page_size=2")
    assert response.status_code == 200
    assert [d["id"] for d in response.json] == ids[::-1][:2]
    assert json.loads(response.headers["X-Pagination"])["total"] == 3
    second = world.call("GET", f"/v1/tasks/{world.task}/webhooks/{hook}/deliveries?page_size=2&page=2").json
    assert [d["id"] for d in second] == ids[:1]


def test_the_api_guides_verification_example_accepts_our_signatures() -> None:
    """docs/api.md shows receivers how to verify a signature in ten lines: that code agrees with ``sign``."""
    import re

    guide = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    [example] = [code for code in re.findall(r"```python\n(.*?)```", guide, re.S) if "def verify(" in code]
    assert len(example.strip().splitlines()) <= 10
    namespace: dict[str, Any] = {}
    exec(example, namespace)
    body = b'{"id":"dlv_1","event":"ping","data":{}}'
    header = webhooks.sign(SECRET, body, int(time.time()))
    assert namespace["verify"](SECRET, body, header)
    assert not namespace["verify"](SECRET, body + b" ", header)
    assert not namespace["verify"]("another-secret-0123456789", body, header)
    assert not namespace["verify"](SECRET, body, webhooks.sign(SECRET, body, int(time.time()) - 600))
    assert not namespace["verify"](SECRET, body, "garbage")
