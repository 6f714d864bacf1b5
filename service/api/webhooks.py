"""``/v1/tasks/{id}/webhooks``: an organiser's URLs that receive HMAC-signed task events, their delivery logs, and
a ping to test a receiver. Organisers only; deliveries are made by the workers (``service.webhooks``)."""

from __future__ import annotations

import math
import secrets
from typing import Any

import marshmallow as ma
from flask.views import MethodView
from flask_smorest import Blueprint
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from service import webhook_targets, webhooks
from service.auth import caller_or_none, require
from service.idempotency import idempotent
from service.models import DELIVERY_STATES, WEBHOOK_EVENTS, Webhook, WebhookDelivery, as_utc, new_id
from service.paging import page_of
from service.problems import PROBLEM_JSON, ApiProblem, ProblemSchema
from service.shared_tasks.access import organised_task
from service.state import state

blp = Blueprint("webhooks", __name__, url_prefix="/v1/tasks", description="Task webhooks")

V = ma.validate
ORGANISERS_ONLY = "the caller can see the task but does not organise it"


class WebhookRequestSchema(ma.Schema):
    url = ma.fields.Url(required=True, schemes={"http", "https"}, require_tld=False,
                        validate=V.Length(max=2000),
                        metadata={"description": "where events are POSTed (http or https, no user:pass@; redirects"
                                  " are not followed): its host must resolve to public addresses only, unless the"
                                  " operator allows the network"})
    events = ma.fields.List(ma.fields.String(validate=V.OneOf(WEBHOOK_EVENTS)), validate=V.Length(min=1),
                            load_default=lambda: list(WEBHOOK_EVENTS),
                            metadata={"description": "events to receive (default all): "
                                      + ", ".join(WEBHOOK_EVENTS)})
    secret = ma.fields.String(validate=V.Length(min=16, max=200), load_default=None,
                              metadata={"description": "signs the deliveries (at least 16 characters; default: a"
                                        " generated one, returned once)"})


class WebhookSchema(ma.Schema):
    id = ma.fields.String()
    task = ma.fields.String()
    url = ma.fields.String()
    events = ma.fields.List(ma.fields.String())
    active = ma.fields.Boolean(metadata={"description": "false once deleted (its deliveries are kept)"})
    created_at = ma.fields.DateTime()


class CreatedWebhookSchema(WebhookSchema):
    secret = ma.fields.String(metadata={"description": "the signing secret: shown only in this answer"})


class DeliveryAttemptSchema(ma.Schema):
    attempt = ma.fields.Integer()
    at = ma.fields.String(metadata={"description": "when the attempt started (ISO 8601, UTC)"})
    status = ma.fields.Integer(allow_none=True, metadata={"description": "the receiver's HTTP status, if any"})
    error = ma.fields.String(allow_none=True, metadata={"description": "why the attempt failed, one of "
                                                        + ", ".join(webhooks.ATTEMPT_ERRORS) + "; null if delivered"})
    duration_ms = ma.fields.Float(metadata={"description": "only when the receiver answered"})


class DeliverySchema(ma.Schema):
    id = ma.fields.String()
    webhook = ma.fields.String()
    event = ma.fields.String(metadata={"description": ", ".join((*WEBHOOK_EVENTS, webhooks.PING_EVENT))})
    state = ma.fields.String(validate=V.OneOf(DELIVERY_STATES))
    attempts = ma.fields.Integer()
    next_attempt_at = ma.fields.DateTime(allow_none=True)
    last_status = ma.fields.Integer(allow_none=True)
    last_error = ma.fields.String(allow_none=True, metadata={"description": "one of " + ", ".join(webhooks.ERRORS)})
    log = ma.fields.List(ma.fields.Nested(DeliveryAttemptSchema), metadata={"description": "every attempt"})
    payload = ma.fields.Dict(metadata={"description": "the event's data (the body's 'data' member)"})
    created_at = ma.fields.DateTime()
    delivered_at = ma.fields.DateTime(allow_none=True)


def webhook_out(hook: Webhook, *, secret: bool = False) -> dict[str, Any]:
    out = {"id": hook.id, "task": hook.task_id, "url": hook.url, "events": list(hook.events), "active": hook.active,
           "created_at": as_utc(hook.created_at)}
    if secret:
        out["secret"] = hook.secret
    return out


def delivery_out(d: WebhookDelivery) -> dict[str, Any]:
    """A delivery as its log shows it: errors from the fixed vocabulary only (``webhooks.public_error``)."""
    return {"id": d.id, "webhook": d.webhook_id, "event": d.event, "state": d.state, "attempts": d.attempts,
            "next_attempt_at": as_utc(d.next_attempt_at), "last_status": d.last_status,
            "last_error": webhooks.public_error(d.last_error),
            "log": [webhooks.public_log_entry(e) for e in d.log or []], "payload": d.payload,
            "created_at": as_utc(d.created_at), "delivered_at": as_utc(d.delivered_at)}


def _webhook(session: Session, task_id: str, webhook_id: str, *, active: bool = False) -> Webhook:
    """The task's webhook (a deleted one too unless ``active``), or 404: another task's webhook is missing here."""
    organised_task(session, task_id, caller_or_none())
    hook = session.get(Webhook, webhook_id)
    if hook is None or hook.task_id != task_id or (active and not hook.active):
        raise ApiProblem(404, "not-found", f"no webhook {webhook_id} on task {task_id}")
    return hook


