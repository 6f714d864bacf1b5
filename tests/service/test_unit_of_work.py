"""One unit of work per request (issue 27): a request's writes are one transaction, committed once after the
view returned and before the response is sent; a quota check and the insert it guards are in that transaction,
serialised per user, so concurrent requests cannot both see room for one more job.

The commit counts run against the Flask test client (embedded default); the race runs 40 concurrent POSTs
against real gunicorn processes on 127.0.0.1, on the embedded default and on PostgreSQL + Redis."""

from __future__ import annotations

import io
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, event, func, select

from evalserve.service.store.models import IdempotencyRecord, Job
from tests.service.conftest import BACKENDS, _skip_unavailable
from tests.service.live import ROOT, LiveService, postgres_database, service_env
from tests.service.test_api import RUN, Api

SAMPLES = ROOT / "evalserve" / "samples"
QUOTA = 20
CALLERS = 40


@pytest.fixture(params=BACKENDS)
def quota_service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LiveService]:
    """A deployment with an active-jobs quota of 20, no worker (queued jobs stay queued, so each counts), and
    rate limits high enough that only the quota refuses."""
    backend = str(request.param)
    _skip_unavailable(backend)
    env = {"EVALSERVE_QUOTA_ACTIVE_JOBS": str(QUOTA), "EVALSERVE_RATE_LIMIT": "10000/minute",
           "EVALSERVE_UPLOAD_RATE_LIMIT": "10000/minute"}
    with postgres_database() if backend == "redis-postgres" else _no_database() as url:
        service = LiveService(service_env(tmp_path, backend, url, **env), logs=tmp_path)
        service.setup()
        try:
            service.start_api(workers=2)
            yield service
        finally:
            service.stop()


class _no_database:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: Any) -> None:
        return None


def _job_rows(service: LiveService, owner: str) -> int:
    """The owner's job rows, counted in the database itself."""
    from sqlalchemy import func, select

    from evalserve.service.core.config import Settings
    from evalserve.service.store.db import Database
    from evalserve.service.store.models import Job

    db = Database(Settings.from_env(service.env).database_url)
    try:
        with db.session() as s:
            return int(s.execute(select(func.count()).select_from(Job).where(Job.owner_id == owner)).scalar() or 0)
    finally:
        db.dispose()


def _a_user_with_a_run(service: LiveService, collection_name: str, user_name: str) -> tuple[str, str, dict[str, Any]]:
    """A new user's token and id, and an evaluation request for a run they uploaded to a new collection."""
    with service.client() as admin:
        made = admin.post("/v1/collections", data={"name": collection_name},
                          files={"qrels": ("sample.qrels", (SAMPLES / "sample.qrels").read_bytes())})
        assert made.status_code == 201, made.text
        collection = made.json()["id"]
    user = service.user_token(user_name)
    with service.client(user) as client:
        run = client.post("/v1/runs", params={"collection": collection},
                          files={"run": ("bm25.run", (SAMPLES / "bm25.run").read_bytes())})
        assert run.status_code == 201, run.text
    return user, user.split("_", 2)[1], {"collection": collection, "runs": [run.json()["id"]], "measures": ["AP"]}


def test_40_concurrent_evaluations_admit_exactly_the_quota(quota_service: LiveService) -> None:
    user, owner, request = _a_user_with_a_run(quota_service, "race", "racer")
    start = threading.Barrier(CALLERS)
    answers: list[tuple[int, str]] = []
    lock = threading.Lock()

    def post() -> None:
        with httpx.Client(base_url=quota_service.url, timeout=120,
                          headers={"Authorization": f"Bearer {user}"}) as mine:
            start.wait(timeout=60)
            response = mine.post("/v1/evaluations", json=request)
        code = response.json().get("code", "") if response.status_code >= 400 else response.json()["id"]
        with lock:
            answers.append((response.status_code, code))

    threads = [threading.Thread(target=post) for _ in range(CALLERS)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)
    assert not any(t.is_alive() for t in threads), "a request did not finish"
    statuses = Counter(status for status, _ in answers)
    print(f"\n{quota_service.env.get('DATABASE_URL', 'embedded')[:10]}: {dict(statuses)} in"
          f" {time.monotonic() - began:.1f} s")
    assert len(answers) == CALLERS
    assert statuses == {202: QUOTA, 429: CALLERS - QUOTA}, answers
    assert {code for status, code in answers if status == 429} == {"quota-exceeded"}
    admitted = {code for status, code in answers if status == 202}
    assert len(admitted) == QUOTA, "every admitted job has its own id"
    assert _job_rows(quota_service, owner) == QUOTA, "every admitted job is stored, and nothing else"
    with quota_service.client(user) as client:  # and the quota still holds afterwards
        again = client.post("/v1/evaluations", json=request)
        assert again.status_code == 429 and again.json()["code"] == "quota-exceeded", again.text


