"""glibc's allocator told to keep memory an evaluation frees for its next arrays instead of returning it.

By default glibc maps every large block (its threshold adapts, up to 32 MB) afresh and trims the heap as soon
as the top is free, so the same few arrays of a column's size are faulted in again and again: on a 2 M-line
run that was about a third of a second of kernel time in ``evalserve evaluate``. The CLI is a short-lived
process, so it keeps freed memory instead (fixed mmap threshold of 32 MB, no trimming); peak RSS rises a
little (bench/RESULTS.md). All threads also share one arena: the evaluation's reader threads make arrays the
main thread keeps, and with an arena per thread the memory they freed could only serve that thread again (peak
RSS on the wide workload, two threads: 437 MB with per-thread arenas, 409 MB with one; the same time within the
noise). Elsewhere -- not glibc, or no ``mallopt`` -- nothing changes.
"""

from __future__ import annotations

_M_TRIM_THRESHOLD = -1  # glibc malloc.h
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
_MMAP_THRESHOLD = 32 << 20  # blocks this large still get their own mapping (returned as soon as freed)
_TRIM_THRESHOLD = 2**31 - 1  # (mallopt takes an int) in effect never trim the heap's free top


_SET: list[bool] = []  # the outcome, once set: the thresholds last for the process (and its forks: warm engine)


def keep_freed_memory() -> bool:
    """Set glibc's thresholds as above (once per process); False where they cannot be set."""
    if _SET:
        return _SET[0]
    _SET.append(_set_thresholds())
    return _SET[0]


def _set_thresholds() -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError, ImportError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    ok = mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD) == 1
    ok = mallopt(_M_ARENA_MAX, 1) == 1 and ok
    return bool(mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD) == 1 and ok)
