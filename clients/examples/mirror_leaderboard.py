#!/usr/bin/env python3
"""Mirror a shared task's leaderboard into a CSV file, on a schedule -- for a web page, a spreadsheet or a git
repository that should always show the current standings.

    python mirror_leaderboard.py --url https://evalserve.example.org --task task_... --output board.csv
    python mirror_leaderboard.py --url ... --task task_... --output board.csv --once      # one fetch (cron)

Every ``--every`` seconds (default 300) it fetches ``GET /v1/tasks/{task}/leaderboard?format=csv`` and, only when
the bytes differ from the file's, replaces the file atomically (a temporary file in the same directory, then
``os.replace``): a reader never sees half a file, and an unchanged leaderboard leaves the file (and its mtime)
alone. It logs one line per change. A failed fetch (server down, a timeout, a 5xx, a blinded leaderboard) is
logged and tried again at the next tick; a wrong URL, token or task id (400, 401, 404) stops it with exit code 2.
Ctrl-C (or SIGTERM) stops it cleanly, with exit code 0.

A public task's leaderboard needs no token; for a private one give ``--token`` (or set ``EVALSERVE_TOKEN``).
Needs only the ``evalserve_client`` package (``pip install ./clients/python``) and the standard library.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from evalserve_client import ApiError, Client, EvalserveError

log = logging.getLogger("mirror_leaderboard")

#: Refusals that the next tick will not change: a malformed request, a wrong token, no such task.
FATAL_STATUSES = frozenset({400, 401, 404})
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Mirror a shared task's leaderboard into a CSV file.")
    parser.add_argument("--url", default=os.environ.get("EVALSERVE_URL"),
                        help="the evalserve server, e.g. https://evalserve.example.org (default: $EVALSERVE_URL)")
    parser.add_argument("--task", required=True, help="the task's id (task_...)")
    parser.add_argument("--output", required=True, type=Path, help="the CSV file to keep up to date")
    parser.add_argument("--every", type=float, default=300.0, metavar="SECONDS",
                        help="seconds between fetches (default: 300)")
    parser.add_argument("--once", action="store_true", help="fetch once, update the file if needed, and exit")
    parser.add_argument("--phase", help="the phase to mirror (default: the one open now, else the last one)")
    parser.add_argument("--token", default=os.environ.get("EVALSERVE_TOKEN"),
                        help="API token, for a private task (default: $EVALSERVE_TOKEN; public tasks need none)")
    args = parser.parse_args(argv)
    if not args.url:
        parser.error("no server: give --url URL or set EVALSERVE_URL")
    if not args.url.startswith(("http://", "https://")):
        parser.error(f"--url must be an http:// or https:// URL, not {args.url!r}")
    if args.every <= 0:
        parser.error("--every must be a positive number of seconds")
    return args


def read_current(path: Path) -> bytes | None:
    """The file's bytes, or None when there is no file yet."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def write_atomically(path: Path, content: bytes) -> None:
    """Replace ``path`` with ``content`` in one step: write a temporary file next to it, flush it to disk, then
    ``os.replace`` it over the old one. The file keeps its permissions (a new one gets 0644 minus the umask)."""
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o644 & ~umask
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(content)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def mirror_once(client: Client, args: argparse.Namespace, current: bytes | None) -> bytes | None:
    """Fetch the CSV leaderboard; write it (and log one line) if it differs from ``current``. Returns what the
    file now holds."""
    content = client.leaderboard(args.task, format="csv", phase=args.phase).encode("utf-8")
    if content == current:
        return current
    write_atomically(args.output, content)
    rows = max(0, content.count(b"\n") - 1)
    log.info("%s updated: %d row%s (%d bytes)", args.output, rows, "" if rows == 1 else "s", len(content))
    return content


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # SIGTERM (systemd, docker stop) stops like Ctrl-C


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)
    log.setLevel(logging.INFO)  # this script's lines; libraries (httpx logs every request) only warnings
    signal.signal(signal.SIGTERM, _interrupt)
    current = read_current(args.output)
    # on a schedule, a failed fetch is simply tried again at the next tick: no retries within one
    with Client(args.url, args.token, timeout=60.0, retries=3 if args.once else 0) as client:
        try:
            if not args.once:
                log.info("mirroring the leaderboard of %s from %s into %s every %g s", args.task, args.url,
                         args.output, args.every)
            next_tick = time.monotonic()
            while True:
                try:
                    current = mirror_once(client, args, current)
                except ApiError as exc:
                    if exc.status in FATAL_STATUSES:
                        log.error("giving up: the server refused the request (%d %s): %s", exc.status, exc.code,
                                  exc.detail)
                        return EXIT_USAGE
                    log.warning("leaderboard not fetched (%d %s): %s", exc.status, exc.code, exc.detail)
                    if args.once:
                        return EXIT_FAILED
                except (EvalserveError, OSError) as exc:  # unreachable server, a file that cannot be written
                    log.warning("leaderboard not mirrored: %s", exc)
                    if args.once:
                        return EXIT_FAILED
                if args.once:
                    return EXIT_OK
                next_tick += args.every
                now = time.monotonic()
                if next_tick < now:  # a fetch took longer than --every: start afresh rather than catch up
                    next_tick = now + args.every
                time.sleep(next_tick - now)
        except KeyboardInterrupt:
            log.info("stopped")
            return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
