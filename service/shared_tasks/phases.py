"""A shared task's phases in time: which is open at an instant, which a leaderboard shows by default. Phases of
a task never overlap (``services`` checks it), so at most one is open at a time; times are UTC."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from evalserve.service.store.models import Phase, as_utc


def task_phases(s: Session, task_id: str) -> list[Phase]:
    """The task's phases, in time order."""
    return list(s.execute(select(Phase).where(Phase.task_id == task_id).order_by(Phase.opens_at)).scalars())


def phase_at(phases: list[Phase], at: datetime) -> Phase | None:
    """The phase open at ``at`` (``opens_at <= at < closes_at``)."""
    return next((p for p in phases if as_utc(p.opens_at) <= at < as_utc(p.closes_at)), None)


def current_phase(phases: list[Phase], at: datetime) -> Phase | None:
    """The phase a leaderboard shows by default: the open one, else the last one that opened, else the first."""
    open_now = phase_at(phases, at)
    if open_now is not None:
        return open_now
    started = [p for p in phases if as_utc(p.opens_at) <= at]
    return started[-1] if started else (phases[0] if phases else None)
