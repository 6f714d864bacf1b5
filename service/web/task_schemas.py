"""Marshmallow schemas of the shared-task resources (``/v1/tasks``): requests and response bodies, documented in
the OpenAPI document. Times are ISO 8601 and UTC; a time without an offset is read as UTC."""

from __future__ import annotations

from datetime import timezone
from typing import Any

import marshmallow as ma
from flask_smorest.fields import Upload

from evalserve.service.shared_tasks.outputs import ABSENT
from evalserve.service.store.models import JOB_STATES, RegistrationMode, SortOrder, TaskVisibility
from evalserve.service.web.schemas import ProblemItemSchema, run_format_field
from evaluation.judged_ranking import TOPIC_POLICIES
from evaluation.meta.names import CORRELATIONS
from evaluation.meta.significance import CORRECTIONS, TESTS
from evaluation.pipeline import QrelsFormat
from evaluation.ranking import TIE_POLICIES
from evaluation.result_formats import LEADERBOARD_FORMATS, ResultFormat

V = ma.validate


def _utc(**kwargs: object) -> ma.fields.AwareDateTime:
    return ma.fields.AwareDateTime(default_timezone=timezone.utc, **kwargs)  # type: ignore[arg-type]


class SignificanceSchema(ma.Schema):
    test = ma.fields.String(load_default="t", validate=V.OneOf(TESTS),
                            metadata={"description": "t, randomisation, bootstrap or tukey"})
    correction = ma.fields.String(load_default="holm", allow_none=True, validate=V.OneOf(CORRECTIONS),
                                  metadata={"description": "holm, bonferroni, bh, or null (tukey: always null)"})
    alpha = ma.fields.Float(load_default=0.05, validate=V.Range(0.0, 1.0, min_inclusive=False, max_inclusive=False))
    resamples = ma.fields.Integer(allow_none=True, validate=V.Range(100, 100000))
    seed = ma.fields.Integer(load_default=0, validate=V.Range(0, 2**31 - 1))


class PhaseInSchema(ma.Schema):
    name = ma.fields.String(required=True, validate=V.Length(min=1, max=100), metadata={"example": "test"})
    opens_at = _utc(required=True)
    closes_at = _utc(required=True, metadata={"description": "submissions arriving at or after this are refused"})
    quota_per_day = ma.fields.Integer(allow_none=True, validate=V.Range(1, 100000), metadata={
        "description": "submissions per participant per UTC day; absent: the instance's default"
                       " (EVALSERVE_TASK_DEFAULT_QUOTA_PER_DAY, 5), null: no limit"})
    quota_total = ma.fields.Integer(allow_none=True, validate=V.Range(1, 100000),
                                    metadata={"description": "submissions per participant in the phase"})


class PhasePatchSchema(ma.Schema):
    opens_at = _utc()
    closes_at = _utc()
    quota_per_day = ma.fields.Integer(allow_none=True, validate=V.Range(1, 100000))
    quota_total = ma.fields.Integer(allow_none=True, validate=V.Range(1, 100000))


class PhaseSchema(ma.Schema):
    name = ma.fields.String()
    opens_at = ma.fields.DateTime()
    closes_at = ma.fields.DateTime()
    quota_per_day = ma.fields.Integer(allow_none=True)
    quota_total = ma.fields.Integer(allow_none=True)
    open = ma.fields.Boolean(metadata={"description": "open now"})


class _TaskSettings(ma.Schema):
    description = ma.fields.String(validate=V.Length(max=20000))
    visibility = ma.fields.String(validate=V.OneOf([v.value for v in TaskVisibility]), metadata={
        "description": "public: anyone reads the leaderboard; private: organisers and participants; blinded: like"
                       " public from blinded_until, organisers only before"})
    blinded_until = _utc(allow_none=True)
    registration = ma.fields.String(validate=V.OneOf([m.value for m in RegistrationMode]),
                                    metadata={"description": "open, or code (participants give registration_code)"})
    registration_code = ma.fields.String(allow_none=True, validate=V.Length(min=4, max=200))
    significance = ma.fields.Nested(SignificanceSchema)
    per_topic_feedback = ma.fields.Boolean(metadata={
        "description": "participants read their own submissions' per-topic scores (default false: per-topic"
                       " scores of a crafted run reveal judgments); organisers always read everyone's"})


