"""``/v1/tasks``: shared tasks -- phases, participants, submissions, judgments versions and the leaderboard.

Organisers (the creating token, and admins) manage a task and see everything; registered participants submit
runs and see their own submissions; anyone reads a public leaderboard, without a token too. The views read the
request and write the response; each calls one function of ``services`` (one database session) and returns the
objects it gives back, which the response schemas serialise."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app
from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import RAISE
from werkzeug.http import http_date

from evalserve.service.core.etags import etag_of, matches
from evalserve.service.core.lru import TextCache
from evalserve.service.shared_tasks import callbacks as participant_callbacks
from evalserve.service.shared_tasks import invitations, services, teams
from evalserve.service.shared_tasks.access import is_organiser
from evalserve.service.shared_tasks.finalise import finalise
from evalserve.service.shared_tasks.meta import render_meta
from evalserve.service.store.models import JobState, utcnow
from evalserve.service.web.api import submission_waits
from evalserve.service.web.api.conditional import if_none_match, not_modified, pending_response
from evalserve.service.web.api.submission_waits import ETAG_HEADER, SubmissionWaitQuerySchema
from evalserve.service.web.auth import ANYONE, caller_or_none, current_token, require
from evalserve.service.web.context import session, state
from evalserve.service.web.idempotency import idempotent
from evalserve.service.web.leaderboard_html import render_leaderboard_html
from evalserve.service.web.problems import PROBLEM_JSON, TASK_FINAL, ProblemSchema
from evalserve.service.web.schemas import CollectionFilesSchema
from evalserve.service.web.task_schemas import (
    FinaliseSchema,
    FinalSchema,
    JudgmentsFormSchema,
    JudgmentsVersionSchema,
    LeaderboardQuerySchema,
    ParticipantSchema,
    PerTopicSchema,
    PhaseInSchema,
    PhasePatchSchema,
    PhaseSchema,
    ReasonQuerySchema,
    ReevaluationSchema,
    RegistrationSchema,
    SubmissionListQuerySchema,
    SubmissionPatchSchema,
    SubmissionSchema,
    SubmittedSchema,
    TaskInSchema,
    TaskMetaQuerySchema,
    TaskMetaSchema,
    TaskPatchSchema,
    TaskSchema,
    TaskSubmissionFilesSchema,
    TaskSubmissionFormSchema,
)
from evalserve.service.web.upload_limits import UPLOADS_BUSY, check_upload, in_flight
from evaluation.result_formats import LEADERBOARD_FORMATS, ResultFormat
from evaluation.side_registry import SIDE_KINDS

blp = Blueprint("tasks", __name__, url_prefix="/v1/tasks", description="Shared tasks and leaderboards")

NOT_FOUND = {"schema": ProblemSchema, "content_type": PROBLEM_JSON,
             "description": "no such task (or a private one the caller does not take part in)"}
FORBIDDEN = {"schema": ProblemSchema, "content_type": PROBLEM_JSON,
             "description": "the caller's role does not allow this (organisers only, or not registered)"}


@blp.route("")
class Tasks(MethodView):
    @require("read", anonymous=True)
    @blp.doc(security=ANYONE)
    @blp.response(200, TaskSchema(many=True))
    @blp.paginate()
    def get(self, pagination_parameters: Any) -> Any:
        """List the tasks the caller may see (public and blinded ones, and private ones they organise or take
        part in; without a token: public and blinded ones), newest first."""
        return services.list_tasks(session(), state(), caller_or_none(), pagination_parameters)

    @require("submit")
    @idempotent
    @blp.arguments(TaskInSchema)
    @blp.response(201, TaskSchema)
    @blp.alt_response(404, schema=ProblemSchema, content_type=PROBLEM_JSON, description="no such collection")
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="unknown measure, overlapping phases, blinded without a date, ...")
    def post(self, body: dict[str, Any]) -> Any:
        """Create a task over one of your collections (its judgments become hidden), with its official measures,
        primary measure, visibility, registration and phases; you are its organiser."""
        task = services.create_task(session(), state(), current_token(), body)
        return task, 201, {"Location": f"/v1/tasks/{task.id}"}


@blp.route("/<string:task_id>")
class OneTask(MethodView):
    @require("read", anonymous=True)
    @blp.doc(security=ANYONE)
    @blp.response(200, TaskSchema)
    @blp.alt_response(404, **NOT_FOUND)
    def get(self, task_id: str) -> Any:
        """The task, its phases and the caller's role."""
        return services.get_task(session(), state(), caller_or_none(), task_id)

    @require("submit")
    @blp.arguments(TaskPatchSchema)
    @blp.response(200, TaskSchema)
    @blp.alt_response(403, **FORBIDDEN)
    @blp.alt_response(404, **NOT_FOUND)
    @blp.alt_response(409, **TASK_FINAL)
    def patch(self, body: dict[str, Any], task_id: str) -> Any:
        """Change the task's name, description, visibility, registration, significance or per-topic feedback
        settings (organisers)."""
        return services.update_task(session(), state(), current_token(), task_id, body)


