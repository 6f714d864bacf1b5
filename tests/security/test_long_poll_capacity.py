"""Long-polls cannot capture the API (issue 29), on real processes (gunicorn's ASGI worker, 2 processes as `evalserve
serve` starts them), both backends, 127.0.0.1 only. One user holds 200 ``?wait=30`` long-polls on a queued job:
another user's ``GET /v1/collections`` and anonymous ``/health`` still answer in under 0.5 s (p95 of 20), the API
processes start no thread for them, and once the clients hang up the server lets go of every wait within 1 s (no
socket left half-closed, ``/health`` counts none open); each API process keeps its fixed threads (the loop, the
request pool of ``THREADS``, one watcher). Over a cap a long-poll is answered at once with ``Retry-After`` (a
``HEAD``, which is never parked, at once too). Nothing accepted is lost: the queued job runs once a worker starts,
and a held long-poll sees it."""

from __future__ import annotations

import contextlib
import os
import re
import select
import socket
import statistics
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from evalserve.service.web.waiting import THREADS
from tests.service.conftest import BACKENDS
from tests.service.live import LiveService

QRELS = b"1 0 d1 1\n1 0 d2 0\n2 0 d4 1\n"
RUN = b"1 Q0 d1 1 3.0 r\n1 Q0 d2 2 2.0 r\n2 Q0 d4 1 2.0 r\n"
WAITS = 200
#: the issue's bound on another caller's answer while the waits are held (p95 over 20 requests)
P95_BOUND = 0.5


def _queued_job(live: LiveService, token: str) -> tuple[str, str]:
    """A job that stays queued (no worker runs yet): its id and ETag."""
    with live.client(token) as http:
        collection = http.post("/v1/collections", data={"name": "tiny"}, files={"qrels": ("qrels.txt", QRELS)})
        assert collection.status_code == 201, collection.text
        accepted = http.post("/v1/submissions", data={"collection": collection.json()["id"], "measures": "AP"},
                             files={"run": ("run.txt", RUN)})
        assert accepted.status_code == 202, accepted.text
        return str(accepted.json()["id"]), accepted.headers["ETag"]


@contextlib.contextmanager
def _long_polls(live: LiveService, token: str, job_id: str, etag: str, count: int) -> Iterator[list[socket.socket]]:
    """``count`` raw connections, each with one ``GET /v1/jobs/{id}?wait=30`` sent; closed (the clients hang up)
    when the block ends."""
    request = (f"GET /v1/jobs/{job_id}?wait=30 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
               f"If-None-Match: {etag}\r\n\r\n").encode()
    sockets = []
    try:
        for _ in range(count):
            s = socket.create_connection(("127.0.0.1", live.port), timeout=10)
            s.sendall(request)
            sockets.append(s)
        yield sockets
    finally:
        for s in sockets:
            s.close()


def _answered(sockets: list[socket.socket]) -> list[socket.socket]:
    readable, _, _ = select.select(sockets, [], [], 0)
    return readable