class TaskInSchema(_TaskSettings):
    name = ma.fields.String(required=True, validate=V.Length(min=1, max=200))
    collection = ma.fields.String(required=True, metadata={"description": "one of your collections: the judgments;"
                                                           " it becomes hidden"})
    measures = ma.fields.List(ma.fields.String(), required=True, validate=V.Length(min=1, max=50),
                              metadata={"example": ["alpha_nDCG@20", "ERR_IA@20", "P@10"]})
    primary_measure = ma.fields.String(metadata={"description": "ranks the leaderboard (default: the first measure)"})
    order = ma.fields.String(load_default=SortOrder.DESC.value, validate=V.OneOf([o.value for o in SortOrder]),
                             metadata={"description": "desc: higher is better; asc: lower is better"})
    ties = ma.fields.String(load_default="trec", validate=V.OneOf(TIE_POLICIES))
    topics = ma.fields.String(load_default="complete", validate=V.OneOf(TOPIC_POLICIES),
                              metadata={"description": "complete (default): a topic a run lacks scores 0"})
    phases = ma.fields.List(ma.fields.Nested(PhaseInSchema), load_default=list)


class TaskPatchSchema(_TaskSettings):
    name = ma.fields.String(validate=V.Length(min=1, max=200))


class TaskSchema(ma.Schema):
    id = ma.fields.String()
    name = ma.fields.String()
    description = ma.fields.String()
    role = ma.fields.String(metadata={"description": "the caller's role: organiser, participant or public"})
    team = ma.fields.String(allow_none=True, metadata={"description": "the caller's team, if registered"})
    measures = ma.fields.List(ma.fields.String())
    primary_measure = ma.fields.String()
    order = ma.fields.String()
    ties = ma.fields.String()
    topics = ma.fields.String()
    visibility = ma.fields.String()
    blinded_until = ma.fields.DateTime(allow_none=True)
    registration = ma.fields.String()
    registration_code = ma.fields.String(allow_none=True, metadata={"description": "shown to organisers only"})
    significance = ma.fields.Dict()
    per_topic_feedback = ma.fields.Boolean(metadata={"description": "participants read their own per-topic scores"})
    version = ma.fields.Integer(metadata={"description": "the current judgments version"})
    collection = ma.fields.String(allow_none=True, metadata={"description": "organisers only"})
    phases = ma.fields.List(ma.fields.Nested(PhaseSchema))
    current_phase = ma.fields.String(allow_none=True, metadata={"description": "the phase open now"})
    created_at = ma.fields.DateTime()
    links = ma.fields.Dict()
    final = ma.fields.Nested(lambda: FinalSchema(), allow_none=True, metadata={
        "description": "the final record once the organisers finalised the task (POST .../finalise), else null"})


class FinalSchema(ma.Schema):
    """A finalised task's final record (``POST /v1/tasks/{task_id}/finalise``, ``final`` of the task)."""

    at = ma.fields.String(metadata={"description": "when the task was finalised (ISO 8601, UTC)"})
    hash = ma.fields.String(metadata={"description": "SHA-256 of the final leaderboard's canonical content (docs/api.md"
                                                     " says how to recompute it)"})
    evalserve = ma.fields.String(metadata={"description": "the evalserve version that finalised the task"})
    judgments_sha256 = ma.fields.String(allow_none=True, metadata={"description": "SHA-256 of the qrels file"})
    measures = ma.fields.List(ma.fields.Dict(), metadata={
        "description": "each official measure's definition: name, family, cutoff, parameters, formula, reference"})
    phase = ma.fields.String(allow_none=True, metadata={"description": "the phase of the final leaderboard"})
    version = ma.fields.Integer(metadata={"description": "the judgments version of the final leaderboard"})
    selection = ma.fields.String()
    rows = ma.fields.Integer(metadata={"description": "rows on the final leaderboard (baselines included)"})
    ranked = ma.fields.Integer(metadata={"description": "rows that take a rank"})
    leaderboard = ma.fields.String(metadata={"description": "the final leaderboard's URL (path and query)"})
    per_topic = ma.fields.String(metadata={"description": "who may download every submission's per-topic scores"
                                                          " (GET .../per-topic): organisers, or public"})


