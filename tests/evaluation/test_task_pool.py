"""``task_pool``: pieces of work done on a few threads, results taken in the order given, never a deadlock."""

from __future__ import annotations

import inspect
import threading
import time
from functools import partial

import pytest

from evaluation.task_pool import task_pool, usable_cores


def test_one_thread_does_each_piece_when_its_result_is_asked_for_on_the_asking_thread() -> None:
    done: list[int] = []

    def note(i: int) -> int:
        done.append(i)
        return threading.get_ident()

    with task_pool(1) as pool:
        assert not pool.parallel
        pieces = [pool.submit(partial(note, i)) for i in range(3)]
        assert done == []  # nothing ran at submit time
        assert pieces[1].result() == threading.get_ident()
        assert done == [1]
    assert done == [1]  # pieces never asked for are dropped


@pytest.mark.parametrize("threads", [2, 3, 8])
def test_results_come_back_in_the_order_given(threads: int) -> None:
    def slow(i: int) -> int:
        time.sleep(0.001 * (i % 3))
        return i

    with task_pool(threads) as pool:
        pieces = [pool.submit(partial(slow, i)) for i in range(40)]
        assert [p.result() for p in pieces] == list(range(40))


def test_an_exception_is_raised_by_result_and_other_pieces_still_finish() -> None:
    def fail() -> int:
        raise ValueError("boom")

    with task_pool(2) as pool:
        bad, good = pool.submit(fail), pool.submit(lambda: 7)
        with pytest.raises(ValueError, match="boom"):
            bad.result()
        assert good.result() == 7


def test_pieces_that_submit_pieces_and_wait_for_them_never_deadlock() -> None:
    """A run's chunks are submitted by the piece reading the run, to the same pool, and waited for."""
    with task_pool(2) as pool:

        def leaf(i: int, j: int) -> int:
            return i * 100 + j

        def outer(i: int) -> int:
            inner = [pool.submit(partial(leaf, i, j)) for j in range(20)]
            return sum(p.result() for p in inner)

        pieces = [pool.submit(partial(outer, i)) for i in range(10)]
        assert [p.result() for p in pieces] == [sum(i * 100 + j for j in range(20)) for i in range(10)]


def test_the_pool_uses_other_threads_when_asked_to() -> None:
    seen: set[int] = set()
    barrier = threading.Barrier(2, timeout=10)

    def meet() -> None:
        seen.add(threading.get_ident())
        barrier.wait()  # two pieces can only pass together, on two threads

    with task_pool(2) as pool:
        pieces = [pool.submit(meet), pool.submit(meet)]
        for p in pieces:
            p.result()
    assert len(seen) == 2


def test_usable_cores_is_between_one_and_the_cap() -> None:
    assert 1 <= usable_cores() <= 4
    assert usable_cores(cap=1) == 1


@pytest.mark.parametrize("threads", [2, 3])
def test_a_thread_waiting_inside_a_piece_does_only_leaves_so_few_outer_pieces_run_at_once(threads: int) -> None:
    """A run waiting for its chunks never starts another run on top of its own: at most ``threads`` runs (and
    their read buffers) are under way at once, however many are queued, and nothing nests deeply."""
    active, most, deepest = [0], [0], [0]
    lock = threading.Lock()

    with task_pool(threads) as pool:

        def chunk(i: int, j: int) -> int:
            time.sleep(0.0005)
            return i * 100 + j

        def run(i: int) -> int:
            with lock:
                active[0] += 1
                most[0] = max(most[0], active[0])
            deepest[0] = max(deepest[0], len(inspect.stack(0)))
            chunks = [pool.submit(partial(chunk, i, j), leaf=True) for j in range(8)]
            total = sum(c.result() for c in chunks)
            with lock:
                active[0] -= 1
            return total

        pieces = [pool.submit(partial(run, i)) for i in range(30)]
        assert [p.result() for p in pieces] == [sum(i * 100 + j for j in range(8)) for i in range(30)]
    assert most[0] <= threads
    assert deepest[0] < 60  # no run started inside another run's wait


class _Value:
    """A result that can be watched with a weak reference."""


def test_results_taken_in_order_are_let_go_while_the_other_threads_are_busy() -> None:
    """The caller does the pieces itself while the pool's other thread is busy elsewhere; those pieces stay in the
    pool's queue until a worker passes them over, but each lets go of its value once the caller has taken it (a
    run's chunks were all kept alive this way, megabytes each, until the judgments had been read)."""
    import gc
    import weakref

    from evaluation.task_pool import in_order

    busy, release = threading.Event(), threading.Event()

    def elsewhere() -> None:
        busy.set()
        release.wait(10)

    with task_pool(2) as pool:
        pool.submit(elsewhere)
        assert busy.wait(10)  # the pool's one worker is taken
        watched = []
        for value in in_order(pool, [_Value for _ in range(5)]):
            watched.append(weakref.ref(value))
            del value
            gc.collect()
            assert all(ref() is None for ref in watched)  # only the value in use is alive
        release.set()
