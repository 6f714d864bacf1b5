"""``/v1/tasks``: shared tasks -- phases, participants, submissions, judgments versions and the leaderboard.

Organisers (the creating token, and admins) manage a task and see everything; registered participants submit
runs and see their own submissions; anyone reads a public leaderboard, without a token too."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from flask import Response
from flask.views import MethodView
from flask_smorest import Blueprint
from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from evaluation.leaderboard import to_csv, to_latex
from evaluation.side_registry import SIDE_KINDS
from service.auth import caller_or_none, current_token, require
from service.idempotency import idempotent
from service.models import (
    Job,
    Participant,
    Phase,
    RunRecord,
    Submission,
    SubmissionEvaluation,
    Task,
    TaskVersion,
    as_utc,
    utcnow,
)
from service.paging import page_of
from service.problems import PROBLEM_JSON, ApiProblem, ProblemSchema
from service.schemas import CollectionFilesSchema
from service.shared_tasks.access import TaskAccess, organised_task, task_access
from service.shared_tasks.leaderboard import task_leaderboard
from service.shared_tasks.leaderboard_html import render_leaderboard_html
from service.shared_tasks.schemas import (
    JudgmentsFormSchema,
    JudgmentsVersionSchema,
    LeaderboardQuerySchema,
    ParticipantSchema,
    PhaseInSchema,
    PhasePatchSchema,
    PhaseSchema,
    ReevaluationSchema,
    RegistrationSchema,
    SubmissionListQuerySchema,
    SubmissionPatchSchema,
    SubmissionSchema,
    TaskInSchema,
    TaskPatchSchema,
    TaskSchema,
    TaskSubmissionFilesSchema,
    TaskSubmissionFormSchema,
)
from service.shared_tasks.services import (
    add_phase,
    create_task,
    new_judgments,
    register,
    select_submission,
    submit,
    task_phases,
)
from service.shared_tasks.services import update_phase as change_phase
from service.shared_tasks.services import update_task as change_task
from service.state import state
from service.upload_limits import check_upload

blp = Blueprint("tasks", __name__, url_prefix="/v1/tasks", description="Shared tasks and leaderboards")

#: operations that work without a token too (public tasks)
ANYONE: list[dict[str, list[str]]] = [{}, {"bearerAuth": []}]
NOT_FOUND = {"schema": ProblemSchema, "content_type": PROBLEM_JSON,
             "description": "no such task (or a private one the caller does not take part in)"}
FORBIDDEN = {"schema": ProblemSchema, "content_type": PROBLEM_JSON,
             "description": "the caller's role does not allow this (organisers only, or not registered)"}


def phase_out(p: Phase, now: datetime) -> dict[str, Any]:
    return {"name": p.name, "opens_at": as_utc(p.opens_at), "closes_at": as_utc(p.closes_at),
            "quota_per_day": p.quota_per_day, "quota_total": p.quota_total,
            "open": as_utc(p.opens_at) <= now < as_utc(p.closes_at)}


def task_out(s: Session, access: TaskAccess) -> dict[str, Any]:
    t, now = access.task, utcnow()
    phases = [phase_out(p, now) for p in task_phases(s, t.id)]
    return {
        "id": t.id, "name": t.name, "description": t.description, "role": access.role,
        "team": access.participant.team if access.participant else None,
        "measures": t.measures, "primary_measure": t.primary_measure, "order": t.sort_order, "ties": t.ties,
        "topics": t.topics, "visibility": t.visibility, "blinded_until": as_utc(t.blinded_until),
        "registration": t.registration, "registration_code": t.registration_code if access.organiser else None,
        "significance": t.significance, "version": t.version,
        "collection": t.collection_id if access.organiser else None, "phases": phases,
        "current_phase": next((p["name"] for p in phases if p["open"]), None), "created_at": as_utc(t.created_at),
        "links": {"self": f"/v1/tasks/{t.id}", "leaderboard": f"/v1/tasks/{t.id}/leaderboard",
                  "html": f"/v1/tasks/{t.id}/leaderboard?format=html", "submissions": f"/v1/tasks/{t.id}/submissions"},
    }


def _scores(document: dict[str, Any]) -> dict[str, Any]:
    """The means of a one-run results document, by measure."""
    by_measure = next(iter(document["runs"].values()))
    return {m: item["mean"] for m, item in by_measure.items()}


def submission_out(s: Session, sub: Submission, access: TaskAccess) -> dict[str, Any]:
    """A submission as the caller may see it: state and progress always; scores unless a blinded task hides them."""
    task, st = access.task, state()
    participant = s.get(Participant, sub.participant_id)
    run = s.get(RunRecord, sub.run_id)
    phase = s.get(Phase, sub.phase_id)
    assert participant is not None and run is not None and phase is not None
    show_scores = access.scores_visible()
    evaluations = []
    current: dict[str, Any] = {}
    rows = s.execute(select(SubmissionEvaluation, Job).join(Job, Job.id == SubmissionEvaluation.job_id)
                     .where(SubmissionEvaluation.submission_id == sub.id)
                     .order_by(SubmissionEvaluation.version)).all()
    for evaluation, job in rows:
        scores = None
        if show_scores and job.state == "succeeded" and job.result_sha256:
            scores = _scores(json.loads(st.blobs.get(s, job.result_sha256)))
        item = {"version": evaluation.version, "state": job.state, "scores": scores,
                "job": job.id if access.organiser else None}
        evaluations.append(item)
        if evaluation.version == task.version or not current:
            current = {"version": evaluation.version, "state": job.state, "stage": job.stage,
                       "progress": job.progress, "error": job.error, "scores": scores}
    return {
        "id": sub.id, "task": task.id, "participant": participant.id, "team": participant.team, "phase": phase.name,
        "description": sub.description, "baseline": sub.baseline, "selected": sub.selected,
        "submitted_at": as_utc(sub.submitted_at),
        "run": {"id": run.id, "name": run.name, "filename": run.filename, "n_topics": run.n_topics,
                "n_rows": run.n_rows},
        "warnings": run.warnings, **current,
        "scores_hidden_until": None if show_scores else as_utc(task.blinded_until),
        "evaluations": evaluations,
        "links": {"self": f"/v1/tasks/{task.id}/submissions/{sub.id}",
                  "leaderboard": f"/v1/tasks/{task.id}/leaderboard"},
    }


def _own_submission(s: Session, access: TaskAccess, submission_id: str) -> Submission:
    sub = s.get(Submission, submission_id)
    mine = access.organiser or (access.participant is not None and sub is not None
                                and sub.participant_id == access.participant.id)
    if sub is None or sub.task_id != access.task.id or not mine:
        raise ApiProblem(404, "not-found", f"no submission {submission_id} in task {access.task.id}")
    return sub


@blp.route("")
class Tasks(MethodView):
    @require("read", anonymous=True)
    @blp.doc(security=ANYONE)
    @blp.response(200, TaskSchema(many=True))
    @blp.paginate()
    def get(self, pagination_parameters: Any) -> Any:
        """List the tasks the caller may see (public and blinded ones, and private ones they organise or take
        part in; without a token: public and blinded ones), newest first."""
        token = caller_or_none()
        query = select(Task)
        if token is None:
            query = query.where(Task.visibility != "private")
        elif "admin" not in token.scope_set:
            mine = select(Participant.task_id).where(Participant.token_id == token.id)
            query = query.where(or_(Task.visibility != "private", Task.owner_id == token.id, Task.id.in_(mine)))
        with state().db.session() as s:
            rows = page_of(s, query, Task.created_at.desc(), pagination_parameters)
            return [task_out(s, task_access(s, t.id, token)) for t in rows]

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
        task = create_task(state(), current_token(), body)
        with state().db.session() as s:
            return task_out(s, task_access(s, task.id, current_token())), 201, {"Location": f"/v1/tasks/{task.id}"}


@blp.route("/<string:task_id>")
class OneTask(MethodView):
    @require("read", anonymous=True)
    @blp.doc(security=ANYONE)
    @blp.response(200, TaskSchema)
    @blp.alt_response(404, **NOT_FOUND)
    def get(self, task_id: str) -> Any:
        """The task, its phases and the caller's role."""
        with state().db.session() as s:
            return task_out(s, task_access(s, task_id))

    @require("submit")
    @blp.arguments(TaskPatchSchema)
    @blp.response(200, TaskSchema)
    @blp.alt_response(403, **FORBIDDEN)
    @blp.alt_response(404, **NOT_FOUND)
    def patch(self, body: dict[str, Any], task_id: str) -> Any:
        """Change the task's name, description, visibility, registration or significance settings (organisers)."""
        change_task(state(), current_token(), task_id, body)
        with state().db.session() as s:
            return task_out(s, task_access(s, task_id))