@blp.route("/<string:task_id>/finalise")
class Finalise(MethodView):
    @require("submit")
    @blp.arguments(FinaliseSchema, required=False)
    @blp.response(200, FinalSchema)
    @blp.alt_response(403, **FORBIDDEN)
    @blp.alt_response(404, **NOT_FOUND)
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="submissions are still being evaluated (evaluations-pending; Retry-After)")
    def post(self, body: dict[str, Any], task_id: str) -> Any:
        """Finalise the task (organisers): the final leaderboard is stored with its content hash, the evalserve
        version, the judgments' SHA-256 and the measures' definitions, and from then on every write on the task
        is refused (409 ``task-final``) for everyone. ``per_topic: public`` opens the per-topic export to anyone who
        can see the task. Idempotent: a finalised task answers the same record."""
        return finalise(session(), state(), current_token(), task_id,
                        per_topic=(body or {}).get("per_topic", "organisers"))


@blp.route("/<string:task_id>/phases")
class Phases(MethodView):
    @require("read", anonymous=True)
    @blp.doc(security=ANYONE)
    @blp.response(200, PhaseSchema(many=True))
    @blp.alt_response(404, **NOT_FOUND)
    def get(self, task_id: str) -> Any:
        """The task's phases, in time order (UTC)."""
        return services.list_phases(session(), state(), caller_or_none(), task_id)

    @require("submit")
    @blp.arguments(PhaseInSchema)
    @blp.response(201, PhaseSchema)
    @blp.alt_response(403, **FORBIDDEN)
    @blp.alt_response(404, **NOT_FOUND)
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="closes before it opens, overlaps another phase, name taken")
    @blp.alt_response(409, **TASK_FINAL)
    def post(self, body: dict[str, Any], task_id: str) -> Any:
        """Add a phase (organisers); phases do not overlap."""
        return services.add_phase(session(), state(), current_token(), task_id, body), 201


@blp.route("/<string:task_id>/phases/<string:name>")
class OnePhase(MethodView):
    @require("submit")
    @blp.arguments(PhasePatchSchema)
    @blp.response(200, PhaseSchema)
    @blp.alt_response(403, **FORBIDDEN)
    @blp.alt_response(404, **NOT_FOUND)
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON, description="an invalid window")
    @blp.alt_response(409, **TASK_FINAL)
    def patch(self, body: dict[str, Any], task_id: str, name: str) -> Any:
        """Move a phase's window (extend a deadline, say) or change its quotas (organisers)."""
        return services.update_phase(session(), state(), current_token(), task_id, name, body)


@blp.route("/<string:task_id>/participants")
class Participants(MethodView):
    @require("read")
    @blp.response(200, ParticipantSchema(many=True))
    @blp.alt_response(404, **NOT_FOUND)
    def get(self, task_id: str) -> Any:
        """The task's participants (organisers); a participant sees their own registration only."""
        return services.list_participants(session(), state(), caller_or_none(), task_id)

    @require("submit")
    @idempotent
    @blp.arguments(RegistrationSchema)
    @blp.response(201, ParticipantSchema)
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="the task takes participants by code, and none or a wrong one was given")
    @blp.alt_response(404, **NOT_FOUND)
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="already registered, the team name is taken, or the task is finalised"
                                  " (task-final)")
    @blp.alt_response(429, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="too many registration attempts for this task (EVALSERVE_REGISTER_RATE_LIMIT;"
                                  " Retry-After)")
    def post(self, body: dict[str, Any], task_id: str) -> Any:
        """Register the caller's user for the task under a team name; with an invitation code of the task
        (``code``) bound to a team that exists already, join that team instead."""
        code = body.get("code")
        if code is not None and invitations.is_invitation_code(code):
            return invitations.register_with_invitation(session(), current_token(), task_id, code, body["team"]
                                                        ).participant, 201
        return services.register(session(), state(), current_token(), task_id, body["team"], code), 201