def test_concurrent_retries_with_one_idempotency_key_make_one_job(quota_service: LiveService) -> None:
    """The key is reserved in the request's transaction: a concurrent retry waits for the first request and
    replays its answer (before, it got 409 idempotency-key-in-progress); one job either way."""
    user, owner, request = _a_user_with_a_run(quota_service, "retries", "retrier")
    callers = 8
    start = threading.Barrier(callers)
    answers: list[httpx.Response] = []
    lock = threading.Lock()

    def post() -> None:
        with httpx.Client(base_url=quota_service.url, timeout=120,
                          headers={"Authorization": f"Bearer {user}", "Idempotency-Key": "retry-1"}) as mine:
            start.wait(timeout=60)
            response = mine.post("/v1/evaluations", json=request)
        with lock:
            answers.append(response)

    threads = [threading.Thread(target=post) for _ in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)
    assert not any(t.is_alive() for t in threads), "a request did not finish"
    assert [a.status_code for a in answers] == [202] * callers, [(a.status_code, a.text) for a in answers]
    assert len({a.json()["id"] for a in answers}) == 1, "every retry got the first job"
    assert sum(a.headers.get("Idempotent-Replayed") == "true" for a in answers) == callers - 1
    assert _job_rows(quota_service, owner) == 1


# -- one commit per request (Flask's test client, the embedded default) ---------------------------------------------


