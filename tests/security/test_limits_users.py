"""Limits per user, shared by the API processes, that fail safe -- on real processes (gunicorn with 2 processes, as
`evalserve serve` runs it) on 127.0.0.1, on the embedded default and on PostgreSQL + Redis:

- a user with three tokens gets one budget (requests, uploads, active jobs), another user has their own;
- 3,000 requests against 1200/minute are admitted 1200 times (+/- 2%) by two API processes, without Redis too;
- with the limiter's Redis killed, registration-code guesses and uploads get 503 (not 403/201 without limit) and
  nothing is stored, reading still works, each decision is a log line, and /health says degraded with the reason;
  once that Redis is back, limits are checked again;
- existing tokens migrate to one user each (0012_users)."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.service.conftest import BACKENDS
from tests.service.live import ROOT, LiveService, free_port, postgres_available, postgres_database

SAMPLES = ROOT / "evalserve" / "samples"
BM25 = (SAMPLES / "bm25.run").read_bytes()


def _tokens(service: LiveService, names: list[str], *, one_user: bool) -> list[str]:
    """Tokens on the deployment's database: all of one user (``one_user``), or each of a new user."""
    from evalserve.service.access.tokens import create_token
    from evalserve.service.core.config import Settings
    from evalserve.service.store.db import Database

    db = Database(Settings.from_env(service.env).database_url)
    try:
        made: list[str] = []
        user = None
        for name in names:
            row, text = create_token(db, name, ("read", "submit"), user_id=user)
            user = row.user_id if one_user else None
            made.append(text)
        return made
    finally:
        db.dispose()