@blp.route("/<string:task_id>/submissions")
class Submissions(MethodView):
    @require("read")
    @blp.arguments(SubmissionListQuerySchema, location="query")
    @blp.response(200, SubmissionSchema(many=True))
    @blp.paginate()
    @blp.alt_response(404, **NOT_FOUND)
    def get(self, query: dict[str, Any], task_id: str, pagination_parameters: Any) -> Any:
        """Your submissions to the task (organisers: everyone's), newest first; ``?phase=`` filters."""
        return services.list_submissions(session(), state(), caller_or_none(), task_id, query.get("phase"),
                                         pagination_parameters)

    @require("submit")
    @in_flight
    @idempotent
    @blp.arguments(TaskSubmissionFormSchema, location="form")
    @blp.arguments(TaskSubmissionFilesSchema, location="files")
    @blp.response(202, SubmittedSchema)
    @blp.alt_response(403, **FORBIDDEN)
    @blp.alt_response(404, **NOT_FOUND)
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="no phase is open: the deadline has passed (phase-closed) or the next phase has not"
                                  " opened (phase-not-open); the task is finalised (task-final)")
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="the run has errors (all of them listed); nothing is stored")
    @blp.alt_response(429, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="the participant's quota for the day (Retry-After) or the phase is used up, or"
                                  " the caller's rate limit, storage or job quota (quota-exceeded, rate-limited)")
    @blp.alt_response(503, **UPLOADS_BUSY)
    def post(self, form: dict[str, Any], files: dict[str, Any], task_id: str) -> Any:
        """Submit a run (multipart field ``run``) with a description: checked against the deadline (UTC, at
        arrival) and your quota, validated, stored and queued for evaluation with the official measures. With a
        ``callback_url``, what you may see of the submission is POSTed there when its evaluation ends."""
        arrival = utcnow()
        upload = files["run"]
        data = upload.read()
        check_upload(files=1, stored=[data], jobs=1)
        callback = participant_callbacks.callback_columns(state().settings, form.get("callback_url"))
        sub = services.submit(session(), state(), current_token(), task_id, (upload.filename or "run", data),
                              description=form["description"], baseline=form["baseline"],
                              phase_name=form.get("phase"), arrival=arrival, run_format=form["run_format"],
                              callback=callback)
        shown = {**vars(sub), **callback} if callback else sub
        return shown, 202, {"Location": f"/v1/tasks/{task_id}/submissions/{sub.id}", "Retry-After": "1"}


@blp.route("/<string:task_id>/submissions/<string:submission_id>")
class OneSubmission(MethodView):
    @require("read")
    @blp.arguments(SubmissionWaitQuerySchema, location="query")
    @blp.response(200, SubmissionSchema, headers=ETAG_HEADER)
    @blp.alt_response(304, description="If-None-Match names the submission as it is (no body)")
    @blp.alt_response(404, **NOT_FOUND)
    def get(self, query: dict[str, Any], task_id: str, submission_id: str) -> Any:
        """A submission's state, progress and scores (yours; organisers: any). ``?wait=SECONDS`` long-polls as for
        a job: the answer comes as soon as the submission's evaluation moves on or ends (or differs from the
        submission your ``If-None-Match`` names), or after the wait; ``304`` when it is still the one you have."""
        return submission_waits.answer(task_id, submission_id, query["wait"])

    @require("submit")
    @blp.arguments(SubmissionPatchSchema)
    @blp.response(200, SubmissionSchema)
    @blp.alt_response(403, **FORBIDDEN)
    @blp.alt_response(404, **NOT_FOUND)
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="the task is finalised (task-final); choosing a withdrawn submission"
                                  " (submission-withdrawn)")
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="neither selected nor disqualified sent; a disqualification without a reason")
    def patch(self, body: dict[str, Any], task_id: str, submission_id: str) -> Any:
        """Choose this submission for the leaderboard (``{"selected": true}``) instead of your latest; organisers
        disqualify it with a public reason (``{"disqualified": true, "reason": "..."}``: it stays on the
        leaderboard, unranked) or reinstate it (``{"disqualified": false}``)."""
        token = current_token()
        if "disqualified" in body:
            teams.disqualify_submission(session(), state(), token, task_id, submission_id, body["disqualified"],
                                        body["reason"])
        if "selected" in body:
            return services.select_submission(session(), state(), token, task_id, submission_id, body["selected"])
        return services.get_submission(session(), state(), token, task_id, submission_id)

    @require("submit")
    @blp.arguments(ReasonQuerySchema, location="query")
    @blp.response(200, SubmissionSchema)
    @blp.alt_response(403, **FORBIDDEN)
    @blp.alt_response(404, **NOT_FOUND)
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="its phase has closed (phase-closed), or the task is finalised (task-final)")
    def delete(self, query: dict[str, Any], task_id: str, submission_id: str) -> Any:
        """Withdraw your team's submission while its phase is open: it leaves the leaderboard (your latest other
        submission shows) and stays stored, marked ``withdrawn_at``; it still counts against the quota."""
        return teams.withdraw_submission(session(), state(), current_token(), task_id, submission_id,
                                         query["reason"])


