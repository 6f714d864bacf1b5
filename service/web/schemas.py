"""Marshmallow schemas: request arguments and response bodies; the OpenAPI document is generated from them."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask_smorest.fields import Upload

from evalserve.service.core.longpoll import MAX_WAIT_SECONDS
from evalserve.service.jobs.kinds import EVALUATION, KINDS, META
from evalserve.service.store.models import JOB_STATES, as_utc
from evaluation.judged_ranking import TOPIC_POLICIES
from evaluation.meta.names import METHOD_NAMES
from evaluation.pipeline import QrelsFormat, RunFormat
from evaluation.ranking import TIE_POLICIES
from evaluation.result_formats import ResultFormat
from evaluation.side_registry import SIDE_KINDS

V = ma.validate


class UtcDateTime(ma.fields.DateTime):
    """A stored time, shown in UTC (SQLite gives back naive datetimes; every stored time is UTC)."""

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return super()._serialize(as_utc(value), attr, obj, **kwargs)


class StoredFile(ma.fields.Dict):
    """A stored file of a row, ``{filename, sha256}``, read from its ``<prefix>_filename`` and ``<prefix>_sha256``
    columns; null when the row has no such file."""

    def __init__(self, prefix: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.prefix = prefix

    def serialize(self, attr: str, obj: Any, accessor: Any = None, **kwargs: Any) -> Any:
        sha256 = getattr(obj, f"{self.prefix}_sha256")
        return {"filename": getattr(obj, f"{self.prefix}_filename"), "sha256": sha256} if sha256 else None


class ProblemItemSchema(ma.Schema):
    line = ma.fields.Integer(allow_none=True)
    column = ma.fields.Integer(allow_none=True)
    code = ma.fields.String()
    message = ma.fields.String()
    severity = ma.fields.String()
    source = ma.fields.String(allow_none=True)
    end_line = ma.fields.Integer(metadata={
        "description": "the last line of a range of consecutive lines with the same problem (line is the first;"
                       " the message starts 'lines A-B:'); absent for a problem on one line"})


class CollectionFormSchema(ma.Schema):
    name = ma.fields.String(required=True, validate=V.Length(min=1, max=200))
    description = ma.fields.String(load_default="", validate=V.Length(max=5000))
    grade_scale = ma.fields.String(load_default="", validate=V.Length(max=200),
                                   metadata={"description": "e.g. '0-4' or 'L0-L4' (informative)"})
    qrels_format = ma.fields.String(load_default=QrelsFormat.AUTO.value,
                                    validate=V.OneOf([f.value for f in QrelsFormat]))
    hidden = ma.fields.Boolean(load_default=False, metadata={
        "description": "hide the collection from every other token (a shared task's judgments); tasks hide their"
                       " collection anyway"})


#: the judgments, intent weights and one optional file per side-input kind (``evaluation.side_registry``)
CollectionFilesSchema = ma.Schema.from_dict(
    {
        "qrels": Upload(required=True, metadata={"description": "judgments: TREC/ndeval qrels, NTCIR or EvALL; gzip"
                                                                " ok"}),
        "intent_weights": Upload(metadata={"description": "NTCIR intent probabilities 'topic intent p' (optional)"}),
        **{kind.name: Upload(metadata={"description": kind.description + " (optional)"})
           for kind in SIDE_KINDS.values()},
    },
    name="CollectionFiles",
)


class CollectionSchema(ma.Schema):
    id = ma.fields.String()
    name = ma.fields.String()
    description = ma.fields.String()
    grade_scale = ma.fields.String()
    qrels_format = ma.fields.String()
    qrels = StoredFile("qrels", metadata={"description": "{filename, sha256}"})
    intent_weights = StoredFile("intent_weights", allow_none=True)
    side_inputs = ma.fields.Dict(metadata={"description": "side-input files by kind: {filename, sha256}"})
    hidden = ma.fields.Boolean(metadata={"description": "seen only by its owner and admins"})
    catalogue_key = ma.fields.String(allow_none=True, metadata={
        "description": "the published judgment set it was loaded from (evalserve collections import), if any"})
    citation = ma.fields.String(metadata={"description": "how to cite the judgments (catalogue collections)"})
    n_topics = ma.fields.Integer()
    n_judgments = ma.fields.Integer()
    n_intents = ma.fields.Integer()
    warnings = ma.fields.List(ma.fields.Nested(ProblemItemSchema))
    created_at = UtcDateTime()


class CatalogueImportSchema(ma.Schema):
    keys = ma.fields.List(ma.fields.String(), load_default=list, metadata={
        "description": "published sets to load (evalserve collections list); none: every one the server has"})


class CatalogueLoadedSchema(ma.Schema):
    key = ma.fields.String()
    status = ma.fields.String(metadata={"description": "created, exists (loaded before) or missing (its files are"
                                                       " not in the server's catalogue directory)"})
    collection = ma.fields.String(allow_none=True)
    detail = ma.fields.String()


class PublishedSetSchema(ma.Schema):
    key = ma.fields.String()
    name = ma.fields.String()
    description = ma.fields.String()
    citation = ma.fields.String()
    grade_scale = ma.fields.String()
    collection = ma.fields.String(allow_none=True, metadata={"description": "the collection it was loaded as here"})


class CatalogueImportedSchema(ma.Schema):
    loaded = ma.fields.List(ma.fields.Nested(CatalogueLoadedSchema))


class TopicsSchema(ma.Schema):
    topics = ma.fields.Dict(metadata={"description": "topic -> {query, description, type, subtopics: [{number,"
                                                     " type, text}]}; empty when the collection has none"})


RUN_FORMAT_DESCRIPTION = ("the run file's layout: trec ('qid Q0 docno rank score tag'), evall (EvALL's ranking"
                          " output, TSV 'test case, id' in rank order), pyevall-json or pyevall-tsv (PyEvALL"
                          " predictions: test_case, id, value = position); auto: detected from the first line")


def run_format_field() -> ma.fields.String:
    """The ``run_format`` argument of every route that takes run files (docs/formats.md)."""
    return ma.fields.String(load_default=RunFormat.AUTO.value, validate=V.OneOf([f.value for f in RunFormat]),
                            metadata={"description": RUN_FORMAT_DESCRIPTION})


class RunFormSchema(ma.Schema):
    collection = ma.fields.String(required=True, metadata={"description": "collection id"})
    name = ma.fields.String(validate=V.Length(min=1, max=300),
                            metadata={"description": "file name for a raw-body upload (default: run)"})
    run_format = run_format_field()


class RunFilesSchema(ma.Schema):
    run = Upload(metadata={"description": "a run (TREC, EvALL or PyEvALL: run_format); gzip ok"})


class RunSchema(ma.Schema):
    id = ma.fields.String()
    collection = ma.fields.String(attribute="collection_id")
    name = ma.fields.String(metadata={"description": "the run's name in results: file name without .gz"})
    filename = ma.fields.String()
    sha256 = ma.fields.String()
    n_topics = ma.fields.Integer()
    n_rows = ma.fields.Integer()
    run_format = ma.fields.String(metadata={"description": "the layout the run was read in (never auto)"})
    warnings = ma.fields.List(ma.fields.Nested(ProblemItemSchema))
    created_at = UtcDateTime()


CALLBACK_DESCRIPTION = ("an http(s) URL that receives the job document (event job.finished) when the job ends,"
                        " signed like a webhook with the callback_secret returned in the 202; refused like a"
                        " webhook URL when its host is not public")


class _EvaluationOptions(ma.Schema):
    measures = ma.fields.List(ma.fields.String(), required=True, validate=V.Length(min=1, max=200),
                              metadata={"example": ["AP", "nDCG@10", "alpha_nDCG@20"]})
    ties = ma.fields.String(load_default="trec", validate=V.OneOf(TIE_POLICIES))
    topics = ma.fields.String(load_default="common", validate=V.OneOf(TOPIC_POLICIES))
    per_topic = ma.fields.Boolean(load_default=False)


class EvaluationRequestSchema(_EvaluationOptions):
    collection = ma.fields.String(required=True)
    runs = ma.fields.List(ma.fields.String(), required=True, validate=V.Length(min=1, max=1000))
    callback_url = ma.fields.String(validate=V.Length(min=1, max=2000), metadata={
        "description": CALLBACK_DESCRIPTION})


class MetaEvaluationRequestSchema(ma.Schema):
    method = ma.fields.String(required=True, validate=V.OneOf(METHOD_NAMES),
                              metadata={"description": "unanimity, discriminative-power, significance, correlation,"
                                        " advice, preference-agreement, scenarios or robustness (these two evaluate"
                                        " perturbed judgments and runs: an evaluation job's are evaluated again)"})
    options = ma.fields.Dict(load_default=dict, metadata={
        "description": "the method's options, e.g. {\"resamples\": 1000, \"alpha\": 0.05, \"seed\": 0};"
                       " preference-agreement: {\"preferences\": [{topic, left, right, label, user}]};"
                       " scenarios: {\"scenarios\": [...], \"seed\": 0}; robustness: {\"sizes\": [10, 50],"
                       " \"repetitions\": 10, \"seed\": 0}"})
    evaluation = ma.fields.String(metadata={"description": "a succeeded evaluation job whose per-topic results to"
                                            " meta-evaluate (or give collection, runs and measures)"})
    collection = ma.fields.String()
    runs = ma.fields.List(ma.fields.String(), validate=V.Length(min=1, max=1000))
    measures = ma.fields.List(ma.fields.String(), validate=V.Length(min=1, max=200),
                              metadata={"description": "with evaluation: a subset of its measures (default all)"})
    ties = ma.fields.String(validate=V.OneOf(TIE_POLICIES), metadata={
        "description": "with collection and runs (default trec); with evaluation: the job's own, or refused"})
    topics = ma.fields.String(validate=V.OneOf(TOPIC_POLICIES), metadata={
        "description": "with collection and runs (default common); with evaluation: the job's own, or refused"})
    callback_url = ma.fields.String(validate=V.Length(min=1, max=2000), metadata={
        "description": CALLBACK_DESCRIPTION})


class SubmissionFormSchema(ma.Schema):
    collection = ma.fields.String(required=True)
    measures = ma.fields.String(required=True, metadata={"description": "measure names, space or comma separated"})
    ties = ma.fields.String(load_default="trec", validate=V.OneOf(TIE_POLICIES))
    topics = ma.fields.String(load_default="common", validate=V.OneOf(TOPIC_POLICIES))
    per_topic = ma.fields.Boolean(load_default=False)
    callback_url = ma.fields.String(validate=V.Length(min=1, max=2000), metadata={
        "description": CALLBACK_DESCRIPTION})
    run_format = run_format_field()


class SubmissionFilesSchema(ma.Schema):
    run = Upload(required=True, metadata={"description": "one or more run files (repeat the field)"})


class EvaluationJobRequestSchema(ma.Schema):
    """An evaluation job's request (``kind: evaluation``), as stored."""

    runs = ma.fields.List(ma.fields.String(), required=True, metadata={"description": "run ids, in order"})
    measures = ma.fields.List(ma.fields.String(), required=True)
    ties = ma.fields.String(required=True, validate=V.OneOf(TIE_POLICIES))
    topics = ma.fields.String(required=True, validate=V.OneOf(TOPIC_POLICIES))
    per_topic = ma.fields.Boolean(required=True)
    task = ma.fields.String(metadata={"description": "a shared task's submission: its task"})
    submission = ma.fields.String(metadata={"description": "a shared task's submission: its id"})
    version = ma.fields.Integer(metadata={"description": "a shared task's submission: the judgments version"})


