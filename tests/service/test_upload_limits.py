"""Uploads are decoded under the deployment's limits, in process: a file too large once decompressed is a 413,
too many or too long lines, NUL bytes and files without records are 422 -- on every upload route, and nothing
is stored. A form-urlencoded raw body (``curl --data-binary``'s default) is taken as the run file."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from evalserve.service.core.config import Settings
from evalserve.service.store.models import BlobRow
from tests.service.test_api import QRELS, RUN, Api, _file, _is_problem

MIB = 1 << 20
#: 4 MiB of run lines gzipped: past a 1 MiB cap, a few KiB to send
BOMB = gzip.compress(b"1 Q0 d1 1 1.0 tag\n" * (4 * MIB // 18), 9)


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    """A deployment with a 1 MiB decompressed cap."""
    made = Api(tmp_path, EVALSERVE_MAX_DECOMPRESSED_MB="1")
    yield made
    made.app.extensions["evalserve"].db.dispose()


@pytest.fixture
def narrow(tmp_path: Path) -> Iterator[Api]:
    """A deployment with 1,000 lines of 200 bytes at most."""
    made = Api(tmp_path, EVALSERVE_MAX_LINES="1000", EVALSERVE_MAX_LINE_BYTES="200")
    yield made
    made.app.extensions["evalserve"].db.dispose()


def _blobs(api: Api) -> int:
    with api.app.extensions["evalserve"].db.session() as s:
        return int(s.scalar(select(func.count()).select_from(BlobRow)) or 0)


def _code(response: Any, status: int) -> str:
    body = _is_problem(response, status, "invalid-upload" if status == 422 else response.json["code"])
    return str(body["problems"][0]["code"])


def test_the_decode_limits_are_settings() -> None:
    default = Settings.from_env({"EVALSERVE_DATA_DIR": "/x"})
    assert (default.max_decompressed_bytes, default.max_line_bytes, default.max_lines) == (2048 * MIB, 8 * MIB,
                                                                                            10_000_000)
    small = Settings.from_env({"EVALSERVE_DATA_DIR": "/x", "EVALSERVE_MAX_UPLOAD_MB": "10"})
    assert small.decode_limits.max_bytes == 200 * MIB, "20 x the upload limit when that is lower"
    assert Settings.from_env({"EVALSERVE_DATA_DIR": "/x", "EVALSERVE_MAX_DECOMPRESSED_MB": "3"}
                             ).decode_limits.max_bytes == 3 * MIB


def test_a_gzip_bomb_is_413_on_every_upload_route_and_nothing_is_stored(api: Api) -> None:
    collection = api.collection()
    before = _blobs(api)
    raw = api.call("POST", f"/v1/runs?collection={collection}&name=bomb.run.gz", data=BOMB)
    assert _is_problem(raw, 413, "decompressed-too-large")["problems"][0]["source"] == "bomb.run.gz"
    form = api.call("POST", f"/v1/runs?collection={collection}", data={"run": (_file(BOMB), "bomb.gz")})
    _is_problem(form, 413, "decompressed-too-large")
    submission = api.call("POST", "/v1/submissions", data={
        "collection": collection, "measures": "AP", "run": [(_file(RUN), "good.run"), (_file(BOMB), "bomb.gz")]})
    _is_problem(submission, 413, "decompressed-too-large")
    qrels = api.call("POST", "/v1/collections", data={"name": "c", "qrels": (_file(BOMB), "q.gz")})
    _is_problem(qrels, 413, "decompressed-too-large")
    assert api.call("GET", "/v1/runs").json == [] and _blobs(api) == before


def test_line_caps_binary_and_empty_files_are_422(narrow: Api) -> None:
    api = narrow
    collection = api.collection()
    before = _blobs(api)

    def post(data: bytes) -> Any:
        return api.call("POST", f"/v1/runs?collection={collection}&name=x.run",
                        data=data, content_type="application/octet-stream")

    assert _code(post(RUN * 400), 422) == "too-many-lines"
    assert _code(post(RUN + b"x" * 201 + b"\n"), 422) == "line-too-long"
    assert _code(post(b"\0" * 1000), 422) == "binary-input"
    assert _code(post(gzip.compress(b"\0" * 1000)), 422) == "binary-input"
    assert _code(post(b"# nothing here\n\n"), 422) == "empty-run"
    assert _code(post(gzip.compress(b"")), 422) == "empty-run"
    empty_qrels = api.call("POST", "/v1/collections", data={"name": "c", "qrels": (_file(b"\n"), "q.txt")})
    assert _code(empty_qrels, 422) == "empty-qrels"
    assert api.call("GET", "/v1/runs").json == [] and _blobs(api) == before


def test_curl_data_binary_without_a_content_type_uploads_the_raw_run(tmp_path: Path) -> None:
    api = Api(tmp_path)
    collection = api.collection()
    big = b"".join(f"1 Q0 doc{i} {i + 1} {-i}.0 t\n".encode() for i in range(40_000))  # past werkzeug's form cap
    for name, data in (("a.run", RUN), ("b.run.gz", gzip.compress(RUN)), ("c.run", big)):
        r = api.call("POST", f"/v1/runs?collection={collection}&name={name}", data=data,
                     content_type="application/x-www-form-urlencoded")
        assert r.status_code == 201, r.get_data(as_text=True)
        assert r.json["n_rows"] == data.count(b"\n") if not name.endswith(".gz") else 3
    multipart = api.call("POST", f"/v1/runs?collection={collection}", data={"run": (_file(RUN), "d.run")})
    assert multipart.status_code == 201
    assert QRELS
    api.app.extensions["evalserve"].db.dispose()
