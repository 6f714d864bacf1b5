"""The service's tables (SQLAlchemy 2 declarative): blobs, tokens, collections, runs, jobs, idempotency records,
the shared tasks' tasks, phases, participants, submissions and webhooks, and the workers' heartbeats.

The database is the source of truth for jobs: the broker only carries "job X is ready" messages, so a lost
message, a dead worker or a restarted broker can always be repaired from here (``jobrun.recovery``).
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any, ClassVar, overload

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from evaluation.enums import StrEnum
from evaluation.formats.run_formats import RunFormat


class JobState(StrEnum):
    """The state of a job (and of a split job's part): ``queued`` and ``running`` are live, the rest final. The
    members are the strings stored in the database and shown by the API."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


JOB_STATES: tuple[str, ...] = tuple(state.value for state in JobState)
FINAL_STATES = (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED)


class Scope(StrEnum):
    """What a token may do: read (its own resources and public ones), submit (upload and queue jobs), admin
    (everything, every owner's resources)."""

    READ = "read"
    SUBMIT = "submit"
    ADMIN = "admin"


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def new_id(prefix: str) -> str:
    """A random public identifier with a type prefix (``job_3f2a...``), safe to show in URLs."""
    return f"{prefix}_{uuid.uuid4().hex}"


@overload
def as_utc(value: datetime) -> datetime: ...
@overload
def as_utc(value: None) -> None: ...
def as_utc(value: datetime | None) -> datetime | None:
    """SQLite returns naive datetimes; every stored time is UTC."""
    if value is None:
        return None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, list[Any]: JSON}


class BlobRow(Base):
    """Content-addressed bytes (an upload as given, or a result document); ``data`` is NULL when the bytes
    live in the blob directory instead."""

    __tablename__ = "blobs"
    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    size: Mapped[int] = mapped_column(BigInteger)
    data: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class User(Base):
    """Someone who holds tokens: rate limits and quotas count per user, whichever of their tokens is used. Rows
    stay owned by the token that made them (``owner_id``); a user is what several tokens share."""

    __tablename__ = "users"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Token(Base):
    """A bearer API token of a user: only the SHA-256 of its secret is stored."""

    __tablename__ = "tokens"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    secret_hash: Mapped[str] = mapped_column(String(64), unique=True)
    scopes: Mapped[str] = mapped_column(String(100))  # space-separated: read submit admin
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)  # None: never

    @property
    def scope_set(self) -> frozenset[str]:
        return frozenset(self.scopes.split())


class Collection(Base):
    """A test collection: judgments (and intent weights) plus metadata; immutable once created."""

    __tablename__ = "collections"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    owner_id: Mapped[str] = mapped_column(ForeignKey("tokens.id"))
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    grade_scale: Mapped[str] = mapped_column(String(200), default="")
    qrels_sha256: Mapped[str] = mapped_column(ForeignKey("blobs.sha256"))
    qrels_filename: Mapped[str] = mapped_column(String(300))
    qrels_format: Mapped[str] = mapped_column(String(20))
    intent_weights_sha256: Mapped[str | None] = mapped_column(ForeignKey("blobs.sha256"), nullable=True)
    intent_weights_filename: Mapped[str | None] = mapped_column(String(300), nullable=True)
    n_topics: Mapped[int] = mapped_column(Integer)
    n_judgments: Mapped[int] = mapped_column(Integer)
    n_intents: Mapped[int] = mapped_column(Integer)
    #: side inputs some measures need (item scores, hierarchies, ...): kind -> {"sha256", "filename"}
    side_inputs: Mapped[dict[str, Any]] = mapped_column(default=dict, server_default="{}")
    warnings: Mapped[list[Any]] = mapped_column(default=list)
    #: hidden collections (a task's judgments) are seen only by their owner and admins
    hidden: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    #: a published judgment set loaded from the benchmark catalogue (``inputs.catalogue``): its key, how to cite
    #: it, and its topics' descriptions (topic -> {query, description, type, subtopics})
    catalogue_key: Mapped[str | None] = mapped_column(String(80), nullable=True, unique=True, index=True)
    citation: Mapped[str] = mapped_column(Text, default="", server_default="")
    topics: Mapped[dict[str, Any]] = mapped_column(default=dict, server_default="{}")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class RunRecord(Base):
    """An uploaded, validated run; the bytes are the blob ``sha256``, ``filename`` names it in results."""

    __tablename__ = "runs"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    owner_id: Mapped[str] = mapped_column(ForeignKey("tokens.id"), index=True)
    collection_id: Mapped[str] = mapped_column(ForeignKey("collections.id"), index=True)
    name: Mapped[str] = mapped_column(String(300))
    filename: Mapped[str] = mapped_column(String(300))
    sha256: Mapped[str] = mapped_column(ForeignKey("blobs.sha256"))
    n_topics: Mapped[int] = mapped_column(Integer)
    n_rows: Mapped[int] = mapped_column(Integer)
    warnings: Mapped[list[Any]] = mapped_column(default=list)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    #: the layout the bytes are read in (a ``RunFormat``, never ``auto``: resolved on upload)
    run_format: Mapped[str] = mapped_column(String(20), default=RunFormat.TREC.value,
                                            server_default=RunFormat.TREC.value)


