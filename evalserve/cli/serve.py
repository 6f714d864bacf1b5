"""``evalserve serve``: the API (gunicorn) and workers (Celery) on one machine, embedded defaults unless
``DATABASE_URL``/``REDIS_URL`` say otherwise; ``evalserve worker``: more workers, here or on another machine.
Both supervise their processes (``evalserve.supervisor``): a child that dies is restarted."""

from __future__ import annotations

import argparse
import errno
import os
import socket
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from evalserve.cli.commands import help_of
from evalserve.cli.health_watch import COMPONENTS, HealthWatch, component_names, problems, wait_for_api
from evalserve.cli.liveness import DeathNotices
from evalserve.service.core.config import Settings
from evalserve.supervisor import Child, Supervisor

LOG_LEVELS = ("debug", "info", "warning", "error", "critical")


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help=help_of("serve"))
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--api-workers", type=int, default=2, help="gunicorn worker processes (default 2)")
    p.add_argument("--concurrency", type=int, default=os.cpu_count() or 1,
                   help="evaluation worker processes, one job each at a time (default: one per CPU)")
    p.add_argument("--no-worker", action="store_true", help="start only the API (workers run elsewhere)")
    p.add_argument("--log-level", default=None, choices=LOG_LEVELS,
                   help="show the API's and the workers' logs on the terminal at this level (default: info, into"
                   " DATA_DIR/logs/api.log and workers.log)")
    p.add_argument("-v", "--verbose", action="store_true", help="show the logs on the terminal (level info)")
    p.set_defaults(handler=serve)

    w = sub.add_parser("worker", help=help_of("worker"))
    w.add_argument("--concurrency", type=int, default=os.cpu_count() or 1,
                   help="evaluation worker processes (default: one per CPU)")
    w.add_argument("--loglevel", default="info")
    w.add_argument("--queue", default=None, help="broker queue (default: EVALSERVE_QUEUE, which this sets for the"
                   " worker's processes)")
    only = w.add_mutually_exclusive_group()
    only.add_argument("--webhooks-only", action="store_true",
                      help="deliver webhooks only (by default a worker runs evaluations and delivers webhooks)")
    only.add_argument("--evaluations-only", action="store_true", help="run evaluations only (no webhook worker)")
    w.set_defaults(handler=worker)


def worker_command(concurrency: int, loglevel: str = "info", queue: str | None = None, *,
                   webhooks: bool = False) -> list[str]:
    """The command line of a supervised worker (``evalserve worker``): ``concurrency`` single-process evaluation
    workers, and (``webhooks``) a webhook worker beside them."""
    argv = [sys.executable, "-m", "evalserve.cli.main", "worker", "--concurrency", str(concurrency),
            "--loglevel", loglevel]
    if queue:
        argv += ["--queue", queue]
    return argv if webhooks else [*argv, "--evaluations-only"]


def evaluation_worker_command(name: str, loglevel: str = "info", queue: str | None = None) -> list[str]:
    """One evaluation worker: a Celery worker of a single process (solo pool) running one job at a time. A pool
    of several processes does not survive a killed process on the embedded broker (the replacement blocks on
    the pool's queue lock); a killed solo worker loses only its current job, which its lease brings back."""
    queue = queue or Settings.from_env().queue
    return [sys.executable, "-m", "evalserve.cli.celery_worker", "-A", "evalserve.workers.tasks", "worker", "-Q", queue,
            "--pool", "solo", "-n", f"{name}@%h", "--loglevel", loglevel, "--without-gossip", "--without-mingle"]


def webhook_worker_command(concurrency: int = 4, loglevel: str = "info", queue: str | None = None) -> list[str]:
    """The Celery worker of webhook deliveries: threads (deliveries wait on the network, not the CPU), on the
    webhook queue only, so a slow receiver never holds an evaluation process."""
    queue = queue or Settings.from_env().queue
    return [sys.executable, "-m", "evalserve.cli.celery_worker", "-A", "evalserve.workers.tasks", "worker", "-Q",
            f"{queue}.webhooks", "--pool", "threads", "--concurrency", str(concurrency), "--loglevel", loglevel,
            "-n", f"webhooks-{os.getpid()}@%h", "--without-gossip", "--without-mingle"]