@blp.route("/<string:task_id>/phases")
class Phases(MethodView):
    @require("read", anonymous=True)
    @blp.doc(security=ANYONE)
    @blp.response(200, PhaseSchema(many=True))
    @blp.alt_response(404, **NOT_FOUND)
    def get(self, task_id: str) -> Any:
        """The task's phases, in time order (UTC)."""
        with state().db.session() as s:
            task_access(s, task_id)
            now = utcnow()
            return [phase_out(p, now) for p in task_phases(s, task_id)]

    @require("submit")
    @blp.arguments(PhaseInSchema)
    @blp.response(201, PhaseSchema)
    @blp.alt_response(403, **FORBIDDEN)
    @blp.alt_response(404, **NOT_FOUND)
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="closes before it opens, overlaps another phase, name taken")
    def post(self, body: dict[str, Any], task_id: str) -> Any:
        """Add a phase (organisers); phases do not overlap."""
        phase = add_phase(state(), current_token(), task_id, body)
        return phase_out(phase, utcnow()), 201


@blp.route("/<string:task_id>/phases/<string:name>")
class OnePhase(MethodView):
    @require("submit")
    @blp.arguments(PhasePatchSchema)
    @blp.response(200, PhaseSchema)
    @blp.alt_response(403, **FORBIDDEN)
    @blp.alt_response(404, **NOT_FOUND)
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON, description="an invalid window")
    def patch(self, body: dict[str, Any], task_id: str, name: str) -> Any:
        """Move a phase's window (extend a deadline, say) or change its quotas (organisers)."""
        return phase_out(change_phase(state(), current_token(), task_id, name, body), utcnow())