def _head(s: socket.socket) -> str:
    """The status line and headers of the answer on ``s``."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return data.decode("latin-1")


def _p95(seconds: list[float]) -> float:
    return statistics.quantiles(seconds, n=20)[-1]


def _timed(http: httpx.Client, path: str, times: int = 20) -> list[float]:
    spent = []
    for _ in range(times):
        started = time.perf_counter()
        response = http.get(path)
        spent.append(time.perf_counter() - started)
        assert response.status_code == 200, response.text
    return spent


def _api_workers(live: LiveService) -> list[int]:
    """The pids of the API's worker processes (children of gunicorn's master)."""
    assert live.api is not None
    children = Path(f"/proc/{live.api.pid}/task/{live.api.pid}/children").read_text().split()
    return [int(pid) for pid in children]


def _threads(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"^Threads:\s+(\d+)", status, re.MULTILINE)
    assert found is not None
    return int(found.group(1))


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _settle(pids: list[int], timeout: float = 20.0) -> None:
    """Until the API processes are idle (under 0.05 s of CPU in 0.5 s): the requests sent are all read and parked."""
    deadline = time.monotonic() + timeout
    before = sum(_cpu_seconds(pid) for pid in pids)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = sum(_cpu_seconds(pid) for pid in pids)
        if now - before < 0.05:
            return
        before = now


def _server_sockets(port: int) -> dict[str, int]:
    """TCP sockets on 127.0.0.1:``port`` (the server's side), by state: ESTABLISHED, CLOSE_WAIT (the peer hung up
    and the server has not closed yet)."""
    names = {"01": "ESTABLISHED", "08": "CLOSE_WAIT"}
    counts = {"ESTABLISHED": 0, "CLOSE_WAIT": 0}
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, state = fields[1], fields[3]
        if local == f"0100007F:{port:04X}" and state in names:
            counts[names[state]] += 1
    return counts


def _open_waits(http: httpx.Client, looks: int = 12) -> list[int]:
    """``waits.open`` of /health, asked ``looks`` times on new connections (so both API processes answer)."""
    seen = []
    for _ in range(looks):
        response = http.get("/health", headers={"Connection": "close"})
        seen.append(int(response.json()["waits"]["open"]))
    return seen


@pytest.mark.parametrize("backend", BACKENDS)
def test_200_long_polls_hold_no_thread_and_end_when_their_clients_go(backend: str,
                                                                     stack: Callable[..., LiveService]) -> None:
    live = stack(backend, EVALSERVE_MAX_WAITS_PER_CALLER="1000")  # every wait is held: none answered over a cap
    live.start_api()
    waiter, other = live.user_token("waiter"), live.user_token("other")
    job_id, etag = _queued_job(live, waiter)
    with live.client(other) as http, httpx.Client(base_url=live.url, timeout=30) as anonymous:
        _timed(http, "/v1/collections", 3), _timed(anonymous, "/health", 3)  # warm: both processes' first requests
        baseline = {"collections": _p95(_timed(http, "/v1/collections")), "health": _p95(_timed(anonymous, "/health"))}
        threads_before = {pid: _threads(pid) for pid in _api_workers(live)}
        with _long_polls(live, waiter, job_id, etag, WAITS) as polls:
            _settle(_api_workers(live))  # every request read and parked
            assert _server_sockets(live.port)["ESTABLISHED"] >= WAITS
            collections = _timed(http, "/v1/collections")
            health = _timed(anonymous, "/health")
            threads_held = {pid: _threads(pid) for pid in _api_workers(live)}
            assert _answered(polls) == []  # all 200 still held, none answered early or refused
            assert sum(_open_waits(anonymous)) > 0
            print(f"\n{backend}: p95 with {WAITS} long-polls held: collections {_p95(collections):.3f} s,"
                  f" /health {_p95(health):.3f} s (before: {baseline['collections']:.3f} s,"
                  f" {baseline['health']:.3f} s); API threads {threads_before} -> {threads_held}")
            assert _p95(collections) < P95_BOUND, collections
            assert _p95(health) < P95_BOUND, health
            for count in threads_held.values():  # the loop, the request pool, the watcher: never one per wait
                assert count <= THREADS + 4, (threads_before, threads_held)
        hung_up = time.monotonic()
        while _server_sockets(live.port)["CLOSE_WAIT"] and time.monotonic() - hung_up < 5:
            time.sleep(0.05)
        let_go = time.monotonic() - hung_up
        open_after = _open_waits(anonymous)
        print(f"{backend}: every server socket closed {let_go:.2f} s after the clients hung up; waits open: "
              f"{open_after}")
        assert let_go < 1.0
        assert open_after == [0] * len(open_after)
    # nothing accepted was lost: the job runs once a worker starts, and a held long-poll hears of it
    with live.client(waiter) as http:
        held = http.get(f"/v1/jobs/{job_id}", params={"wait": 2}, headers={"If-None-Match": etag})
        assert held.status_code == 304 and held.headers["ETag"] == etag
        live.start_worker()
        deadline, state = time.monotonic() + 120, "queued"
        while state not in ("succeeded", "failed") and time.monotonic() < deadline:
            answer = http.get(f"/v1/jobs/{job_id}", params={"wait": 25}, headers={"If-None-Match": etag})
            if answer.status_code == 200:
                etag, state = answer.headers["ETag"], answer.json()["state"]
        assert state == "succeeded"
        assert http.get(f"/v1/jobs/{job_id}").content == answer.content  # a parked answer is the plain answer


@pytest.mark.parametrize(("cap", "setting"), [("caller", "EVALSERVE_MAX_WAITS_PER_CALLER"),
                                              ("total", "EVALSERVE_MAX_WAITS")])
def test_over_a_cap_a_long_poll_is_answered_at_once_with_retry_after(cap: str, setting: str,
                                                                     stack: Callable[..., LiveService]) -> None:
    live = stack("embedded", **{setting: "5"})
    live.start_api()
    waiter = live.user_token("waiter")
    job_id, etag = _queued_job(live, waiter)
    with _long_polls(live, waiter, job_id, etag, 30) as polls:
        started = time.monotonic()
        while len(_answered(polls)) < 20 and time.monotonic() - started < 10:
            time.sleep(0.05)
        answered = _answered(polls)
        at_once = time.monotonic() - started
        replies = [_head(s) for s in answered]
        with httpx.Client(base_url=live.url, timeout=30, headers={"Connection": "close"}) as anonymous:
            refused = max(int(v["waits"]["refused"]) for v in (anonymous.get("/health").json() for _ in range(8)))
    print(f"\nover the {cap} cap of 5 per API process (2 processes): {len(answered)} of 30 answered in"
          f" {at_once:.2f} s; /health counts {refused} refused")
    assert 20 <= len(answered) <= 25 and at_once < 3  # at most 5 held per process; the rest at once, not at 30 s
    for reply in replies:
        assert reply.startswith("HTTP/1.1 304"), reply  # the job as the client has it: unchanged
        assert "retry-after: 5\r\n" in reply.lower() and f"over the {cap} cap" in reply
    assert refused > 0
    with live.client(waiter) as http:  # HEAD is never parked: answered at once, never by a held thread
        started = time.monotonic()
        head = http.head(f"/v1/jobs/{job_id}", params={"wait": 30}, headers={"If-None-Match": etag})
        assert head.status_code == 304 and time.monotonic() - started < 3
