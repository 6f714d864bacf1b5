"""``/v1/tasks/{id}/webhooks``: an organiser's URLs that receive HMAC-signed task events, their delivery logs, and
a ping to test a receiver. Organisers only; deliveries are made by the workers (``webhooks.delivery``)."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask.views import MethodView
from flask_smorest import Blueprint

from evalserve.service.shared_tasks import webhooks as task_webhooks
from evalserve.service.store.models import WEBHOOK_EVENTS, DeliveryState
from evalserve.service.web.auth import caller_or_none, require
from evalserve.service.web.context import session, state
from evalserve.service.web.idempotency import idempotent
from evalserve.service.web.problems import PROBLEM_JSON, TASK_FINAL, ProblemSchema
from evalserve.service.web.schemas import UtcDateTime
from evalserve.service.webhooks import delivery as webhooks

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
    task = ma.fields.String(attribute="task_id")
    url = ma.fields.String()
    events = ma.fields.List(ma.fields.String())
    active = ma.fields.Boolean(metadata={"description": "false once deleted (its deliveries are kept)"})
    created_at = UtcDateTime()


class CreatedWebhookSchema(WebhookSchema):
    secret = ma.fields.String(metadata={"description": "the signing secret: shown only in this answer"})


class DeliveryAttemptSchema(ma.Schema):
    attempt = ma.fields.Integer()
    at = ma.fields.String(metadata={"description": "when the attempt started (ISO 8601, UTC)"})
    status = ma.fields.Integer(allow_none=True, metadata={"description": "the receiver's HTTP status, if any"})
    error = ma.fields.String(allow_none=True, metadata={"description": "why the attempt failed, one of "
                                                        + ", ".join(webhooks.ATTEMPT_ERRORS) + "; null if delivered"})
    duration_ms = ma.fields.Float(metadata={"description": "only when the receiver answered"})


class PublicError(ma.fields.String):
    """A delivery's stored error as its log shows it: from the fixed vocabulary only (``webhooks.public_error``)."""

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return super()._serialize(webhooks.public_error(value), attr, obj, **kwargs)


class PublicLog(ma.fields.List[Any]):
    """A delivery's stored attempts as the log shows them (``webhooks.public_log_entry``)."""

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        shown = [webhooks.public_log_entry(e) for e in value or []]
        return super()._serialize(shown, attr, obj, **kwargs)


class DeliverySchema(ma.Schema):
    """A delivery as its log shows it: errors from the fixed vocabulary only."""

    id = ma.fields.String()
    webhook = ma.fields.String(attribute="webhook_id")
    event = ma.fields.String(metadata={"description": ", ".join((*WEBHOOK_EVENTS, webhooks.PING_EVENT))})
    state = ma.fields.String(validate=V.OneOf([s.value for s in DeliveryState]))
    attempts = ma.fields.Integer()
    next_attempt_at = UtcDateTime(allow_none=True)
    last_status = ma.fields.Integer(allow_none=True)
    last_error = PublicError(allow_none=True, metadata={"description": "one of " + ", ".join(webhooks.ERRORS)})
    log = PublicLog(ma.fields.Nested(DeliveryAttemptSchema), metadata={"description": "every attempt"})
    payload = ma.fields.Dict(metadata={"description": "the event's data (the body's 'data' member)"})
    created_at = UtcDateTime()
    delivered_at = UtcDateTime(allow_none=True)


@blp.route("/<string:task_id>/webhooks")
class Webhooks(MethodView):
    @require("read")
    @blp.response(200, WebhookSchema(many=True))
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM_JSON, description=ORGANISERS_ONLY)
    def get(self, task_id: str) -> Any:
        """The task's active webhooks, oldest first (without their secrets)."""
        return task_webhooks.list_webhooks(session(), state(), caller_or_none(), task_id)

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
    @blp.alt_response(409, **TASK_FINAL)
    def post(self, body: dict[str, Any], task_id: str) -> Any:
        """Add a webhook: the task's events are POSTed to ``url``, signed with the secret returned here (once)."""
        hook = task_webhooks.add_webhook(session(), state(), caller_or_none(), task_id, body)
        return hook, 201, {"Location": f"/v1/tasks/{task_id}/webhooks/{hook.id}"}


@blp.route("/<string:task_id>/webhooks/<string:webhook_id>")
class OneWebhook(MethodView):
    @require("read")
    @blp.response(200, WebhookSchema)
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM_JSON, description=ORGANISERS_ONLY)
    @blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM_JSON, description="no such webhook")
    def get(self, task_id: str, webhook_id: str) -> Any:
        """The webhook (a deleted one too, with ``active`` false), without its secret."""
        return task_webhooks.one_webhook(session(), state(), caller_or_none(), task_id, webhook_id)

    @require("submit")
    @blp.response(204)
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM_JSON, description=ORGANISERS_ONLY)
    @blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM_JSON, description="no such webhook")
    @blp.alt_response(409, **TASK_FINAL)
    def delete(self, task_id: str, webhook_id: str) -> Any:
        """Delete the webhook: nothing more is sent to it (pending deliveries fail); its delivery log is kept."""
        task_webhooks.delete_webhook(session(), state(), caller_or_none(), task_id, webhook_id)
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
        return task_webhooks.list_deliveries(session(), state(), caller_or_none(), task_id, webhook_id,
                                             pagination_parameters)


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
        return task_webhooks.ping(session(), state(), caller_or_none(), task_id, webhook_id)
