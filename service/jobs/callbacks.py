"""Job callbacks: a job created with a ``callback_url`` POSTs its document there when it ends (succeeded, failed or
cancelled), HMAC-signed with the job's own secret (returned once, in the 202) by the webhook machinery: a delivery
row stored before anything is sent, the same target checks, pinned connection, retries with backoff and sweeper
(``webhooks.delivery``). No Flask here: the API (a cancelled queued job) and the workers (every other end) share it.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

from celery import Celery
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from evalserve.service.core.config import Settings
from evalserve.service.jobs.document import job_document
from evalserve.service.store.blobs import BlobStore
from evalserve.service.store.db import Database
from evalserve.service.store.models import (
    FINAL_STATES,
    JOB_CALLBACK_EVENT,
    DeliveryState,
    Job,
    WebhookDelivery,
    new_id,
    utcnow,
)
from evalserve.service.webhooks import targets as webhook_targets
from evalserve.service.webhooks.delivery import publish_deliveries

log = logging.getLogger(__name__)

#: the event of a task submission's callback: its evaluation ended (succeeded, failed or cancelled)
SUBMISSION_CALLBACK_EVENT = "submission.finished"


@dataclasses.dataclass(frozen=True)
class Callback:
    """What a job's callback sends (``payload``, as ``event``) and whose delivery budget it spends (``owner``; None:
    the job's owner's)."""

    event: str
    payload: dict[str, Any]
    owner: str | None = None


#: what a job's callback carries when another room knows better than the job document (a task submission's
#: evaluation sends what its participant may see: ``shared_tasks.callbacks.submission_callback``); None: not its
#: business. Handed in by the process's composition root (the workers' Celery app, the API's views), so that this
#: room never imports the shared tasks.
CallbackViewer = Callable[[Session, BlobStore | None, Job], Callback | None]


def new_secret() -> str:
    """A job's signing secret."""
    return secrets.token_urlsafe(32)


def check_url(url: str, settings: Settings) -> None:
    """``webhook_targets.TargetError`` unless webhooks could be sent to ``url`` (checked again before each attempt)."""
    webhook_targets.check(url, settings.webhook_allow_networks)


def record(db: Database, job_id: str, blobs: BlobStore | None = None,
           viewer: CallbackViewer | None = None) -> str | None:
    """Store the callback delivery of an ended job that has a ``callback_url``, unless one is stored already (one
    per job: a unique index settles a race between the API and a worker); its id, else None. ``blobs``: where a
    task submission's scores are read (its participant's callback carries them)."""
    try:
        with db.session() as s:
            job = s.get(Job, job_id)
            return None if job is None else record_in(s, job, blobs, viewer)
    except IntegrityError:  # recorded by another process meanwhile
        return None


def record_in(session: Session, job: Job, blobs: BlobStore | None = None,
              viewer: CallbackViewer | None = None) -> str | None:
    """``record`` in the caller's session, for a job read in it (the caller commits; the unique index may refuse
    the row then, when another process recorded it meanwhile). A task submission's evaluation sends what its
    participant may see of it, on the participant's budget (``viewer``: ``shared_tasks.callbacks``; without one,
    only its id, task and state: never the organiser's job document); any other job its document."""
    if not job.callback_url or job.state not in FINAL_STATES:
        return None
    if session.execute(select(WebhookDelivery.id).where(WebhookDelivery.job_id == job.id)).first() is not None:
        return None
    now = utcnow()
    shown = (viewer(session, blobs, job) if viewer is not None else None) or _default_view(job)
    event, payload, owner = shown.event, shown.payload, shown.owner
    row = WebhookDelivery(id=new_id("dlv"), webhook_id=None, job_id=job.id, event=event,
                          payload=_jsonable(payload), state=DeliveryState.PENDING, attempts=0,
                          next_attempt_at=now, log=[], created_at=now, owner=owner)
    session.add(row)
    return row.id


def announce(db: Database, celery: Celery | None, job_id: str, blobs: BlobStore | None = None,
             viewer: CallbackViewer | None = None) -> None:
    """Record the job's callback if it is due and send the wake-up for it; never fails the caller (the sweeper
    publishes a pending delivery whose message was lost)."""
    try:
        delivery = record(db, job_id, blobs, viewer)
    except Exception:
        log.exception("could not record the callback of job %s", job_id)
        return
    if delivery is not None and celery is not None:
        publish_deliveries(celery, [delivery])


def submission_of(job: Job) -> str | None:
    """The task submission a job evaluates, if it is a submission's evaluation."""
    found = job.request.get("submission") if isinstance(job.request, dict) else None
    return found if isinstance(found, str) else None


def _default_view(job: Job) -> Callback:
    """A job's callback without a viewer: its document; a task submission's evaluation only its id, task and
    state (what any of its participant's callbacks may carry)."""
    submission = submission_of(job)
    if submission is None:
        return Callback(JOB_CALLBACK_EVENT, job_document(job))
    task = job.request.get("task") if isinstance(job.request, dict) else None
    return Callback(SUBMISSION_CALLBACK_EVENT, {"id": submission, "task": task, "state": job.state})


def _jsonable(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value
