"""``/v1/tasks/{id}/participants/{pid}`` and ``/v1/tasks/{id}/audit``: a team's members, its removal and
disqualification by the organisers, and the task's audit log (issue 30; ``shared_tasks.teams``,
``shared_tasks.audit``). Withdrawing and disqualifying a submission are on ``/v1/tasks/{id}/submissions/{sid}``
(``api.tasks``)."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from evalserve.service.shared_tasks import audit, teams
from evalserve.service.web.auth import caller_or_none, current_token, require
from evalserve.service.web.context import session, state
from evalserve.service.web.problems import PROBLEM_JSON, TASK_FINAL, ProblemSchema
from evalserve.service.web.task_schemas import (
    AuditEntrySchema,
    AuditQuerySchema,
    MemberSchema,
    ParticipantPatchSchema,
    ParticipantSchema,
    ReasonQuerySchema,
)

blp = Blueprint("teams", __name__, url_prefix="/v1/tasks", description="Task teams and the audit log")

FORBIDDEN = {"schema": ProblemSchema, "content_type": PROBLEM_JSON, "description": "organisers only"}
NOT_FOUND = {"schema": ProblemSchema, "content_type": PROBLEM_JSON,
             "description": "no such task or participant (or one the caller may not see)"}


@blp.route("/<string:task_id>/participants/<string:participant_id>")
class OneParticipant(MethodView):
    @require("submit")
    @blp.arguments(ReasonQuerySchema, location="query")
    @blp.response(200, ParticipantSchema)
    @blp.alt_response(403, **FORBIDDEN)
    @blp.alt_response(404, **NOT_FOUND)
    @blp.alt_response(409, **TASK_FINAL)
    def delete(self, query: dict[str, Any], task_id: str, participant_id: str) -> Any:
        """Remove a team (organisers; ``?reason=`` for the audit log): its members act for it no more and its
        submissions leave the leaderboard; nothing is deleted (``removed`` says when and why)."""
        return teams.remove_participant(session(), state(), current_token(), task_id, participant_id,
                                        query["reason"])

    @require("submit")
    @blp.arguments(ParticipantPatchSchema)
    @blp.response(200, ParticipantSchema)
    @blp.alt_response(403, **FORBIDDEN)
    @blp.alt_response(404, **NOT_FOUND)
    @blp.alt_response(409, **TASK_FINAL)
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="a disqualification without a reason")
    def patch(self, body: dict[str, Any], task_id: str, participant_id: str) -> Any:
        """Disqualify a team with a public reason (organisers; ``{"disqualified": true, "reason": "..."}``): its
        rows stay on the leaderboard, unranked, with the reason; ``{"disqualified": false}`` reinstates it."""
        return teams.disqualify_participant(session(), state(), current_token(), task_id, participant_id,
                                            body["disqualified"], body["reason"])


@blp.route("/<string:task_id>/participants/<string:participant_id>/members")
class Members(MethodView):
    @require("read")
    @blp.response(200, MemberSchema(many=True))
    @blp.alt_response(404, **NOT_FOUND)
    def get(self, task_id: str, participant_id: str) -> Any:
        """The users who submit for a team, earliest first (its members and the organisers)."""
        return teams.members(session(), caller_or_none(), task_id, participant_id)


@blp.route("/<string:task_id>/audit")
class Audit(MethodView):
    @require("read")
    @blp.arguments(AuditQuerySchema, location="query")
    @blp.response(200, AuditEntrySchema(many=True))
    @blp.paginate()
    @blp.alt_response(403, **FORBIDDEN)
    @blp.alt_response(404, **NOT_FOUND)
    def get(self, query: dict[str, Any], task_id: str, pagination_parameters: Any) -> Any:
        """The task's audit log, newest first (organisers): every registration, member joining, removal,
        disqualification, withdrawal, invitation and settings change, with who (user, token), what, on what,
        why and when; ``?action=`` filters."""
        return audit.audit_log(session(), caller_or_none(), task_id, pagination_parameters, query.get("action"))
