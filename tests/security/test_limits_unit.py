"""Per-user limits in process (Flask's test client, SQLite, in-memory rate counters): rate limits, quotas, the
shared upload-limits validator, duplicated fields, deep JSON, registration codes, CSV cells, data-dir modes. The
same attacks on real processes and both backends are in ``test_limits.py``."""

from __future__ import annotations

import io
import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalserve.service.store.models import BlobRow, Collection, Job, RunRecord
from evalserve.service.web.request_guard import json_depth
from evaluation.csvcells import safe_cell
from evaluation.formats import Blob
from evaluation.hierarchy.jsonio import parse_hierarchies
from tests.service.test_api import QRELS, RUN, Api, _is_problem

OFF = {"EVALSERVE_RATE_LIMIT": "", "EVALSERVE_UPLOAD_RATE_LIMIT": ""}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    made = Api(tmp_path, **OFF)
    yield made
    made.app.extensions["evalserve"].db.dispose()


def _count(api: Api, model: Any) -> int:
    with api.app.extensions["evalserve"].db.session() as s:
        return len(s.query(model).all())


def test_a_token_over_its_rate_limit_gets_429_with_retry_after(tmp_path: Path) -> None:
    api = Api(tmp_path, EVALSERVE_RATE_LIMIT="5/minute", EVALSERVE_UPLOAD_RATE_LIMIT="2/minute")
    answers = [api.call("GET", "/v1/runs").status_code for _ in range(5)]
    assert answers == [200] * 5
    body = _is_problem(api.call("GET", "/v1/runs"), 429, "rate-limited")
    assert "5 per 1 minute" in body["detail"]
    assert 1 <= int(api.call("GET", "/v1/runs").headers["Retry-After"]) <= 61
    assert api.call("GET", "/v1/runs", "bob").status_code == 200, "another token counts on its own"
    assert api.call("GET", "/v1/runs", "admin").status_code == 200
    assert all(api.client.get("/health").status_code == 200 for _ in range(8)), "/health is exempt"
    assert all(api.call("GET", "/v1/runs", "admin").status_code == 200 for _ in range(8)), "admins are exempt"
    # uploads have their own, smaller limit: the third upload of a minute is refused and not stored
    collection = api.collection("admin")
    for _ in range(2):
        assert api.call("POST", f"/v1/runs?collection={collection}", "bob",
                        data={"run": (io.BytesIO(RUN), "a.run")}).status_code == 201
    _is_problem(api.call("POST", f"/v1/runs?collection={collection}", "bob", data={"run": (io.BytesIO(RUN), "b.run")}),
             429, "rate-limited")
    assert _count(api, RunRecord) == 2
    api.app.extensions["evalserve"].db.dispose()


def test_over_the_storage_quota_is_429_and_nothing_is_stored(tmp_path: Path) -> None:
    api = Api(tmp_path, EVALSERVE_QUOTA_STORAGE_MB=str(200 / (1024 * 1024)), **OFF)  # 200 bytes
    collection = api.collection("alice")  # 27 bytes of judgments
    assert api.call("POST", f"/v1/runs?collection={collection}", data={"run": (io.BytesIO(RUN), "a.run")}
                    ).status_code == 201
    big = "".join(f"1 Q0 d{i} {i} {100 - i}.0 t\n" for i in range(1, 20)).encode()  # 300 bytes
    body = _is_problem(api.call("POST", f"/v1/runs?collection={collection}", data={"run": (io.BytesIO(big), "b.run")}),
                    429, "quota-exceeded")
    assert "storage quota" in body["detail"]
    _is_problem(api.call("POST", "/v1/submissions", data={"collection": collection, "measures": "AP",
                                                       "run": (io.BytesIO(big), "c.run")}), 429, "quota-exceeded")
    _is_problem(api.call("POST", "/v1/collections", data={"name": "c", "qrels": (io.BytesIO(QRELS * 10), "q")}),
             429, "quota-exceeded")
    r = api.call("POST", f"/v1/runs?collection={collection}", data={"run": (io.BytesIO(big), "b.run")})
    assert int(r.headers["Retry-After"]) > 0
    assert _count(api, RunRecord) == 1 and _count(api, Collection) == 1 and _count(api, Job) == 0
    # the same bytes again are stored once and counted once; admins are exempt
    assert api.call("POST", f"/v1/runs?collection={collection}", data={"run": (io.BytesIO(RUN), "a2.run")}
                    ).status_code == 201
    assert api.call("POST", f"/v1/runs?collection={collection}", "admin",
                    data={"run": (io.BytesIO(big), "b.run")}).status_code == 201
    api.app.extensions["evalserve"].db.dispose()


