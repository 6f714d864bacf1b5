"""Wake-up calls for the embedded broker: a named pipe (FIFO) per queue beside the broker's SQLite file. A publisher
writes one byte after committing a message; an idle consumer blocks on the pipe instead of sleeping out a polling
interval, so it queries the broker as soon as there is something to get. The polling interval stays as a fallback
(a lost byte, a full pipe, a message written by another tool).

Each consumer opens its queues' pipes read-write (a pipe with no writer would read as end-of-file, waking it in a
loop) and reads one byte per wake-up, so that two messages published together wake two idle consumers. A publisher
never blocks: no pipe, no reader or a full pipe all mean there is nobody to wake or they are already awake.

A worker told to stop (``interrupt``) wakes from its wait at once and waits no more, so an idle worker stops in a
fraction of a second instead of sleeping out its waits.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import select
from collections.abc import Iterable
from pathlib import Path

#: the byte written per message published
POKE = b"\x01"


def pipe_dir(broker_url: str) -> Path | None:
    """Where the wake-up pipes of a SQLite broker live (``<broker file>.wakeup/``); None for another broker or an
    in-memory database."""
    if not broker_url.startswith("sqlite:///"):
        return None
    database = broker_url[len("sqlite:///"):].split("?", 1)[0]
    if not database or database == ":memory:":
        return None
    return Path(database + ".wakeup")


def pipe_path(directory: Path, queue: str) -> Path:
    """The pipe of one queue: named by a hash, so any queue name gives a short, safe file name."""
    return directory / hashlib.sha256(queue.encode()).hexdigest()[:24]


def poke(directory: Path | None, queue: str) -> bool:
    """Wake one consumer of ``queue``, if any is waiting; True when the byte was written. Never raises for a
    missing pipe, a pipe nobody reads or a full one."""
    if directory is None:
        return False
    try:
        fd = os.open(pipe_path(directory, queue), os.O_WRONLY | os.O_NONBLOCK)
    except OSError:  # ENOENT: no consumer ever waited; ENXIO: none reads it now
        return False
    try:
        os.write(fd, POKE)
        return True
    except OSError as exc:
        if exc.errno != errno.EAGAIN:  # a full pipe: wake-ups are already pending
            raise
        return False
    finally:
        os.close(fd)


_stop: list[int] = []  # this process's stop pipe (read end, write end), made by the first Waiter or interrupt()


def _stop_pipe() -> list[int]:
    if not _stop:
        read, write = os.pipe()
        os.set_blocking(write, False)
        _stop.extend((read, write))
    return _stop


def interrupt() -> None:
    """This process is stopping: every wait returns now and from now on (safe in a signal handler)."""
    with contextlib.suppress(OSError):
        os.write(_stop_pipe()[1], POKE)


def interrupted() -> bool:
    """Whether ``interrupt()`` was called in this process."""
    if not _stop:
        return False
    ready, _, _ = select.select([_stop[0]], [], [], 0)
    return bool(ready)


class Waiter:
    """A consumer's side: the pipes of the queues it consumes, opened once, and a wait that returns when one of them
    is poked or the timeout passes."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._fds: dict[str, int] = {}

    def watch(self, queues: Iterable[str]) -> bool:
        """Open (creating it if needed) the pipe of every queue not yet watched; True if any was opened now (a
        message committed just before had nobody to poke: look at the queue again before waiting)."""
        opened = False
        for queue in queues:
            if queue in self._fds:
                continue
            path = pipe_path(self.directory, queue)
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                os.mkfifo(path, 0o600)
            self._fds[queue] = os.open(path, os.O_RDWR | os.O_NONBLOCK)
            opened = True
        return opened

    def wait(self, timeout: float) -> bool:
        """Block until a watched pipe is poked (consuming one byte), ``timeout`` seconds pass or the process is
        interrupted; True if poked."""
        if not self._fds:
            return False
        stop = _stop_pipe()[0]
        ready, _, _ = select.select([stop, *self._fds.values()], [], [], max(0.0, timeout))
        woken = False
        for fd in ready:
            if fd == stop:  # left unread: later waits return at once too
                continue
            with contextlib.suppress(BlockingIOError):
                woken = bool(os.read(fd, 1)) or woken
        return woken

    def close(self) -> None:
        for fd in self._fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()