class Job(Base):
    """An evaluation job and its life: state, progress, lease (who runs it, until when), result, error."""

    __tablename__ = "jobs"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    owner_id: Mapped[str] = mapped_column(ForeignKey("tokens.id"), index=True)
    collection_id: Mapped[str] = mapped_column(ForeignKey("collections.id"))
    #: a ``jobs.kinds.JobKindName`` (the store ranks below jobs: the default is spelled out)
    kind: Mapped[str] = mapped_column(String(20), default="evaluation", server_default="evaluation")
    #: evaluation: runs, measures, ties, topics, per_topic; meta: method, options and either the evaluation job
    #: whose results to meta-evaluate or runs, measures, ties, topics to evaluate first
    request: Mapped[dict[str, Any]] = mapped_column()
    state: Mapped[str] = mapped_column(String(20), default=JobState.QUEUED.value)
    stage: Mapped[str] = mapped_column(String(300), default="queued")
    progress: Mapped[float] = mapped_column(Float, default=0.0)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    result_sha256: Mapped[str | None] = mapped_column(ForeignKey("blobs.sha256"), nullable=True)
    lease_owner: Mapped[str | None] = mapped_column(String(200), nullable=True)
    lease_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    enqueued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    #: where the job document is POSTed when the job ends, signed with ``callback_secret`` (shown once, at creation)
    callback_url: Mapped[str | None] = mapped_column(String(2000), nullable=True)
    callback_secret: Mapped[str | None] = mapped_column(String(200), nullable=True)

    __table_args__ = (Index("ix_jobs_state_enqueued", "state", "enqueued_at"),)


class JobOutput(Base):
    """What a job's worker built from its result beside the result document, for the API to stream or typeset
    without computing (``jobrun.kinds``): ``report`` (the report content, JSON), ``plot.png``, ``plot.svg``,
    ``plot.unavailable`` (why the job has no plot). Written with the job's success, in one transaction; a job that
    succeeded before migration 0011 has none."""

    __tablename__ = "job_outputs"
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id"), primary_key=True)
    name: Mapped[str] = mapped_column(String(40), primary_key=True)
    blob_sha256: Mapped[str] = mapped_column(ForeignKey("blobs.sha256"))


class StoredResult(Base):
    """A shared task's result computed once by a worker when its inputs changed and served as stored
    (``shared_tasks.stored``): a leaderboard of a phase at a judgments version and selection, or the organisers'
    meta-evaluation with its options. ``key`` names what it is (kind, task, phase, version, selection or
    options); ``inputs`` is the fingerprint of what it was computed from, so a reader tells at once whether it is
    current."""

    __tablename__ = "stored_results"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(20))
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id"), index=True)
    inputs: Mapped[str] = mapped_column(String(64))
    blob_sha256: Mapped[str] = mapped_column(ForeignKey("blobs.sha256"))
    computed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class IdempotencyRecord(Base):
    """The response given to a POST with an ``Idempotency-Key``, replayed for a retry of the same request."""

    __tablename__ = "idempotency_keys"
    owner_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    request_hash: Mapped[str] = mapped_column(String(64))
    status: Mapped[int] = mapped_column(Integer)
    body: Mapped[bytes] = mapped_column(LargeBinary)
    headers: Mapped[dict[str, Any]] = mapped_column()
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


