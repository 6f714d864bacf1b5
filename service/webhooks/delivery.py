"""Task webhooks: HMAC-signed event deliveries, stored before they are sent, retried with exponential backoff, every
attempt logged on the delivery. No Flask here: the API and the workers share it.

A delivery's life: ``record_event`` adds it (pending, due now) in the caller's transaction; after the commit
``publish_deliveries`` sends a wake-up message; a worker's ``deliver`` claims one attempt with a conditional
UPDATE (two workers never send the same attempt), POSTs it, and records ``delivered``, the next attempt's time,
or ``failed``. Messages lost by the broker or a crashed worker are found again by the sweeper (``due_deliveries``):
the database, not the broker, is the source of truth.

Deliveries are fair (``webhooks.fairness``): an owner's or a target's attempts in flight are capped over every
worker (a delivery over a cap is deferred, not dropped), and a target that keeps failing has its circuit opened.

Every attempt checks its URL again and connects only to the addresses checked (``webhooks.targets``,
``webhooks.transport``); the log records a fixed vocabulary of errors (``ERRORS``), the details go to the
server's log: the delivery log must not tell an open port from a closed one.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import random
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from celery import Celery
from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.orm import Session

from evalserve.service.broker.messages import DELIVER_WEBHOOK_TASK, publish
from evalserve.service.core.config import Settings
from evalserve.service.store.db import Database
from evalserve.service.store.models import (
    WEBHOOK_EVENTS,
    DeliveryState,
    Job,
    Task,
    Webhook,
    WebhookDelivery,
    as_utc,
    new_id,
    utcnow,
)
from evalserve.service.webhooks import fairness
from evalserve.service.webhooks import targets as webhook_targets
from evalserve.service.webhooks import transport as webhook_http
from evaluation.enums import StrEnum
from evaluation.report import engine_version

log = logging.getLogger(__name__)

#: the test event of ``POST .../ping``: sent to one webhook, whatever it subscribed to
PING_EVENT = "ping"
SIGNATURE_VERSION = "v1"
MAX_BACKOFF_SECONDS = 3600.0
JITTER = 0.1  # up to 10% added to each wait, so deliveries that failed together do not retry together


class DeliveryOutcome(StrEnum):
    """What one ``deliver`` call did (the Celery task's result, and what it logs)."""

    DELIVERED = "delivered"  # the attempt got a 2xx answer
    RETRY = "retry"  # the attempt failed; the next one is scheduled
    FAILED = "failed"  # out of attempts (or its webhook was deleted): the delivery failed
    SKIPPED = "skipped"  # not due, already final, or another worker holds the attempt
    DEFERRED = "deferred"  # held back by its owner's or target's cap: due again shortly, no attempt used


#: outcomes after which the delivery's message is published again for its next due time
REPUBLISH = (DeliveryOutcome.RETRY, DeliveryOutcome.DEFERRED)


#: the errors a delivery log shows (stored as such; details are logged on the server only): an attempt's
HTTP_STATUS = "http-status"  # the receiver answered with a non-2xx status (shown beside it)
REDIRECT_NOT_FOLLOWED = "redirect-not-followed"  # it answered 3xx: redirects are not followed
NO_RESPONSE = "no-response"  # no HTTP answer: refused, timed out, reset, TLS failure -- never which
TARGET_REFUSED = "target-refused"  # the host now resolves to an address webhooks are not sent to; not sent
TARGET_UNRESOLVABLE = "target-unresolvable"  # the host does not resolve any more; not sent
CIRCUIT_OPEN = "circuit-open"  # the target failed too often lately (its circuit breaker is open); not sent
ATTEMPT_ERRORS = (HTTP_STATUS, REDIRECT_NOT_FOLLOWED, NO_RESPONSE, TARGET_REFUSED, TARGET_UNRESOLVABLE, CIRCUIT_OPEN)
# ... and a delivery's settled without an attempt
WEBHOOK_DELETED = "webhook-deleted"  # its webhook was deleted before the attempt
WORKER_LOST = "worker-lost"  # its last allowed attempt's worker died before recording an outcome
ERRORS = (*ATTEMPT_ERRORS, WEBHOOK_DELETED, WORKER_LOST)
PING_WINDOW_SECONDS = 60.0  # the window of ``Settings.webhook_task_pings_per_minute``


# --- signatures ----------------------------------------------------------------------------------------------------


def sign(secret: str, body: bytes, timestamp: int) -> str:
    """The ``X-Evalserve-Signature`` value: ``t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>." + body)>``.
    Receivers check it with ``evalserve_client.webhooks.verify_signature`` (the one verifier; the service only
    signs)."""
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},{SIGNATURE_VERSION}={digest}"


