"""gunicorn's settings hooks for the API that ``evalserve serve`` starts (``-c python:evalserve.cli.gunicorn_hooks``).

``worker_exit``: an API process that has finished (its requests answered, or its graceful time over) ends at once
with its exit code instead of tearing its interpreter down -- Flask, SQLAlchemy, NumPy and the engine, object by
object, about a second on a loaded 2-core machine -- so that ``serve`` stops within 3 s (issue 28).
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from evalserve.cli.fast_exit import finish


def worker_exit(server: Any, worker: Any) -> None:
    """In the worker process only (gunicorn's master calls this hook too, for workers it found gone): exit with
    the code the worker was exiting with (a boot failure's code tells the master to stop)."""
    if os.getpid() != getattr(worker, "pid", None):
        return
    pending = sys.exc_info()[1]  # gunicorn calls this hook from the ``finally`` of the worker's SystemExit
    code: object = pending.code if isinstance(pending, SystemExit) else 0 if pending is None else 1
    logging.shutdown()
    finish(code if isinstance(code, int) else 0 if code is None else 1, wait_for_threads=False)
