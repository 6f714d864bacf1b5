"""Independent pieces of one evaluation (reading the judgments and each run, evaluating each run) done on a few
threads when the caller asks for them, or one after the other, lazily, when it does not.

Reading and evaluating spend most of their time in NumPy, which releases the GIL, so on a machine with two or
more cores the judgments are read while the runs are, and runs while each other. Results are always taken in
the order the pieces were given, so output and problem order do not depend on the number of threads. The
offline CLI uses it; the service's workers keep one thread each (they are already one process per core).

A piece nobody has started yet when its result is asked for is done by the asking thread, so a pool never
waits on itself. (``concurrent.futures`` would do, but importing it costs a command ~10 ms of start-up.)
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Generic, NoReturn, TypeVar

T = TypeVar("T")


class Pending(Generic[T]):
    """A piece of work: ``result()`` gives its value or raises its exception, doing it first if nobody has."""

    def __init__(self, work: Callable[[], T], pool: TaskPool | None = None, leaf: bool = False) -> None:
        self._work = work
        self._pool = pool  # the pool whose other pieces a waiting thread does meanwhile (None: one thread)
        self.leaf = leaf  # waits for no other piece
        self._claim = threading.Lock()
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None

    def claim(self) -> bool:
        """Take the piece to do it (True once, for the one thread that does)."""
        return self._claim.acquire(blocking=False)

    def run(self) -> None:
        """Do the claimed piece, keeping its value or exception (and letting go of the work: its arguments)."""
        try:
            self._value = self._work()
        except BaseException as exc:  # handed to whoever asks for the result
            self._error = exc
        finally:
            self._work = _done_already
            self._done.set()

    def result(self) -> T:
        pool = self._pool
        if self.claim():
            if pool is None:
                self.run()
            else:
                pool.run(self)
        while pool is not None and not self._done.is_set() and pool.help():
            pass  # another thread is doing this piece: do others meanwhile instead of idling
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]

    def take(self) -> T:
        """``result()`` for a piece whose one caller uses the value and drops it: the piece lets go of it. (A
        piece its caller did itself stays in the pool's queue until a worker passes it over; holding every
        value until then kept a whole run's chunks alive while the other threads were busy elsewhere.)"""
        value = self.result()
        self._value = None
        return value


def _done_already() -> NoReturn:
    raise AssertionError("a piece is done once")


class TaskPool:
    """Submit pieces of work; ``threads`` - 1 threads do them in the order given, and a thread waiting for a
    result does pieces too meanwhile (with one thread, each piece is done when its result is asked for).

    A thread that waits inside a piece (a run waiting for its chunks) does only *leaf* pieces meanwhile --
    pieces that wait for nothing (chunks, join blocks, measures) -- so it never starts another run on top of
    its own: at most ``threads`` pieces that wait are under way at once, and so are their buffers.
    """

    def __init__(self, threads: int) -> None:
        self._max = max(0, threads - 1)
        self._leaves: deque[Pending[object]] = deque()
        self._others: deque[Pending[object]] = deque()
        self._lock = threading.Lock()
        self._workers: list[threading.Thread] = []
        self._idle = 0  # workers started that found the queues empty and ended
        self._closed = False
        self._depth = threading.local()  # per thread: pieces it is inside

    @property
    def parallel(self) -> bool:
        """Whether pieces may run at the same time (worth doing work early that would otherwise wait)."""
        return self._max > 0

    def submit(self, work: Callable[[], T], *, leaf: bool = False) -> Pending[T]:
        """A piece of work; ``leaf``: it waits for no other piece of this pool."""
        if self._max == 0:
            return Pending(work)
        piece = Pending(work, self, leaf)
        (self._leaves if leaf else self._others).append(piece)  # type: ignore[arg-type]
        with self._lock:
            if len(self._workers) - self._idle < self._max:
                worker = threading.Thread(target=self._work, name="evaluation", daemon=True)
                worker.start()  # then listed: a Ctrl-C between the two never leaves close() an unstarted thread
                self._workers.append(worker)
        return piece

    def run(self, piece: Pending[T]) -> None:
        """Do a piece this thread has claimed."""
        depth = getattr(self._depth, "n", 0)
        self._depth.n = depth + 1
        try:
            piece.run()
        finally:
            self._depth.n = depth

    def help(self) -> bool:
        """Do the next piece nobody has started (only a leaf when called from inside a piece); False when
        there is none."""
        leaves_only = getattr(self._depth, "n", 0) > 0
        while not self._closed:
            try:
                piece = self._leaves.popleft()
            except IndexError:
                if leaves_only:
                    return False
                try:
                    piece = self._others.popleft()
                except IndexError:
                    return False
            if piece.claim():
                self.run(piece)
                return True
        return False

    def _work(self) -> None:
        while self.help():
            pass
        with self._lock:
            self._idle += 1

    def close(self) -> None:
        """Drop the pieces not started; wait for the running ones."""
        self._closed = True
        for worker in self._workers:
            worker.join()


def in_order(pool: TaskPool | None, works: Sequence[Callable[[], T]]) -> Iterator[T]:
    """The results of ``works``, in order: with a pool (and more than one work) all are submitted as leaf pieces
    first; otherwise each is done here when the iterator reaches it, so a caller that stops early (a failed
    check) skips the rest."""
    if pool is None or len(works) < 2:
        return (work() for work in works)
    pieces = [pool.submit(work, leaf=True) for work in works]
    return (piece.take() for piece in pieces)


@contextmanager
def task_pool(threads: int) -> Iterator[TaskPool]:
    """A pool of ``threads`` threads, the caller's included (1 or fewer: the caller does every piece when it asks
    for its result); on leaving, pieces not started are dropped and running ones waited for."""
    pool = TaskPool(threads)
    try:
        yield pool
    finally:
        pool.close()


def usable_cores(cap: int = 4) -> int:
    """The CPUs this process may run on, at most ``cap`` (beyond a few, reading and joining are memory bound)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cap, cores))
