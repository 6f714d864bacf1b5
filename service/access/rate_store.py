"""Rate-limit counters in a local SQLite file, shared by every API process of a machine: the ``limits`` package's
storage for deployments without Redis (``evalserve+sqlite:///DATA_DIR/ratelimits.db``), so that 1200/minute admits
1200 requests however many gunicorn processes serve them.

One counter is one row (key, value, expiry); a hit is a single ``INSERT ... ON CONFLICT DO UPDATE ... RETURNING``
statement, which SQLite runs under its write lock: concurrent processes never lose or double an increment. The file
is separate from the service's database, so counting requests never waits for an upload's transaction; it is
created 0600 and needs no durability (WAL, ``synchronous=OFF``: a crash may forget the last counts)."""

from __future__ import annotations

import os
import queue
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote, urlparse

from limits.storage import Storage

SCHEME = "evalserve+sqlite"
FILE_MODE = 0o600
#: one hit in this many also deletes expired counters (they are ignored anyway; this keeps the file small)
SWEEP_EVERY = 500

_SCHEMA = ("CREATE TABLE IF NOT EXISTS counters (key TEXT PRIMARY KEY, value INTEGER NOT NULL,"
           " expiry REAL NOT NULL) WITHOUT ROWID")
_INCR = ("INSERT INTO counters (key, value, expiry) VALUES (:key, :amount, :expiry) ON CONFLICT (key) DO UPDATE SET"
         " value = CASE WHEN counters.expiry <= :now THEN :amount ELSE counters.value + :amount END,"
         " expiry = CASE WHEN counters.expiry <= :now THEN :expiry ELSE counters.expiry END RETURNING value")


def path_of(uri: str) -> Path:
    """The file of an ``evalserve+sqlite:///path`` URI."""
    parsed = urlparse(uri)
    if parsed.scheme != SCHEME or not parsed.path:
        raise ValueError(f"not a {SCHEME}:///path URI: {uri!r}")
    return Path(unquote(parsed.path))


class SQLiteStorage(Storage):
    """Fixed-window counters in a SQLite file (``limits.storage.Storage``; used by ``FixedWindowRateLimiter``).
    Connections are pooled per process (one per concurrent operation, never shared by two at once; a forked child
    opens its own), so a hit costs one statement, not a connection."""

    STORAGE_SCHEME = [SCHEME]  # noqa: RUF012 -- the limits registry reads this list (its base declares it so)

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False, **options: float | str | bool) -> None:
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self.path = path_of(uri or "")
        self.timeout = float(options.get("timeout", 5.0))
        self._hits = 0
        self._ready = False
        self._pool: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._pid = os.getpid()

    @property
    def base_exceptions(self) -> type[Exception] | tuple[type[Exception], ...]:
        return (sqlite3.Error, OSError)

    def _open(self) -> sqlite3.Connection:
        if not self._ready:
            self.path.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, FILE_MODE))  # private before SQLite opens it
        connection = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False)
        if not self._ready:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute(_SCHEMA)
            self._ready = True
        connection.execute("PRAGMA synchronous=OFF")
        return connection

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        """A connection of this process's pool for one operation; one that failed is closed, not pooled."""
        if os.getpid() != self._pid:  # a forked child: the parent's connections are not ours to use
            self._pool, self._pid = queue.SimpleQueue(), os.getpid()
        try:
            connection = self._pool.get_nowait()
        except queue.Empty:
            connection = self._open()
        try:
            yield connection
        except BaseException:
            connection.close()
            raise
        self._pool.put(connection)

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        """Add ``amount`` to the counter and return its new value; a counter whose window has ended starts again
        at ``amount`` with a window of ``expiry`` seconds from now."""
        now = time.time()
        with self._connection() as connection:
            value = connection.execute(_INCR, {"key": key, "amount": amount, "expiry": now + expiry,
                                               "now": now}).fetchone()[0]
            self._hits += 1
            if self._hits % SWEEP_EVERY == 0:
                connection.execute("DELETE FROM counters WHERE expiry <= ?", (now,))
            return int(value)

    def _row(self, key: str) -> tuple[int, float] | None:
        with self._connection() as connection:
            row = connection.execute("SELECT value, expiry FROM counters WHERE key = ? AND expiry > ?",
                                     (key, time.time())).fetchone()
        return (int(row[0]), float(row[1])) if row else None

    def get(self, key: str) -> int:
        row = self._row(key)
        return row[0] if row else 0

    def get_expiry(self, key: str) -> float:
        """When the counter's window ends (seconds since the epoch; now for a counter that is not running)."""
        row = self._row(key)
        return row[1] if row else time.time()

    def check(self) -> bool:
        """Can the file be written? (``/health``)"""
        with self._connection() as connection:
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("ROLLBACK")
            return True

    def reset(self) -> int | None:
        with self._connection() as connection:
            return int(connection.execute("DELETE FROM counters").rowcount)

    def clear(self, key: str) -> None:
        with self._connection() as connection:
            connection.execute("DELETE FROM counters WHERE key = ?", (key,))
