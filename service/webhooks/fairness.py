"""Fair deliveries: one owner's (or one target's) deliveries cannot take every delivery thread, and a target that
keeps failing is left alone for a while. No Flask here: the workers' ``webhooks.delivery`` asks it in the
transaction that claims an attempt.

- **Caps.** At most ``webhook_owner_concurrency`` attempts of one owner (``access.principal.budget_owner`` of the
  task's or the job's owner token) and ``webhook_target_concurrency`` to one ``host:port`` are in flight at once,
  over every worker: counted from the delivery rows (``sending_until`` in the future), under one claims lock
  (SQLite's write lock; a PostgreSQL advisory lock), so two workers never both take the last slot. A delivery over
  a cap is not sent: it stays pending, due again after about ``webhook_defer_seconds`` times the queue ahead of
  it, and its message is published again for then (the sweeper finds it if the message is lost): deferred,
  never dropped, and no attempt is used.
- **Circuit breaker.** ``webhook_breaker_failures`` failed attempts in a row to one target (no answer, 5xx or
  429) open its circuit for ``webhook_breaker_seconds``: attempts meanwhile are recorded as ``circuit-open``
  without connecting (they use an attempt and back off as usual). After that time the next attempts go out again
  (half-open, at most the target cap at once); one success closes the circuit, one more failure opens it again.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import InstrumentedAttribute, Session

from evalserve.service.access.principal import budget_owner
from evalserve.service.core.config import Settings
from evalserve.service.store.db import take_write_lock
from evalserve.service.store.models import DeliveryState, Token, WebhookCircuit, WebhookDelivery, as_utc
from evalserve.service.webhooks import targets as webhook_targets

#: the PostgreSQL advisory lock that serialises claims (a constant: claims are short transactions)
CLAIMS_LOCK = 0x65766C5F776830  # "evl_wh0"
MAX_DEFER_SECONDS = 60.0


def lock_claims(session: Session) -> None:
    """Hold the claims lock until the session's transaction ends, before counting what is in flight."""
    if session.get_bind().dialect.name == "sqlite":
        take_write_lock(session)
    else:
        session.execute(select(func.pg_advisory_xact_lock(CLAIMS_LOCK)))


def owner_key(session: Session, token_id: str) -> str:
    """Whose budget a delivery spends: ``budget_owner`` of the owner token of its task or job."""
    token = session.get(Token, token_id)
    return budget_owner(token) if token is not None else f"token:{token_id}"


def target_key(url: str) -> str:
    """``host:port`` of a delivery's URL, what the per-target cap and the circuit breaker count by (the URL itself
    when it does not parse: its attempt is refused anyway)."""
    try:
        parsed = webhook_targets.parse(url)
    except webhook_targets.TargetError:
        return url[:300]
    return f"{parsed.host.lower()}:{parsed.port}"[:300]


def in_flight(session: Session, column: InstrumentedAttribute[str | None], key: str, now: datetime, but: str) -> int:
    """Attempts in flight (held past ``now``) whose ``column`` is ``key``, other than delivery ``but``."""
    return int(session.execute(select(func.count()).select_from(WebhookDelivery).where(
        column == key, WebhookDelivery.state == DeliveryState.PENDING, WebhookDelivery.sending_until > now,
        WebhookDelivery.id != but)).scalar_one())


def cap_reached(session: Session, delivery_id: str, owner: str, target: str, settings: Settings,
                now: datetime) -> str | None:
    """``"owner"`` or ``"target"`` when that cap has no free slot for this delivery now; None when it may go."""
    caps = (("owner", WebhookDelivery.owner, owner, settings.webhook_owner_concurrency),
            ("target", WebhookDelivery.target, target, settings.webhook_target_concurrency))
    for name, column, key, cap in caps:
        if cap > 0 and in_flight(session, column, key, now, delivery_id) >= cap:
            return name
    return None


def defer_seconds(session: Session, which: str, key: str, settings: Settings, now: datetime) -> float:
    """How long a delivery held back by the ``which`` cap waits: ``webhook_defer_seconds`` per cap's worth of
    deliveries already waiting for it (so the rows waiting come back at about the rate slots free up, not all at
    once), with jitter, at most a minute."""
    column = WebhookDelivery.owner if which == "owner" else WebhookDelivery.target
    cap = max(1, settings.webhook_owner_concurrency if which == "owner" else settings.webhook_target_concurrency)
    waiting = int(session.execute(select(func.count()).select_from(WebhookDelivery).where(
        column == key, WebhookDelivery.state == DeliveryState.PENDING, WebhookDelivery.sending_until.is_(None),
        WebhookDelivery.next_attempt_at > now)).scalar_one())
    base = settings.webhook_defer_seconds * max(1.0, waiting / cap)
    return min(base * random.uniform(0.5, 1.5), MAX_DEFER_SECONDS)


def circuit_open(session: Session, target: str, now: datetime) -> bool:
    """Is the target's circuit open (nothing is sent to it until ``open_until``)?"""
    until = session.execute(select(WebhookCircuit.open_until).where(WebhookCircuit.target == target)).scalar()
    opened = as_utc(until)
    return opened is not None and opened > now


def counts_against(status: int | None, error: str | None, no_response: str) -> bool:
    """Does an attempt's outcome count as a failure of its target: no answer, a 5xx or a 429."""
    return error == no_response or (status is not None and (status >= 500 or status == 429))


def note_attempt(session: Session, target: str, failed: bool, settings: Settings, now: datetime) -> None:
    """Record an attempt's outcome in the target's circuit: a success closes it, a failure counts and opens it at
    ``webhook_breaker_failures`` in a row (0: no breaker)."""
    if settings.webhook_breaker_failures <= 0:
        return
    if not failed:
        session.execute(update(WebhookCircuit).where(WebhookCircuit.target == target, WebhookCircuit.failures > 0)
                        .values(failures=0, open_until=None, updated_at=now))
        return
    insert = sqlite_insert if session.get_bind().dialect.name == "sqlite" else pg_insert
    session.execute(insert(WebhookCircuit).values(target=target, failures=0, open_until=None, updated_at=now)
                    .on_conflict_do_nothing(index_elements=["target"]))
    session.execute(update(WebhookCircuit).where(WebhookCircuit.target == target)
                    .values(failures=WebhookCircuit.failures + 1, updated_at=now))
    failures = session.execute(select(WebhookCircuit.failures).where(WebhookCircuit.target == target)).scalar_one()
    if failures >= settings.webhook_breaker_failures:
        session.execute(update(WebhookCircuit).where(WebhookCircuit.target == target)
                        .values(open_until=now + timedelta(seconds=settings.webhook_breaker_seconds)))