class FinaliseSchema(ma.Schema):
    """What the organisers decide when they finalise (an optional body)."""

    per_topic = ma.fields.String(load_default="organisers", validate=V.OneOf(("organisers", "public")), metadata={
        "description": "organisers (default): the per-topic export stays the organisers'; public: anyone who can"
                       " see the task may download every shown submission's per-topic scores once it is final"})


class RegistrationSchema(ma.Schema):
    team = ma.fields.String(required=True, validate=V.Length(min=1, max=200))
    code = ma.fields.String(metadata={"description": "the registration code, for tasks that ask for one; or an"
                                      " invitation code of the task (one bound to an existing team joins it)"})


#: characters of a reason given in a query string (a request line stays well under the server's limit)
REASON_IN_QUERY = 200


class MarkSchema(ma.Schema):
    at = ma.fields.DateTime()
    reason = ma.fields.String(allow_none=True)


class ParticipantSchema(ma.Schema):
    id = ma.fields.String()
    task = ma.fields.String()
    team = ma.fields.String()
    registered_at = ma.fields.DateTime()
    submissions = ma.fields.Integer()
    members = ma.fields.Integer(metadata={"description": "users who submit for the team"})
    removed = ma.fields.Nested(MarkSchema, allow_none=True, metadata={"description": "removed by the organisers:"
                                                                      " when and why"})
    disqualified = ma.fields.Nested(MarkSchema, allow_none=True, metadata={
        "description": "disqualified by the organisers: when and the public reason"})


class ParticipantPatchSchema(ma.Schema):
    disqualified = ma.fields.Boolean(required=True, metadata={
        "description": "disqualify the team (its rows stay on the leaderboard, unranked), or reinstate it"})
    reason = ma.fields.String(load_default=None, validate=V.Length(min=1, max=2000),
                              metadata={"description": "the public reason (required to disqualify)"})


class ReasonQuerySchema(ma.Schema):
    reason = ma.fields.String(load_default=None, validate=V.Length(min=1, max=REASON_IN_QUERY),
                              metadata={"description": "why (kept in the audit log)"})


class MemberSchema(ma.Schema):
    user = ma.fields.String()
    name = ma.fields.String()
    joined_at = ma.fields.DateTime()


class AuditQuerySchema(ma.Schema):
    action = ma.fields.String(metadata={"description": "only this action (participant.removed, ...)"})


class AuditEntrySchema(ma.Schema):
    id = ma.fields.Integer()
    at = ma.fields.DateTime()
    user = ma.fields.String(allow_none=True, metadata={"description": "who: the user"})
    token = ma.fields.String(allow_none=True, metadata={"description": "who: the token's id"})
    action = ma.fields.String()
    target = ma.fields.String(allow_none=True, metadata={"description": "the participant, submission, phase..."})
    reason = ma.fields.String(allow_none=True)
    details = ma.fields.Dict()


class TaskSubmissionFormSchema(ma.Schema):
    description = ma.fields.String(load_default="", validate=V.Length(max=5000))
    phase = ma.fields.String(metadata={"description": "default: the phase open now (organisers: any phase)"})
    baseline = ma.fields.Boolean(load_default=False, metadata={"description": "organisers: a baseline run"})
    run_format = run_format_field()
    callback_url = ma.fields.String(validate=V.Length(min=1, max=2000), metadata={
        "description": "an http(s) URL POSTed to (event submission.finished) when this submission's evaluation"
                       " ends, with what you may see of it (your scores; per-topic ones if the task gives per-topic"
                       " feedback), signed like a webhook with the callback_secret returned in the 202; refused"
                       " like a webhook URL when its host is not public"})


class TaskSubmissionFilesSchema(ma.Schema):
    run = Upload(required=True, metadata={"description": "the run: TREC 'qid Q0 docno rank score tag', EvALL or"
                                          " PyEvALL (run_format); gzip ok"})


