"""Quotas per user, counted from the tables (no counters to drift): stored bytes (the distinct blobs of the runs and
collections the user's tokens own) and jobs (live ones, and those created today). Flask-free: views call
``check_storage`` and ``check_jobs`` with the caller's token id before anything is stored; the quota is that of
the token's user (``principal.budget_tokens``: every token of the user counts); over a quota is
``429 quota-exceeded`` with ``Retry-After``.

A check and the inserts it guards are one transaction (the request's unit of work), and the check first locks the
user (``lock_owner``): concurrent requests of one user are serialised from the count to the commit, so two of them
never both see room for one more job."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, func, or_, select, union
from sqlalchemy.orm import Session

from evalserve.service.access.principal import budget_tokens
from evalserve.service.core.config import Limits
from evalserve.service.core.errors import ServiceError
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.store.db import take_write_lock
from evalserve.service.store.models import (
    BlobRow,
    Collection,
    Job,
    JobState,
    RunRecord,
    Submission,
    SubmissionEvaluation,
    Token,
    User,
    utcnow,
)

LIVE_STATES = (JobState.QUEUED, JobState.RUNNING)
#: when to try again after a storage refusal: stored bytes are not freed by waiting, so this is a long pause
STORAGE_RETRY_SECONDS = 3600
#: when to try again after an active-jobs refusal: about the time a queued job takes to start
ACTIVE_JOBS_RETRY_SECONDS = 30


def lock_owner(s: Session, owner_id: str) -> None:
    """Hold the quotas of the user who owns the token ``owner_id`` until the session's transaction ends, before
    counting: on PostgreSQL a row lock on the user (``SELECT ... FOR UPDATE``; other users are not held up, and two
    tokens of one user wait for each other), on SQLite the database's write lock (``BEGIN IMMEDIATE``; SQLite has
    no row locks). Taking it again in the same transaction is free."""
    if s.get_bind().dialect.name == "sqlite":
        take_write_lock(s)
    else:
        user = select(Token.user_id).where(Token.id == owner_id).scalar_subquery()
        s.execute(select(User.id).where(User.id == user).with_for_update())


def _owned_blobs(s: Session, owner_id: str) -> tuple[Any, set[str]]:
    """The blob hashes of every token of the owner's user: a subquery (runs, judgments, intent weights) and the
    side inputs' (JSON) set."""
    tokens = budget_tokens(owner_id)
    shas = union(
        select(RunRecord.sha256.label("sha")).where(RunRecord.owner_id.in_(tokens)),
        select(Collection.qrels_sha256.label("sha")).where(Collection.owner_id.in_(tokens)),
        select(Collection.intent_weights_sha256.label("sha")).where(Collection.owner_id.in_(tokens),
                                                                    Collection.intent_weights_sha256.isnot(None)),
    ).subquery()
    side = s.execute(select(Collection.side_inputs).where(Collection.owner_id.in_(tokens))).scalars()
    extra = {item["sha256"] for inputs in side for item in (inputs or {}).values()
             if isinstance(item, dict) and item.get("sha256")}
    return shas, extra


def stored_bytes(s: Session, owner_id: str) -> int:
    """The size of the distinct blobs of the runs and collections (judgments, intent weights, side inputs) of the
    user who owns the token ``owner_id``; a file uploaded twice is stored, and counted, once."""
    shas, side = _owned_blobs(s, owner_id)
    total = s.execute(select(func.coalesce(func.sum(BlobRow.size), 0))
                      .where(BlobRow.sha256.in_(select(shas.c.sha)))).scalar() or 0
    extra = side - set(s.execute(select(shas.c.sha).where(shas.c.sha.in_(sorted(side)))).scalars()) if side else set()
    if extra:
        total += s.execute(select(func.coalesce(func.sum(BlobRow.size), 0))
                           .where(BlobRow.sha256.in_(sorted(extra)))).scalar() or 0
    return int(total)


