"""Waiting for a resource to change, for long-polling GETs: look again every few milliseconds (one primary-key
read, cheap on SQLite in WAL mode and on PostgreSQL) until the representation's tag differs from the ones the
client has, or the wait's bound passes; and the count of the waits an API process holds, under caps per caller and
in total (``web.waiting`` holds them without a thread each). No Flask here."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
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


@dataclass(frozen=True)
class WaitCaps:
    """How many long-polls one API process holds at once: ``per_caller`` for one budget owner (a user's tokens, or
    an anonymous address) and ``total`` for everyone. A wait over either is answered at once instead."""

    per_caller: int = 20
    total: int = 1000


class WaitCount:
    """The waits one API process holds, by budget owner: ``enter`` admits one under the caps (or says which cap it
    is over), ``leave`` ends it. Used from the process's event loop only: no lock."""

    def __init__(self, caps: WaitCaps) -> None:
        self.caps = caps
        self._by_owner: dict[str, int] = {}
        self.open = 0
        self.refused = 0

    def enter(self, owner: str) -> str | None:
        """Admit a wait of ``owner``: None when admitted, else the cap it is over ("caller" or "total")."""
        held = self._by_owner.get(owner, 0)
        over = "total" if self.open >= self.caps.total else "caller" if held >= self.caps.per_caller else None
        if over is not None:
            self.refused += 1
            return over
        self._by_owner[owner] = held + 1
        self.open += 1
        return None

    def leave(self, owner: str) -> None:
        held = self._by_owner.get(owner, 0) - 1
        if held > 0:
            self._by_owner[owner] = held
        else:
            self._by_owner.pop(owner, None)
        self.open = max(0, self.open - 1)

    def snapshot(self) -> dict[str, int]:
        """What /health shows of this process: waits open now, the caps, and waits refused since it started."""
        return {"open": self.open, "refused": self.refused, "per_caller_cap": self.caps.per_caller,
                "total_cap": self.caps.total}
