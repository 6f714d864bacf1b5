"""Database engine and sessions: SQLite (WAL, busy timeout) by default, PostgreSQL when ``DATABASE_URL`` says so."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, SessionTransaction, sessionmaker

from evalserve.service.store.unit_of_work import UnitOfWork


def make_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite connections switch on WAL (readers never block the writer) and wait for
    locks instead of failing at once, so an API and several worker processes can share one file."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})
        event.listen(engine, "connect", sqlite_pragmas)
        return engine
    # a pool as large as an API process's threads (8): a burst of reads reuses connections instead of opening and
    # closing overflow ones (a new PostgreSQL connection costs a process fork on the server)
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=10)


def take_write_lock(s: Session) -> None:
    """Make the session's transaction the database's writer before it reads what it will decide on (a quota's
    counts, an idempotency key), so that no other transaction can change them until it commits.

    SQLite has one write lock for the whole file: the transaction starts with ``BEGIN IMMEDIATE`` (waiting, up to
    the busy timeout, for the current writer) unless it is already open -- pysqlite opens a transaction only at
    its first write, which already took the lock. On PostgreSQL this does nothing: callers lock the rows they
    decide on (``access.quotas.lock_owner``: the caller's token row, ``FOR UPDATE``)."""
    connection = s.connection()
    if connection.dialect.name != "sqlite":
        return
    raw: Any = connection.connection.dbapi_connection
    if not raw.in_transaction:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def savepoint(s: Session) -> SessionTransaction:
    """``s.begin_nested()``, safe on SQLite: pysqlite opens a transaction only before a write, so a SAVEPOINT
    issued first would open one itself and its RELEASE would commit everything so far -- the transaction is
    opened (``take_write_lock``) before the savepoint."""
    take_write_lock(s)
    return s.begin_nested()


def sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


class Database:
    """One engine and its session factory; ``session()`` commits on success and rolls back on error."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self._sessions() as session:
            try:
                yield session
                session.commit()
            except BaseException:
                session.rollback()
                raise

    @contextmanager
    def unit_of_work(self) -> Iterator[UnitOfWork]:
        """One unit of work (see ``store.unit_of_work``): committed, then its after-commit actions run, when the
        block ends normally; rolled back on any error."""
        unit = self.new_unit_of_work()
        try:
            yield unit
            unit.commit()
        except BaseException:
            unit.rollback()
            raise
        finally:
            unit.close()

    def new_unit_of_work(self) -> UnitOfWork:
        """A unit of work whose owner commits or rolls it back and closes it (the web layer's, per request)."""
        return UnitOfWork(self._sessions)

    def dispose(self) -> None:
        self.engine.dispose()