def _problem(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json", response.headers
    body: dict[str, Any] = response.json()
    assert body["code"] == code and body["detail"], body
    if status in (429, 503):
        assert int(response.headers["Retry-After"]) >= 1, response.headers
    return body


def _api_log(service: LiveService) -> str:
    """The API's whole log (``LiveService.log`` keeps only its end)."""
    assert service.logs is not None
    return (service.logs / "api.log").read_text(errors="replace")


def _api_processes(service: LiveService) -> list[int]:
    """The gunicorn master's worker processes (the API processes that serve requests)."""
    assert service.api is not None
    children = Path(f"/proc/{service.api.pid}/task/{service.api.pid}/children").read_text().split()
    return [int(pid) for pid in children]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_user_with_three_tokens_gets_one_budget(stack: Any, backend: str) -> None:
    service: LiveService = stack(backend, EVALSERVE_RATE_LIMIT="30/minute", EVALSERVE_UPLOAD_RATE_LIMIT="7/minute",
                                 EVALSERVE_QUOTA_ACTIVE_JOBS="3")
    service.start_api(workers=2)  # no worker: queued jobs stay queued, the active-jobs quota holds
    with service.client() as admin:
        collection = admin.post("/v1/collections", data={"name": "budget"},
                                files={"qrels": ("sample.qrels", (SAMPLES / "sample.qrels").read_bytes())}).json()["id"]
    carol = [service.client(t) for t in _tokens(service, ["carol laptop", "carol ci", "carol notebook"],
                                                 one_user=True)]
    dave = service.client(_tokens(service, ["dave"], one_user=False)[0])
    try:
        runs = []
        for client in carol:  # rows stay the token's own: each token uploads its run (the same bytes: stored once)
            made = client.post("/v1/runs", params={"collection": collection}, files={"run": ("bm25.run", BM25)})
            assert made.status_code == 201, made.text
            runs.append(made.json()["id"])
        for client, run in zip(carol, runs, strict=True):  # 3 active jobs: the user's quota, over three tokens
            queued = client.post("/v1/evaluations", json={"collection": collection, "runs": [run], "measures": ["AP"]})
            assert queued.status_code == 202, queued.text
        refused = carol[0].post("/v1/evaluations", json={"collection": collection, "runs": [runs[0]],
                                                          "measures": ["AP"]})
        assert "at most 3" in _problem(refused, 429, "quota-exceeded")["detail"]
        # 7 uploads and queued work so far (the refused one counts): the 8th, from the third token, is over
        _problem(carol[2].post("/v1/runs", params={"collection": collection}, files={"run": ("b.run", BM25)}),
                 429, "rate-limited")
        # 8 requests so far: 22 more are the user's 30 a minute, whichever token sends them
        answers = [carol[i % 3].get("/v1/runs").status_code for i in range(25)]
        assert answers == [200] * 22 + [429] * 3, answers
        assert all(_problem(c.get("/v1/jobs"), 429, "rate-limited") for c in carol)
        # another user has their own budget; nothing the first user had accepted was lost
        assert dave.get("/v1/runs").status_code == 200
        assert dave.post("/v1/runs", params={"collection": collection},
                         files={"run": ("bm25.run", BM25)}).status_code == 201
        with service.client() as admin:
            jobs = admin.get("/v1/jobs", params={"page_size": 100}).json()
            assert len([j for j in jobs if j["collection"] == collection]) == 3
            assert len([r for r in admin.get("/v1/runs", params={"page_size": 100}).json()
                        if r["collection"] == collection]) == 4
    finally:
        for client in (*carol, dave):
            client.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_api_processes_admit_1200_of_3000_requests_against_1200_a_minute(stack: Any, backend: str) -> None:
    service: LiveService = stack(backend, EVALSERVE_RATE_LIMIT="1200/minute")
    service.start_api(workers=2)
    assert len(_api_processes(service)) == 2
    token = _tokens(service, ["eager"], one_user=False)[0]
    clients = [service.client(token) for _ in range(16)]

    def get(i: int) -> int:
        for attempt in range(3):  # a kept-alive connection the server closed as it was reused: sent again
            try:
                return clients[i % 16].get("/v1/runs").status_code
            except httpx.TransportError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    try:
        started = time.monotonic()
        with ThreadPoolExecutor(16) as pool:
            answers = Counter(pool.map(get, range(3000)))
        elapsed = time.monotonic() - started
    finally:
        for client in clients:
            client.close()
    assert set(answers) <= {200, 429}, answers
    assert elapsed < 60, f"3000 requests took {elapsed:.0f} s: longer than the limit's window"
    assert 1176 <= answers[200] <= 1224, (answers, elapsed)
    print(f"{backend}: {answers[200]} of 3000 admitted against 1200/minute by 2 API processes in {elapsed:.1f} s")


@contextmanager
def _redis_server(port: int, home: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A Redis of the rate limiter's own on 127.0.0.1:``port`` (no persistence)."""
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is needed")
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", str(home)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        import redis

        deadline = time.monotonic() + 20
        while True:
            try:
                if redis.Redis(host="127.0.0.1", port=port, socket_timeout=1).ping():
                    break
            except redis.RedisError:
                assert time.monotonic() < deadline, "the limiter's Redis did not start"
                time.sleep(0.1)
        yield proc
    finally:
        proc.kill()
        proc.wait(timeout=10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_with_the_limiters_redis_down_guesses_and_uploads_get_503_and_reads_pass(
        stack: Any, backend: str, tmp_path: Path) -> None:
    port = free_port()
    with _redis_server(port, tmp_path) as limiter_redis:
        service: LiveService = stack(backend, EVALSERVE_RATE_LIMIT_STORAGE=f"redis://127.0.0.1:{port}/0",
                                     EVALSERVE_REGISTER_RATE_LIMIT="3/hour")
        service.start_api(workers=2)
        with service.client() as admin:
            collection = admin.post("/v1/collections", data={"name": "coded"}, files={
                "qrels": ("sample.qrels", (SAMPLES / "sample.qrels").read_bytes())}).json()["id"]
            task = admin.post("/v1/tasks", json={"name": "coded", "collection": collection, "measures": ["AP"],
                                                 "registration": "code", "registration_code": "the-right-code"})
            assert task.status_code == 201, task.text
            path = f"/v1/tasks/{task.json()['id']}/participants"
            health = admin.get("/health").json()
            assert health["rate_limits"]["storage"] == "ok" and f":{port}/0" in health["rate_limits"]["where"]
        guesser = service.client(_tokens(service, ["guesser"], one_user=False)[0])
        try:
            _problem(guesser.post(path, json={"team": "g", "code": "guess-0"}), 403, "registration-code")
            limiter_redis.kill()
            limiter_redis.wait(timeout=10)
            before = _api_log(service).count("rate limits unchecked")
            for i in range(1, 11):  # ten guesses, then the right code: all refused, none checked against the code
                body = _problem(guesser.post(path, json={"team": "g", "code": f"guess-{i}"}), 503,
                                "rate-limits-unavailable")
                assert "registration attempts" in body["detail"] and "cannot be checked" in body["detail"]
            _problem(guesser.post(path, json={"team": "g", "code": "the-right-code"}), 503, "rate-limits-unavailable")
            _problem(guesser.post("/v1/runs", params={"collection": collection}, files={"run": ("a.run", BM25)}),
                     503, "rate-limits-unavailable")
            assert [guesser.get("/v1/runs").status_code for _ in range(5)] == [200] * 5, "reading still works"
            with httpx.Client(base_url=service.url, timeout=30) as anonymous:
                degraded = anonymous.get("/health")
            assert degraded.status_code == 200, degraded.text
            report = degraded.json()
            assert report["status"] == "degraded" and report["rate_limits"]["storage"].startswith("unavailable")
            assert any("rate limits' storage" in p and "refused (503)" in p for p in report["problems"]), report
            deadline = time.monotonic() + 10  # a line per decision: 12 refused, 5 let through
            while _api_log(service).count("rate limits unchecked") - before < 17 and time.monotonic() < deadline:
                time.sleep(0.2)
            lines = [line for line in _api_log(service).splitlines() if "rate limits unchecked" in line]
            assert len(lines) - before == 17, service.log("api")
            assert sum("refused POST" in line for line in lines) == 12
            assert sum("let through GET /v1/runs" in line for line in lines) == 5
            with service.client() as admin:
                assert admin.get(path).json() == [], "nobody was registered"
                assert not [r for r in admin.get("/v1/runs").json() if r["collection"] == collection]
            with _redis_server(port, tmp_path):  # back (empty): the limits are checked again, by each process
                deadline = time.monotonic() + 15
                answer = guesser.post(path, json={"team": "g", "code": "guess-11"})
                while answer.status_code == 503 and time.monotonic() < deadline:
                    time.sleep(0.3)
                    answer = guesser.post(path, json={"team": "g", "code": "guess-11"})
                _problem(answer, 403, "registration-code")
                time.sleep(1.5)  # the other API process tries the storage again a second after its last failure
                answers = [guesser.post(path, json={"team": "g", "code": f"guess-{i}"}).status_code
                           for i in range(12, 16)]
                assert answers[:2] == [403, 403] and 429 in answers, answers
        finally:
            guesser.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_existing_tokens_migrate_to_one_user_each(backend: str, tmp_path: Path) -> None:
    from sqlalchemy import create_engine, text

    from evalserve.service.store.migrate import alembic_config, upgrade

    if backend == "redis-postgres" and not postgres_available():
        pytest.skip("PostgreSQL on localhost is needed")
    with postgres_database() if backend == "redis-postgres" else _sqlite(tmp_path) as url:
        upgrade(url, "0011")
        engine = create_engine(url)
        with engine.begin() as c:
            for token_id, name in (("aaaa", "ann"), ("bbbb", "ben")):
                c.execute(text("INSERT INTO tokens (id, name, secret_hash, scopes, created_at) VALUES"
                               " (:id, :name, :hash, 'read submit', CURRENT_TIMESTAMP)"),
                          {"id": token_id, "name": name, "hash": token_id * 16})
        upgrade(url)
        with engine.begin() as c:
            rows = c.execute(text("SELECT t.id, t.user_id, u.name FROM tokens t JOIN users u ON u.id = t.user_id"
                                  " ORDER BY t.id")).all()
        assert [tuple(r) for r in rows] == [("aaaa", "user_aaaa", "ann"), ("bbbb", "user_bbbb", "ben")]
        from alembic import command

        command.downgrade(alembic_config(url), "0011")
        with engine.begin() as c:
            assert c.execute(text("SELECT count(*) FROM tokens")).scalar() == 2
        engine.dispose()


@contextmanager
def _sqlite(tmp_path: Path) -> Iterator[str]:
    yield f"sqlite:///{tmp_path / 'migrated.db'}"



def _count_in_process(path: str, times: int) -> list[int]:
    from evalserve.service.access.rate_store import SQLiteStorage

    storage = SQLiteStorage(f"evalserve+sqlite://{path}")
    return [storage.incr("user:x", 60) for _ in range(times)]


def test_the_sqlite_counters_lose_no_hit_between_processes(tmp_path: Path) -> None:
    """Four processes counting one key 250 times each: every value from 1 to 1000 is handed out exactly once."""
    import multiprocessing

    path = str(tmp_path / "ratelimits.db")
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        values = [v for part in pool.starmap(_count_in_process, [(path, 250)] * 4) for v in part]
    assert sorted(values) == list(range(1, 1001))
    assert (tmp_path / "ratelimits.db").stat().st_mode & 0o077 == 0, "private to the service's user"


def test_an_unwritable_counter_file_fails_closed_for_registrations_and_uploads(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The default storage's failure (here: a file that cannot be created) is handled like Redis's."""
    import io
    import logging

    from tests.service.test_api import RUN, Api, _is_problem

    blocked = tmp_path / "not-a-dir"
    blocked.write_text("")
    api = Api(tmp_path / "data", EVALSERVE_RATE_LIMIT_STORAGE=f"evalserve+sqlite://{blocked}/ratelimits.db")
    collection = api.collection("admin")  # admins are never counted
    task = api.call("POST", "/v1/tasks", "admin", json={"name": "t", "collection": collection, "measures": ["AP"],
                                                        "registration": "code", "registration_code": "s3cret-code"})
    with caplog.at_level(logging.WARNING, logger="evalserve.service.access.rate_limits"):
        r = api.call("POST", f"/v1/tasks/{task.json['id']}/participants", "bob",
                     json={"team": "b", "code": "s3cret-code"})
        assert "cannot be checked" in _is_problem(r, 503, "rate-limits-unavailable")["detail"]
        assert int(r.headers["Retry-After"]) == 30
        _is_problem(api.call("POST", f"/v1/runs?collection={collection}", "bob",
                             data={"run": (io.BytesIO(RUN), "a.run")}), 503, "rate-limits-unavailable")
        assert api.call("GET", "/v1/runs", "bob").status_code == 200
    decisions = [r.getMessage() for r in caplog.records if "rate limits unchecked" in r.getMessage()]
    assert len(decisions) == 3 and "unavailable: FileExistsError" in decisions[0], decisions
    health = api.client.get("/health").json
    assert health is not None and health["status"] == "degraded" and health["rate_limits"]["refused_unchecked"] == 2
    assert health["rate_limits"]["passed_unchecked"] == 1
    assert api.call("GET", f"/v1/tasks/{task.json['id']}/participants", "admin").json == []
    api.app.extensions["evalserve"].db.dispose()
