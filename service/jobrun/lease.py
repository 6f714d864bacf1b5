"""A claimed job's (or part's) lease, kept alive from a background thread while the engine works, and the way a
job is abandoned from inside the engine's progress callback (``Stop``: cancelled, or the lease was lost)."""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable

from sqlalchemy.exc import OperationalError

from evalserve.service.jobrun.context import WorkerContext
from evalserve.service.jobs import lifecycle as jobs

log = logging.getLogger(__name__)


class Stop(Exception):
    """Raised inside the engine's progress callback to abandon a job (cancelled, or the lease was lost)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def worker_name() -> str:
    """Unique per attempt: host, process and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


#: renews a lease and records progress: (stage, fraction) -> (still ours, cancel requested)
Renew = Callable[[str | None, float | None], tuple[bool, bool]]


class Lease:
    """Keeps a claimed job's (or part's) lease alive from a background thread and relays progress and cancel
    requests; ``renew`` writes the heartbeat (default: the job's, ``jobs.lifecycle.heartbeat``)."""

    def __init__(self, ctx: WorkerContext, claim: jobs.Claim | None = None, *, name: str = "",
                 renew: Renew | None = None) -> None:
        self.ctx = ctx
        if renew is None:
            assert claim is not None
            held = claim
            renew = lambda stage, fraction: jobs.heartbeat(  # noqa: E731
                ctx.db, held, ctx.settings.lease_seconds, stage, fraction)
        self.renew = renew
        self.stop_reason: str | None = None
        self._stage: str | None = None
        self._progress: float | None = None
        self._lock = threading.Lock()
        self._done = threading.Event()
        label = name or (claim.job_id if claim is not None else "job")
        self._thread = threading.Thread(target=self._beat, name=f"lease-{label}", daemon=True)

    def __enter__(self) -> Lease:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._done.set()
        self._thread.join(timeout=5)

    def progress(self, stage: str, fraction: float) -> None:
        """The engine's progress callback: note it (written with the next heartbeat) and stop if asked to."""
        with self._lock:
            self._stage, self._progress = stage, fraction
        if self.stop_reason is not None:
            raise Stop(self.stop_reason)

    def _beat(self) -> None:
        # progress and cancel requests travel with the heartbeat: twice a second keeps both prompt
        every = max(0.1, min(0.5, self.ctx.settings.lease_seconds / 4))
        while not self._done.wait(every):
            with self._lock:
                stage, fraction = self._stage, self._progress
                self._stage = self._progress = None
            try:
                ours, cancel = self.renew(stage, fraction)
            except OperationalError as exc:  # database briefly unavailable: try again at the next beat
                log.warning("heartbeat of %s failed: %s", self._thread.name, exc)
                continue
            if not ours:
                self.stop_reason = "lease-lost"
            elif cancel:
                self.stop_reason = "cancelled"
