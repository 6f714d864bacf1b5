"""``python -m evalserve.cli.celery_worker ARGS``: Celery's own command line (``celery ARGS``), as ``serve`` and
``worker`` start their workers, ended without the interpreter's teardown (``fast_exit``).

A worker's warm shutdown is over in milliseconds once it is idle, but tearing its interpreter down -- Celery,
SQLAlchemy, NumPy and the engine, object by object -- took 0.7-1.4 s more on a loaded 2-core machine; ``serve``
must stop within 3 s (issue 28). Everything a user could see still happens: the ``atexit`` handlers run, the
output is flushed, the exit code is Celery's.
"""

from __future__ import annotations

from evalserve.cli.fast_exit import finish


def main() -> None:
    from celery.bin.celery import main as celery_main

    try:
        code: object = celery_main()
    except SystemExit as exc:  # click ends the command with SystemExit
        code = exc.code
    finish(code if isinstance(code, int) else 0 if code is None else 1)


if __name__ == "__main__":
    main()