def participant_out(s: Session, p: Participant) -> dict[str, Any]:
    count = s.execute(select(func.count()).select_from(Submission).where(Submission.participant_id == p.id)).scalar()
    return {"id": p.id, "task": p.task_id, "team": p.team, "registered_at": as_utc(p.registered_at),
            "submissions": count or 0}


@blp.route("/<string:task_id>/participants")
class Participants(MethodView):
    @require("read")
    @blp.response(200, ParticipantSchema(many=True))
    @blp.alt_response(404, **NOT_FOUND)
    def get(self, task_id: str) -> Any:
        """The task's participants (organisers); a participant sees their own registration only."""
        with state().db.session() as s:
            access = task_access(s, task_id)
            if access.organiser:
                rows = list(s.execute(select(Participant).where(Participant.task_id == task_id)
                                      .order_by(Participant.registered_at)).scalars())
            else:
                rows = [access.participant] if access.participant else []
            return [participant_out(s, p) for p in rows]

    @require("submit")
    @idempotent
    @blp.arguments(RegistrationSchema)
    @blp.response(201, ParticipantSchema)
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="the task takes participants by code, and none or a wrong one was given")
    @blp.alt_response(404, **NOT_FOUND)
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="already registered, or the team name is taken")
    @blp.alt_response(429, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="too many registration attempts for this task (EVALSERVE_REGISTER_RATE_LIMIT;"
                                  " Retry-After)")
    def post(self, body: dict[str, Any], task_id: str) -> Any:
        """Register the caller for the task under a team name."""
        participant = register(state(), current_token(), task_id, body["team"], body.get("code"))
        with state().db.session() as s:
            return participant_out(s, participant), 201


@blp.route("/<string:task_id>/submissions")
class Submissions(MethodView):
    @require("read")
    @blp.arguments(SubmissionListQuerySchema, location="query")
    @blp.response(200, SubmissionSchema(many=True))
    @blp.paginate()
    @blp.alt_response(404, **NOT_FOUND)
    def get(self, query: dict[str, Any], task_id: str, pagination_parameters: Any) -> Any:
        """Your submissions to the task (organisers: everyone's), newest first; ``?phase=`` filters."""
        with state().db.session() as s:
            access = task_access(s, task_id)
            q = select(Submission).where(Submission.task_id == task_id)
            if not access.organiser:
                q = q.where(Submission.participant_id == (access.participant.id if access.participant else ""))
            if query.get("phase"):
                q = q.where(Submission.phase_id.in_(select(Phase.id).where(Phase.task_id == task_id,
                                                                           Phase.name == query["phase"])))
            rows = page_of(s, q, Submission.submitted_at.desc(), pagination_parameters)
            return [submission_out(s, sub, access) for sub in rows]

    @require("submit")
    @idempotent
    @blp.arguments(TaskSubmissionFormSchema, location="form")
    @blp.arguments(TaskSubmissionFilesSchema, location="files")
    @blp.response(202, SubmissionSchema)
    @blp.alt_response(403, **FORBIDDEN)
    @blp.alt_response(404, **NOT_FOUND)
    @blp.alt_response(409, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="no phase is open: the deadline has passed (phase-closed) or the next phase has not"
                                  " opened (phase-not-open)")
    @blp.alt_response(422, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="the run has errors (all of them listed); nothing is stored")
    @blp.alt_response(429, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="the participant's quota for the day (Retry-After) or the phase is used up, or"
                                  " the caller's rate limit, storage or job quota (quota-exceeded, rate-limited)")
    def post(self, form: dict[str, Any], files: dict[str, Any], task_id: str) -> Any:
        """Submit a run (multipart field ``run``) with a description: checked against the deadline (UTC, at
        arrival) and your quota, validated, stored and queued for evaluation with the official measures."""
        arrival = utcnow()
        upload = files["run"]
        data = upload.read()
        check_upload(files=1, stored=[data], jobs=1)
        sub = submit(state(), current_token(), task_id, (upload.filename or "run", data),
                     description=form["description"], baseline=form["baseline"], phase_name=form.get("phase"),
                     arrival=arrival)
        with state().db.session() as s:
            access = task_access(s, task_id)
            location = f"/v1/tasks/{task_id}/submissions/{sub.id}"
            return submission_out(s, sub, access), 202, {"Location": location, "Retry-After": "1"}


