"""``evalserve serve``: the API (gunicorn) and a worker (Celery) on one machine, embedded defaults unless
``DATABASE_URL``/``REDIS_URL`` say otherwise; ``evalserve worker``: one more worker, here or on another machine."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from service.config import Settings


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="start the HTTP API and a worker (embedded SQLite database and broker by"
                       " default; DATABASE_URL / REDIS_URL to use PostgreSQL / Redis)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--api-workers", type=int, default=2, help="gunicorn worker processes (default 2)")
    p.add_argument("--concurrency", type=int, default=os.cpu_count() or 1,
                   help="evaluation processes of the local worker (default: one per CPU)")
    p.add_argument("--no-worker", action="store_true", help="start only the API (workers run elsewhere)")
    p.set_defaults(handler=serve)

    w = sub.add_parser("worker", help="start an evaluation worker (same DATABASE_URL and REDIS_URL as the API)")
    w.add_argument("--concurrency", type=int, default=os.cpu_count() or 1, help="processes (default: one per CPU)")
    w.add_argument("--loglevel", default="info")
    w.add_argument("--webhooks-only", action="store_true",
                   help="deliver webhooks only (by default a worker runs evaluations and delivers webhooks)")
    w.set_defaults(handler=worker)


def worker_command(concurrency: int, loglevel: str = "info", queue: str | None = None, *,
                   webhooks: bool = False) -> list[str]:
    """The Celery worker command line for evaluations (settings, including the queue name, come from the
    environment); ``webhooks`` also consumes the webhook-delivery queue (one worker doing both)."""
    settings = Settings.from_env()
    queue = queue or settings.queue
    queues = f"{queue},{queue}.webhooks" if webhooks else queue
    return [sys.executable, "-m", "celery", "-A", "workers.tasks", "worker", "-Q", queues,
            "--concurrency", str(concurrency), "--loglevel", loglevel, "--without-gossip", "--without-mingle"]


def webhook_worker_command(concurrency: int = 4, loglevel: str = "info", queue: str | None = None) -> list[str]:
    """The Celery worker of webhook deliveries: threads (deliveries wait on the network, not the CPU), on the
    webhook queue only, so a slow receiver never holds an evaluation process."""
    queue = queue or Settings.from_env().queue
    return [sys.executable, "-m", "celery", "-A", "workers.tasks", "worker", "-Q", f"{queue}.webhooks",
            "--pool", "threads", "--concurrency", str(concurrency), "--loglevel", loglevel,
            "-n", f"webhooks-{os.getpid()}@%h", "--without-gossip", "--without-mingle"]


def api_command(host: str, port: int, workers: int) -> list[str]:
    return [sys.executable, "-m", "gunicorn", "--bind", f"{host}:{port}", "--workers", str(workers),
            "--timeout", "300", "--graceful-timeout", "30", "--access-logfile", "-", "service.wsgi:app"]


def worker(args: argparse.Namespace) -> int:
    if args.webhooks_only:
        os.execv(sys.executable, webhook_worker_command(loglevel=args.loglevel))
    os.execv(sys.executable, worker_command(args.concurrency, args.loglevel, webhooks=True))


def admin_token(settings: Settings) -> str:
    """The admin token kept in the data directory (created on first start; only its hash is in the database)."""
    from service.auth import create_token, verify
    from service.db import Database

    path = settings.data_dir / "admin-token"
    db = Database(settings.database_url)
    try:
        if path.exists():
            text = path.read_text().strip()
            if verify(db, text) is not None:
                return text
        _, text = create_token(db, "admin (created by evalserve serve)", ("admin", "read", "submit"))
    finally:
        db.dispose()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text + "\n")
    return text


def serve(args: argparse.Namespace) -> int:
    from service.datadir import secure_data_dir
    from service.migrate import upgrade

    settings = Settings.from_env()
    secure_data_dir(settings)
    upgrade(settings.database_url)
    token = admin_token(settings)
    children = [subprocess.Popen(api_command(args.host, args.port, args.api_workers))]
    if not args.no_worker:
        children.append(subprocess.Popen(worker_command(args.concurrency)))
        children.append(subprocess.Popen(webhook_worker_command()))
    url = f"http://{args.host}:{args.port}"
    stopping = False

    def stop(*_: Any) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if _wait_healthy(url, children):
        backend = "embedded (SQLite database and broker in " + str(settings.data_dir) + ")"
        if not settings.database_url.startswith("sqlite") or not settings.embedded_broker:
            backend = "DATABASE_URL / REDIS_URL"
        print(f"evalserve is running at {url}  (API docs: {url}/docs)\n"
              f"  backend: {backend}\n  admin token: {token}\n"
              f"  (also in {Path(settings.data_dir) / 'admin-token'}); stop with Ctrl-C", flush=True)
    while not stopping and all(c.poll() is None for c in children):
        time.sleep(0.5)
    for c in children:
        if c.poll() is None:
            c.terminate()
    for c in children:
        try:
            c.wait(timeout=30)
        except subprocess.TimeoutExpired:
            c.kill()
    failed = [c for c in children if c.returncode not in (0, -signal.SIGTERM, None)]
    return 1 if failed and not stopping else 0


def _wait_healthy(url: str, children: list[subprocess.Popen[bytes]], timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(c.poll() is not None for c in children):
            return False
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as response:
                if response.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.3)
    return False
