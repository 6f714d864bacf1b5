"""Real service processes for end-to-end tests: gunicorn and a Celery worker started as `evalserve serve` starts
them, against the embedded default (SQLite database and broker) or real PostgreSQL and Redis on localhost.

Nothing is mocked: the tests talk HTTP to gunicorn, jobs go through the broker to a worker process.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from evalserve.cli.serve import api_command, webhook_worker_command, worker_command

ROOT = Path(__file__).resolve().parents[2]
PG_ADMIN_URL = os.environ.get("EVALSERVE_TEST_PG", "postgresql://postgres@localhost:5432/postgres")
REDIS_TEST_URL = os.environ.get("EVALSERVE_TEST_REDIS", "redis://localhost:6379/0")

#: short leases and sweeps so that fault tests recover in seconds
FAST_RECOVERY = {"EVALSERVE_LEASE_SECONDS": "3", "EVALSERVE_SWEEP_SECONDS": "1",
                 "EVALSERVE_REQUEUE_AFTER_SECONDS": "4"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def postgres_available() -> bool:
    try:
        import psycopg

        with psycopg.connect(PG_ADMIN_URL, connect_timeout=3):
            return True
    except Exception:
        return False


def redis_available() -> bool:
    try:
        import redis

        return bool(redis.Redis.from_url(REDIS_TEST_URL, socket_timeout=3).ping())
    except Exception:
        return False


@contextmanager
def postgres_database() -> Iterator[str]:
    """A fresh PostgreSQL database for one test stack (dropped afterwards)."""
    import psycopg

    name = f"evalserve_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base = PG_ADMIN_URL.rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@dataclass
class LiveService:
    """One deployment: its environment, its processes, an admin token and an HTTP client."""

    env: dict[str, str]
    port: int = field(default_factory=free_port)
    api: subprocess.Popen[bytes] | None = None
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    token: str = ""
    logs: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def setup(self) -> None:
        """Migrate the database and create an admin token, as `evalserve serve` does."""
        from evalserve.service.access.tokens import create_token
        from evalserve.service.core.config import Settings
        from evalserve.service.store.db import Database
        from evalserve.service.store.migrate import upgrade

        settings = Settings.from_env(self.env)
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        upgrade(settings.database_url)
        db = Database(settings.database_url)
        _, self.token = create_token(db, "test admin", ("admin", "read", "submit"))
        db.dispose()

    def user_token(self, name: str, scopes: tuple[str, ...] = ("read", "submit")) -> str:
        """A fresh token on the deployment's database (``read submit``: what a shared task hands a participant)."""
        from evalserve.service.access.tokens import create_token
        from evalserve.service.core.config import Settings
        from evalserve.service.store.db import Database

        db = Database(Settings.from_env(self.env).database_url)
        try:
            return create_token(db, name, scopes)[1]
        finally:
            db.dispose()

    def _spawn(self, cmd: list[str], name: str) -> subprocess.Popen[bytes]:
        assert self.logs is not None
        log = open(self.logs / f"{name}.log", "ab")  # noqa: SIM115 -- kept open for the process's life
        return subprocess.Popen(cmd, env=self.env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)

    def start_api(self, workers: int = 2) -> None:
        self.api = self._spawn(api_command("127.0.0.1", self.port, workers), "api")
        self.wait_healthy()

    def start_worker(self, concurrency: int = 1, *, webhooks: bool = True) -> subprocess.Popen[bytes]:
        """A supervised worker (``evalserve worker``): ``concurrency`` single-process evaluation workers and
        (unless ``webhooks`` is False) a webhook worker beside them; ``kill`` stops them all (one process group)."""
        proc = self._spawn(worker_command(concurrency, "info", self.env.get("EVALSERVE_QUEUE"), webhooks=webhooks),
                           "worker")
        self.workers.append(proc)
        return proc

    def start_webhook_worker(self, concurrency: int = 4) -> subprocess.Popen[bytes]:
        """A worker of webhook deliveries only, as `evalserve serve` starts it beside the evaluation worker."""
        proc = self._spawn(webhook_worker_command(concurrency, "info", self.env.get("EVALSERVE_QUEUE")), "webhooks")
        self.workers.append(proc)
        return proc

    def wait_healthy(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.api is not None and self.api.poll() is not None:
                raise RuntimeError(f"the API exited: {self.log('api')}")
            try:
                if httpx.get(self.url + "/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"the API did not become healthy: {self.log('api')}")

    def log(self, name: str) -> str:
        assert self.logs is not None
        path = self.logs / f"{name}.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    @staticmethod
    def kill(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
        """Signal the process and everything it started (its session)."""
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)

    def stop_api(self, sig: int = signal.SIGTERM) -> None:
        if self.api is not None:
            self.kill(self.api, sig)
            self.api = None

    def restart(self) -> None:
        """Stop the API and every worker (SIGTERM, as an operator would) and start an API and a worker again."""
        self.stop()
        self.start_api()
        self.start_worker()

    def stop(self) -> None:
        for proc in self.workers:
            self.kill(proc, signal.SIGTERM)
        self.workers.clear()
        self.stop_api()

    def client(self, token: str | None = None) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60,
                            headers={"Authorization": f"Bearer {token or self.token}"})

    def wait_job(self, client: httpx.Client, job_id: str, timeout: float = 120,
                 states: tuple[str, ...] = ("succeeded", "failed", "cancelled")) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        job: dict[str, Any] = {}
        while time.monotonic() < deadline:
            job = client.get(f"/v1/jobs/{job_id}").json()
            if job.get("state") in states:
                return job
            time.sleep(0.2)
        raise AssertionError(f"job {job_id} did not reach {states}: {job}\n--- worker log:\n{self.log('worker')}")


def service_env(tmp: Path, backend: str, database_url: str | None = None, **extra: str) -> dict[str, str]:
    """The environment of a test deployment: ``embedded`` or ``redis-postgres``."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update({"EVALSERVE_DATA_DIR": str(tmp / "data"), "EVALSERVE_QUEUE": f"evalserve-test-{uuid.uuid4().hex[:8]}",
                "PYTHONPATH": str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""), "PYTHONUNBUFFERED": "1"})
    if backend == "redis-postgres":
        assert database_url is not None
        env["DATABASE_URL"] = database_url
        env["REDIS_URL"] = REDIS_TEST_URL
    env.update(extra)
    return env


def python() -> str:
    return sys.executable


@contextmanager
def deployed(home: Path, backend: str, *, api_workers: int, concurrency: int) -> Iterator[LiveService]:
    """A running service for the benchmarks: ``backend`` ``embedded``, or ``redis-postgres`` on a database made
    for it; migrated, its API and ``concurrency`` worker processes started under ``home``, all stopped on exit."""
    with contextlib.ExitStack() as cleanup:
        url = cleanup.enter_context(postgres_database()) if backend == "redis-postgres" else None
        service = LiveService(service_env(home, backend, url), logs=home)
        service.setup()
        cleanup.callback(service.stop)
        service.start_api(workers=api_workers)
        service.start_worker(concurrency=concurrency)
        yield service
