"""Every problem code the service answers: the ``code`` of an ``application/problem+json`` body, of a failed job's
``error`` and of a request problem (``problems[].code``). The members are the strings clients see (``StrEnum``:
equal to, hashed, formatted and serialised as their values), so a new code is added here, and to docs/api.md's
list of problem codes (``tests/service/test_problem_codes.py`` keeps both honest).

One refusal answers the engine's own code instead: a plot the engine cannot draw (``jobs.queries.job_plot``)
answers the code of the engine's problem (``per-topic-missing``, ``plot-format``, ...; docs/formats.md), marked
as such with ``EngineCode``."""

from __future__ import annotations

from typing import NewType

from evaluation.enums import StrEnum

#: a problem code of the engine's (``evaluation.problems``), answered unchanged where the service passes an engine
#: refusal on
EngineCode = NewType("EngineCode", str)


class ProblemCode(StrEnum):
    """A problem code, with when the service answers it."""

    # --- HTTP errors with no more specific code (``web.problems.from_http_exception``) ---------------------------
    BAD_REQUEST = "bad-request"  # 400: the body is not valid JSON, or another malformed request
    UNAUTHORIZED = "unauthorized"  # 401: no API token, or an unknown or revoked one
    FORBIDDEN = "forbidden"  # 403: the token lacks the scope the endpoint needs
    NOT_FOUND = "not-found"  # 404: no such resource, or one the caller may not see
    METHOD_NOT_ALLOWED = "method-not-allowed"  # 405: the path exists, the method does not
    CONFLICT = "conflict"  # 409: a conflict raised by the framework, with no more specific code
    TOO_LARGE = "too-large"  # 413: the request body is over the size limit
    UNSUPPORTED_MEDIA_TYPE = "unsupported-media-type"  # 415: a request body of a media type the endpoint refuses
    INVALID_REQUEST = "invalid-request"  # 422: missing or invalid request fields; a meta-evaluation job's bad request
    TOO_MANY_REQUESTS = "too-many-requests"  # 429: raised by the framework, with no more specific code
    ERROR = "error"  # any other 4xx status the framework raises
    INTERNAL_ERROR = "internal-error"  # 500 and any other 5xx: a bug (logged); also a job that failed of one

    # --- users and tokens (``access.accounts``) ---------------------------------------------------------------
    SCOPE_NOT_HELD = "scope-not-held"  # 403: a new token would get a scope the calling token lacks
    SIGNUP_CLOSED = "signup-closed"  # 403: creating a user without an admin token where sign-up is closed
    INVITATION_INVALID = "invitation-invalid"  # 404: an unknown, expired or used-up invitation code

    # --- request checks (``web``) --------------------------------------------------------------------------------
    TOO_DEEP = "too-deep"  # 400: the JSON body nests deeper than the limit
    BAD_IDEMPOTENCY_KEY = "bad-idempotency-key"  # 400: an Idempotency-Key over 200 characters
    IDEMPOTENCY_KEY_IN_PROGRESS = "idempotency-key-in-progress"  # 409: a request with the same key is being served
    IDEMPOTENCY_KEY_REUSED = "idempotency-key-reused"  # 422: the key was used for a different request
    INVALID_FIELD = "invalid-field"  # a request problem: one invalid field (in ``problems`` of invalid-request)
    DUPLICATE_FIELD = "duplicate-field"  # 422: a single-valued query, form or file field given twice
    TOO_MANY_FILES = "too-many-files"  # 413: more run files, or multipart parts, than allowed in one request
    INVALID_VALUE = "invalid-value"  # 422: a value the database cannot hold (a NUL character, a too-long name)
    RATE_LIMITED = "rate-limited"  # 429: the caller made too many requests (Retry-After)
    RATE_LIMITS_UNAVAILABLE = "rate-limits-unavailable"  # 503: an upload or registration attempt while the rate
    # limits' storage is down: refused rather than let through unlimited (Retry-After)
    UNKNOWN_MEASURE = "unknown-measure"  # 404: GET /v1/measures/{name} with an unknown name

    # --- uploads and inputs (``inputs``, ``access``) -------------------------------------------------------------
    DECOMPRESSED_TOO_LARGE = "decompressed-too-large"  # 413: an uploaded file decompresses to more than the limit
    INPUT_TOO_LARGE = "input-too-large"  # 413: an uploaded file is larger than the limit
    INVALID_UPLOAD = "invalid-upload"  # 422: an uploaded file has errors (listed in problems); nothing was stored
    DUPLICATE_RUN_NAME = "duplicate-run-name"  # 422: two uploaded runs would have the same name
    QUOTA_EXCEEDED = "quota-exceeded"  # 429: a storage, active-jobs, jobs-per-day or task-phase quota is used up
    UPLOADS_BUSY = "uploads-busy"  # 503: the uploads being validated fill the server's budget (Retry-After)
    UNKNOWN_CATALOGUE_KEY = "unknown-catalogue-key"  # 422: loading a published judgment set the catalogue lacks
    CATALOGUE_UNAVAILABLE = "catalogue-unavailable"  # 422: loading from the catalogue on a server without one
    MISSING_INPUTS = "missing-inputs"  # 422: a job request that lacks what it needs (stored side inputs, runs)

    # --- jobs (``jobs``, ``jobrun``) ------------------------------------------------------------------------------
    INVALID_MEASURE = "invalid-measure"  # 422: unknown or malformed measures; a job whose measure cannot be computed
    RUN_NOT_IN_COLLECTION = "run-not-in-collection"  # 422: a run uploaded for another collection
    INVALID_META_REQUEST = "invalid-meta-request"  # 422: a meta-evaluation's method or options are not valid
    CONFLICTING_INPUTS = "conflicting-inputs"  # 422: a meta-evaluation given both an evaluation job and runs
    MEASURE_MISSING = "measure-missing"  # 422: a meta-evaluation asks for a measure its evaluation job lacks
    JOB_QUEUED = "job-queued"  # 409: the result of a job that is still queued
    JOB_RUNNING = "job-running"  # 409: the result of a job that is still running
    JOB_FAILED = "job-failed"  # 409: the result of a job that failed (the detail carries its error)
    JOB_CANCELLED = "job-cancelled"  # 409: the result of a job that was cancelled
    FORMAT_NOT_AVAILABLE = "format-not-available"  # 422: a result format the job's kind does not give
    PLOT_UNAVAILABLE = "plot-unavailable"  # 422: a plot of a job whose kind or result has none
    INVALID_INPUT = "invalid-input"  # a failed job's error: its stored inputs cannot be evaluated together
    NO_TOPICS_SCORED = "no-topics-scored"  # a failed job's error, and a task submission's 422: no topic in common
    TIME_LIMIT = "time-limit"  # a failed job's error: it ran longer than its time limit
    WORKER_LOST = "worker-lost"  # a failed job's error: its workers died as many times as it may be started

    # --- webhooks and job callbacks (``webhooks``) ----------------------------------------------------------------
    WEBHOOK_TARGET_REFUSED = "webhook-target-refused"  # 422: a webhook or callback URL whose host is not public
    WEBHOOK_TARGET_UNRESOLVABLE = "webhook-target-unresolvable"  # 422: a webhook or callback URL that does not resolve
    TOO_MANY_WEBHOOKS = "too-many-webhooks"  # 422: a task that has as many webhooks as allowed
    PING_RATE_LIMITED = "ping-rate-limited"  # 429: a webhook pinged too recently (Retry-After)

    # --- shared tasks (``shared_tasks``) --------------------------------------------------------------------------
    ORGANISERS_ONLY = "organisers-only"  # 403: a task's organisers' action by someone else
    NOT_REGISTERED = "not-registered"  # 403: a participant's action by a token not registered for the task
    NOT_YOUR_COLLECTION = "not-your-collection"  # 403: a task created with another token's collection
    REGISTRATION_CODE = "registration-code"  # 403: registering for a task by code without the right code
    PER_TOPIC_FEEDBACK_OFF = "per-topic-feedback-off"  # 403: per-topic scores of a task that gives none
    SCORES_HIDDEN = "scores-hidden"  # 403: a submission's scores while its task hides them
    LEADERBOARD_BLINDED = "leaderboard-blinded"  # 403: a blinded task's leaderboard before its date
    ALREADY_REGISTERED = "already-registered"  # 409: registering a token already registered for the task
    TEAM_TAKEN = "team-taken"  # 409: registering under a team name the task already has
    PARTICIPANT_REMOVED = "participant-removed"  # 403: registering again, or joining, a team the organisers removed
    SUBMISSION_WITHDRAWN = "submission-withdrawn"  # 409: choosing a withdrawn submission for the leaderboard
    PHASE_NOT_OPEN = "phase-not-open"  # 409: submitting when no phase of the task is open
    PHASE_CLOSED = "phase-closed"  # 409: submitting after the task's last phase closed
    TASK_FINAL = "task-final"  # 409: any write on a finalised task (submissions, selections, settings, phases, ...)
    EVALUATIONS_PENDING = "evaluations-pending"  # 409: finalising a task while submissions are being evaluated
    TOO_FEW_SUBMISSIONS = "too-few-submissions"  # 409: measure advice on a task with too few systems to compare
    META_UNAVAILABLE = "meta-unavailable"  # 409: measure advice the stored results cannot give
    INVALID_SIGNIFICANCE = "invalid-significance"  # 422: a task's significance test, correction or alpha is not valid
    INVALID_PHASE = "invalid-phase"  # 422: a phase that closes before it opens
    OVERLAPPING_PHASES = "overlapping-phases"  # 422: a phase that overlaps another of the task
    DUPLICATE_PHASE = "duplicate-phase"  # 422: two phases with the same name
    INVALID_PRIMARY_MEASURE = "invalid-primary-measure"  # 422: a primary measure not among the official measures
    INVALID_VISIBILITY = "invalid-visibility"  # 422: a blinded task without blinded_until
    INVALID_REGISTRATION = "invalid-registration"  # 422: registration by code without a registration_code
    PARQUET_UNAVAILABLE = "parquet-unavailable"  # 422: a Parquet export from a server without pyarrow

    @classmethod
    def of_job(cls, state: str) -> ProblemCode:
        """The 409 code of a job in ``state`` (queued, running, failed or cancelled) asked for its result:
        ``job-<state>``."""
        return cls(f"job-{state}")
