"""The embedded broker: kombu's SQLAlchemy transport on a SQLite file, with the settings a shared SQLite file
needs (WAL, waiting for locks), and wake-up calls instead of a polling interval on the path of a job: a publisher
pokes the queue's pipe after its commit (``broker.wakeup``), an idle consumer blocks on the pipes of its queues
and queries the broker as soon as one is poked, or when the polling interval (now only a fallback) passes.
kombu hands every transport option to ``create_engine``; this transport keeps the options meant for kombu itself
away from it."""

from __future__ import annotations

import time
from queue import Empty
from typing import Any

from celery.signals import worker_shutting_down
from kombu.transport import sqlalchemy as sqla
from sqlalchemy import create_engine, event

from evalserve.service.broker import wakeup
from evalserve.service.store.db import sqlite_pragmas

KOMBU_OPTIONS = ("queue_tablename", "message_tablename", "callback", "errback", "max_retries", "interval_start",
                 "interval_step", "interval_max", "retry_errors", "polling_interval")


class Channel(sqla.Channel):
    def _engine_from_config(self) -> Any:
        conninfo = self.connection.client
        options = {k: v for k, v in conninfo.transport_options.items() if k not in KOMBU_OPTIONS}
        url = conninfo.hostname
        if url.startswith("sqlite"):
            options.setdefault("connect_args", {"timeout": 30, "check_same_thread": False})
            engine = create_engine(url, **options)
            event.listen(engine, "connect", sqlite_pragmas)
            return engine
        return create_engine(url, **options)

    def _put(self, queue: Any, payload: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """Store the message (committed), then wake a consumer of its queue."""
        super()._put(queue, payload, **kwargs)  # type: ignore[no-untyped-call]
        wakeup.poke(wakeup.pipe_dir(self.connection.client.hostname), queue)


class Transport(sqla.Transport):
    Channel = Channel

    def __init__(self, client: Any, **kwargs: Any) -> None:
        super().__init__(client, **kwargs)  # type: ignore[no-untyped-call]
        directory = wakeup.pipe_dir(client.hostname or "")
        self._waiter = wakeup.Waiter(directory) if directory is not None else None

    def drain_events(self, connection: Any, timeout: float | None = None) -> None:  # type: ignore[override]
        """Deliver one message; while there is none, wait on the queues' wake-up pipes (at most the polling
        interval, then query again), up to ``timeout`` (then ``TimeoutError``, as kombu's own loop)."""
        started = time.monotonic()
        interval = float(self.polling_interval or 1.0)
        while True:
            if wakeup.interrupted():  # the worker is stopping: take no new message, let its loop end now
                raise TimeoutError()
            try:
                self.cycle.get(self._deliver, timeout=timeout)  # type: ignore[union-attr]
                return
            except Empty:
                pass
            left = None if timeout is None else timeout - (time.monotonic() - started)
            if left is not None and left <= 0:
                raise TimeoutError()
            pause = interval if left is None else min(interval, left)
            if self._waiter is None:
                time.sleep(pause)
                continue
            if self._waiter.watch(q for channel in self.channels for q in channel._active_queues):
                continue  # a pipe opened just now: a message committed before it could not poke it, query again
            self._waiter.wait(pause)

    def close_connection(self, connection: Any) -> None:
        if self._waiter is not None:
            self._waiter.close()
        super().close_connection(connection)  # type: ignore[no-untyped-call]


def _stop_waiting(**_: Any) -> None:
    """A worker's warm shutdown (SIGTERM, Ctrl-C) ends its wait for messages at once: Celery's blocking loop would
    otherwise drain for two more seconds, twice, before it stops (an idle worker took about 4 s)."""
    wakeup.interrupt()


worker_shutting_down.connect(_stop_waiting, weak=False)