@blp.route("/<string:task_id>/webhooks")
class Webhooks(MethodView):
    @require("read")
    @blp.response(200, WebhookSchema(many=True))
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM_JSON, description=ORGANISERS_ONLY)
    def get(self, task_id: str) -> Any:
        """The task's active webhooks, oldest first (without their secrets)."""
        with state().db.session() as s:
            organised_task(s, task_id, caller_or_none())
            rows = s.execute(select(Webhook).where(Webhook.task_id == task_id, Webhook.active.is_(True))
                             .order_by(Webhook.created_at, Webhook.id)).scalars().all()
        return [webhook_out(h) for h in rows]

    @require("submit")
    @idempotent
    @blp.arguments(WebhookRequestSchema)
    @blp.response(201, CreatedWebhookSchema)
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM_JSON, description=ORGANISERS_ONLY)
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="an invalid URL, event or secret (invalid-request), a URL whose host resolves to"
                                  " a loopback, private, link-local, multicast or reserved address"
                                  " (webhook-target-refused) or does not resolve (webhook-target-unresolvable), or"
                                  " too many webhooks (too-many-webhooks)")
    def post(self, body: dict[str, Any], task_id: str) -> Any:
        """Add a webhook: the task's events are POSTed to ``url``, signed with the secret returned here (once)."""
        events = [e for e in WEBHOOK_EVENTS if e in body["events"]]
        st = state()
        with st.db.session() as s:
            organised_task(s, task_id, caller_or_none())  # a stranger learns nothing about targets before this
            try:
                webhook_targets.check(body["url"], st.settings.webhook_allow_networks)
            except webhook_targets.TargetError as exc:
                raise ApiProblem(422, exc.code, f"webhook URL refused: {exc.reason}") from exc
            count = s.execute(select(func.count()).select_from(Webhook)
                              .where(Webhook.task_id == task_id, Webhook.active.is_(True))).scalar_one()
            if count >= st.settings.max_webhooks_per_task:
                raise ApiProblem(422, "too-many-webhooks", f"task {task_id} has {count} webhooks, the most allowed;"
                                 " delete one first")
            hook = Webhook(id=new_id("whk"), task_id=task_id, url=body["url"], events=events, active=True,
                           secret=body["secret"] or secrets.token_urlsafe(32))
            s.add(hook)
            s.flush()
            out = webhook_out(hook, secret=True)
        return out, 201, {"Location": f"/v1/tasks/{task_id}/webhooks/{hook.id}"}


@blp.route("/<string:task_id>/webhooks/<string:webhook_id>")
class OneWebhook(MethodView):
    @require("read")
    @blp.response(200, WebhookSchema)
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM_JSON, description=ORGANISERS_ONLY)
    @blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM_JSON, description="no such webhook")
    def get(self, task_id: str, webhook_id: str) -> Any:
        """The webhook (a deleted one too, with ``active`` false), without its secret."""
        with state().db.session() as s:
            return webhook_out(_webhook(s, task_id, webhook_id))

    @require("submit")
    @blp.response(204)
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM_JSON, description=ORGANISERS_ONLY)
    @blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM_JSON, description="no such webhook")
    def delete(self, task_id: str, webhook_id: str) -> Any:
        """Delete the webhook: nothing more is sent to it (pending deliveries fail); its delivery log is kept."""
        with state().db.session() as s:
            _webhook(s, task_id, webhook_id).active = False
        return None


@blp.route("/<string:task_id>/webhooks/<string:webhook_id>/deliveries")
class Deliveries(MethodView):
    @require("read")
    @blp.response(200, DeliverySchema(many=True))
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM_JSON, description=ORGANISERS_ONLY)
    @blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM_JSON, description="no such webhook")
    @blp.paginate()
    def get(self, task_id: str, webhook_id: str, pagination_parameters: Any) -> Any:
        """The webhook's delivery log, newest first: state, attempts and every attempt's outcome."""
        with state().db.session() as s:
            _webhook(s, task_id, webhook_id)
            query = select(WebhookDelivery).where(WebhookDelivery.webhook_id == webhook_id)
            rows = page_of(s, query, WebhookDelivery.created_at.desc(), pagination_parameters)
        return [delivery_out(d) for d in rows]


@blp.route("/<string:task_id>/webhooks/<string:webhook_id>/ping")
class Ping(MethodView):
    @require("submit")
    @idempotent
    @blp.response(202, DeliverySchema)
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM_JSON, description=ORGANISERS_ONLY)
    @blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM_JSON, description="no such active webhook")
    @blp.alt_response(429, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="pinged too often: once per webhook per 10 s and 10 per task per minute by"
                                  " default (Retry-After)")
    def post(self, task_id: str, webhook_id: str) -> Any:
        """Send a signed ``ping`` event to the webhook, to test the receiver; its outcome shows in the log."""
        st = state()
        with st.db.session() as s:
            hook = _webhook(s, task_id, webhook_id, active=True)
            wait = webhooks.ping_wait_seconds(s, hook, st.settings)
            if wait > 0:
                raise ApiProblem(429, "ping-rate-limited", f"webhook {webhook_id} was pinged too recently (at most"
                                 f" one ping per webhook per {st.settings.webhook_ping_interval_seconds:g} s and"
                                 f" {st.settings.webhook_task_pings_per_minute} per task per minute); try again"
                                 f" in {math.ceil(wait)} s", headers={"Retry-After": str(max(1, math.ceil(wait)))})
            delivery_id = webhooks.record_ping(s, hook)
        webhooks.publish_deliveries(st.queue.celery, [delivery_id])
        with st.db.session() as s:
            row = s.get(WebhookDelivery, delivery_id)
            assert row is not None
            return delivery_out(row)