@blp.route("/<string:task_id>/submissions/<string:submission_id>")
class OneSubmission(MethodView):
    @require("read")
    @blp.response(200, SubmissionSchema)
    @blp.alt_response(404, **NOT_FOUND)
    def get(self, task_id: str, submission_id: str) -> Any:
        """A submission's state, progress and scores (yours; organisers: any)."""
        with state().db.session() as s:
            access = task_access(s, task_id)
            out = submission_out(s, _own_submission(s, access, submission_id), access)
        headers = {} if out.get("state") in ("succeeded", "failed", "cancelled") else {"Retry-After": "1"}
        return out, 200, headers

    @require("submit")
    @blp.arguments(SubmissionPatchSchema)
    @blp.response(200, SubmissionSchema)
    @blp.alt_response(404, **NOT_FOUND)
    def patch(self, body: dict[str, Any], task_id: str, submission_id: str) -> Any:
        """Choose this submission for the leaderboard (``{"selected": true}``) instead of your latest."""
        select_submission(state(), current_token(), task_id, submission_id, body["selected"])
        with state().db.session() as s:
            access = task_access(s, task_id)
            return submission_out(s, _own_submission(s, access, submission_id), access)


@blp.route("/<string:task_id>/judgments")
class Judgments(MethodView):
    @require("read")
    @blp.response(200, JudgmentsVersionSchema(many=True))
    @blp.alt_response(403, **FORBIDDEN)
    @blp.alt_response(404, **NOT_FOUND)
    def get(self, task_id: str) -> Any:
        """The history of the task's judgments versions (organisers)."""
        with state().db.session() as s:
            task = organised_task(s, task_id)
            rows = s.execute(select(TaskVersion).where(TaskVersion.task_id == task_id)
                             .order_by(TaskVersion.version)).scalars()
            return [{"version": v.version, "collection": v.collection_id, "note": v.note,
                     "current": v.version == task.version, "created_at": as_utc(v.created_at)} for v in rows]

    @require("submit")
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
        version, jobs = new_judgments(
            state(), current_token(), task_id, {**form, "name": name, "description": form["note"]},
            qrels_file, weights_file, side)
        return {"version": version.version, "collection": version.collection_id, "note": version.note,
                "jobs": jobs}, 202


LEADERBOARD_MEDIA = {"json": "application/json", "csv": "text/csv", "latex": "application/x-latex",
                     "html": "text/html"}


@blp.route("/<string:task_id>/leaderboard")
class LeaderboardView(MethodView):
    @require("read", anonymous=True)
    @blp.doc(security=ANYONE)
    @blp.arguments(LeaderboardQuerySchema, location="query")
    @blp.response(200, description="the leaderboard: JSON document, CSV, LaTeX table or HTML page",
                  content_type="application/json")
    @blp.doc(responses={"200": {"description": "the leaderboard", "content": {
        media: {"schema": {"type": "object" if fmt == "json" else "string"}}
        for fmt, media in LEADERBOARD_MEDIA.items()}}})
    @blp.alt_response(403, schema=ProblemSchema, content_type=PROBLEM_JSON,
                      description="the task is blinded until a date (organisers only before it)")
    @blp.alt_response(404, **NOT_FOUND)
    def get(self, query: dict[str, Any], task_id: str) -> Any:
        """The leaderboard of a phase: each participant's chosen or latest evaluated submission ranked by the
        primary measure, every official measure, significance marks and differences to the best and the
        baseline. Public tasks need no token."""
        st = state()
        with st.db.session() as s:
            access = task_access(s, task_id)
            if not access.leaderboard_open():
                until = as_utc(access.task.blinded_until)
                raise ApiProblem(403, "leaderboard-blinded", f"the leaderboard of task {task_id} is blinded until"
                                 f" {until.isoformat() if until else 'its organisers open it'}")
            board = task_leaderboard(s, st.blobs, access.task, phase_name=query.get("phase"),
                                     version=query.get("version"), selection=query["selection"])
        fmt, document = query["format"], board.document
        if fmt == "html":
            return Response(render_leaderboard_html(document), mimetype="text/html")
        if fmt == "json":
            return Response(json.dumps(document, indent=2) + "\n", mimetype="application/json")
        caption = f"{access.task.name}: leaderboard"
        text = to_csv(board.ranked) if fmt == "csv" else to_latex(board.ranked, caption=caption)
        return Response(text, mimetype=LEADERBOARD_MEDIA[fmt])

