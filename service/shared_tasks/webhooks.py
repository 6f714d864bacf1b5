"""An organiser's webhooks on a task, as the ``/v1/tasks/{id}/webhooks`` routes handle them: listing, adding
(the target checked first), deleting, pinging and reading a webhook's delivery log. Flask-free: the caller's token
is passed in, refusals are :class:`~core.errors.ServiceError`, and each function takes the request's database
session; it returns the rows, which the response schemas serialise (as the delivery log shows them:
errors from a fixed vocabulary). Deliveries themselves: ``webhooks.delivery``."""

from __future__ import annotations

import math
import secrets
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from evalserve.service.core.errors import ServiceError
from evalserve.service.core.paging import page_of
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.core.state import ServiceState
from evalserve.service.shared_tasks.access import organised_task
from evalserve.service.shared_tasks.final import refuse_if_final
from evalserve.service.store.models import WEBHOOK_EVENTS, Task, Token, Webhook, WebhookDelivery, new_id
from evalserve.service.store.unit_of_work import after_commit
from evalserve.service.webhooks import delivery as webhooks
from evalserve.service.webhooks import targets as webhook_targets


def _webhook(session: Session, token: Token | None, task_id: str, webhook_id: str, *,
             active: bool = False) -> Webhook:
    """The task's webhook (a deleted one too unless ``active``), or 404: another task's webhook is missing here."""
    organised_task(session, task_id, token)
    hook = session.get(Webhook, webhook_id)
    if hook is None or hook.task_id != task_id or (active and not hook.active):
        raise ServiceError(404, ProblemCode.NOT_FOUND, f"no webhook {webhook_id} on task {task_id}")
    return hook


def list_webhooks(s: Session, st: ServiceState, token: Token | None, task_id: str) -> list[Webhook]:
    """The task's active webhooks, oldest first (without their secrets)."""
    organised_task(s, task_id, token)
    rows = s.execute(select(Webhook).where(Webhook.task_id == task_id, Webhook.active.is_(True))
                     .order_by(Webhook.created_at, Webhook.id)).scalars().all()
    return list(rows)


def add_webhook(s: Session, st: ServiceState, token: Token | None, task_id: str, body: dict[str, Any]) -> Webhook:
    """Add a webhook for the events asked (in their canonical order); the answer shows its secret, once."""
    events = [e for e in WEBHOOK_EVENTS if e in body["events"]]
    refuse_if_final(organised_task(s, task_id, token))  # a stranger learns nothing about targets before this
    try:
        webhook_targets.check(body["url"], st.settings.webhook_allow_networks)
    except webhook_targets.TargetError as exc:
        raise ServiceError(422, exc.code, f"webhook URL refused: {exc.reason}") from exc
    count = s.execute(select(func.count()).select_from(Webhook)
                      .where(Webhook.task_id == task_id, Webhook.active.is_(True))).scalar_one()
    if count >= st.settings.max_webhooks_per_task:
        raise ServiceError(422, ProblemCode.TOO_MANY_WEBHOOKS, f"task {task_id} has {count} webhooks, the most allowed;"
                           " delete one first")
    hook = Webhook(id=new_id("whk"), task_id=task_id, url=body["url"], events=events, active=True,
                   secret=body["secret"] or secrets.token_urlsafe(32))
    s.add(hook)
    s.flush()  # its defaults are set: the caller answers with it before committing
    return hook


def one_webhook(s: Session, st: ServiceState, token: Token | None, task_id: str, webhook_id: str) -> Webhook:
    """The webhook (a deleted one too, with ``active`` false), without its secret."""
    return _webhook(s, token, task_id, webhook_id)


def delete_webhook(s: Session, st: ServiceState, token: Token | None, task_id: str, webhook_id: str) -> None:
    """Deactivate the webhook: nothing more is sent to it; its delivery log is kept."""
    hook = _webhook(s, token, task_id, webhook_id)
    task = s.get(Task, task_id)
    assert task is not None
    refuse_if_final(task)
    hook.active = False


def list_deliveries(s: Session, st: ServiceState, token: Token | None, task_id: str, webhook_id: str,
                    pagination: Any) -> list[WebhookDelivery]:
    """A page of the webhook's delivery log, newest first."""
    _webhook(s, token, task_id, webhook_id)
    query = select(WebhookDelivery).where(WebhookDelivery.webhook_id == webhook_id)
    rows = page_of(s, query, WebhookDelivery.created_at.desc(), pagination)
    return rows


def ping(s: Session, st: ServiceState, token: Token | None, task_id: str, webhook_id: str) -> WebhookDelivery:
    """Record a ``ping`` delivery to an active webhook (unless it was pinged too recently: a 429 with
    Retry-After) and send its wake-up after the commit; the delivery as recorded."""
    hook = _webhook(s, token, task_id, webhook_id, active=True)
    wait = webhooks.ping_wait_seconds(s, hook, st.settings)
    if wait > 0:
        raise ServiceError(429, ProblemCode.PING_RATE_LIMITED, f"webhook {webhook_id} was pinged too recently (at most"
                           f" one ping per webhook per {st.settings.webhook_ping_interval_seconds:g} s and"
                           f" {st.settings.webhook_task_pings_per_minute} per task per minute); try again"
                           f" in {math.ceil(wait)} s", headers={"Retry-After": str(max(1, math.ceil(wait)))})
    delivery_id = webhooks.record_ping(s, hook)
    row = s.get(WebhookDelivery, delivery_id)
    assert row is not None
    after_commit(s, lambda: webhooks.publish_deliveries(st.queue.celery, [delivery_id]))
    return row