class MetaJobRequestSchema(ma.Schema):
    """A meta-evaluation job's request (``kind: meta``), as stored: ``evaluation`` (and a subset of its
    ``measures``), or ``runs`` evaluated first with ``measures``, ``ties`` and ``topics``."""

    method = ma.fields.String(required=True, validate=V.OneOf(METHOD_NAMES))
    options = ma.fields.Dict(required=True, metadata={
        "description": "the method's options, as checked (defaults filled in)"})
    evaluation = ma.fields.String(metadata={"description": "the evaluation job meta-evaluated"})
    runs = ma.fields.List(ma.fields.String())
    measures = ma.fields.List(ma.fields.String())
    ties = ma.fields.String(validate=V.OneOf(TIE_POLICIES))
    topics = ma.fields.String(validate=V.OneOf(TOPIC_POLICIES))


#: each job kind's request as the job document's ``request`` shows it (a test checks every kind has one)
REQUEST_SCHEMAS: dict[str, type[ma.Schema]] = {EVALUATION: EvaluationJobRequestSchema, META: MetaJobRequestSchema}


def request_schema_name(kind: str) -> str:
    """The OpenAPI component of a kind's request schema (``app.create_app`` registers them)."""
    return REQUEST_SCHEMAS[kind].__name__.removesuffix("Schema")


