"""Are the workers alive and is the queue moving? Workers write a heartbeat row every few seconds
(``jobrun.heartbeat``); ``GET /health`` reads the recent ones and the age of the oldest queued job, so a stalled
deployment says so instead of answering "ok" while jobs wait forever."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from evalserve.service.store.db import Database
from evalserve.service.store.models import Job, JobState, WorkerHeartbeat, utcnow


def record_heartbeat(db: Database, name: str, host: str, pid: int, queues: list[str]) -> None:
    """Note that worker ``name`` (a Celery node name, unique per process) is alive now."""
    now = utcnow()
    with db.session() as s:
        values = {"host": host[:200], "pid": pid, "queues": ",".join(queues)[:1000], "last_seen": now}
        changed = s.execute(update(WorkerHeartbeat).where(WorkerHeartbeat.name == name).values(**values))
        if getattr(changed, "rowcount", 0) == 0:
            s.add(WorkerHeartbeat(name=name, started_at=now, **values))


def forget(db: Database, name: str) -> None:
    """A worker stopping cleanly removes its row (a killed one's row just grows old)."""
    with db.session() as s:
        s.execute(delete(WorkerHeartbeat).where(WorkerHeartbeat.name == name))


def forget_process(db: Database, host: str, pid: int) -> int:
    """A supervisor saw process ``pid`` on ``host`` die: remove its rows at once, so ``/health`` counts it gone
    now rather than when its heartbeat grows stale; returns how many."""
    with db.session() as s:
        result = s.execute(delete(WorkerHeartbeat).where(WorkerHeartbeat.host == host[:200],
                                                         WorkerHeartbeat.pid == pid))
        return int(getattr(result, "rowcount", 0) or 0)


def prune(db: Database, older_than_seconds: float) -> int:
    """Remove the rows of workers silent for longer than ``older_than_seconds``; returns how many."""
    cutoff = utcnow() - timedelta(seconds=older_than_seconds)
    with db.session() as s:
        result = s.execute(delete(WorkerHeartbeat).where(WorkerHeartbeat.last_seen < cutoff))
        return int(getattr(result, "rowcount", 0) or 0)


def workers_summary(session: Session, queue: str, stale_seconds: float) -> dict[str, Any]:
    """``alive``: evaluation workers (consuming ``queue``) heard from within ``stale_seconds``;
    ``newest_heartbeat_age_seconds``: how long ago the most recent of them wrote (None: never)."""
    now = utcnow()
    rows = session.execute(select(WorkerHeartbeat.queues, WorkerHeartbeat.last_seen)).all()
    ages = [_age(now, seen) for queues, seen in rows if queue in queues.split(",")]
    return {"alive": sum(1 for age in ages if age <= stale_seconds),
            "newest_heartbeat_age_seconds": round(min(ages), 1) if ages else None}


def queue_summary(session: Session) -> dict[str, Any]:
    """``queued``: jobs waiting for a worker; ``oldest_queued_age_seconds``: how long the oldest has waited."""
    queued = select(func.count(), func.min(Job.created_at)).where(Job.state == JobState.QUEUED)
    count, oldest = session.execute(queued).one()
    return {"queued": int(count),
            "oldest_queued_age_seconds": round(_age(utcnow(), oldest), 1) if oldest is not None else None}


def _age(now: datetime, then: datetime) -> float:
    if then.tzinfo is None:  # SQLite gives back naive datetimes; every stored time is UTC
        then = then.replace(tzinfo=timezone.utc)
    return max(0.0, (now - then).total_seconds())