# --- recording and publishing --------------------------------------------------------------------------------------


def record_event(session: Session, task_id: str, event: str, payload: dict[str, Any]) -> list[str]:
    """Add a pending delivery of ``event`` for every active webhook of the task subscribed to it; returns their
    ids. The caller commits (the deliveries are durable before anything is sent), then ``publish_deliveries``."""
    if event not in WEBHOOK_EVENTS:
        raise ValueError(f"unknown webhook event {event!r}; one of {', '.join(WEBHOOK_EVENTS)}")
    data = _json_copy(payload)
    hooks = session.execute(select(Webhook).where(Webhook.task_id == task_id, Webhook.active.is_(True))
                            .order_by(Webhook.created_at, Webhook.id)).scalars()
    now = utcnow()
    return [_add_delivery(session, hook.id, event, data, now) for hook in hooks if event in hook.events]


def record_ping(session: Session, webhook: Webhook) -> str:
    """Add a pending ``ping`` delivery for one webhook (an organiser testing their receiver); the caller commits."""
    data = {"webhook": webhook.id, "url": webhook.url, "events": list(webhook.events),
            "message": "a test delivery from evalserve: verify its signature with your webhook's secret"}
    return _add_delivery(session, webhook.id, PING_EVENT, data, utcnow())


def publish_deliveries(celery_app: Celery, ids: list[str], *, countdown: float | None = None) -> None:
    """Send a wake-up message per delivery (after ``countdown`` seconds). A broker failure is logged, not raised:
    the deliveries are in the database and the sweeper publishes them again."""
    queue = celery_app.conf.evalserve_settings.webhook_queue
    for delivery_id in ids:
        try:
            publish(celery_app, DELIVER_WEBHOOK_TASK, [delivery_id], queue=queue, countdown=countdown)
        except Exception as exc:  # broker down: the sweeper will publish the delivery later
            log.warning("could not publish webhook delivery %s (%s); it stays pending in the database",
                        delivery_id, exc)


def due_deliveries(db: Database, limit: int = 100, *, overdue_seconds: float = 0.0) -> list[str]:
    """Pending deliveries due more than ``overdue_seconds`` ago (their message was lost, or their worker died
    mid-attempt), oldest first. Each one returned has its ``next_attempt_at`` moved to now, so that other
    sweepers leave it alone for ``overdue_seconds``: the caller must publish them."""
    now = utcnow()
    before = now - timedelta(seconds=overdue_seconds)
    overdue = and_(WebhookDelivery.state == DeliveryState.PENDING,
                   or_(WebhookDelivery.next_attempt_at.is_(None), WebhookDelivery.next_attempt_at <= before))
    ids: list[str] = []
    with db.session() as s:
        found = s.execute(select(WebhookDelivery.id).where(overdue)
                          .order_by(WebhookDelivery.next_attempt_at).limit(limit)).scalars().all()
        for delivery_id in found:
            bumped = s.execute(_update().where(WebhookDelivery.id == delivery_id, overdue)
                               .values(next_attempt_at=now))
            if _changed(bumped) == 1:
                ids.append(delivery_id)
    return ids


def seconds_until_due(db: Database, delivery_id: str) -> float | None:
    """How long until a pending delivery's next attempt (0 if due); None unless it is pending."""
    with db.session() as s:
        row = s.execute(select(WebhookDelivery.state, WebhookDelivery.next_attempt_at)
                        .where(WebhookDelivery.id == delivery_id)).one_or_none()
    if row is None or row.state != DeliveryState.PENDING:
        return None
    due = as_utc(row.next_attempt_at)
    return 0.0 if due is None else max(0.0, (due - utcnow()).total_seconds())


# --- delivering ----------------------------------------------------------------------------------------------------


def backoff_seconds(attempt: int, base: float) -> float:
    """The wait after failed attempt ``attempt`` (1-based): ``base * 2**(attempt-1)`` plus up to 10% jitter,
    at most an hour."""
    return min(base * 2.0 ** min(attempt - 1, 40) * (1 + JITTER * random.random()), MAX_BACKOFF_SECONDS)


@dataclass(frozen=True)
class _Attempt:
    """What one claimed attempt sends: everything read in the claiming transaction."""

    delivery_id: str
    number: int
    url: str
    secret: str
    event: str
    body: bytes
    log: list[Any]
    target: str  # host:port, what the target cap and the circuit breaker count by
    circuit_open: bool = False  # the target's circuit is open: recorded as CIRCUIT_OPEN, not sent


