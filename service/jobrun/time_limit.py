"""Job time limits for single-process workers: Celery enforces ``task_soft_time_limit``/``task_time_limit`` only
in its prefork pool, so a solo worker sets its own. Past the soft limit the job gets ``SoftTimeLimitExceeded``
(raised from SIGALRM in the main thread, where the solo pool runs it) and is failed; past the hard limit the
process exits, its supervisor starts a fresh one, and the job's lease runs out as for any killed worker."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections.abc import Iterator
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded

log = logging.getLogger(__name__)

#: exit code of a worker that stopped itself at a job's hard time limit
HARD_LIMIT_EXIT_CODE = 75


@contextlib.contextmanager
def time_limit(soft_seconds: float, hard_seconds: float) -> Iterator[None]:
    """Run the body under both limits; outside the main thread (or without SIGALRM) only the hard one holds."""
    watchdog = threading.Timer(hard_seconds, _hard_stop, args=(hard_seconds,))
    watchdog.daemon = True
    watchdog.start()
    alarm = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    previous: Any = None
    if alarm:
        previous = signal.signal(signal.SIGALRM, _soft_stop)
        signal.setitimer(signal.ITIMER_REAL, soft_seconds)
    try:
        yield
    finally:
        watchdog.cancel()
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def _soft_stop(*_: Any) -> None:
    raise SoftTimeLimitExceeded("soft time limit exceeded")


def _hard_stop(seconds: float) -> None:
    log.error("a job ran past its hard time limit of %g s: stopping this worker process", seconds)
    os._exit(HARD_LIMIT_EXIT_CODE)
