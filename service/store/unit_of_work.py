"""One unit of work: one session, one transaction, committed once, and what to do once it is committed.

The web layer opens one per request (``web.context``), lazily on the first use of its session, and commits it
after the view returned successfully, before the response is sent; a worker or a command opens one with
``Database.unit_of_work()``. Domain functions take the ``Session`` and never commit. Whatever must follow the
commit -- publishing a job's wake-up message, so that the job row is durable before any worker hears of it --
is registered with ``after_commit`` and runs only when the commit succeeded.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from sqlalchemy.orm import Session, sessionmaker

log = logging.getLogger(__name__)
_KEY = "evalserve.unit_of_work"


def after_commit(s: Session, action: Callable[[], object]) -> None:
    """Run ``action`` once the unit of work that ``s`` belongs to is committed (what domain functions call: they
    are given the session, not the unit)."""
    unit = s.info.get(_KEY)
    if not isinstance(unit, UnitOfWork):
        raise RuntimeError("this session belongs to no unit of work; open one with Database.unit_of_work()")
    unit.after_commit(action)


class UnitOfWork:
    """A lazily opened session, committed or rolled back once by its owner (not by the functions that use it)."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions
        self._session: Session | None = None
        self._after_commit: list[Callable[[], object]] = []

    @property
    def session(self) -> Session:
        """The unit's session, opened on first use."""
        if self._session is None:
            self._session = self._sessions()
            self._session.info[_KEY] = self
        return self._session

    @property
    def opened(self) -> bool:
        return self._session is not None

    def after_commit(self, action: Callable[[], object]) -> None:
        """Run ``action`` once the unit is committed (never if it is rolled back); in the order registered."""
        self._after_commit.append(action)

    def commit(self) -> None:
        """Commit the transaction, then run the after-commit actions (a failing one is logged, not raised: what
        was committed stays committed, and the others still run)."""
        if self._session is not None:
            self._session.commit()
        actions, self._after_commit = self._after_commit, []
        for action in actions:
            try:
                action()
            except Exception:
                log.exception("an after-commit action failed")

    def end_reads(self) -> None:
        """End a reading unit's transaction early and give its connection back -- a long-poll about to wait holds
        neither a snapshot nor a pooled connection meanwhile; the session opens a new transaction if used again.
        Only for a unit that has not written (it would commit what was written so far)."""
        if self._session is not None:
            self._session.commit()

    def rollback(self) -> None:
        """Undo everything and give the connection back. The session is closed, not merely rolled back: its objects
        are detached as they were read, not expired (an error answer may still show one), and the unit opens a
        new session if it is used again."""
        self._after_commit = []
        if self._session is not None:
            self._session.close()  # ends the transaction with a rollback
            self._session = None

    def close(self) -> None:
        """Roll back whatever was not committed and give the connection back."""
        self._after_commit = []
        if self._session is not None:
            self._session.close()
            self._session = None