def test_over_the_active_jobs_quota_is_429_and_nothing_is_queued(tmp_path: Path) -> None:
    api = Api(tmp_path, EVALSERVE_QUOTA_ACTIVE_JOBS="2", **OFF)
    collection = api.collection()
    run = api.run(collection)
    request = {"collection": collection, "runs": [run], "measures": ["AP"]}
    assert [api.call("POST", "/v1/evaluations", json=request).status_code for _ in range(2)] == [202, 202]
    body = _is_problem(api.call("POST", "/v1/evaluations", json=request), 429, "quota-exceeded")
    assert "at most 2" in body["detail"]
    r = api.call("POST", "/v1/submissions", data={"collection": collection, "measures": "AP",
                                                  "run": (io.BytesIO(RUN), "z.run")})
    _is_problem(r, 429, "quota-exceeded")
    assert int(r.headers["Retry-After"]) > 0
    assert _count(api, Job) == 2 and _count(api, RunRecord) == 1
    assert api.call("POST", "/v1/evaluations", "bob", json=request).status_code in (202, 404), "bob has his own"
    assert api.call("POST", "/v1/evaluations", "admin", json=request).status_code == 202
    api.app.extensions["evalserve"].db.dispose()


def test_jobs_per_day_quota(tmp_path: Path) -> None:
    api = Api(tmp_path, EVALSERVE_QUOTA_JOBS_PER_DAY="1", **OFF)
    collection = api.collection()
    run = api.run(collection)
    request = {"collection": collection, "runs": [run], "measures": ["AP"]}
    assert api.call("POST", "/v1/evaluations", json=request).status_code == 202
    r = api.call("POST", "/v1/evaluations", json=request)
    assert "per UTC day" in _is_problem(r, 429, "quota-exceeded")["detail"]
    assert 0 < int(r.headers["Retry-After"]) <= 86401
    api.app.extensions["evalserve"].db.dispose()


def test_201_measures_are_refused_on_evaluations_and_submissions(api: Api) -> None:
    collection = api.collection()
    run = api.run(collection)
    measures = [f"P@{k}" for k in range(1, 202)]
    _is_problem(api.call("POST", "/v1/evaluations", json={"collection": collection, "runs": [run],
                                                       "measures": measures}), 422, "invalid-request")
    form = {"collection": collection, "measures": " ".join(measures), "run": (io.BytesIO(RUN), "b.run")}
    body = _is_problem(api.call("POST", "/v1/submissions", data=form), 422, "invalid-request")
    assert body["problems"][0]["field"] == "measures"
    assert _count(api, Job) == 0 and _count(api, RunRecord) == 1
    ok = api.call("POST", "/v1/submissions", data={"collection": collection, "measures": " ".join(measures[:200]),
                                                   "run": (io.BytesIO(RUN), "b.run")})
    assert ok.status_code == 202, ok.get_data(as_text=True)


def test_too_many_files_are_a_clear_413(tmp_path: Path) -> None:
    api = Api(tmp_path, EVALSERVE_MAX_RUNS_PER_REQUEST="3", EVALSERVE_MAX_FORM_PARTS="20", **OFF)
    collection = api.collection()
    few = [(io.BytesIO(RUN.replace(b" t\n", f" r{i}\n".encode())), f"r{i}.run") for i in range(4)]
    body = _is_problem(api.call("POST", "/v1/submissions", data={"collection": collection, "measures": "AP",
                                                              "run": few}), 413, "too-many-files")
    assert "at most 3" in body["detail"]
    many = [(io.BytesIO(RUN), f"r{i}.run") for i in range(30)]
    body = _is_problem(api.call("POST", "/v1/submissions", data={"collection": collection, "measures": "AP",
                                                              "run": many}), 413, "too-many-files")
    assert "more than 20 parts" in body["detail"]
    assert _count(api, RunRecord) == 0


