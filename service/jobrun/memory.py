"""Evaluation workers that give memory back. A big job leaves a worker process holding gigabytes the allocator
keeps (3.6 GB and 2.3 GB idle after one 9.9 M-row job, issue 29). After an evaluation task that leaves the worker
resident over ``EVALSERVE_WORKER_MAX_RSS_MB``, it collects garbage and hands freed heap back to the system (glibc's
``malloc_trim``); if it is still over the setting, it stops itself once the task is over -- the task's message is
acknowledged first, so nothing is redelivered -- with ``RECYCLE_EXIT_CODE``, and its supervisor starts a fresh
process at once.
Celery's ``worker_max_memory_per_child`` does the same for prefork pools, which evalserve does not use."""

from __future__ import annotations

import contextlib
import ctypes
import gc
import logging
import os
from typing import Any

from celery import Celery
from celery.signals import task_postrun, worker_init

from evalserve.service.broker import wakeup
from evalserve.service.broker.messages import EVALUATE_PART_TASK, EVALUATE_TASK

log = logging.getLogger(__name__)

#: the exit code of a worker that stopped itself to give its memory back (the supervisor restarts it at once)
RECYCLE_EXIT_CODE = 79

#: the tasks after which a worker checks its memory (webhook deliveries hold little)
EVALUATION_TASKS = frozenset({EVALUATE_TASK, EVALUATE_PART_TASK})


def resident_bytes(pid: int | None = None) -> int | None:
    """A process's resident set size now (Linux ``/proc``); None where it cannot be read."""
    try:
        with open(f"/proc/{pid or 'self'}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def give_back() -> None:
    """Collect garbage and return the freed heap to the system where the C library can (glibc)."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):  # not glibc: nothing to trim
        ctypes.CDLL(None).malloc_trim(0)


def over_limit(limit_mb: float) -> int | None:
    """The resident size if it is over ``limit_mb`` MiB (0: no limit) even after giving memory back, else None.
    Memory is given back only when over the limit: a full collection costs 0.1-0.5 s, too much after every job."""
    limit = limit_mb * 1024 * 1024
    rss = resident_bytes()
    if limit_mb <= 0 or rss is None or rss <= limit:
        return None
    give_back()
    rss = resident_bytes()
    return rss if rss is not None and rss > limit else None


def install(app: Celery) -> None:
    """After each evaluation task, recycle the worker if it is still over its memory setting. Not in a prefork
    pool's child (Celery's ``worker_max_memory_per_child`` replaces those; stopping from one would not work)."""
    main_pid: list[int] = []  # the worker's own process (the solo pool's too); a prefork child has another pid

    def _note_main(**_: Any) -> None:
        main_pid.append(os.getpid())

    def _after_task(sender: Any = None, task: Any = None, **_: Any) -> None:
        name = getattr(sender or task, "name", None)
        if name not in EVALUATION_TASKS or os.getpid() not in main_pid:
            return
        limit = float(app.conf.evalserve_settings.worker_max_rss_mb)
        rss = over_limit(limit)
        if rss is None:
            return
        from celery.worker import state

        log.warning("this worker holds %.0f MB after a job, over EVALSERVE_WORKER_MAX_RSS_MB=%g: it stops once the"
                    " job is acknowledged and its supervisor starts a fresh one", rss / 2**20, limit)
        state.should_stop = RECYCLE_EXIT_CODE  # checked by the consumer loop after the message is acknowledged
        wakeup.interrupt()  # the embedded broker's loop drains once more before that check: it must take nothing

    worker_init.connect(_note_main, weak=False)
    task_postrun.connect(_after_task, weak=False)