def deliver(db: Database, delivery_id: str, settings: Settings) -> str:
    """Make one attempt at a delivery, if it is pending and due: ``delivered`` (a 2xx answer), ``retry`` (next
    attempt scheduled), ``failed`` (out of attempts, or its webhook was deleted) or ``skipped`` (not due, already
    final, or another worker holds the attempt), or ``deferred`` (its owner's or target's cap is full: due again
    shortly, no attempt used). Idempotent: a repeated message changes nothing."""
    attempt, outcome = _claim(db, delivery_id, settings)
    if attempt is None:
        return outcome
    started, at = time.monotonic(), utcnow()
    status, error = (None, CIRCUIT_OPEN) if attempt.circuit_open else _post(attempt, settings)
    entry = {"attempt": attempt.number, "at": at.isoformat(), "status": status, "error": error,
             "duration_ms": round((time.monotonic() - started) * 1000, 1)}
    now = utcnow()
    values: dict[str, Any] = {"log": [*attempt.log, entry], "last_status": status, "last_error": error,
                              "sending_until": None}
    if error is None:
        outcome = DeliveryOutcome.DELIVERED
        values.update(state=DeliveryState.DELIVERED, delivered_at=now, next_attempt_at=None)
    elif attempt.number >= settings.webhook_max_attempts:
        outcome = DeliveryOutcome.FAILED
        values.update(state=DeliveryState.FAILED, next_attempt_at=None)
    else:
        outcome = DeliveryOutcome.RETRY
        wait = backoff_seconds(attempt.number, settings.webhook_backoff_seconds)
        values.update(next_attempt_at=now + timedelta(seconds=wait))
    with db.session() as s:
        done = s.execute(_update().where(WebhookDelivery.id == delivery_id,
                                         WebhookDelivery.state == DeliveryState.PENDING,
                                         WebhookDelivery.attempts == attempt.number).values(**values))
        if not attempt.circuit_open and error not in (TARGET_REFUSED, TARGET_UNRESOLVABLE):
            fairness.note_attempt(s, attempt.target, fairness.counts_against(status, error, NO_RESPONSE),
                                  settings, now)
    if _changed(done) != 1:  # our attempt outlived its hold and another worker took over: its record stands
        return DeliveryOutcome.SKIPPED
    log.info("webhook delivery %s attempt %d: %s (%s)", delivery_id, attempt.number, outcome, error or status)
    return outcome


def attempt_hold_seconds(settings: Settings) -> float:
    """How long a claimed attempt keeps its delivery from being claimed again; after that its worker is presumed
    dead and the sweeper republishes the delivery."""
    return 3 * (settings.webhook_connect_timeout_seconds + settings.webhook_timeout_seconds) + 30.0


def _claim(db: Database, delivery_id: str, settings: Settings) -> tuple[_Attempt | None, str]:
    """Take the next attempt of a pending, due delivery (``attempts`` bumped where it still has the value seen,
    ``next_attempt_at`` and ``sending_until`` pushed past the attempt's hold), or settle it as failed, or defer
    it when its owner's or target's cap is full (``webhooks.fairness``); (None, outcome) otherwise."""
    now = utcnow()
    with db.session() as s:
        fairness.lock_claims(s)  # the caps' counts hold until this transaction ends
        row = s.get(WebhookDelivery, delivery_id)
        if row is None or row.state != DeliveryState.PENDING or not _is_due(row.next_attempt_at, now):
            return None, DeliveryOutcome.SKIPPED
        seen = row.attempts
        due = or_(WebhookDelivery.next_attempt_at.is_(None), WebhookDelivery.next_attempt_at <= now)
        mine = and_(WebhookDelivery.id == delivery_id, WebhookDelivery.state == DeliveryState.PENDING,
                    WebhookDelivery.attempts == seen, due)
        receiver = _receiver(s, row)
        owner = row.owner or _owner(s, row)
        giving_up = None
        if receiver is None:
            giving_up = WEBHOOK_DELETED
        elif seen >= settings.webhook_max_attempts:
            giving_up = WORKER_LOST  # the last allowed attempt's worker stopped before it finished
        if giving_up is not None:
            settled = s.execute(_update().where(mine).values(state=DeliveryState.FAILED, next_attempt_at=None,
                                                             last_error=giving_up))
            return None, DeliveryOutcome.FAILED if _changed(settled) == 1 else DeliveryOutcome.SKIPPED
        assert receiver is not None
        target = fairness.target_key(receiver[0])
        is_open = fairness.circuit_open(s, target, now)
        full = None if is_open else fairness.cap_reached(s, delivery_id, owner, target, settings, now)
        if full is not None:
            wait = fairness.defer_seconds(s, full, owner if full == "owner" else target, settings, now)
            s.execute(_update().where(mine).values(next_attempt_at=now + timedelta(seconds=wait), owner=owner,
                                                   target=target))
            log.info("webhook delivery %s deferred %.1f s: its %s's deliveries in flight are at the cap",
                     delivery_id, wait, full)
            return None, DeliveryOutcome.DEFERRED
        hold = now + timedelta(seconds=attempt_hold_seconds(settings))
        claimed = s.execute(_update().where(mine).values(attempts=seen + 1, next_attempt_at=hold, owner=owner,
                                                         target=target,
                                                         sending_until=None if is_open else hold))
        if _changed(claimed) != 1:
            return None, DeliveryOutcome.SKIPPED
        # read again inside the claiming transaction: the log as it is now, not as first seen
        fresh = s.execute(select(WebhookDelivery.event, WebhookDelivery.payload, WebhookDelivery.log,
                                 WebhookDelivery.created_at).where(WebhookDelivery.id == delivery_id)).one()
        url, secret, task_id = receiver
        body = delivery_body(delivery_id, fresh.event, task_id, as_utc(fresh.created_at) or now, fresh.payload)
        return _Attempt(delivery_id, seen + 1, url, secret, fresh.event, body, list(fresh.log or []), target,
                        is_open), ""


