"""The API's rules, in process (Flask's test client, a real SQLite database and embedded broker, no worker):
authentication and scopes, who sees what, idempotency keys, cancellation, size limits, pagination, and the
problem+json answers to bad requests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from evalserve.service.access.tokens import create_token
from evalserve.service.core.config import Settings
from evalserve.service.web.app import create_app

RUN = b"1 Q0 d1 1 3.0 t\n1 Q0 d2 2 2.0 t\n2 Q0 d1 1 1.0 t\n"
QRELS = b"1 0 d1 1\n1 0 d3 1\n2 0 d2 1\n"


class Api:
    """A test client plus tokens of each kind."""

    def __init__(self, tmp: Path, **env: str) -> None:
        self.settings = Settings.from_env({"EVALSERVE_DATA_DIR": str(tmp), **env})
        self.app = create_app(self.settings, migrate=True)
        self.client: FlaskClient = self.app.test_client()
        db = self.app.extensions["evalserve"].db
        self.tokens = {name: create_token(db, name, scopes)[1] for name, scopes in [
            ("admin", ("admin",)), ("alice", ("read", "submit")), ("bob", ("read", "submit")),
            ("reader", ("read",))]}

    def call(self, method: str, path: str, who: str = "alice", **kw: Any) -> Any:
        headers = {"Authorization": f"Bearer {self.tokens[who]}", **kw.pop("headers", {})}
        return self.client.open(path, method=method, headers=headers, **kw)

    def collection(self, who: str = "alice") -> str:
        r = self.call("POST", "/v1/collections", who, data={"name": "c", "qrels": (_file(QRELS), "q.txt")})
        assert r.status_code == 201, r.get_data(as_text=True)
        return str(r.json["id"])

    def run(self, collection: str, who: str = "alice", name: str = "a.run") -> str:
        r = self.call("POST", f"/v1/runs?collection={collection}", who, data={"run": (_file(RUN), name)})
        assert r.status_code == 201, r.get_data(as_text=True)
        return str(r.json["id"])


def _file(data: bytes) -> Any:
    import io

    return io.BytesIO(data)


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    made = Api(tmp_path)
    yield made
    made.app.extensions["evalserve"].db.dispose()


def _is_problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.headers["Content-Type"] == "application/problem+json"
    body: dict[str, Any] = response.json
    assert body["status"] == status and body["code"] == code and body["detail"]
    return body


def test_tokens_are_required_and_checked(api: Api) -> None:
    _is_problem(api.client.get("/v1/runs"), 401, "unauthorized")
    assert api.client.get("/v1/runs").headers["WWW-Authenticate"].startswith("Bearer")
    _is_problem(api.client.get("/v1/runs", headers={"Authorization": "Bearer es_nope_nope"}), 401, "unauthorized")
    _is_problem(api.call("POST", "/v1/collections", "reader", data={"name": "x"}), 403, "forbidden")
    assert api.client.get("/v1/measures").status_code == 200, "the catalogue is public"
    assert api.client.get("/health").status_code == 200


def test_each_user_sees_only_their_own_runs_and_jobs(api: Api) -> None:
    collection = api.collection("alice")
    mine = api.run(collection, "alice")
    assert api.call("GET", f"/v1/collections/{collection}", "bob").status_code == 200, "collections are shared"
    _is_problem(api.call("GET", f"/v1/runs/{mine}", "bob"), 404, "not-found")
    assert api.call("GET", "/v1/runs", "bob").json == []
    assert [r["id"] for r in api.call("GET", "/v1/runs", "admin").json] == [mine]
    _is_problem(api.call("POST", "/v1/evaluations", "bob", json={"collection": collection, "runs": [mine],
                                                                 "measures": ["AP"]}), 404, "not-found")
    job = api.call("POST", "/v1/evaluations", "alice", json={"collection": collection, "runs": [mine],
                                                              "measures": ["AP"]})
    assert job.status_code == 202
    _is_problem(api.call("GET", f"/v1/jobs/{job.json['id']}", "bob"), 404, "not-found")
    assert api.call("GET", f"/v1/jobs/{job.json['id']}", "admin").status_code == 200


def test_an_idempotency_key_replays_the_first_response(api: Api) -> None:
    collection = api.collection()
    run = api.run(collection)
    body = {"collection": collection, "runs": [run], "measures": ["AP"]}
    first = api.call("POST", "/v1/evaluations", json=body, headers={"Idempotency-Key": "k1"})
    again = api.call("POST", "/v1/evaluations", json=body, headers={"Idempotency-Key": "k1"})
    assert first.status_code == again.status_code == 202
    assert first.json["id"] == again.json["id"] and again.headers["Idempotent-Replayed"] == "true"
    assert again.headers["Location"] == first.headers["Location"]
    assert len(api.call("GET", "/v1/jobs").json) == 1
    other = api.call("POST", "/v1/evaluations", json={**body, "measures": ["RR"]}, headers={"Idempotency-Key": "k1"})
    _is_problem(other, 422, "idempotency-key-reused")
    bob = api.call("POST", "/v1/evaluations", "bob", json=body, headers={"Idempotency-Key": "k1"})
    assert bob.status_code == 404, "keys are per token: bob's request is his own (and cannot see alice's run)"


def test_a_queued_job_is_cancelled_at_once(api: Api) -> None:
    collection = api.collection()
    job = api.call("POST", "/v1/evaluations", json={"collection": collection, "runs": [api.run(collection)],
                                                    "measures": ["AP"]}).json
    cancelled = api.call("DELETE", f"/v1/jobs/{job['id']}")
    assert cancelled.status_code == 200 and cancelled.json["state"] == "cancelled"
    assert cancelled.json["finished_at"] is not None
    _is_problem(api.call("GET", f"/v1/jobs/{job['id']}/result"), 409, "job-cancelled")


def test_results_of_an_unfinished_job_are_a_conflict(api: Api) -> None:
    collection = api.collection()
    job = api.call("POST", "/v1/evaluations", json={"collection": collection, "runs": [api.run(collection)],
                                                    "measures": ["AP"]})
    assert job.headers["Retry-After"] == "1"
    polled = api.call("GET", f"/v1/jobs/{job.json['id']}")
    assert polled.json["state"] == "queued" and polled.headers["Retry-After"] == "1"
    _is_problem(api.call("GET", f"/v1/jobs/{job.json['id']}/result"), 409, "job-queued")


def test_bad_evaluation_requests_say_what_is_wrong(api: Api) -> None:
    collection, other = api.collection(), api.collection()
    run = api.run(collection)
    bad = _is_problem(api.call("POST", "/v1/evaluations", json={"collection": collection, "runs": [run],
                                                                "measures": ["AP", "nDGC@10", "ERR_IA(gmax=2)@5"]}),
                      422, "invalid-measure")
    assert len(bad["problems"]) == 2 and "nDCG" in bad["problems"][0]["message"]
    assert "variant=paper" in bad["problems"][1]["message"]
    _is_problem(api.call("POST", "/v1/evaluations", json={"collection": other, "runs": [run], "measures": ["AP"]}),
                422, "run-not-in-collection")
    missing = _is_problem(api.call("POST", "/v1/evaluations", json={"collection": collection}), 422,
                          "invalid-request")
    assert {p["field"] for p in missing["problems"]} == {"runs", "measures"}
    _is_problem(api.call("POST", "/v1/evaluations", json={"collection": collection, "runs": [run],
                                                          "measures": ["AP"], "ties": "random"}),
                422, "invalid-request")
    _is_problem(api.call("GET", "/v1/jobs/job_missing"), 404, "not-found")


def test_uploads_over_the_size_limit_get_413(tmp_path: Path) -> None:
    small = Api(tmp_path, EVALSERVE_MAX_UPLOAD_MB="0.001")
    big = b"1 Q0 d1 1 1.0 t\n" * 200
    r = small.call("POST", "/v1/runs?collection=x&name=big.run", data=big)
    _is_problem(r, 413, "too-large")


def test_gzip_uploads_are_accepted_and_content_addressed(api: Api) -> None:
    import gzip

    collection = api.collection()
    one = api.call("POST", f"/v1/runs?collection={collection}&name=a.run.gz", data=gzip.compress(RUN)).json
    two = api.call("POST", f"/v1/runs?collection={collection}&name=b.run", data=RUN).json
    three = api.call("POST", f"/v1/runs?collection={collection}&name=c.run", data=RUN).json
    assert one["name"] == "a.run" and one["n_rows"] == 3
    assert two["sha256"] == three["sha256"] != one["sha256"], "same bytes, same blob"
    corrupt = api.call("POST", f"/v1/runs?collection={collection}&name=x.gz", data=b"\x1f\x8b\x08\x00broken")
    assert _is_problem(corrupt, 422, "invalid-upload")["problems"][0]["code"] == "gzip-corrupt"


def test_lists_are_paginated(api: Api) -> None:
    collection = api.collection()
    for i in range(5):
        api.run(collection, name=f"r{i}.run")
    page = api.call("GET", "/v1/runs?page=2&page_size=2")
    assert [r["name"] for r in page.json] == ["r2.run", "r1.run"]
    assert json.loads(page.headers["X-Pagination"])["total"] == 5


def test_collections_are_immutable(api: Api) -> None:
    collection = api.collection()
    for method in ("PUT", "PATCH", "DELETE"):
        assert api.call(method, f"/v1/collections/{collection}").status_code == 405


def test_a_submission_with_one_bad_file_stores_nothing_and_lists_every_file_problem(api: Api) -> None:
    collection = api.collection()
    files = [(_file(RUN), "good.run"), (_file(b"1 Q0 d1 1 x t\n"), "bad1.run"), (_file(b"1 Q0 d1\n"), "bad2.run")]
    refused = api.call("POST", "/v1/submissions", data={"collection": collection, "measures": "AP", "run": files})
    body = _is_problem(refused, 422, "invalid-upload")
    assert {p["source"] for p in body["problems"]} == {"bad1.run", "bad2.run"}
    assert api.call("GET", "/v1/runs").json == [], "nothing stored"
    bad_measure = api.call("POST", "/v1/submissions", data={"collection": collection, "measures": "AP nope@5",
                                                            "run": [(_file(RUN), "good.run")]})
    _is_problem(bad_measure, 422, "invalid-measure")
    assert api.call("GET", "/v1/runs").json == [], "a bad measure is refused before files are stored"


def test_an_idempotency_key_covers_the_query_string(api: Api) -> None:
    one, two = api.collection(), api.collection()
    first = api.call("POST", f"/v1/runs?collection={one}&name=a.run", data=RUN, headers={"Idempotency-Key": "k"})
    assert first.status_code == 201
    other = api.call("POST", f"/v1/runs?collection={two}&name=a.run", data=RUN, headers={"Idempotency-Key": "k"})
    _is_problem(other, 422, "idempotency-key-reused")


def test_a_measure_is_found_by_any_of_its_spellings(api: Api) -> None:
    for name in ("nDCG", "ndcg_cut_10", "nDCG@10", "S_Recall"):
        found = api.client.get(f"/v1/measures/{name}")
        assert found.status_code == 200, name
    assert api.client.get("/v1/measures/ndcg_cut_10").json["measures"][0]["name"] == "nDCG"
    _is_problem(api.client.get("/v1/measures/nope"), 404, "unknown-measure")


def test_a_retry_while_the_first_request_runs_waits_instead_of_running_twice(api: Api) -> None:
    """The key is reserved before the work starts: a concurrent duplicate gets 409 with Retry-After."""
    import hashlib

    from sqlalchemy import select

    from evalserve.service.store.models import IdempotencyRecord, Token

    collection = api.collection()
    db = api.app.extensions["evalserve"].db
    with db.session() as s:
        owner = s.execute(select(Token.id).where(Token.name == "alice")).scalar_one()
    path = f"/v1/runs?collection={collection}&name=a.run"
    digest = hashlib.sha256(b"POST" + path.encode() + b"\0" + RUN).hexdigest()
    with db.session() as s:  # as if the first request were still running
        s.add(IdempotencyRecord(owner_id=owner, key="busy", request_hash=digest, status=0, body=b"", headers={}))
    busy = api.call("POST", path, data=RUN, headers={"Idempotency-Key": "busy"})
    assert _is_problem(busy, 409, "idempotency-key-in-progress") and busy.headers["Retry-After"] == "1"
    assert api.call("GET", "/v1/runs").json == []


def test_a_refused_request_releases_its_key(api: Api) -> None:
    collection = api.collection()
    bad = api.call("POST", f"/v1/runs?collection={collection}&name=a.run", data=b"1 Q0 d1 1 x t\n",
                   headers={"Idempotency-Key": "fix-and-retry"})
    _is_problem(bad, 422, "invalid-upload")
    good = api.call("POST", f"/v1/runs?collection={collection}&name=a.run", data=RUN,
                    headers={"Idempotency-Key": "fix-and-retry"})
    assert good.status_code == 201
    replay = api.call("POST", "/v1/evaluations", json={"collection": collection, "runs": [good.json["id"]],
                                                       "measures": ["AP"]}, headers={"Idempotency-Key": "job"})
    again = api.call("POST", "/v1/evaluations", json={"collection": collection, "runs": [good.json["id"]],
                                                      "measures": ["AP"]}, headers={"Idempotency-Key": "job"})
    assert again.headers["Retry-After"] == replay.headers["Retry-After"] == "1"


def test_a_measure_with_its_constraint_profile(api: Api) -> None:
    found = api.client.get("/v1/measures/RBU(p=0.99,e=0.05)?axioms=true").json["measures"][0]["axioms"]
    assert found.pop("measure") == "RBU(p=0.99,e=0.05)"
    assert set(found.values()) == {"satisfied"} and len(found) == 10, "spec 7.5: RBU satisfies all ten"
    assert "axioms" not in api.client.get("/v1/measures/RBU").json["measures"][0]
