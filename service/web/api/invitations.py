"""``/v1/tasks/{id}/invitations`` and ``/v1/invitations/{code}``: an organiser's invitation codes, and redeeming
one -- registering a team, and creating its user and token when the caller has none (issue 30;
``shared_tasks.invitations``). Codes and new tokens are shown once, in the answer that makes them."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask.views import MethodView
from flask_smorest import Blueprint

from evalserve.service.shared_tasks import invitations
from evalserve.service.web.api.accounts import IssuedTokenSchema
from evalserve.service.web.auth import ANYONE, caller_or_none, current_token, require
from evalserve.service.web.context import session
from evalserve.service.web.problems import PROBLEM_JSON, TASK_FINAL, ProblemSchema
from evalserve.service.web.schemas import UtcDateTime
from evalserve.service.web.task_schemas import ParticipantSchema

blp = Blueprint("invitations", __name__, url_prefix="/v1", description="Task invitations")

V = ma.validate


class NewInvitationsSchema(ma.Schema):
    count = ma.fields.Integer(load_default=1, validate=V.Range(min=1, max=invitations.MAX_PER_REQUEST),
                              metadata={"description": "how many codes (default 1)"})
    uses = ma.fields.Integer(load_default=1, validate=V.Range(min=1, max=10_000),
                             metadata={"description": "redemptions each code allows (default 1: single use)"})
    expires_in_days = ma.fields.Float(load_default=None, validate=V.Range(min=0.001, max=3650),
                                      metadata={"description": "default: never"})
    team = ma.fields.String(load_default=None, validate=V.Length(min=1, max=200),
                            metadata={"description": "bind the code (count 1) to this team name"})


class InvitationSchema(ma.Schema):
    id = ma.fields.String()
    task = ma.fields.String()
    team = ma.fields.String(allow_none=True)
    uses = ma.fields.Integer()
    uses_left = ma.fields.Integer()
    created_at = UtcDateTime()
    expires_at = UtcDateTime(allow_none=True)
    usable = ma.fields.Boolean(metadata={"description": "redemptions left and not expired"})


class NewInvitationSchema(InvitationSchema):
    code = ma.fields.String(metadata={"description": "the code to hand out: shown in this answer only"})


class RedeemSchema(ma.Schema):
    team = ma.fields.String(load_default=None, validate=V.Length(min=1, max=200),
                            metadata={"description": "the team name (required unless the invitation names one)"})
    name = ma.fields.String(load_default=None, validate=V.Length(min=1, max=200),
                            metadata={"description": "the new user's name, when no token is sent (default: the"
                                      " team name)"})


class RedeemedSchema(ma.Schema):
    participant = ma.fields.Nested(ParticipantSchema)
    token = ma.fields.Nested(IssuedTokenSchema, allow_none=True,
                             metadata={"description": "the new token when the request carried none: shown once"})


@blp.route("/tasks/<string:task_id>/invitations")
class TaskInvitations(MethodView):
    @require("read")
    @blp.response(200, InvitationSchema(many=True))
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM_JSON, description="organisers only")
    def get(self, task_id: str) -> Any:
        """The task's invitations, newest first, with the redemptions left (never their codes)."""
        return invitations.list_invitations(session(), current_token(), task_id)

    @require("submit")
    @blp.arguments(NewInvitationsSchema)
    @blp.response(201, NewInvitationSchema(many=True))
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM_JSON, description="organisers only")
    @blp.alt_response(409, **TASK_FINAL)
    def post(self, body: dict[str, Any], task_id: str) -> Any:
        """New invitation codes (organisers): ``count`` of them, each for ``uses`` redemptions, expiring or not,
        one bound to a ``team`` if named. The answer holds the codes; they are never shown again."""
        return invitations.create_invitations(session(), current_token(), task_id, count=body["count"],
                                              uses=body["uses"], expires_in_days=body["expires_in_days"],
                                              team=body["team"])


@blp.route("/invitations/<string:code>")
class Redeem(MethodView):
    @require("read", anonymous=True)
    @blp.doc(security=ANYONE)
    @blp.arguments(RedeemSchema)
    @blp.response(201, RedeemedSchema)
    @blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="no such code, or it expired or is used up (invitation-invalid)")
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="the token is registered already, the team name is taken, or the task is"
                                  " finalised (task-final)")
    def post(self, body: dict[str, Any], code: str) -> Any:
        """Redeem an invitation: with a token, register it for the task as the team; without one, create a user
        and a token (read, submit), register it, and answer with the token, shown once. Counted as a
        registration attempt (``EVALSERVE_REGISTER_RATE_LIMIT``)."""
        redeemed = invitations.redeem(session(), caller_or_none(), code, body["team"], body["name"])
        return invitations.redeemed_document(redeemed)
