"""``/v1/users`` and ``/v1/tokens``: users and their tokens over HTTP, so no step of running a service needs the
server's shell (issue 30). An admin lists and creates users; anyone may create one when sign-up is open; every
user lists, creates and revokes their own tokens. A token's plain text is in the answer that creates it only
(these routes take no ``Idempotency-Key``: a replay would have to store the secret)."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask.views import MethodView
from flask_smorest import Blueprint

from evalserve.service.access import accounts
from evalserve.service.access.tokens import SCOPES
from evalserve.service.web.auth import ANYONE, caller_or_none, current_token, require
from evalserve.service.web.context import session, state
from evalserve.service.web.problems import PROBLEM_JSON, ProblemSchema
from evalserve.service.web.schemas import UtcDateTime

blp = Blueprint("accounts", __name__, url_prefix="/v1", description="Users and tokens")

V = ma.validate


class NewTokenSchema(ma.Schema):
    name = ma.fields.String(required=True, validate=V.Length(min=1, max=200),
                            metadata={"description": "what the token is for (shown in lists)"})
    scopes = ma.fields.List(ma.fields.String(validate=V.OneOf(SCOPES)), load_default=None,
                            metadata={"description": "default: the calling token's; each must be one the calling"
                                      " token holds (an admin token holds every scope)"})
    expires_in_days = ma.fields.Float(load_default=None, validate=V.Range(min=0.001, max=accounts.MAX_EXPIRY_DAYS),
                                      metadata={"description": "after this the token is refused (default: never)"})


class NewUserSchema(ma.Schema):
    name = ma.fields.String(required=True, validate=V.Length(min=1, max=200))
    scopes = ma.fields.List(ma.fields.String(validate=V.OneOf(SCOPES)), load_default=None,
                            metadata={"description": "of the first token (default read, submit; sign-up: at most"
                                      " those)"})
    token_name = ma.fields.String(load_default=None, validate=V.Length(min=1, max=200),
                                  metadata={"description": "default: the user's name"})
    expires_in_days = ma.fields.Float(load_default=None, validate=V.Range(min=0.001, max=accounts.MAX_EXPIRY_DAYS))


class TokenSchema(ma.Schema):
    id = ma.fields.String()
    name = ma.fields.String()
    user = ma.fields.String()
    scopes = ma.fields.List(ma.fields.String())
    created_at = UtcDateTime()
    expires_at = UtcDateTime(allow_none=True)
    revoked_at = UtcDateTime(allow_none=True)
    active = ma.fields.Boolean(metadata={"description": "neither revoked nor expired"})
    current = ma.fields.Boolean(metadata={"description": "the token of this request"})


class IssuedTokenSchema(TokenSchema):
    token = ma.fields.String(metadata={"description": "the token itself: shown in this answer only"})


class UserSchema(ma.Schema):
    id = ma.fields.String()
    name = ma.fields.String()
    created_at = UtcDateTime()
    tokens = ma.fields.Integer(metadata={"description": "tokens not revoked"})


class NewUserAnswerSchema(ma.Schema):
    user = ma.fields.Nested(UserSchema)
    token = ma.fields.Nested(IssuedTokenSchema)


def _issued(issued: accounts.Issued) -> dict[str, Any]:
    return {**accounts.token_document(issued.token), "token": issued.secret}


@blp.route("/tokens")
class Tokens(MethodView):
    @require("read")
    @blp.response(200, TokenSchema(many=True))
    def get(self) -> Any:
        """Your tokens (those of the user this token belongs to), revoked and expired ones included."""
        return accounts.list_tokens(session(), current_token())

    @require("read")
    @blp.arguments(NewTokenSchema)
    @blp.response(201, IssuedTokenSchema)
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="a scope the calling token lacks (scope-not-held)")
    def post(self, body: dict[str, Any]) -> Any:
        """A new token for yourself, with at most this token's scopes and an optional expiry. The answer holds
        the token; it is never shown again."""
        issued = accounts.create_token(session(), current_token(), body["name"], body["scopes"],
                                       body["expires_in_days"])
        return _issued(issued)


@blp.route("/tokens/<string:token_id>")
class OneToken(MethodView):
    @require("read")
    @blp.response(200, TokenSchema)
    @blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="no such token of yours (an admin: of anyone)")
    def delete(self, token_id: str) -> Any:
        """Revoke a token of yours (an admin: anyone's), this one included; it is refused from then on."""
        return accounts.revoke_token(session(), current_token(), token_id)


@blp.route("/users")
class Users(MethodView):
    @require("admin")
    @blp.response(200, UserSchema(many=True))
    def get(self) -> Any:
        """Every user (admins only)."""
        return accounts.list_users(session())

    @require("read", anonymous=True)
    @blp.doc(security=ANYONE)
    @blp.arguments(NewUserSchema)
    @blp.response(201, NewUserAnswerSchema)
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="sign-up is closed (signup-closed), or a scope the calling token lacks")
    def post(self, body: dict[str, Any]) -> Any:
        """A new user and their first token: an admin's call (any scopes; default read, submit), or anyone's when
        the server lets users sign up (``EVALSERVE_SIGNUP=open``: read and submit at most; counted as a
        registration attempt, ``EVALSERVE_REGISTER_RATE_LIMIT``). The answer holds the token; it is never shown
        again."""
        user, issued = accounts.create_user(session(), caller_or_none(), state().settings.signup, body["name"],
                                            body["scopes"], body["token_name"], body["expires_in_days"])
        return {"user": user, "token": _issued(issued)}