class SubmissionPatchSchema(ma.Schema):
    selected = ma.fields.Boolean(metadata={
        "description": "show this submission on the leaderboard instead of your latest"})
    disqualified = ma.fields.Boolean(metadata={
        "description": "organisers: disqualify it (it stays on the leaderboard, unranked) or reinstate it"})
    reason = ma.fields.String(load_default=None, validate=V.Length(min=1, max=2000),
                              metadata={"description": "the public reason (required to disqualify)"})

    @ma.validates_schema
    def _something(self, data: dict[str, Any], **_: Any) -> None:
        if "selected" not in data and "disqualified" not in data:
            raise ma.ValidationError("send selected or disqualified", "selected")


class EvaluationStateSchema(ma.Schema):
    version = ma.fields.Integer()
    state = ma.fields.String(validate=V.OneOf(JOB_STATES))
    job = ma.fields.String(allow_none=True, metadata={"description": "organisers only"})
    scores = ma.fields.Dict(allow_none=True)


class SubmissionSchema(ma.Schema):
    def get_attribute(self, obj: Any, attr: str, default: Any) -> Any:
        """A field the submission leaves ``ABSENT`` is left out of the JSON (as marshmallow's ``missing``)."""
        value = super().get_attribute(obj, attr, default)
        return ma.missing if value is ABSENT else value

    id = ma.fields.String()
    task = ma.fields.String()
    participant = ma.fields.String()
    team = ma.fields.String()
    phase = ma.fields.String()
    description = ma.fields.String()
    baseline = ma.fields.Boolean()
    selected = ma.fields.Boolean()
    submitted_at = ma.fields.DateTime()
    run = ma.fields.Dict(metadata={"description": "{id, name, filename, n_topics, n_rows}"})
    warnings = ma.fields.List(ma.fields.Nested(ProblemItemSchema))
    version = ma.fields.Integer(metadata={"description": "judgments version of state, progress and scores"})
    state = ma.fields.String(validate=V.OneOf(JOB_STATES))
    stage = ma.fields.String()
    progress = ma.fields.Float()
    error = ma.fields.Dict(allow_none=True)
    scores = ma.fields.Dict(allow_none=True, metadata={"description": "mean of every official measure; null until"
                                                       " evaluated, or while a blinded task's scores are hidden"})
    scores_hidden_until = ma.fields.DateTime(allow_none=True)
    evaluations = ma.fields.List(ma.fields.Nested(EvaluationStateSchema))
    withdrawn_at = ma.fields.DateTime(allow_none=True, metadata={"description": "withdrawn by its team: off the"
                                                                 " leaderboard, still stored"})
    disqualified = ma.fields.Nested(MarkSchema, allow_none=True, metadata={
        "description": "disqualified (the submission or its team): when and the public reason"})
    links = ma.fields.Dict()


class SubmittedSchema(SubmissionSchema):
    """The 202 of a submission: the submission, and its callback's URL and secret (shown this once)."""

    callback_url = ma.fields.String(allow_none=True)
    callback_secret = ma.fields.String(allow_none=True, metadata={
        "description": "signs the callback's deliveries (X-Evalserve-Signature); shown only here"})


class PerTopicSchema(ma.Schema):
    submission = ma.fields.String()
    task = ma.fields.String()
    team = ma.fields.String()
    version = ma.fields.Integer(allow_none=True, metadata={"description": "the judgments version evaluated"})
    state = ma.fields.String(allow_none=True, validate=V.OneOf(JOB_STATES))
    measures = ma.fields.List(ma.fields.String(), metadata={"description": "the task's official measures"})
    topics = ma.fields.List(ma.fields.String(), metadata={"description": "the topics evaluated, in order"})
    scores = ma.fields.Dict(allow_none=True, metadata={"description": "mean of every official measure"})
    per_topic = ma.fields.Dict(allow_none=True, metadata={
        "description": "{measure: {topic: score}}; null until evaluated",
        "example": {"nDCG@10": {"151": 0.41, "152": 0.0}}})
    links = ma.fields.Dict()


class SubmissionListQuerySchema(ma.Schema):
    phase = ma.fields.String()