def test_a_duplicated_single_valued_field_is_refused(api: Api) -> None:
    collection = api.collection()
    body = _is_problem(api.call("POST", f"/v1/runs?collection={collection}&collection=col_other",
                             data={"run": (io.BytesIO(RUN), "a.run")}), 422, "duplicate-field")
    assert "'collection'" in body["detail"]
    _is_problem(api.call("POST", f"/v1/runs?collection={collection}",
                      data={"run": [(io.BytesIO(RUN), "a.run"), (io.BytesIO(RUN), "b.run")]}), 422, "duplicate-field")
    _is_problem(api.call("POST", "/v1/collections", data={"name": ["a", "b"], "qrels": (io.BytesIO(QRELS), "q")}),
             422, "duplicate-field")
    _is_problem(api.call("POST", "/v1/submissions", data={"collection": [collection, collection], "measures": "AP",
                                                       "run": (io.BytesIO(RUN), "a.run")}), 422, "duplicate-field")
    assert _count(api, RunRecord) == 0 and _count(api, Collection) == 1
    several = [(io.BytesIO(RUN), "a.run"), (io.BytesIO(RUN.replace(b" t\n", b" u\n")), "b.run")]
    assert api.call("POST", "/v1/submissions", data={"collection": collection, "measures": "AP",
                                                     "run": several}).status_code == 202, "several runs stay allowed"


def test_json_nested_100000_deep_is_a_400(api: Api) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    body = _is_problem(api.call("POST", "/v1/evaluations", data=deep, headers={"Content-Type": "application/json"}),
                    400, "too-deep")
    assert "nests" in body["detail"]
    _is_problem(api.call("POST", "/v1/meta-evaluations", data='{"options": ' + "{\"a\": " * 100 + "1" + "}" * 101,
                      headers={"Content-Type": "application/json"}), 400, "too-deep")
    assert json_depth({"a": [1, {"b": []}]}) == 4 and json_depth(5) == 0
    parsed = parse_hierarchies(Blob.from_bytes(deep.encode(), "h.json"))
    assert parsed.value is None and parsed.problems[0].code == "hierarchy-too-deep"


def test_registration_codes_have_an_attempt_limit(tmp_path: Path) -> None:
    api = Api(tmp_path, EVALSERVE_REGISTER_RATE_LIMIT="3/hour", **OFF)
    collection = api.collection()
    task = api.call("POST", "/v1/tasks", json={"name": "t", "collection": collection, "measures": ["AP"],
                                               "registration": "code", "registration_code": "s3cret-code"})
    assert task.status_code == 201, task.get_data(as_text=True)
    path = f"/v1/tasks/{task.json['id']}/participants"
    for guess in ("a-guess", "b-guess", "c-guess"):
        _is_problem(api.call("POST", path, "bob", json={"team": "bob", "code": guess}), 403, "registration-code")
    r = api.call("POST", path, "bob", json={"team": "bob", "code": "s3cret-code"})
    _is_problem(r, 429, "rate-limited")
    assert int(r.headers["Retry-After"]) > 0
    ok = api.call("POST", path, "reader", json={"team": "r", "code": "s3cret-code"})
    assert ok.status_code in (201, 403), "another token has its own attempts"
    api.app.extensions["evalserve"].db.dispose()


@pytest.mark.parametrize(("value", "cell"), [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"), ("+1+2", "'+1+2"), ("-cmd", "'-cmd"),
    ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"), ("\rx", "'\rx"), ("team", "team"), ("-0.25", "-0.25"),
    ("-1e-05", "-1e-05"), ("1.5", "1.5"), ("", ""),
])
def test_csv_cells_that_a_spreadsheet_would_run_are_escaped(value: str, cell: str) -> None:
    assert safe_cell(value) == cell


def test_the_data_dir_and_databases_are_private(tmp_path: Path) -> None:
    data = tmp_path / "fresh"
    api = Api(data, **OFF)
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    for name in ("evalserve.db", "broker.db"):
        assert stat.S_IMODE((data / name).stat().st_mode) == 0o600, name
    api.app.extensions["evalserve"].db.dispose()
    data.chmod(0o755)
    (data / "evalserve.db").chmod(0o644)
    again = Api(data, **OFF)
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert stat.S_IMODE((data / "evalserve.db").stat().st_mode) == 0o600
    again.app.extensions["evalserve"].db.dispose()


def test_stored_bytes_count_distinct_blobs(api: Api) -> None:
    from evalserve.service.access.quotas import stored_bytes

    collection = api.collection()
    api.run(collection, name="a.run")
    api.run(collection, name="b.run")  # the same bytes
    db = api.app.extensions["evalserve"].db
    with db.session() as s:
        alice = s.query(RunRecord).first().owner_id  # type: ignore[union-attr]
        sizes = {row.sha256: row.size for row in s.query(BlobRow).all()}
        assert stored_bytes(s, alice) == len(RUN) + len(QRELS) == sum(sizes.values())
    assert json.loads(json.dumps(sizes))