def worker_children(concurrency: int, loglevel: str = "info", queue: str | None = None, *,
                    evaluations: bool = True, webhooks: bool = True) -> list[Child]:
    """The supervised processes of a worker: ``concurrency`` evaluation workers (node names unique per
    supervisor: ``eval<i>-<pid>@host``; one that stops itself to give its memory back is started again at once)
    and a webhook worker."""
    from evalserve.service.jobrun.memory import RECYCLE_EXIT_CODE

    tag = os.getpid()
    children = [Child(f"evaluation worker {i}", evaluation_worker_command(f"eval{i}-{tag}", loglevel, queue),
                      recycle_code=RECYCLE_EXIT_CODE)
                for i in range(1, concurrency + 1)] if evaluations else []
    if webhooks:
        children.append(Child("webhook worker", webhook_worker_command(loglevel=loglevel, queue=queue)))
    return children


#: how long gunicorn lets a request in flight finish once told to stop (a long-poll is cut: clients poll again)
API_GRACE_SECONDS = 1

def api_command(host: str, port: int, workers: int, loglevel: str = "info") -> list[str]:
    """gunicorn with ``workers`` processes of its ASGI worker: each serves the Flask app on a pool of threads
    (``web.waiting.THREADS``) and holds long-polls (``GET /v1/jobs/{id}?wait=``) on its event loop, without a
    thread each (``web.asgi``)."""
    return [sys.executable, "-m", "gunicorn", "-c", "python:evalserve.cli.gunicorn_hooks", "--bind", f"{host}:{port}",
            "--workers", str(workers), "--worker-class", "asgi", "--asgi-loop", "asyncio", "--timeout", "300",
            "--graceful-timeout", str(API_GRACE_SECONDS), "--access-logfile", "-", "--log-level", loglevel,
            "evalserve.service.web.asgi:app"]


def log_files(settings: Settings, args: argparse.Namespace) -> tuple[Path, Path] | None:
    """Where ``serve`` writes the API's and the workers' output: ``DATA_DIR/logs/{api,workers}.log``, or None
    when ``--log-level`` or ``-v`` asks for it on the terminal (an access line per request floods a shell)."""
    if args.log_level or args.verbose:
        return None
    logs = settings.data_dir / "logs"
    return logs / "api.log", logs / "workers.log"


def worker(args: argparse.Namespace) -> int:
    """Supervise the worker's processes until SIGTERM or SIGINT."""
    if args.queue:  # the processes' sweepers and heartbeats must agree with what they consume
        os.environ["EVALSERVE_QUEUE"] = args.queue
    children = worker_children(max(1, args.concurrency), args.loglevel, args.queue,
                               evaluations=not args.webhooks_only, webhooks=not args.evaluations_only)
    supervisor = Supervisor(children, on_exit=DeathNotices(Settings.from_env().database_url))
    supervisor.install_signals()
    supervisor.start()
    supervisor.run()
    return 0


