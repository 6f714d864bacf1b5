"""Per-user limits on real processes (gunicorn, and a Celery worker where results are needed) on 127.0.0.1, on the
embedded default and on PostgreSQL + Redis, with small limits set through the environment: a token over its rate
limit, over its storage or active-jobs quota, 201 measures, 3,000 files, a duplicated field, JSON nested 100,000
deep and guessed registration codes are refused with problem+json (429s with Retry-After) and nothing is stored;
a team named like a spreadsheet formula is escaped in the CSV leaderboard; the data directory is private.

The API runs one gunicorn worker here: without Redis each API process counts requests on its own."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.service.conftest import BACKENDS, _skip_unavailable
from tests.service.live import ROOT, LiveService, postgres_database, service_env

SAMPLES = ROOT / "evalserve" / "samples"
BM25 = (SAMPLES / "bm25.run").read_bytes()  # 5,055 bytes
NEURAL = (SAMPLES / "neural.run").read_bytes()  # 5,355 bytes
LIMITS = {
    "EVALSERVE_RATE_LIMIT": "20/minute",
    "EVALSERVE_UPLOAD_RATE_LIMIT": "8/minute",
    "EVALSERVE_REGISTER_RATE_LIMIT": "3/hour",
    "EVALSERVE_QUOTA_STORAGE_MB": str(8192 / (1024 * 1024)),  # one sample run fits, two do not
    "EVALSERVE_QUOTA_ACTIVE_JOBS": "3",
}


def token(service: LiveService, name: str, scopes: tuple[str, ...] = ("read", "submit")) -> str:
    """A new token on the deployment (each test's callers count against their own limits)."""
    from evalserve.service.access.tokens import create_token
    from evalserve.service.core.config import Settings
    from evalserve.service.store.db import Database

    db = Database(Settings.from_env(service.env).database_url)
    try:
        return create_token(db, f"{name} {time.monotonic_ns()}", scopes)[1]
    finally:
        db.dispose()


@pytest.fixture(scope="module", params=BACKENDS)
def limited(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    """A deployment with small limits and no worker (queued jobs stay queued: the active-jobs quota holds)."""
    backend = str(request.param)
    _skip_unavailable(backend)
    home = tmp_path_factory.mktemp(f"limited-{backend}")
    with postgres_database() if backend == "redis-postgres" else _nothing() as url:
        service = LiveService(service_env(home, backend, url, **LIMITS), logs=home)
        service.setup()
        try:
            service.start_api(workers=1)
            yield service
        finally:
            service.stop()


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: Any) -> None:
        return None


@pytest.fixture(scope="module")
def collection(limited: LiveService) -> str:
    """A public collection of the admin's (exempt from every limit) that the tests' tokens submit runs for."""
    with limited.client() as admin:
        made = admin.post("/v1/collections", data={"name": "limits"},
                          files={"qrels": ("sample.qrels", (SAMPLES / "sample.qrels").read_bytes())})
        assert made.status_code == 201, made.text
        return str(made.json()["id"])


def _problem(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json", response.headers
    body: dict[str, Any] = response.json()
    assert body["status"] == status and body["code"] == code and body["detail"], body
    if status == 429:
        assert int(response.headers["Retry-After"]) >= 1, response.headers
    return body


def _stored(service: LiveService, collection: str) -> dict[str, int]:
    """Runs and jobs on the deployment for the collection, and collections (as the admin sees them)."""
    with service.client() as admin:
        runs = admin.get("/v1/runs", params={"page_size": 100}).json()
        jobs = admin.get("/v1/jobs", params={"page_size": 100}).json()
        collections = admin.get("/v1/collections", params={"page_size": 100}).json()
    return {"runs": sum(r["collection"] == collection for r in runs),
            "jobs": sum(j["collection"] == collection for j in jobs), "collections": len(collections)}


def test_a_token_over_its_rate_limit_gets_429_and_nothing_is_stored(limited: LiveService, collection: str) -> None:
    before = _stored(limited, collection)
    with limited.client(token(limited, "eager")) as eager:
        answers = [eager.get("/v1/runs").status_code for _ in range(25)]
        assert answers[:20] == [200] * 20 and set(answers[20:]) == {429}, answers
        body = _problem(eager.get("/v1/runs"), 429, "rate-limited")
        assert "20 per 1 minute" in body["detail"]
        _problem(eager.post("/v1/runs", params={"collection": collection}, files={"run": ("a.run", BM25)}),
                 429, "rate-limited")
        assert eager.get("/health").status_code == 200, "/health is not limited"
    with limited.client(token(limited, "uploader")) as uploader:  # uploads have their own, smaller limit
        for i in range(8):
            made = uploader.post("/v1/runs", params={"collection": collection}, files={"run": (f"u{i}.run", BM25)})
            assert made.status_code == 201, made.text
        _problem(uploader.post("/v1/runs", params={"collection": collection}, files={"run": ("u9.run", BM25)}),
                 429, "rate-limited")
        assert uploader.get("/v1/runs").status_code == 200, "reading is still allowed"
    assert _stored(limited, collection)["runs"] == before["runs"] + 8
    with limited.client() as admin:  # admins are exempt
        assert all(admin.get("/v1/runs").status_code == 200 for _ in range(25))


def test_over_the_storage_quota_is_429_and_nothing_is_stored(limited: LiveService, collection: str) -> None:
    with limited.client(token(limited, "hoarder")) as hoarder:
        assert hoarder.post("/v1/runs", params={"collection": collection},
                            files={"run": ("bm25.run", BM25)}).status_code == 201
        before = _stored(limited, collection)
        body = _problem(hoarder.post("/v1/runs", params={"collection": collection},
                                     files={"run": ("neural.run", NEURAL)}), 429, "quota-exceeded")
        assert "storage quota" in body["detail"]
        _problem(hoarder.post("/v1/submissions", data={"collection": collection, "measures": "AP"},
                              files={"run": ("neural.run", NEURAL)}), 429, "quota-exceeded")
        _problem(hoarder.post("/v1/collections", data={"name": "mine"},
                              files={"qrels": ("q", (SAMPLES / "sample.qrels").read_bytes() * 3)}),
                 429, "quota-exceeded")
        assert _stored(limited, collection) == before
        # the same bytes again are stored once and counted once
        assert hoarder.post("/v1/runs", params={"collection": collection},
                            files={"run": ("again.run", BM25)}).status_code == 201


def test_over_the_active_jobs_quota_is_429_and_nothing_is_queued(limited: LiveService, collection: str) -> None:
    with limited.client(token(limited, "busy")) as busy:
        run = busy.post("/v1/runs", params={"collection": collection}, files={"run": ("bm25.run", BM25)})
        assert run.status_code == 201, run.text
        request = {"collection": collection, "runs": [run.json()["id"]], "measures": ["AP"]}
        for _ in range(3):
            assert busy.post("/v1/evaluations", json=request).status_code == 202
        before = _stored(limited, collection)
        body = _problem(busy.post("/v1/evaluations", json=request), 429, "quota-exceeded")
        assert "at most 3" in body["detail"]
        _problem(busy.post("/v1/submissions", data={"collection": collection, "measures": "AP"},
                           files={"run": ("again.run", BM25)}), 429, "quota-exceeded")
        assert _stored(limited, collection) == before


def test_201_measures_are_refused_on_evaluations_and_submissions(limited: LiveService, collection: str) -> None:
    measures = [f"P@{k}" for k in range(1, 202)]
    with limited.client(token(limited, "greedy")) as greedy:
        run = greedy.post("/v1/runs", params={"collection": collection}, files={"run": ("bm25.run", BM25)}).json()
        before = _stored(limited, collection)
        _problem(greedy.post("/v1/evaluations", json={"collection": collection, "runs": [run["id"]],
                                                      "measures": measures}), 422, "invalid-request")
        body = _problem(greedy.post("/v1/submissions", data={"collection": collection, "measures": ",".join(measures)},
                                    files={"run": ("bm25.run", BM25)}), 422, "invalid-request")
        assert body["problems"][0]["field"] == "measures"
        assert _stored(limited, collection) == before


def test_3000_files_are_refused_with_a_clear_problem(limited: LiveService, collection: str) -> None:
    before = _stored(limited, collection)
    files = [("run", (f"r{i}.run", f"401 Q0 doc-401-000 1 1.0 r{i}\n".encode())) for i in range(3000)]
    with limited.client(token(limited, "flood")) as flood:
        body = _problem(flood.post("/v1/submissions", data={"collection": collection, "measures": "AP"},
                                   files=files), 413, "too-many-files")
        assert "1000 parts" in body["detail"] and "100 run files" in body["detail"]
    # a new connection: the server closes one whose body it stopped reading, and a pooled connection can be
    # reused before the client has seen that close (a race that grows with the machine's load)
    with limited.client(token(limited, "flood")) as flood:
        body = _problem(flood.post("/v1/submissions", data={"collection": collection, "measures": "AP"},
                                   files=files[:101]), 413, "too-many-files")
        assert "at most 100" in body["detail"]
    assert _stored(limited, collection) == before


def test_duplicated_fields_and_deep_json_are_refused(limited: LiveService, collection: str) -> None:
    before = _stored(limited, collection)
    with limited.client(token(limited, "sloppy")) as sloppy:
        body = _problem(sloppy.post(f"/v1/runs?collection={collection}&collection=col_other",
                                    files={"run": ("a.run", BM25)}), 422, "duplicate-field")
        assert "'collection'" in body["detail"]
        _problem(sloppy.post("/v1/runs", params={"collection": collection},
                             files=[("run", ("a.run", BM25)), ("run", ("b.run", NEURAL))]), 422, "duplicate-field")
        _problem(sloppy.post("/v1/submissions", data={"collection": [collection, "col_other"], "measures": "AP"},
                             files={"run": ("a.run", BM25)}), 422, "duplicate-field")
        deep = "[" * 100_000 + "]" * 100_000
        _problem(sloppy.post("/v1/evaluations", content=deep, headers={"Content-Type": "application/json"}),
                 400, "too-deep")
    assert _stored(limited, collection) == before


def test_guessing_a_registration_code_is_limited(limited: LiveService, collection: str) -> None:
    with limited.client() as admin:
        task = admin.post("/v1/tasks", json={"name": "coded", "collection": collection, "measures": ["AP"],
                                             "registration": "code", "registration_code": "the-right-code"})
        assert task.status_code == 201, task.text
        path = f"/v1/tasks/{task.json()['id']}/participants"
    with limited.client(token(limited, "guesser")) as guesser:
        for guess in ("guess-1", "guess-2", "guess-3"):
            _problem(guesser.post(path, json={"team": "guesser", "code": guess}), 403, "registration-code")
        _problem(guesser.post(path, json={"team": "guesser", "code": "the-right-code"}), 429, "rate-limited")
    with limited.client() as admin:
        assert admin.get(path).json() == [], "nobody was registered"
    with limited.client(token(limited, "invited")) as invited:
        assert invited.post(path, json={"team": "invited", "code": "the-right-code"}).status_code == 201


def test_the_data_dir_and_databases_are_private(limited: LiveService, tmp_path: Path) -> None:
    data = Path(limited.env["EVALSERVE_DATA_DIR"])
    assert stat.S_IMODE(data.stat().st_mode) == 0o700, "tightened by the API at start"
    for name in ("evalserve.db", "broker.db"):
        if (data / name).exists():
            assert stat.S_IMODE((data / name).stat().st_mode) == 0o600, name
    if "DATABASE_URL" in limited.env:
        return
    assert stat.S_IMODE((data / "evalserve.db").stat().st_mode) == 0o600
    # a fresh data directory made by the CLI: migrate, then tokens create
    for command in (["migrate"], ["tokens", "create", "--name", "ci"]):
        fresh = tmp_path / "fresh" / "data"
        env = {**{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")},
               "EVALSERVE_DATA_DIR": str(fresh), "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-m", "evalserve.cli.main", *command], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o700
        assert stat.S_IMODE((fresh / "evalserve.db").stat().st_mode) == 0o600
        assert not any(stat.S_IMODE(p.stat().st_mode) & 0o077 for p in fresh.iterdir()), list(fresh.iterdir())


def test_a_formula_team_name_is_escaped_in_the_csv_leaderboard(live: LiveService) -> None:
    with live.client() as admin:
        made = admin.post("/v1/collections", data={"name": "csv"},
                          files={"qrels": ("sample.qrels", (SAMPLES / "sample.qrels").read_bytes())})
        task = admin.post("/v1/tasks", json={"name": "csv", "collection": made.json()["id"], "measures": ["AP"],
                                             "phases": [{"name": "test", "opens_at": "2020-01-01T00:00:00Z",
                                                         "closes_at": "2100-01-01T00:00:00Z"}]}).json()
    teams = {"=HYPERLINK(\"http://x\")": BM25, "@SUM(1+1)": NEURAL}
    for team, run in teams.items():
        with live.client(token(live, "team")) as member:
            assert member.post(f"/v1/tasks/{task['id']}/participants", json={"team": team}).status_code == 201
            sub = member.post(f"/v1/tasks/{task['id']}/submissions", files={"run": ("r.run", run)})
            assert sub.status_code == 202, sub.text
            deadline = time.monotonic() + 120
            while member.get(sub.headers["Location"]).json()["state"] not in ("succeeded", "failed"):
                assert time.monotonic() < deadline, live.log("worker")
                time.sleep(0.3)
    with httpx.Client(base_url=live.url, timeout=60) as anonymous:  # the stored board, once the worker refreshed it
        deadline = time.monotonic() + 60
        while True:
            answer = anonymous.get(f"/v1/tasks/{task['id']}/leaderboard", params={"format": "csv"})
            if answer.status_code == 200 and "Evalserve-Stale" not in answer.headers:
                break
            assert time.monotonic() < deadline, answer.headers
            time.sleep(0.3)
        csv = answer.text
    import csv as csvlib

    rows = list(csvlib.DictReader(csv.splitlines()))
    assert {r["label"] for r in rows} == {"'=HYPERLINK(\"http://x\")", "'@SUM(1+1)"}, csv
    second = next(r for r in rows if r["rank"] == "2")
    assert float(second["delta_best"]) < 0 and not second["delta_best"].startswith("'"), "numbers stay numbers"
    assert float(second["AP"]) > 0