def _owner(session: Session, row: WebhookDelivery) -> str:
    """Whose budget the delivery spends: the owner of its job, or of its webhook's task."""
    if row.job_id is not None:
        job = session.get(Job, row.job_id)
        if job is not None:
            return fairness.owner_key(session, job.owner_id)
    hook = session.get(Webhook, row.webhook_id) if row.webhook_id is not None else None
    task = session.get(Task, hook.task_id) if hook is not None else None
    return fairness.owner_key(session, task.owner_id) if task is not None else f"delivery:{row.id}"


def _receiver(session: Session, row: WebhookDelivery) -> tuple[str, str, str | None] | None:
    """Where a delivery goes and what signs it: (URL, secret, task id) of its active webhook, or (callback URL,
    secret, None) of its job; None when the webhook was deleted (or the job has no callback any more)."""
    if row.job_id is not None:
        job = session.get(Job, row.job_id)
        if job is None or not job.callback_url or not job.callback_secret:
            return None
        return job.callback_url, job.callback_secret, None
    hook = session.get(Webhook, row.webhook_id)
    if hook is None or not hook.active:
        return None
    return hook.url, hook.secret, hook.task_id


def delivery_body(delivery_id: str, event: str, task_id: str | None, created_at: datetime,
                  data: dict[str, Any]) -> bytes:
    """The exact bytes POSTed and signed: compact JSON ``{id, event, task, created_at, data}`` (``task`` is null
    for a job's callback, whose ``data`` is the job)."""
    document = {"id": delivery_id, "event": event, "task": task_id, "created_at": created_at.isoformat(),
                "data": data}
    return json.dumps(document, separators=(",", ":")).encode()


def user_agent() -> str:
    return f"evalserve-webhooks/{engine_version()}"


def _post(attempt: _Attempt, settings: Settings) -> tuple[int | None, str | None]:
    """Check the target again (its DNS may have changed since registration) and POST the signed body once to the
    addresses checked; (status, None) for a 2xx answer, else (status or None, one of ``ATTEMPT_ERRORS``). The
    details (which address, refused or timed out) go to the server's log only: shown to the caller, they would
    make the delivery log a port scanner. The answer's body is never read."""
    headers = {
        "Content-Type": "application/json",
        "User-Agent": user_agent(),
        "X-Evalserve-Event": attempt.event,
        "X-Evalserve-Delivery": attempt.delivery_id,
        "X-Evalserve-Signature": sign(attempt.secret, attempt.body, int(time.time())),
    }
    try:
        target = webhook_targets.check(attempt.url, settings.webhook_allow_networks)
    except webhook_targets.TargetError as exc:
        log.warning("webhook delivery %s not sent: %s", attempt.delivery_id, exc.reason)
        return None, TARGET_UNRESOLVABLE if exc.code == webhook_targets.UNRESOLVABLE else TARGET_REFUSED
    try:
        status = webhook_http.post(target, attempt.body, headers, settings.webhook_timeout_seconds,
                                   connect_timeout=settings.webhook_connect_timeout_seconds)
    except Exception as exc:  # refused, timed out, reset, TLS: the receiver's problem, retried
        log.info("webhook delivery %s attempt %d: no response from %s (%s): %s: %s", attempt.delivery_id,
                 attempt.number, target.host, ",".join(target.addresses), type(exc).__name__, exc)
        return None, NO_RESPONSE
    if 200 <= status < 300:
        return status, None
    return status, REDIRECT_NOT_FOLLOWED if 300 <= status < 400 else HTTP_STATUS