@contextmanager
def commits(engine: Engine) -> Iterator[list[list[str]]]:
    """The transactions committed on ``engine`` meanwhile, each as the SQL statements it ran (first words)."""
    committed: list[list[str]] = []
    running: dict[int, list[str]] = {}

    def executed(conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        running.setdefault(id(conn), []).append(" ".join(statement.split()[:3]))

    def commit(conn: Any) -> None:
        committed.append(running.pop(id(conn), []))

    def rollback(conn: Any) -> None:
        running.pop(id(conn), None)

    listeners = [("before_cursor_execute", executed), ("commit", commit), ("rollback", rollback)]
    for name, fn in listeners:
        event.listen(engine, name, fn)
    try:
        yield committed
    finally:
        for name, fn in listeners:
            event.remove(engine, name, fn)


def _writes(transaction: list[str]) -> list[str]:
    return [s for s in transaction if s.split()[0] in ("INSERT", "UPDATE", "DELETE")]


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    made = Api(tmp_path)
    yield made
    made.app.extensions["evalserve"].db.dispose()


@pytest.mark.parametrize("key", [None, "once-1"])
def test_post_evaluations_commits_once(api: Api, key: str | None) -> None:
    collection = api.collection()
    run = api.run(collection)
    engine = api.app.extensions["evalserve"].db.engine
    headers = {"Idempotency-Key": key} if key else {}
    with commits(engine) as committed:
        accepted = api.call("POST", "/v1/evaluations", json={"collection": collection, "runs": [run],
                                                               "measures": ["AP"]}, headers=headers)
    assert accepted.status_code == 202, accepted.get_data(as_text=True)
    request, *after = committed
    writes = _writes(request)
    assert "INSERT INTO jobs" in writes, request
    assert ("INSERT INTO idempotency_keys" in writes) == bool(key), request
    assert ("UPDATE idempotency_keys SET" in writes) == bool(key), "the stored response, in the same commit"
    counted = next(i for i, statement in enumerate(request) if statement.startswith("SELECT count(*)"))
    assert "BEGIN IMMEDIATE" in request[:counted], "SQLite's write lock is taken before the quota is counted"
    # after the commit the job was published; the broker's acceptance is then recorded on its own (jobs.queue)
    assert [_writes(t) for t in after] == [["UPDATE jobs SET"]], committed
    assert after[0][-1].startswith("UPDATE jobs SET"), after
    if key:  # the replay reads, and commits nothing
        with commits(engine) as again:
            replayed = api.call("POST", "/v1/evaluations", json={"collection": collection, "runs": [run],
                                                                   "measures": ["AP"]}, headers=headers)
        assert replayed.headers["Idempotent-Replayed"] == "true" and replayed.json["id"] == accepted.json["id"]
        assert all(not _writes(t) for t in again), again


@pytest.mark.parametrize("key", [None, "once-2"])
def test_post_submissions_commits_once(api: Api, key: str | None) -> None:
    collection = api.collection()
    engine = api.app.extensions["evalserve"].db.engine
    headers = {"Idempotency-Key": key} if key else {}
    with commits(engine) as committed:
        accepted = api.call("POST", "/v1/submissions", data={"collection": collection, "measures": "AP",
                                                              "run": (io.BytesIO(RUN), "a.run")}, headers=headers)
    assert accepted.status_code == 202, accepted.get_data(as_text=True)
    request, *after = committed
    writes = _writes(request)
    assert {"INSERT INTO runs", "INSERT INTO jobs"} <= set(writes), request
    assert ("INSERT INTO idempotency_keys" in writes) == bool(key), request
    assert [_writes(t) for t in after] == [["UPDATE jobs SET"]], committed


def test_a_refused_request_commits_nothing(api: Api) -> None:
    collection = api.collection()
    engine = api.app.extensions["evalserve"].db.engine
    with commits(engine) as committed:
        refused = api.call("POST", "/v1/evaluations", json={"collection": collection, "runs": ["run_nope"],
                                                              "measures": ["AP"]}, headers={"Idempotency-Key": "k"})
    assert refused.status_code == 404, refused.get_data(as_text=True)
    assert all(not _writes(t) for t in committed), committed
    with api.app.extensions["evalserve"].db.session() as s:  # the key was rolled back with the rest
        assert s.execute(select(func.count()).select_from(IdempotencyRecord)).scalar() == 0


def test_a_job_is_published_only_after_its_commit(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    collection = api.collection()
    run = api.run(collection)
    st = api.app.extensions["evalserve"]
    durable: list[bool] = []

    def publish(job_id: str) -> bool:  # what a worker woken now would find
        with st.db.session() as s:
            durable.append(s.get(Job, job_id) is not None)
        return True

    monkeypatch.setattr(st.queue, "publish", publish)
    body = {"collection": collection, "runs": [run], "measures": ["AP"]}
    accepted = api.call("POST", "/v1/evaluations", json=body)
    assert accepted.status_code == 202 and durable == [True]

    def refuse(_session: Any) -> None:
        raise RuntimeError("the disk is full")

    event.listen(st.db._sessions, "before_commit", refuse)
    try:
        failed = api.call("POST", "/v1/evaluations", json=body)
    finally:
        event.remove(st.db._sessions, "before_commit", refuse)
    assert failed.status_code == 500 and failed.headers["Content-Type"] == "application/problem+json"
    assert durable == [True], "a job whose commit failed is never published"
    with st.db.session() as s:
        assert s.execute(select(func.count()).select_from(Job)).scalar() == 1


def _opened_before_savepoints(transaction: list[str]) -> bool:
    """On SQLite a SAVEPOINT outside a transaction opens one, and its RELEASE commits it: every savepoint must
    follow the transaction's BEGIN IMMEDIATE or a write (pysqlite's implicit BEGIN)."""
    first = next((i for i, s in enumerate(transaction) if s.startswith("SAVEPOINT")), None)
    return first is None or any(s == "BEGIN IMMEDIATE" or s in _writes([s]) for s in transaction[:first])


def test_an_upload_without_a_quota_check_is_one_transaction_too(api: Api) -> None:
    """An admin (no quota check, so no early lock) uploading a run: the blob's savepoint is inside the
    request's transaction, not a transaction of its own that its RELEASE would commit."""
    collection = api.collection()
    with commits(api.app.extensions["evalserve"].db.engine) as committed:
        made = api.call("POST", f"/v1/runs?collection={collection}", "admin",
                        data={"run": (io.BytesIO(RUN), "a.run")})
    assert made.status_code == 201, made.get_data(as_text=True)
    [request] = committed
    assert {"INSERT INTO blobs", "INSERT INTO runs"} <= set(_writes(request)), request
    assert _opened_before_savepoints(request), request