@blp.route("/<string:task_id>/submissions/<string:submission_id>/per-topic")
class SubmissionPerTopic(MethodView):
    @require("read")
    @blp.response(200, PerTopicSchema)
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="the task gives participants no per-topic feedback (per-topic-feedback-off), or a"
                                  " blinded task hides scores until its date (scores-hidden)")
    @blp.alt_response(404, **NOT_FOUND)
    def get(self, task_id: str, submission_id: str) -> Any:
        """Your submission's score on every topic under each official measure (organisers: any submission), as
        TREC gives each team its per-topic evaluation; never the judgments, never another team's scores."""
        out = services.submission_per_topic(session(), state(), caller_or_none(), task_id, submission_id)
        headers = {} if out.state in (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED) else {"Retry-After": "1"}
        return out, 200, headers


@blp.route("/<string:task_id>/judgments")
class Judgments(MethodView):
    @require("read")
    @blp.response(200, JudgmentsVersionSchema(many=True))
    @blp.alt_response(403, **FORBIDDEN)
    @blp.alt_response(404, **NOT_FOUND)
    def get(self, task_id: str) -> Any:
        """The history of the task's judgments versions (organisers)."""
        return services.judgments_history(session(), state(), caller_or_none(), task_id)

    @require("submit")
    @in_flight
    @idempotent
    @blp.arguments(JudgmentsFormSchema, location="form")
    @blp.arguments(CollectionFilesSchema, location="files")
    @blp.response(202, ReevaluationSchema)
    @blp.alt_response(403, **FORBIDDEN)
    @blp.alt_response(404, **NOT_FOUND)
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="the judgments have errors (all of them listed), or a field is given twice")
    @blp.alt_response(429, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="over the rate limit or the storage quota (Retry-After); nothing is stored")
    @blp.alt_response(503, **UPLOADS_BUSY)
    @blp.alt_response(409, **TASK_FINAL)
    def post(self, form: dict[str, Any], files: dict[str, Any], task_id: str) -> Any:
        """Install new judgments (multipart, as for a collection) as the next version and re-evaluate every
        submission against them; earlier versions and their results stay (``?version=`` on the leaderboard)."""
        qrels = files["qrels"]
        weights = files.get("intent_weights")
        side = {kind: (f.filename or kind, f.read()) for kind in SIDE_KINDS if (f := files.get(kind)) is not None}
        qrels_file = (qrels.filename or "qrels", qrels.read())
        weights_file = (weights.filename or "intent-weights", weights.read()) if weights else None
        check_upload(stored=[qrels_file[1], *([weights_file[1]] if weights_file else []),
                             *(data for _, data in side.values())])
        name = f"{task_id} judgments"
        return services.new_judgments(session(), state(), current_token(), task_id,
                                      {**form, "name": name, "description": form["note"]}, qrels_file, weights_file,
                                      side), 202


LEADERBOARD_MEDIA = {fmt.value: fmt.media_type for fmt in LEADERBOARD_FORMATS}
#: seconds an anonymous reader is asked to wait for a leaderboard not stored yet
STALE_RETRY_AFTER = 2
#: characters of served leaderboard texts an API process keeps (by ETag)
SERVED_TEXTS_BUDGET = 32 * 1024 * 1024