def _deprecated(description: str) -> dict[str, Any]:
    return {"description": f"deprecated: read request (kind's own fields); {description}", "deprecated": True}


class JobSchema(ma.Schema):
    id = ma.fields.String()
    kind = ma.fields.String(validate=V.OneOf(tuple(KINDS)))
    request = ma.fields.Dict(metadata={
        "description": "the job's request as its kind stores it: one schema per kind (see kind)",
        "oneOf": [{"$ref": f"#/components/schemas/{request_schema_name(k)}"} for k in REQUEST_SCHEMAS]})
    method = ma.fields.String(allow_none=True, metadata=_deprecated("meta-evaluation method (meta jobs)"))
    evaluation = ma.fields.String(allow_none=True, metadata=_deprecated("the evaluation job meta-evaluated"))
    state = ma.fields.String(validate=V.OneOf(JOB_STATES))
    stage = ma.fields.String()
    progress = ma.fields.Float(metadata={"description": "fraction done, 0 to 1"})
    attempts = ma.fields.Integer()
    collection = ma.fields.String()
    runs = ma.fields.List(ma.fields.String(), metadata=_deprecated("the runs evaluated"))
    measures = ma.fields.List(ma.fields.String(), metadata=_deprecated("the measures"))
    ties = ma.fields.String(metadata=_deprecated("tie policy"))
    topics = ma.fields.String(metadata=_deprecated("topic policy"))
    per_topic = ma.fields.Boolean(metadata=_deprecated("per-topic rows by default"))
    created_at = ma.fields.DateTime()
    started_at = ma.fields.DateTime(allow_none=True)
    finished_at = ma.fields.DateTime(allow_none=True)
    updated_at = ma.fields.DateTime()
    error = ma.fields.Dict(allow_none=True)
    callback_url = ma.fields.String(allow_none=True, metadata={"description": "where the job is POSTed when it ends"})
    callback_secret = ma.fields.String(metadata={
        "description": "signs the callback (X-Evalserve-Signature, as webhooks): only in the 202 of a job created"
                       " with a callback_url"})
    links = ma.fields.Dict()