def admin_token(settings: Settings) -> str:
    """The admin token kept in the data directory (created on first start; only its hash is in the database)."""
    from evalserve.service.access.tokens import create_token, verify
    from evalserve.service.store.db import Database

    path = settings.data_dir / "admin-token"
    db = Database(settings.database_url)
    try:
        if path.exists():
            text = path.read_text().strip()
            with db.session() as s:
                known = verify(s, text) is not None
            if known:
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
    from sqlalchemy.exc import OperationalError

    from evalserve.service.store.datadir import secure_data_dir
    from evalserve.service.store.migrate import upgrade

    busy = port_refusal(args.host, args.port)
    if busy is not None:
        print(f"evalserve: {busy}", file=sys.stderr)
        return 1
    settings = Settings.from_env()
    secure_data_dir(settings)
    try:
        upgrade(settings.database_url)
        token = admin_token(settings)
    except OperationalError as exc:  # name the component, not a traceback
        print(f"evalserve: {component_names(settings)['database']} is unavailable ({exc.orig or exc}); nothing was"
              f" started", file=sys.stderr)
        return 1
    loglevel = args.log_level or "info"
    logs = log_files(settings, args)
    api_log, workers_log = logs or (None, None)
    api = Child("API", api_command(args.host, args.port, args.api_workers, loglevel), log=api_log)
    workers = [] if args.no_worker else worker_children(max(1, args.concurrency), loglevel)
    for child in workers:
        child.log = workers_log
    children = [api, *workers]
    supervisor = Supervisor(children, on_exit=DeathNotices(settings.database_url))
    supervisor.install_signals()
    supervisor.start()
    url = f"http://{args.host}:{args.port}"
    hint = (lambda: "; its messages are above") if logs is None else (
        lambda: f"; its messages are in {logs[0]}, the last lines:\n{_tail(logs[0])}")
    first = wait_for_api(url, supervisor, api, settings.serve_start_seconds, _say, hint)
    if first is None:
        asked_to_stop = supervisor.stopping
        killed = supervisor.stop()
        if asked_to_stop:
            print(stopped_line(url, time.monotonic() - (supervisor.stop_requested_at or time.monotonic()), killed),
                  flush=True)
            return 0
        where = "above" if logs is None else f"in {logs[0]}; its last lines:\n{_tail(logs[0])}"
        print(f"evalserve: the API did not start on {url}: it exited with {api.exits[-1] if api.exits else '?'}"
              f" (its messages are {where})", file=sys.stderr)
        return 1
    backend = "embedded (SQLite database and broker in " + str(settings.data_dir) + ")"
    if not settings.database_url.startswith("sqlite") or not settings.embedded_broker:
        backend = "DATABASE_URL / REDIS_URL"
    print(f"evalserve is running at {url}  (API docs: {url}/docs)\n"
          f"  backend: {backend}\n  admin token: {token}\n"
          f"  (also in {Path(settings.data_dir) / 'admin-token'}); stop with Ctrl-C\n"
          f"  logs: {'on this terminal' if logs is None else f'{logs[0]} and {logs[1]} (-v: on this terminal)'}",
          flush=True)
    down = {key: message for key, message in problems(first, settings, url).items() if key in COMPONENTS}
    for message in down.values():  # the API is up: serve keeps it up and says what is missing
        _say(message)
    watch = HealthWatch(url, settings, _say, shown=down)
    watch.start()
    killed = supervisor.run()  # until SIGTERM or SIGINT; restarts whatever dies meanwhile
    watch.halt.set()
    print(stopped_line(url, time.monotonic() - (supervisor.stop_requested_at or time.monotonic()), killed),
          flush=True)
    return 0


def _say(message: str) -> None:
    """A line for the terminal, as the supervisor writes its own."""
    print(f"evalserve: {message}", file=sys.stderr, flush=True)


def stopped_line(url: str, seconds: float, killed: list[str]) -> str:
    """The line ``serve`` ends with: it stopped, how fast, and what a killed process means (issue 28)."""
    line = f"evalserve stopped ({url}, in {seconds:.1f} s)"
    workers = [name for name in killed if name != "API"]
    if workers:
        one = len(workers) == 1
        line += (f"; {', '.join(workers)} did not stop in time and {'was' if one else 'were'} killed: a job"
                 f" {'it' if one else 'one of them'} was running is run again when a worker next starts")
    if "API" in killed:
        line += "; the API did not stop in time and was killed: requests in flight were cut"
    return line


def _bind_error(host: str, port: int) -> OSError | None:
    """Why ``host:port`` cannot be listened on now, as gunicorn would listen (``SO_REUSEADDR``: a port left in
    TIME_WAIT is free, one with a listener is not); None if it can."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        return exc
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            return exc
    return None


def port_refusal(host: str, port: int) -> str | None:
    """The message ``serve`` refuses to start with when its address is taken or cannot be had (checked before
    anything starts: gunicorn would retry and fail in its log, and a health check would reach the other server),
    or None when it is free. It names the address, what holds it if that is an evalserve, and a free port."""
    error = _bind_error(host, port)
    if error is None:
        return None
    where = f"{host}:{port}"
    if error.errno != errno.EADDRINUSE:
        return (f"cannot listen on {where}: {error.strerror or error}; nothing was started (choose another address"
                f" with --host or --port)")
    holder = "another program listens there"
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/health", timeout=2) as response:
            health = response.read(4096)
    except urllib.error.HTTPError as answer:  # a degraded evalserve answers 503
        health = answer.read(4096)
    except (OSError, ValueError):
        health = b""
    if b'"database"' in health:
        holder = f"an evalserve already answers at http://{host}:{port} (stop it with Ctrl-C or kill)"
    free = next((p for p in range(port + 1, min(port + 50, 65536)) if _bind_error(host, p) is None), None)
    suggestion = f"evalserve serve --port {free}" if free is not None else "evalserve serve --port PORT"
    return (f"{where} is already in use: {holder}; nothing was started. Start this one on another port with"
            f" --port, e.g.: {suggestion}")


def _tail(path: Path, lines: int = 20) -> str:
    """The last ``lines`` lines of a log file (empty if there is none yet)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])