@blp.route("/<string:task_id>/leaderboard")
class LeaderboardView(MethodView):
    @require("read", anonymous=True)
    @blp.doc(security=ANYONE)
    @blp.arguments(LeaderboardQuerySchema, location="query")
    @blp.response(200, description="the leaderboard: JSON document, CSV, LaTeX table or HTML page",
                  content_type="application/json")
    @blp.doc(responses={"200": {"description": "the leaderboard", "content": {
        media: {"schema": {"type": "object" if fmt == ResultFormat.JSON else "string"}}
        for fmt, media in LEADERBOARD_MEDIA.items()}}})
    @blp.alt_response(202, description="no leaderboard stored yet for an anonymous reader: a worker computes it"
                      " (Retry-After)")
    @blp.alt_response(304, description="If-None-Match names the stored leaderboard (no body)")
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="the task is blinded until a date (organisers only before it)")
    @blp.alt_response(404, **NOT_FOUND)
    def get(self, query: dict[str, Any], task_id: str) -> Any:
        """The leaderboard of a phase: each participant's chosen or latest evaluated submission ranked by the
        primary measure, every official measure, significance marks and differences to the best and the
        baseline. Public tasks need no token. Computed by a worker when its inputs change and served as stored (ETag;
        ``If-None-Match`` gets ``304``): an anonymous reader gets the board as last stored (``202`` with
        ``Retry-After`` while none is), a token holder's read gets it current."""
        st = state()
        caller = caller_or_none()
        task, board = services.leaderboard(session(), st, caller, task_id, phase_name=query.get("phase"),
                                           version=query.get("version"), selection=query["selection"])
        if board is None:
            return pending_response("computing", f"the leaderboard of task {task_id} is being computed; ask again"
                                    " after Retry-After seconds", STALE_RETRY_AFTER)
        fmt = query["format"]
        meta = f"/v1/tasks/{task.id}/meta" if fmt == ResultFormat.HTML and is_organiser(task, caller) else None
        tag = etag_of(*board.tag_parts(), fmt, meta)
        headers = {"ETag": tag, "Last-Modified": http_date(board.computed_at)}
        if board.stale:
            headers.update({"Evalserve-Stale": "true", "Retry-After": "1"})
        if matches(tag, if_none_match()):
            return not_modified(tag, headers)
        cache = served_texts()
        text = cache.get(tag)
        if text is None:
            payload = board.payload(session(), st.blobs)
            if fmt == ResultFormat.HTML:
                text = render_leaderboard_html(board.document(payload), meta_link=meta)
            elif fmt == ResultFormat.JSON:
                text = board.json_text(payload)
            else:
                text = payload["csv" if fmt == ResultFormat.CSV else "latex"]
            cache.put(tag, text)
        return Response(text, mimetype=LEADERBOARD_MEDIA[fmt], headers=headers)


def served_texts() -> TextCache:
    """This process's texts of stored leaderboards by ETag (``SERVED_TEXTS_BUDGET`` characters)."""
    cache: TextCache = current_app.extensions.setdefault("evalserve.served_texts", TextCache(SERVED_TEXTS_BUDGET))
    return cache


@blp.route("/<string:task_id>/meta")
class TaskMeta(MethodView):
    @require("read")
    @blp.arguments(TaskMetaQuerySchema, location="query", unknown=RAISE)
    @blp.response(200, TaskMetaSchema)
    @blp.doc(responses={"200": {"description": "the meta-evaluation with the measure advice", "content": {
        "application/json": {"schema": TaskMetaSchema}, "text/html": {"schema": {"type": "string"}},
        "application/x-latex": {"schema": {"type": "string"}}}}})
    @blp.alt_response(403, **FORBIDDEN)
    @blp.alt_response(404, **NOT_FOUND)
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="fewer than two evaluated submissions to compare (too-few-submissions)")
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="an option out of range, or a query parameter this operation does not take")
    def get(self, query: dict[str, Any], task_id: str) -> Any:
        """Measure advice (organisers): Metric Unanimity, discriminative power (paired bootstrap) and rank
        correlations of the official measures over the submissions the leaderboard shows (``selection=all``: every
        evaluated submission), from their stored per-topic scores -- the numbers ``evalserve meta`` gives offline
        for the same runs and seed -- and the advice built from them: a table (MU, discriminative power at alpha,
        correlation with the primary measure, axiomatic profile) and sentences on which measure to choose for what.
        ``format=html`` or ``latex`` typesets the same document."""
        options = {k: query[k] for k in ("resamples", "alpha", "seed", "correlation")}
        document = services.meta_evaluation(session(), state(), caller_or_none(), task_id,
                                            phase_name=query.get("phase"), version=query.get("version"),
                                            options=options, selection=query["selection"])
        if query["format"] == "json":
            return document
        fmt = ResultFormat(query["format"])
        return Response(render_meta(document, fmt.value), mimetype=fmt.media_type)