def public_error(stored: str | None) -> str | None:
    """A stored error as the delivery log shows it: one of ``ERRORS``. Rows written before the vocabulary held
    free text (connection errors that told open ports from closed ones): they are mapped, never shown."""
    if stored is None or stored in ERRORS:
        return stored
    if stored.startswith("HTTP 3"):
        return REDIRECT_NOT_FOLLOWED
    if stored.startswith("HTTP "):
        return HTTP_STATUS
    if "webhook was deleted" in stored:
        return WEBHOOK_DELETED
    if stored.startswith("gave up after"):
        return WORKER_LOST
    return NO_RESPONSE


def public_log_entry(entry: Any) -> dict[str, Any]:
    """One attempt of a delivery's log as shown: its number, start, HTTP status and ``public_error``; the
    duration only when the receiver answered (the time to a refusal or a timeout tells ports apart)."""
    entry = entry if isinstance(entry, dict) else {}
    out = {"attempt": entry.get("attempt"), "at": entry.get("at"), "status": entry.get("status"),
           "error": public_error(entry.get("error"))}
    if entry.get("status") is not None and entry.get("duration_ms") is not None:
        out["duration_ms"] = entry["duration_ms"]
    return out


# --- ping limits -----------------------------------------------------------------------------------------------------


def ping_wait_seconds(session: Session, hook: Webhook, settings: Settings) -> float:
    """0 if ``hook`` may be pinged now, else the seconds until it may: one ping per webhook per
    ``webhook_ping_interval_seconds`` and ``webhook_task_pings_per_minute`` over the task's webhooks (deleted ones
    count too). Counted from the delivery rows, so the limit holds across API processes; the task's row is locked
    first (a no-op UPDATE: one row lock on PostgreSQL, the write lock on SQLite) so concurrent pings of one task
    are counted one after the other -- one row, so concurrent requests cannot deadlock as when each locked all
    the task's webhook rows. The caller records the ping in the same transaction."""
    session.execute(update(Task).where(Task.id == hook.task_id).values(name=Task.name)
                    .execution_options(synchronize_session=False))
    now = utcnow()
    interval = timedelta(seconds=settings.webhook_ping_interval_seconds)
    last = session.execute(select(func.max(WebhookDelivery.created_at)).where(
        WebhookDelivery.webhook_id == hook.id, WebhookDelivery.event == PING_EVENT,
        WebhookDelivery.created_at > now - interval)).scalar_one_or_none()
    wait = 0.0
    if last is not None:
        wait = ((as_utc(last) or now) + interval - now).total_seconds()
    window = timedelta(seconds=PING_WINDOW_SECONDS)
    recent = session.execute(select(WebhookDelivery.created_at).join(Webhook, Webhook.id == WebhookDelivery.webhook_id)
                             .where(Webhook.task_id == hook.task_id, WebhookDelivery.event == PING_EVENT,
                                    WebhookDelivery.created_at > now - window)
                             .order_by(WebhookDelivery.created_at)).scalars().all()
    budget = max(settings.webhook_task_pings_per_minute, 0)
    if len(recent) >= budget:
        frees = recent[len(recent) - budget] if budget else recent[-1]  # the ping whose expiry makes room
        wait = max(wait, ((as_utc(frees) or now) + window - now).total_seconds())
    return max(wait, 0.0)


def _add_delivery(session: Session, webhook_id: str, event: str, data: dict[str, Any], now: datetime) -> str:
    row = WebhookDelivery(id=new_id("dlv"), webhook_id=webhook_id, event=event, payload=data,
                          state=DeliveryState.PENDING, attempts=0, next_attempt_at=now, log=[], created_at=now)
    session.add(row)
    return row.id


def _json_copy(payload: dict[str, Any]) -> dict[str, Any]:
    """A detached copy, and a TypeError now (not at commit) for a payload JSON cannot hold."""
    copied: dict[str, Any] = json.loads(json.dumps(payload))
    return copied


def _is_due(next_attempt_at: datetime | None, now: datetime) -> bool:
    due = as_utc(next_attempt_at)
    return due is None or due <= now


def _update() -> Any:
    """UPDATE webhook_deliveries without synchronising loaded objects (the WHERE clause is the database's)."""
    return update(WebhookDelivery).execution_options(synchronize_session=False)


def _changed(result: Any) -> int:
    return int(result.rowcount)
