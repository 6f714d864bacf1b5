"""Webhook SSRF, as an attacker with a participant's ``submit`` token tries it on real processes: a task of their
own, then webhooks to the machine's own services (Redis, PostgreSQL, the API) in every spelling, and to private,
link-local, shared and multicast ranges. Every one is refused with 422 and nothing is stored. Where the operator
allows a network (a receiver on 127.0.0.1), the delivery log tells no port from another: a closed port, a port
that accepts and says nothing, and one that answers 500 show only ``no-response`` or the HTTP status."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.security.webhook_helpers import own_task, participant_token, webhook_count
from tests.service.live import LiveService
from tests.service.webhook_receiver import Receiver

ATTACKS = [
    "http://127.0.0.1:6379/",  # Redis
    "http://127.0.0.1:5432/",  # PostgreSQL
    "http://localhost:6379/",
    "http://0.0.0.0/",
    "http://0/",
    "http://2130706433/",  # decimal
    "http://0177.0.0.1/",  # octal
    "http://0177.1/",
    "http://127.1/",  # short
    "http://0x7f.0.0.1/",  # hex
    "http://0x7f000001/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::]/",
    "http://user:pass@127.0.0.1/",
    "http://user:pass@example.org/",
    "http://10.0.0.1/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fe80::1]/",
    "http://100.64.0.1/",
    "http://224.0.0.1/",
    "https://no-such-host.invalid/",
    "ftp://127.0.0.1/",
    "gopher://127.0.0.1:6379/_INFO",
]
#: what each refusal may be called: the target checks, or the URL syntax check before them
CODES = {"webhook-target-refused", "webhook-target-unresolvable", "invalid-request"}


def test_a_participant_cannot_point_webhooks_at_internal_addresses(live: LiveService) -> None:
    token = participant_token(live, "mallory")
    with live.client(token) as http:
        task = own_task(http)
        base = f"/v1/tasks/{task}/webhooks"
        before = http.get(base).json()
        answers = {url: http.post(base, json={"url": url}) for url in [*ATTACKS, f"http://127.0.0.1:{live.port}/"]}
        after = http.get(base).json()
    accepted = {url: r.status_code for url, r in answers.items() if r.status_code != 422}
    assert not accepted, f"not refused: {accepted}"
    for url, response in answers.items():
        assert response.headers["Content-Type"] == "application/problem+json", url
        assert response.json()["code"] in CODES, (url, response.json())
    loopback = answers["http://127.0.0.1:6379/"].json()
    assert loopback["code"] == "webhook-target-refused" and "a loopback address" in loopback["detail"]
    assert "a link-local address" in answers["http://169.254.169.254/latest/meta-data/"].json()["detail"]
    assert answers["https://no-such-host.invalid/"].json()["code"] == "webhook-target-unresolvable"
    assert before == after == []
    assert webhook_count(live, task) == 0, "nothing stored"


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A TCP port on 127.0.0.1 that accepts connections and never answers (an open non-HTTP service)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.2)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    thread.join(5)
    for conn in held:
        conn.close()
    server.close()


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("backend", ["embedded", "redis-postgres"])
def test_the_delivery_log_does_not_tell_ports_apart(stack: Callable[..., LiveService], backend: str,
                                                    silent_port: int) -> None:
    service = stack(backend, EVALSERVE_WEBHOOK_ALLOW_NETWORKS="127.0.0.1/32", EVALSERVE_WEBHOOK_MAX_ATTEMPTS="1",
                    EVALSERVE_WEBHOOK_TIMEOUT_SECONDS="2")
    service.start_api()
    service.start_worker(webhooks=False)
    service.start_webhook_worker()
    with Receiver(default=500) as answering, service.client(participant_token(service, "organiser")) as http:
        task = own_task(http, "receivers")
        base = f"/v1/tasks/{task}/webhooks"
        targets = {"closed": f"http://127.0.0.1:{_closed_port()}/hook", "silent": f"http://127.0.0.1:{silent_port}/",
                   "answering": answering.url}
        hooks = {}
        for name, url in targets.items():
            created = http.post(base, json={"url": url})
            assert created.status_code == 201, created.text
            hooks[name] = created.json()["id"]
            assert http.post(f"{base}/{hooks[name]}/ping").status_code == 202
        logs = {name: _settled(http, f"{base}/{hook}/deliveries") for name, hook in hooks.items()}
    for name in ("closed", "silent"):
        [delivery] = logs[name]
        assert delivery["state"] == "failed" and delivery["last_status"] is None, delivery
        assert delivery["last_error"] == "no-response"
        assert [set(e) for e in delivery["log"]] == [{"attempt", "at", "status", "error"}], "no duration"
        assert delivery["log"][0]["error"] == "no-response"
    [answered] = logs["answering"]
    assert answered["state"] == "failed" and answered["last_status"] == 500 and answered["last_error"] == "http-status"
    shown = repr([logs["closed"], logs["silent"]])
    for leak in ("Errno", "refused", "timed out", "Timeout", "ConnectError", "duration"):
        assert leak not in shown, leak


def _settled(http: httpx.Client, path: str, timeout: float = 60) -> list[dict[str, object]]:
    deadline = time.monotonic() + timeout
    log: list[dict[str, object]] = http.get(path).json()
    while (not log or any(d["state"] == "pending" for d in log)) and time.monotonic() < deadline:
        time.sleep(0.3)
        log = http.get(path).json()
    return log
