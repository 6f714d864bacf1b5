"""The Flask application factory: configuration, the OpenAPI document (flask-smorest, from the schemas), one
problem+json error payload, and the shared state (database, blob store, job queue) on the app."""

from __future__ import annotations

import http
import logging
from typing import Any

from flask import Flask, Response
from flask_smorest import Api
from flask_smorest.pagination import PaginationMetadataSchema
from flask_smorest.utils import prepare_response
from sqlalchemy.exc import DataError
from werkzeug.exceptions import HTTPException, InternalServerError

from evalserve.service.broker.celery_factory import make_celery
from evalserve.service.core.config import Settings
from evalserve.service.core.errors import ServiceError
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.core.state import ServiceState
from evalserve.service.jobs.queue import JobQueue
from evalserve.service.store.blobs import BlobStore
from evalserve.service.store.datadir import secure_data_dir
from evalserve.service.store.db import Database
from evalserve.service.web import swagger_ui
from evalserve.service.web.api import BLUEPRINTS
from evalserve.service.web.context import end_unit_of_work
from evalserve.service.web.openapi_text import MarkdownText
from evalserve.service.web.problems import (
    PROBLEM_JSON,
    ProblemSchema,
    from_http_exception,
    from_service_error,
    problem_response,
)
from evalserve.service.web.ratelimits import install_rate_limits
from evalserve.service.web.request_guard import LimitedRequest, refuse_deep_json
from evalserve.service.web.schemas import REQUEST_SCHEMAS, request_schema_name
from evaluation.report import engine_version

log = logging.getLogger(__name__)

API_DESCRIPTION = (
    "Evaluation as a service for search and ranking: upload judgments and runs, queue evaluations with"
    " trec_eval/ndeval-exact measures, poll jobs, fetch results as JSON, TSV, CSV or trec_eval text.\n\n"
    "Authenticate with `Authorization: Bearer <token>` (create tokens with `evalserve tokens create`). Every"
    " error is `application/problem+json`. POST requests accept an `Idempotency-Key` header."
)


class ProblemApi(Api):  # type: ignore[misc]
    """flask-smorest's Api with every error answered as problem+json."""

    ERROR_SCHEMA = ProblemSchema

    def handle_http_exception(self, error: HTTPException) -> Response:
        if isinstance(error, InternalServerError):
            original = getattr(error, "original_exception", None)
            if original is not None:
                log.error("unhandled error", exc_info=original)
        return from_http_exception(error)

    def _register_responses(self) -> None:
        """Document the shared error responses (``default``, argument and pagination errors) as what they are:
        ``application/problem+json`` (flask-smorest's own would say ``application/json``)."""
        for status in http.HTTPStatus:
            response: dict[str, Any] = {"description": status.phrase}
            if not (100 <= status < 200) and status not in (204, 304):
                response["schema"] = self.ERROR_SCHEMA
            prepare_response(response, self.spec, PROBLEM_JSON)
            self.spec.components.response(status.name, response, lazy=True)
        default: dict[str, Any] = {"description": "Default error response", "schema": self.ERROR_SCHEMA}
        prepare_response(default, self.spec, PROBLEM_JSON)
        self.spec.components.response("DEFAULT_ERROR", default, lazy=True)

    def _register_pagination_header(self) -> None:
        """``X-Pagination`` carries JSON: documented as a JSON-encoded header, not as an object in the ``simple``
        style (``total,3,...``) that the ``schema`` form flask-smorest writes would mean."""
        self.spec.components.header("PAGINATION", {
            "description": "Pagination metadata, JSON-encoded",
            "content": {"application/json": {"schema": PaginationMetadataSchema}},
        }, lazy=True)


class EvalserveFlask(Flask):
    """Flask with one unit of work per request: whatever the view (and the checks before it) wrote through
    ``web.context.session()`` is committed once, after the view returned and before the response goes out, when
    the answer is not an error (status below 400); an error answer -- a refusal, a failure, an exception --
    rolls everything back. Publishing a job's message is an after-commit action of the unit."""

    def finalize_request(self, rv: Any, from_error_handler: bool = False) -> Response:
        response = self.make_response(rv)
        try:
            end_unit_of_work(response.status_code < 400)
        except Exception as exc:  # the commit failed: nothing was stored, and the client must not hear otherwise
            if from_error_handler:  # already answering an unhandled error (a 500): its rollback failed too
                log.exception("could not roll back the request's unit of work")
            else:
                response = self.make_response(self.handle_user_exception(exc))
        return super().finalize_request(response, from_error_handler)


def create_app(settings: Settings | None = None, *, migrate: bool = False) -> Flask:
    """Build the API for ``settings`` (default: from the environment); ``migrate`` upgrades the schema first."""
    settings = settings or Settings.from_env()
    secure_data_dir(settings)
    if migrate:
        from evalserve.service.store.migrate import upgrade

        upgrade(settings.database_url)
    app = EvalserveFlask("evalserve")
    app.request_class = LimitedRequest
    app.config.update(
        MAX_CONTENT_LENGTH=settings.max_upload_bytes,
        MAX_FORM_PARTS=settings.limits.max_form_parts,
        API_TITLE="evalserve",
        API_VERSION=engine_version(),
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        OPENAPI_SWAGGER_UI_PATH="docs",
        OPENAPI_SWAGGER_UI_URL=swagger_ui.STATIC_URL,  # from the package, never a CDN
        OPENAPI_SWAGGER_UI_CONFIG={"validatorUrl": None},  # no badge fetched from an external validator
        API_SPEC_OPTIONS={
            "info": {"description": API_DESCRIPTION, "license": {"name": "Apache-2.0"}},
            "components": {"securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer"}}},
            "security": [{"bearerAuth": []}],
        },
        JSON_SORT_KEYS=False,
    )
    app.json.sort_keys = False  # type: ignore[attr-defined]
    db = Database(settings.database_url)
    app.extensions["evalserve"] = ServiceState(settings, db, BlobStore(settings.blob_dir),
                                               JobQueue(make_celery(settings), db))
    install_rate_limits(app, settings)  # before the other checks: a caller over the limit costs little
    app.before_request(refuse_deep_json)
    api = ProblemApi(app, spec_kwargs={"extra_plugins": [MarkdownText()]})  # docstrings' ``x`` as `x`
    for kind, schema in REQUEST_SCHEMAS.items():  # the job document's request: one of these (JobSchema)
        api.spec.components.schema(request_schema_name(kind), schema=schema)
    for blueprint in BLUEPRINTS:
        api.register_blueprint(blueprint)
    app.register_blueprint(swagger_ui.blp)  # not in the OpenAPI document: pages, not API

    @app.teardown_request
    def _close_unit_of_work(_error: BaseException | None) -> None:  # a request that never reached its finalisation
        end_unit_of_work(False)

    @app.errorhandler(Exception)
    def _unexpected(error: Exception) -> Any:  # never a traceback to the client
        if isinstance(error, ServiceError):  # a refusal, Flask-free or an ApiProblem: the same payload
            return from_service_error(error)
        if isinstance(error, HTTPException):
            return from_http_exception(error)
        if isinstance(error, DataError):  # a value PostgreSQL cannot hold (a NUL character, a too-long name)
            reason = str(error.orig).splitlines()[0] if error.orig is not None else "the value is not valid"
            return problem_response(422, ProblemCode.INVALID_VALUE,
                                    f"the database cannot hold a value of the request: {reason}")
        log.exception("unhandled error")
        return from_http_exception(InternalServerError("an internal error occurred; it has been logged"))

    return app