class JobQuerySchema(ma.Schema):
    wait = ma.fields.Float(load_default=0.0, validate=V.Range(min=0, max=MAX_WAIT_SECONDS), metadata={
        "description": "long-poll: answer as soon as the job differs from what you have (your If-None-Match, else"
                       " the job as it is when the request arrives), or after this many seconds (at most 30; 0:"
                       " at once)"})


class ResultQuerySchema(ma.Schema):
    format = ma.fields.String(load_default=ResultFormat.JSON.value, validate=V.OneOf([f.value for f in ResultFormat]),
                              metadata={"description": "evaluation jobs: json, tsv, csv, trec_eval; meta-evaluation"
                                        " jobs: json or table; both: html or latex, a report for people (scores,"
                                        " significance tests, measure definitions, axiomatic profiles)"})
    per_topic = ma.fields.Boolean(metadata={"description": "default: what the evaluation asked for"})


class PlotQuerySchema(ma.Schema):
    format = ma.fields.String(load_default="png", validate=V.OneOf(("png", "svg")))


class HealthWorkersSchema(ma.Schema):
    alive = ma.fields.Integer(metadata={"description": "evaluation workers that sent a heartbeat within"
                                        " EVALSERVE_HEALTH_WORKER_STALE_SECONDS"})
    newest_heartbeat_age_seconds = ma.fields.Float(allow_none=True, metadata={
        "description": "seconds since the most recent heartbeat of any evaluation worker (null: none ever)"})


class HealthQueueSchema(ma.Schema):
    queued = ma.fields.Integer(metadata={"description": "jobs waiting for a worker"})
    oldest_queued_age_seconds = ma.fields.Float(allow_none=True, metadata={
        "description": "how long the oldest queued job has waited (null: none queued)"})


class HealthRateLimitsSchema(ma.Schema):
    storage = ma.fields.String(metadata={"description": "ok, or why the rate counters' storage cannot be reached"
                                         " (then uploads and registration attempts get 503, other requests pass)"})
    where = ma.fields.String(metadata={"description": "the storage: a Redis URL (no password) or the SQLite file"})
    refused_unchecked = ma.fields.Integer(metadata={"description": "requests this API process refused because"
                                                    " the storage was down (since it started)"})
    passed_unchecked = ma.fields.Integer(metadata={"description": "requests this API process let through"
                                                   " unchecked because the storage was down (since it started)"})


class HealthWaitsSchema(ma.Schema):
    open = ma.fields.Integer(metadata={"description": "long-polls the answering API process holds now"})
    refused = ma.fields.Integer(metadata={
        "description": "long-polls it answered at once, over a cap, since it started"})
    per_caller_cap = ma.fields.Integer(metadata={"description": "EVALSERVE_MAX_WAITS_PER_CALLER"})
    total_cap = ma.fields.Integer(metadata={"description": "EVALSERVE_MAX_WAITS"})


class HealthSchema(ma.Schema):
    status = ma.fields.String(metadata={"description": "ok, or degraded: with HTTP 503 when the database or the"
                                        " broker is down, with 200 when no worker is alive, the queue is stuck or"
                                        " the rate limits' storage is down"})
    database = ma.fields.String()
    broker = ma.fields.String()
    version = ma.fields.String()
    workers = ma.fields.Nested(HealthWorkersSchema)
    queue = ma.fields.Nested(HealthQueueSchema)
    rate_limits = ma.fields.Nested(HealthRateLimitsSchema)
    problems = ma.fields.List(ma.fields.String(), metadata={"description": "why the status is degraded"})
    waits = ma.fields.Nested(HealthWaitsSchema, metadata={
        "description": "long-polls of the API process that answered (absent when not served by the ASGI worker)"})
