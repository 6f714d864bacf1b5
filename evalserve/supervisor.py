"""A small process supervisor for ``evalserve serve`` and ``evalserve worker``: starts the children, restarts any
that dies (with a backoff, so a child that crashes on start does not spin), and stops them all -- SIGTERM, then
SIGKILL -- only when the supervisor itself is told to stop (SIGTERM or SIGINT)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: a child that ran at least this long before it died is restarted after the first backoff step again
STABLE_SECONDS = 30.0
FIRST_BACKOFF_SECONDS = 0.5
MAX_BACKOFF_SECONDS = 30.0
#: children still alive this long after SIGTERM are killed: an idle child stops well within it (gunicorn's
#: workers in about a second, an idle Celery worker in a fraction of one), so ``serve`` stops in under 3 s; a job
#: that was running is not lost -- its lease expires and the next worker's sweeper runs it again
STOP_GRACE_SECONDS = 2.0


@dataclass
class Child:
    """One supervised program: a name for the log, its command line, (optionally) its environment and a file
    that takes its output (appended to; else it writes to the supervisor's terminal)."""

    name: str
    argv: list[str]
    env: dict[str, str] | None = None
    log: Path | None = None
    proc: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    restarts: int = 0
    backoff: float = FIRST_BACKOFF_SECONDS
    restart_at: float | None = None  # when a dead child is due to be started again
    exits: list[int] = field(default_factory=list)
    #: an exit with this code is a planned restart (a worker giving its memory back): at once, without backoff
    recycle_code: int | None = None
    recycles: int = 0

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None


def _libc_prctl() -> Any:
    """libc's prctl on Linux (looked up in the parent: the child between fork and exec should do little)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _libc_prctl()
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child before exec, on Linux: SIGTERM when the supervisor dies however it dies (even SIGKILL), so
    no child outlives it unseen. Children stay in the supervisor's process group: a signal to the group (a
    terminal's Ctrl-C, ``kill -- -PGID``) reaches them all at once."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def _children_of(pid: int) -> list[int]:
    """A process's own children, where /proc tells (Linux); else none."""
    found: list[int] = []
    with contextlib.suppress(OSError, ValueError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(p) for p in f.read().split()]
    return found


class Supervisor:
    """Keeps ``children`` running until ``stop()`` (or SIGTERM/SIGINT once ``install_signals()`` was called)."""

    def __init__(self, children: list[Child], *, log: Callable[[str], None] | None = None,
                 grace_seconds: float | None = None, poll_seconds: float = 0.2,
                 on_exit: Callable[[Child, int, int], None] | None = None) -> None:
        self.children = children
        #: told (child, its pid, exit code) as soon as a child is seen dead, e.g. to tell /health (``cli.liveness``)
        self.on_exit = on_exit
        self.grace_seconds = STOP_GRACE_SECONDS if grace_seconds is None else grace_seconds
        self.poll_seconds = poll_seconds
        self.stopping = False
        self.stop_requested_at: float | None = None  # time.monotonic() when SIGTERM or SIGINT arrived
        self._log = log or (lambda message: print(f"evalserve: {message}", file=sys.stderr, flush=True))

    def install_signals(self) -> None:
        """Stop on SIGTERM and SIGINT."""
        def stop(*_: Any) -> None:
            if self.stop_requested_at is None:
                self.stop_requested_at = time.monotonic()
            self.stopping = True

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)

    def start(self) -> None:
        for child in self.children:
            self._spawn(child)

    def _spawn(self, child: Child) -> None:
        if child.log is None:
            child.proc = subprocess.Popen(child.argv, env=child.env, preexec_fn=_die_with_parent)
        else:
            child.log.parent.mkdir(parents=True, exist_ok=True)
            with child.log.open("ab") as out:  # the child keeps its own descriptor
                child.proc = subprocess.Popen(child.argv, env=child.env, preexec_fn=_die_with_parent, stdout=out,
                                              stderr=subprocess.STDOUT)
        child.started_at = time.monotonic()
        child.restart_at = None

    def check(self) -> None:
        """One round: note every child that died, restart the ones whose backoff has passed."""
        now = time.monotonic()
        for child in self.children:
            if child.proc is None or self.stopping:
                continue
            code = child.proc.poll()
            if code is None:
                continue
            if child.restart_at is None and code == child.recycle_code:  # stopped itself after a job
                self._tell_exit(child, code)
                child.recycles += 1
                dead = child.proc.pid
                self._spawn(child)
                self._log(f"{child.name} (pid {dead}) gave its memory back after a job (it was over its limit);"
                          f" a fresh one runs (pid {child.proc.pid})")
            elif child.restart_at is None:  # just died
                self._tell_exit(child, code)
                ran = now - child.started_at
                child.backoff = FIRST_BACKOFF_SECONDS if ran >= STABLE_SECONDS else child.backoff
                child.restart_at = now + child.backoff
                child.exits.append(code)
                self._log(f"{child.name} (pid {child.proc.pid}) exited with {_describe(code)} after {ran:.1f} s;"
                          f" restarting it in {child.backoff:g} s")
                child.backoff = min(MAX_BACKOFF_SECONDS, child.backoff * 2)
            elif now >= child.restart_at:
                child.restarts += 1
                self._spawn(child)
                self._log(f"{child.name} restarted (pid {child.proc.pid}, restart {child.restarts})")

    def _tell_exit(self, child: Child, code: int) -> None:
        if self.on_exit is None or child.proc is None:
            return
        try:
            self.on_exit(child, child.proc.pid, code)
        except Exception as exc:  # a listener never stops the supervision
            self._log(f"could not report the exit of {child.name}: {exc}")

    def run(self) -> list[str]:
        """Supervise until told to stop, then stop every child; the names of those that had to be killed."""
        while not self.stopping:
            self.check()
            time.sleep(self.poll_seconds)
        return self.stop()

    def stop(self) -> list[str]:
        """SIGTERM to every child; SIGKILL to what is left after the grace period (and to the children's own
        children: gunicorn's workers must not outlive their master). Returns the names of the killed ones."""
        self.stopping = True
        killed: list[str] = []
        for child in self.children:
            if child.alive:
                _signal(child.pid, signal.SIGTERM)
        deadline = time.monotonic() + self.grace_seconds
        while time.monotonic() < deadline and any(c.alive for c in self.children):
            time.sleep(0.1)
        for child in self.children:
            if child.proc is None or not child.alive:
                continue
            killed.append(child.name)
            for pid in [*_children_of(child.proc.pid), child.proc.pid]:
                _signal(pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.proc.wait(timeout=2)
        return killed


def _signal(pid: int | None, sig: int) -> None:
    if pid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _describe(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"signal {signal.Signals(-code).name}"
    return f"code {code}"