# --- shared tasks (leaderboards) ------------------------------------------------------------------------------


class TaskVisibility(StrEnum):
    """Who may read a task's leaderboard."""

    PUBLIC = "public"  # everyone
    PRIVATE = "private"  # only its organisers and participants
    BLINDED = "blinded"  # everyone after blinded_until, only its organisers before


class RegistrationMode(StrEnum):
    """How participants join a task."""

    OPEN = "open"  # by themselves
    CODE = "code"  # with the registration code the organisers hand out


class SortOrder(StrEnum):
    """The sort order of a task's primary measure."""

    DESC = "desc"  # higher is better
    ASC = "asc"  # lower is better


class Task(Base):
    """A shared task: its current judgments (a hidden collection), official measures, visibility and settings.
    The organiser is the owner token (admins act as organisers too)."""

    __tablename__ = "tasks"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    owner_id: Mapped[str] = mapped_column(ForeignKey("tokens.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    collection_id: Mapped[str] = mapped_column(ForeignKey("collections.id"))
    version: Mapped[int] = mapped_column(Integer, default=1)  # the current judgments' version
    measures: Mapped[list[Any]] = mapped_column()  # official measures, canonical names, in display order
    primary_measure: Mapped[str] = mapped_column(String(200))
    sort_order: Mapped[str] = mapped_column(String(4), default=SortOrder.DESC.value)
    ties: Mapped[str] = mapped_column(String(20), default="trec")
    topics: Mapped[str] = mapped_column(String(20), default="complete")
    visibility: Mapped[str] = mapped_column(String(20), default=TaskVisibility.PUBLIC.value)
    blinded_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    registration: Mapped[str] = mapped_column(String(10), default=RegistrationMode.OPEN.value)
    registration_code: Mapped[str | None] = mapped_column(String(200), nullable=True)
    #: {"test", "correction", "alpha"} for the leaderboard's significance marks
    significance: Mapped[dict[str, Any]] = mapped_column(default=dict)
    #: participants read their own submissions' per-topic scores (organisers always read everyone's); off unless
    #: the organiser turns it on: one crafted submission's per-topic scores reveal judgments (issue 29)
    per_topic_feedback: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    #: when the organisers finalised the task (``shared_tasks.final``): from then on every write is refused
    finalised_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: the final record: the final leaderboard's content hash, evalserve version, judgments' SHA-256, measures
    final: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class TaskVersion(Base):
    """One version of a task's judgments: the history of the collections it has been evaluated against."""

    __tablename__ = "task_versions"
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id"), primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    collection_id: Mapped[str] = mapped_column(ForeignKey("collections.id"))
    note: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Phase(Base):
    """A submission window of a task (UTC, ``opens_at <= t < closes_at``) with per-participant quotas."""

    __tablename__ = "task_phases"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    opens_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    closes_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    quota_per_day: Mapped[int | None] = mapped_column(Integer, nullable=True)  # per UTC calendar day
    quota_total: Mapped[int | None] = mapped_column(Integer, nullable=True)  # over the whole phase
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (Index("ux_task_phases_name", "task_id", "name", unique=True),)


class Invitation(Base):
    """An organiser's invitation to a task: a code (only its SHA-256 is stored) that registers whoever redeems it
    as a team, creating their user and token if they have none; ``uses_left`` redemptions until ``expires_at``,
    bound to ``team`` when given (``shared_tasks.invitations``)."""

    __tablename__ = "task_invitations"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id"), index=True)
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    team: Mapped[str | None] = mapped_column(String(200), nullable=True)
    uses: Mapped[int] = mapped_column(Integer)
    uses_left: Mapped[int] = mapped_column(Integer)
    created_by: Mapped[str] = mapped_column(ForeignKey("tokens.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class Participant(Base):
    """A team registered to a task: the token that registered it (``token_id``) and its member users
    (``ParticipantMember``), who all submit for it within its quotas."""

    __tablename__ = "task_participants"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id"), index=True)
    token_id: Mapped[str] = mapped_column(ForeignKey("tokens.id"))
    team: Mapped[str] = mapped_column(String(200))
    #: bumped by every submission, first thing in its transaction: serialises a participant's submissions so
    #: that quotas hold under concurrent requests
    submissions_made: Mapped[int] = mapped_column(Integer, default=0)
    registered_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    #: removed by the organisers: its members act for it no more and its submissions leave the leaderboard (the
    #: rows stay, ``shared_tasks.teams``)
    removed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    removed_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    #: disqualified by the organisers: its rows stay on the leaderboard, unranked, with this public reason
    disqualified_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    disqualified_reason: Mapped[str | None] = mapped_column(Text, nullable=True)

    __table_args__ = (Index("ux_task_participants_token", "task_id", "token_id", unique=True),
                      Index("ux_task_participants_team", "task_id", "team", unique=True))


class ParticipantMember(Base):
    """A user who acts for a team (with any of their tokens): at most one team per user and task."""

    __tablename__ = "task_participant_members"
    participant_id: Mapped[str] = mapped_column(ForeignKey("task_participants.id"), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"), primary_key=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id"))
    joined_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (Index("ux_task_participant_members_user", "task_id", "user_id", unique=True),)


class TaskAuditEntry(Base):
    """One action on a task, appended and never changed (``shared_tasks.audit``): who (user and token), what,
    on what, why and when."""

    __tablename__ = "task_audit"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id"))
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    user_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    token_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    action: Mapped[str] = mapped_column(String(60))
    target: Mapped[str | None] = mapped_column(String(200), nullable=True)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    details: Mapped[dict[str, Any]] = mapped_column(default=dict)

    __table_args__ = (Index("ix_task_audit_task", "task_id", "id"),)


class Submission(Base):
    """A run submitted to a task in a phase; evaluated once per judgments version (``SubmissionEvaluation``)."""

    __tablename__ = "task_submissions"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id"), index=True)
    participant_id: Mapped[str] = mapped_column(ForeignKey("task_participants.id"), index=True)
    phase_id: Mapped[str] = mapped_column(ForeignKey("task_phases.id"))
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"))
    description: Mapped[str] = mapped_column(Text, default="")
    baseline: Mapped[bool] = mapped_column(Boolean, default=False)
    selected: Mapped[bool] = mapped_column(Boolean, default=False)  # the participant's pick for the leaderboard
    submitted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    #: withdrawn by its team while its phase was open: off the leaderboard, still stored
    withdrawn_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: disqualified by the organisers: on the leaderboard, unranked, with this public reason
    disqualified_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    disqualified_reason: Mapped[str | None] = mapped_column(Text, nullable=True)


class SubmissionEvaluation(Base):
    """A submission evaluated against one judgments version: the run as stored for that collection, and the job."""

    __tablename__ = "submission_evaluations"
    submission_id: Mapped[str] = mapped_column(ForeignKey("task_submissions.id"), primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"))
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class WebhookEvent(StrEnum):
    """An event a webhook can subscribe to."""

    SUBMISSION_EVALUATED = "submission.evaluated"  # a submission's evaluation job ended
    LEADERBOARD_CHANGED = "leaderboard.changed"  # ... and it is on the current leaderboard of its phase


#: events a webhook can subscribe to, as the API lists them
WEBHOOK_EVENTS = tuple(event.value for event in WebhookEvent)
#: the event of a job's ``callback_url``: the job ended (succeeded, failed or cancelled)
JOB_CALLBACK_EVENT = "job.finished"


class DeliveryState(StrEnum):
    """The state of a webhook delivery (or a job's callback)."""

    PENDING = "pending"  # durable, not yet delivered: an attempt is due now or later
    DELIVERED = "delivered"  # a receiver answered an attempt with a 2xx status
    FAILED = "failed"  # out of attempts, or its webhook was deleted


class Webhook(Base):
    """An organiser's URL that receives HMAC-signed task events; ``secret`` signs them (shown once at creation)."""

    __tablename__ = "webhooks"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id"), index=True)
    url: Mapped[str] = mapped_column(String(2000))
    secret: Mapped[str] = mapped_column(String(200))
    events: Mapped[list[Any]] = mapped_column()
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class WebhookDelivery(Base):
    """One event for one webhook, or a job's callback (``job_id``, one per job): durable before it is sent,
    retried with backoff; ``log`` lists every attempt."""

    __tablename__ = "webhook_deliveries"
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    webhook_id: Mapped[str | None] = mapped_column(ForeignKey("webhooks.id"), index=True, nullable=True)
    job_id: Mapped[str | None] = mapped_column(ForeignKey("jobs.id", name="fk_webhook_deliveries_job_id"),
                                               nullable=True)
    event: Mapped[str] = mapped_column(String(50))
    payload: Mapped[dict[str, Any]] = mapped_column()
    state: Mapped[str] = mapped_column(String(20), default=DeliveryState.PENDING.value)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    last_status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    log: Mapped[list[Any]] = mapped_column(default=list)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    delivered_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: whose deliveries these are (``access.principal.budget_owner`` of the task's or job's owner) and where they
    #: go (``host:port``), set when an attempt is first claimed or held back: the fairness caps count by them
    owner: Mapped[str | None] = mapped_column(String(200), nullable=True)
    target: Mapped[str | None] = mapped_column(String(300), nullable=True)
    #: while an attempt is in flight: until when its worker holds it (then presumed dead); null otherwise
    sending_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    __table_args__ = (Index("ix_webhook_deliveries_due", "state", "next_attempt_at"),
                      Index("ux_webhook_deliveries_job_id", "job_id", unique=True),
                      Index("ix_webhook_deliveries_sending", "sending_until"))


class WebhookCircuit(Base):
    """The circuit breaker of one delivery target (``host:port``): consecutive failed attempts, and while it is
    open (``open_until`` in the future) deliveries to it are not sent (``webhooks.fairness``)."""

    __tablename__ = "webhook_circuits"
    target: Mapped[str] = mapped_column(String(300), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    open_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class WorkerHeartbeat(Base):
    """A worker process's latest sign of life (written every few seconds; ``GET /health`` counts the recent
    ones): its Celery node name, host, process id and the queues it consumes."""

    __tablename__ = "worker_heartbeats"
    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    host: Mapped[str] = mapped_column(String(200))
    pid: Mapped[int] = mapped_column(Integer)
    queues: Mapped[str] = mapped_column(String(1000))  # comma-separated
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)


class JobPart(Base):
    """A slice of an evaluation job's runs evaluated by one worker (``jobrun.split``): claimed under a
    lease like a job, its outcome (a partial document, or the problems that failed it) stored as blob
    ``result_sha256``."""

    __tablename__ = "job_parts"
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id"), primary_key=True)
    index: Mapped[int] = mapped_column(Integer, primary_key=True)
    runs: Mapped[list[Any]] = mapped_column()  # run ids of this slice, in the job's order
    state: Mapped[str] = mapped_column(String(20), default=JobState.QUEUED.value)
    progress: Mapped[float] = mapped_column(Float, default=0.0)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    #: every worker that claimed the part, in order (``host:pid:suffix``)
    workers: Mapped[list[Any]] = mapped_column(default=list)
    lease_owner: Mapped[str | None] = mapped_column(String(200), nullable=True)
    lease_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    result_sha256: Mapped[str | None] = mapped_column(ForeignKey("blobs.sha256"), nullable=True)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    enqueued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (Index("ix_job_parts_state_enqueued", "state", "enqueued_at"),)
