"""The embedded broker wakes an idle consumer through its queue's pipe (``service.broker.wakeup``) instead of leaving
it to sleep out a polling interval. The consumers here have a fallback interval of an hour: a message they receive at
all came by the wake-up call."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from kombu import Connection, Queue

from evalserve.service.broker import wakeup

TRANSPORT = "evalserve.service.broker.embedded:Transport"
NO_FALLBACK = {"polling_interval": 3600.0}


def _connection(url: str) -> Connection:
    return Connection(url, transport=TRANSPORT, transport_options=NO_FALLBACK)


def test_a_publish_pokes_the_queue_pipe_after_its_commit(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'broker.db'}"
    directory = wakeup.pipe_dir(url)
    assert directory == tmp_path / "broker.db.wakeup"
    waiter = wakeup.Waiter(directory)
    waiter.watch(["jobs"])
    assert not waiter.wait(0)
    with _connection(url) as conn:
        conn.SimpleQueue("jobs").put({"n": 1})
        assert waiter.wait(0)  # one byte per message, read once
        assert not waiter.wait(0)
        conn.SimpleQueue("other").put({"n": 2})  # another queue's pipe
        assert not waiter.wait(0)
    waiter.close()


def test_poke_without_a_consumer_is_a_no_op(tmp_path: Path) -> None:
    assert not wakeup.poke(tmp_path / "missing", "jobs")
    assert not wakeup.poke(None, "jobs")
    assert wakeup.pipe_dir("redis://localhost:6379/0") is None


def test_an_idle_consumer_receives_a_message_without_polling(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'broker.db'}"
    received: list[Any] = []
    listening = threading.Event()

    def consume() -> None:
        with _connection(url) as conn:
            queue = Queue("jobs")
            with conn.Consumer(queue, callbacks=[lambda body, message: (received.append(body), message.ack())]):
                listening.set()
                conn.drain_events(timeout=120)  # one message; the fallback poll would come after an hour

    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    assert listening.wait(60)
    with _connection(url) as conn:
        conn.SimpleQueue("jobs").put({"job": "job_1"})
    thread.join(60)  # a bound that only catches a hang
    assert not thread.is_alive()
    assert received == [{"job": "job_1"}]


def test_a_message_committed_while_the_consumer_opens_its_pipe_is_not_missed(tmp_path: Path,
                                                                             monkeypatch: Any) -> None:
    """The consumer found the queue empty, and the message is committed before its pipe exists (so the poke finds
    nobody): the consumer looks at the queue again once the pipe is open instead of sleeping out the fallback hour."""
    url = f"sqlite:///{tmp_path / 'broker.db'}"
    received: list[Any] = []
    watch = wakeup.Waiter.watch

    def publish_then_watch(self: wakeup.Waiter, queues: Any) -> bool:
        queues = list(queues)
        if not wakeup.pipe_path(self.directory, "jobs").exists():
            with _connection(url) as conn:
                conn.SimpleQueue("jobs").put({"job": "job_1"})
        return watch(self, queues)

    monkeypatch.setattr(wakeup.Waiter, "watch", publish_then_watch)
    with _connection(url) as conn, conn.Consumer(
        Queue("jobs"), callbacks=[lambda body, message: (received.append(body), message.ack())]
    ):
        started = time.monotonic()
        conn.drain_events(timeout=30)  # without the second look it waits the 30 s out, then finds the message
        waited = time.monotonic() - started
    assert received == [{"job": "job_1"}]
    assert waited < 15, waited  # a bound far above a query, far below the wait it replaces
