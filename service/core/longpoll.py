"""Waiting for a resource to change, for long-polling GETs: look again every few milliseconds (one primary-key
read, cheap on SQLite in WAL mode and on PostgreSQL) until the representation's tag differs from the ones the
client has, or the wait's bound passes. No Flask here."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: seconds between two looks: a change is seen within this (plus one read) of its commit
STEP_SECONDS = 0.01
#: the longest wait a client may ask for (``?wait=``); a proxy's idle timeout is usually 60 s
MAX_WAIT_SECONDS = 30.0


def wait_for_change(load: Callable[[], tuple[str, T]], known: set[str], seconds: float, *,
                    done: Callable[[T], bool] = lambda _: False, step: float = STEP_SECONDS,
                    clock: Callable[[], float] = time.monotonic,
                    sleep: Callable[[float], None] = time.sleep) -> tuple[str, T]:
    """``load()`` -> (tag, value) until the tag is not in ``known``, ``done(value)`` (a final state that will not
    change) or ``seconds`` pass; returns the last (tag, value)."""
    deadline = clock() + max(0.0, min(seconds, MAX_WAIT_SECONDS))
    tag, value = load()
    while tag in known and not done(value):
        left = deadline - clock()
        if left <= 0:
            break
        sleep(min(step, left))
        tag, value = load()
    return tag, value
