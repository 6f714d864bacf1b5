"""Property-based API testing with schemathesis against a running deployment (gunicorn + a Celery worker, on the
embedded default and on PostgreSQL + Redis): every operation of the served OpenAPI document is called with
generated valid and invalid requests, and every answer must be free of server errors and match the document
(status code, content type, body schema, headers).

The deployment is seeded with a real collection, run and succeeded job; half of the generated ids are replaced by
those, so the generated requests reach the stored resources and the results, not only the 404s. A failure here
is a bug in the service or in its document: fix the service, then regenerate ``openapi.yaml``
(``evalserve openapi -o openapi.yaml``).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import (  # noqa: E402
    allow_header_conformance,
    content_type_conformance,
    ignored_auth,
    missing_required_header,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

from tests.service.live import LiveService  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[2] / "evalserve" / "samples"
#: conformance to the document; not the checks of request validation policy (``negative_data_rejection``: unknown
#: query parameters are ignored, as HTTP allows; ``positive_data_acceptance``: a schema-valid upload can still be
#: refused for what its file contains)
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
          response_headers_conformance, ignored_auth, missing_required_header, unsupported_method,
          allow_header_conformance]
#: what gunicorn answers (text/plain, before the app sees the request) to a request line over its 4,094-byte limit:
#: schemathesis's negative examples of operations with several string query parameters reach it (docs/api.md)
FRONT_REFUSAL = 414
#: generated examples per operation and mode: bounded so that both backends run in well under a minute
MAX_EXAMPLES = 20
#: the seeded webhook points at 127.0.0.1:9: the operator allows it (webhooks go to public hosts only)
LIVE_ENV = {"EVALSERVE_WEBHOOK_ALLOW_NETWORKS": "127.0.0.1/32"}


@pytest.fixture(scope="module")
def seeded(live: LiveService) -> dict[str, str]:
    """A real collection, run and succeeded job on the deployment (their ids)."""
    with live.client() as http:
        collection = http.post("/v1/collections", data={"name": "schemathesis seed"},
                               files={"qrels": (SAMPLES / "sample.qrels").open("rb")})
        assert collection.status_code == 201, collection.text
        collection_id = collection.json()["id"]
        run = http.post("/v1/runs", params={"collection": collection_id},
                        files={"run": (SAMPLES / "bm25.run").open("rb")})
        assert run.status_code == 201, run.text
        job = http.post("/v1/evaluations", json={"collection": collection_id, "runs": [run.json()["id"]],
                                                 "measures": ["AP", "nDCG@10", "alpha_nDCG@5"], "per_topic": True})
        assert job.status_code == 202, job.text
        done = live.wait_job(http, job.json()["id"])
        assert done["state"] == "succeeded", done
        task = http.post("/v1/tasks", json={"name": "schemathesis task", "collection": collection_id,
                                            "measures": ["AP", "nDCG@10"], "phases": [
                                                {"name": "test", "opens_at": "2020-01-01T00:00:00Z",
                                                 "closes_at": "2100-01-01T00:00:00Z"}]})
        assert task.status_code == 201, task.text
        task_id = task.json()["id"]
        assert http.post(f"/v1/tasks/{task_id}/participants", json={"team": "seed"}).status_code == 201
        submission = http.post(f"/v1/tasks/{task_id}/submissions", files={"run": (SAMPLES / "bm25.run").open("rb")})
        assert submission.status_code == 202, submission.text
        hook = http.post(f"/v1/tasks/{task_id}/webhooks", json={"url": "http://127.0.0.1:9/"})
        assert hook.status_code == 201, hook.text
    return {"collection": collection_id, "run": run.json()["id"], "job": done["id"], "measure": "nDCG@10",
            "task": task_id, "submission": submission.json()["id"], "webhook": hook.json()["id"], "phase": "test"}


@pytest.fixture(scope="module")
def api_schema(live: LiveService) -> Iterator[Any]:
    """The OpenAPI document the deployment serves, loaded over HTTP."""
    loaded = schemathesis.openapi.from_url(f"{live.url}/openapi.json")
    loaded.config.generation.update(max_examples=MAX_EXAMPLES)
    yield loaded


def _coin(value: Any) -> bool:
    """A deterministic fair coin on a generated value (so that a failing example replays identically)."""
    return zlib.crc32(repr(value).encode()) % 2 == 0


def aim_at_stored(case: Any, ids: dict[str, str]) -> None:
    """Replace about half of the generated ids by those of the seeded resources."""
    phases = "/phases/" in case.path
    for name, key in (("collection_id", "collection"), ("run_id", "run"), ("job_id", "job"),
                      ("name", "phase" if phases else "measure"), ("task_id", "task"),
                      ("submission_id", "submission"), ("webhook_id", "webhook")):
        params = case.path_parameters
        if params and name in params and _coin(params[name]):
            params[name] = ids[key]
    if case.query and isinstance(case.query.get("collection"), str) and _coin(case.query["collection"]):
        case.query["collection"] = ids["collection"]
    body = case.body
    if isinstance(body, dict) and isinstance(body.get("collection"), str) and _coin(body["collection"]):
        body["collection"] = ids["collection"]
        if isinstance(body.get("runs"), list):
            body["runs"] = [ids["run"]]


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_served_api_conforms_to_its_document(case: Any, live: LiveService, seeded: dict[str, str]) -> None:
    aim_at_stored(case, seeded)
    response = case.call(headers={"Authorization": f"Bearer {live.token}"}, timeout=30)
    if response.status_code == FRONT_REFUSAL:  # gunicorn's own answer, before the app: not the document's to give
        assert b"Request line is too large" in response.content, response.content[:200]
        return
    case.validate_response(response, checks=CHECKS)


def test_requests_schemathesis_broke_are_answered_as_documented(live: LiveService, seeded: dict[str, str]) -> None:
    """Regressions of what schemathesis found, pinned down because random generation reaches them only rarely."""
    with live.client() as http:
        for path in ("/v1/collections", "/v1/runs", "/v1/jobs"):  # every listing was a 500
            listed = http.get(path)
            assert listed.status_code == 200, listed.text
            assert json.loads(listed.headers["X-Pagination"])["total"] >= 1
            past_the_end = http.get(path, params={"page": 1445494213848020992, "page_size": 93})  # OFFSET overflow
            assert past_the_end.status_code == 200 and past_the_end.json() == [], past_the_end.text
        # PostgreSQL holds no NUL character and no over-long name: 422 problems, not 500s (SQLite stores them)
        with (SAMPLES / "bm25.run").open("rb") as run:
            attempts = [
                http.get("/v1/jobs/job%00x"),
                http.post("/v1/evaluations", json={"collection": "col\x00", "runs": [seeded["run"]],
                                                   "measures": ["AP"]}),
                http.post("/v1/runs", params={"collection": seeded["collection"], "name": "a\x00b"},
                          content=run.read()),
                http.post("/v1/runs", params={"collection": seeded["collection"]},
                          files={"run": ("r" * 400, (SAMPLES / "bm25.run").read_bytes())}),
            ]
        for answer in attempts:
            assert answer.status_code < 500, answer.text
            assert answer.headers["Content-Type"] == "application/problem+json" or answer.status_code == 201
        not_allowed = http.request("TRACE", "/v1/jobs")
        assert not_allowed.status_code == 405 and "GET" in not_allowed.headers["Allow"]
        assert http.get("/health", headers={"Authorization": ""}).status_code == 200
        document = http.get("/openapi.json").json()
        assert document["paths"]["/health"]["get"]["security"] == []
        assert "application/problem+json" in document["components"]["responses"]["DEFAULT_ERROR"]["content"]
