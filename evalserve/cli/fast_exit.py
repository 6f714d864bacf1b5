"""How a one-shot command's process ends (``evalserve evaluate``, ``demo``): without the interpreter's teardown.

After the work is done, ``sys.exit`` would still tear down every module and free every object one by one --
NumPy's and the engine's included: 15-20 ms after the last ``atexit`` handler; a whole ad hoc ``evaluate`` took
0.319 s with it and 0.286 s without (bench/RESULTS.md). ``finish`` keeps everything a user could see from that
teardown -- the buffered output, the exit code, the ``atexit`` handlers, a running non-daemon thread -- and leaves
the rest to the kernel.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn


def finish(code: int, *, wait_for_threads: bool = True) -> NoReturn:
    """Exit with ``code``: flush the standard streams, run the ``atexit`` handlers, then end the process at once
    (``os._exit``). Exits as ``sys.exit`` would instead while another non-daemon thread runs (it is waited
    for; unless ``wait_for_threads`` is False: a server's idle pool threads) or when a stream cannot be flushed
    (the interpreter reports it, as without ``finish``)."""
    if (wait_for_threads and _other_threads_running()) or not _flushed():
        sys.exit(code)
    atexit._run_exitfuncs()
    if not _flushed():  # what the handlers printed
        sys.exit(code)
    os._exit(code)


def _other_threads_running() -> bool:
    main = threading.main_thread()
    return any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate())


def _flushed() -> bool:
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):  # a closed pipe or file: let the interpreter's exit report it
        return False
    return True