def new_bytes(s: Session, owner_id: str, files: list[bytes]) -> int:
    """How many bytes ``files`` add to the owner's storage: files they already store (the same bytes) add none."""
    by_sha = {hashlib.sha256(data).hexdigest(): len(data) for data in files}
    shas, side = _owned_blobs(s, owner_id)
    have = set(s.execute(select(shas.c.sha).where(shas.c.sha.in_(sorted(by_sha)))).scalars()) | side
    return sum(size for sha, size in by_sha.items() if sha not in have)


def check_storage(s: Session, limits: Limits, owner_id: str, files: list[bytes]) -> None:
    """429 when storing ``files`` would take the owner over ``EVALSERVE_QUOTA_STORAGE_MB``."""
    if limits.storage_bytes <= 0:
        return
    lock_owner(s, owner_id)
    incoming = new_bytes(s, owner_id, files)
    if not incoming:
        return
    used = stored_bytes(s, owner_id)
    if used + incoming > limits.storage_bytes:
        raise ServiceError(429, ProblemCode.QUOTA_EXCEEDED,
                           f"this upload ({_mb(incoming)}) would exceed your storage quota:"
                         f" {_mb(used)} of {_mb(limits.storage_bytes)} used; nothing was stored (ask the operator"
                         " for more)", headers={"Retry-After": str(STORAGE_RETRY_SECONDS)})


def _jobs_of(owner_id: str) -> ColumnElement[bool]:
    """The jobs a user's quota counts (over every token of the user who owns ``owner_id``): their own (not a
    task's evaluation jobs, which the organiser owns) and the evaluations of their task submissions."""
    tokens = budget_tokens(owner_id)
    task_jobs = select(SubmissionEvaluation.job_id)
    submitted = (select(SubmissionEvaluation.job_id)  # by whoever submitted (a team has several users)
                 .join(Submission, Submission.id == SubmissionEvaluation.submission_id)
                 .join(RunRecord, RunRecord.id == Submission.run_id)
                 .where(RunRecord.owner_id.in_(tokens)))
    return or_(and_(Job.owner_id.in_(tokens), Job.id.not_in(task_jobs)), Job.id.in_(submitted))


def check_jobs(s: Session, limits: Limits, owner_id: str, incoming: int = 1, now: datetime | None = None) -> None:
    """429 when ``incoming`` more jobs would take the user over the active-jobs or jobs-per-day quota."""
    if limits.active_jobs <= 0 and limits.jobs_per_day <= 0:
        return
    lock_owner(s, owner_id)
    mine = _jobs_of(owner_id)
    if limits.active_jobs > 0:
        active = s.execute(select(func.count()).select_from(Job)
                           .where(mine, Job.state.in_(LIVE_STATES))).scalar() or 0
        if active + incoming > limits.active_jobs:
            raise ServiceError(429, ProblemCode.QUOTA_EXCEEDED, f"you have {active} jobs queued or running, and at most"
                             f" {limits.active_jobs} may be; wait for some to finish (nothing was stored)",
                             headers={"Retry-After": str(ACTIVE_JOBS_RETRY_SECONDS)})
    if limits.jobs_per_day > 0:
        at = now or utcnow()
        day = at.replace(hour=0, minute=0, second=0, microsecond=0)
        today = s.execute(select(func.count()).select_from(Job)
                          .where(mine, Job.created_at >= day)).scalar() or 0
        if today + incoming > limits.jobs_per_day:
            tomorrow = day + timedelta(days=1)
            wait = max(1, int((tomorrow - at).total_seconds()) + 1)
            raise ServiceError(429, ProblemCode.QUOTA_EXCEEDED, f"you created {today} jobs today, and at most"
                             f" {limits.jobs_per_day} are allowed per UTC day; the next is accepted from"
                             f" {tomorrow.isoformat()} (nothing was stored)", headers={"Retry-After": str(wait)})


def _mb(size: int) -> str:
    """A size for people: bytes, KB or MB."""
    if size < 1024:
        return f"{size} bytes"
    return f"{size / 1024:.1f} KB" if size < 1024 * 1024 else f"{size / (1024 * 1024):.1f} MB"