class JudgmentsFormSchema(ma.Schema):
    qrels_format = ma.fields.String(load_default=QrelsFormat.AUTO.value)
    grade_scale = ma.fields.String(load_default="", validate=V.Length(max=200))
    note = ma.fields.String(load_default="", validate=V.Length(max=5000),
                            metadata={"description": "what changed, kept in the version history"})


class JudgmentsVersionSchema(ma.Schema):
    version = ma.fields.Integer()
    collection = ma.fields.String()
    note = ma.fields.String()
    current = ma.fields.Boolean()
    created_at = ma.fields.DateTime()


class ReevaluationSchema(ma.Schema):
    version = ma.fields.Integer()
    collection = ma.fields.String()
    note = ma.fields.String()
    jobs = ma.fields.List(ma.fields.String(), metadata={"description": "one re-evaluation job per submission"})


class BoardQuerySchema(ma.Schema):
    """Which of a task's boards a read is about: a phase and a judgments version (the server's defaults else)."""

    phase = ma.fields.String(metadata={"description": "default: the phase open now, else the last one"})
    version = ma.fields.Integer(validate=V.Range(1, 1000000),
                                metadata={"description": "judgments version (default: current)"})


class LeaderboardQuerySchema(BoardQuerySchema):
    format = ma.fields.String(load_default=ResultFormat.JSON.value,
                              validate=V.OneOf([f.value for f in LEADERBOARD_FORMATS]))
    selection = ma.fields.String(load_default="latest", validate=V.OneOf(("latest", "all")), metadata={
        "description": "latest: each participant's chosen or latest evaluated submission; all: every one"})


class TaskMetaQuerySchema(BoardQuerySchema):
    """Every option is honoured; any other query parameter is refused (422), never ignored."""

    class Meta:
        unknown = ma.RAISE

    format = ma.fields.String(load_default="json", validate=V.OneOf(("json", "html", "latex")), metadata={
        "description": "json: the document; html: a page; latex: a document pdflatex compiles"})
    selection = ma.fields.String(load_default="latest", validate=V.OneOf(("latest", "all")), metadata={
        "description": "latest: the submissions the leaderboard shows; all: every evaluated submission"})
    resamples = ma.fields.Integer(load_default=1000, validate=V.Range(100, 100000),
                                  metadata={"description": "bootstrap samples of discriminative power"})
    alpha = ma.fields.Float(load_default=0.05, validate=V.Range(0.0, 1.0, min_inclusive=False, max_inclusive=False))
    seed = ma.fields.Integer(load_default=0, validate=V.Range(0, 2**31 - 1),
                             metadata={"description": "seed of the resamples (as evalserve meta --seed)"})
    correlation = ma.fields.String(load_default="tau_b", validate=V.OneOf(CORRELATIONS),
                                   metadata={"description": "rank correlation of the measures' system rankings"})


class TaskMetaSchema(ma.Schema):
    task = ma.fields.Dict(metadata={"description": "{id, name}"})
    phase = ma.fields.Dict(allow_none=True)
    version = ma.fields.Integer()
    selection = ma.fields.String(metadata={"description": "latest: the submissions the leaderboard shows; all: every"
                                                          " evaluated one"})
    measures = ma.fields.List(ma.fields.String(), metadata={"description": "the task's official measures"})
    runs = ma.fields.List(ma.fields.Dict(), metadata={
        "description": "the systems compared, named by label in the methods' documents: {label, submission, team,"
                       " run, baseline}"})
    topics = ma.fields.Integer()
    options = ma.fields.Dict(metadata={"description": "{resamples, alpha, seed, correlation}"})
    methods = ma.fields.Dict(metadata={
        "description": "unanimity, discriminative-power and correlation: each exactly what `evalserve meta METHOD"
                       " --format json` prints for the same per-topic scores"})
    advice = ma.fields.Dict(metadata={
        "description": "the measure advice: per measure its MU, significant pairs and discriminative power at alpha,"
                       " rank correlation with the primary measure and axiomatic profile; the best and worst"
                       " (ties: every measure sharing the value), the table as strings and the sentences"})
    links = ma.fields.Dict()
    generated_at = ma.fields.String()
