"""``evalserve-client submit`` stores nothing before the request is known good (issue 28: a bad measure created the
collection, then was refused): the measures are asked of the server's catalogue (``Client.check_measures``,
``GET /v1/measures/{name}``) before the judgments go up. The client talks to the real Flask app in-process
(``httpx.WSGITransport``, SQLite), as tests/service/test_api.py does."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
from evalserve_client import ApiError, Client
from evalserve_client import cli as client_cli
from evalserve_client.cli import main as client_main

from tests.service.test_api import QRELS, RUN, Api

URL = "http://evalserve.test"


@pytest.fixture
def api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    made = Api(tmp_path / "server")
    monkeypatch.setattr(client_cli, "Client", partial(Client, transport=httpx.WSGITransport(app=made.app)))
    yield made
    made.app.extensions["evalserve"].db.dispose()


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "qrels.txt").write_bytes(QRELS)
    (tmp_path / "a.run").write_bytes(RUN)
    return {"qrels": tmp_path / "qrels.txt", "run": tmp_path / "a.run"}


def _stored(api: Api) -> tuple[Any, Any]:
    return api.call("GET", "/v1/collections").json, api.call("GET", "/v1/jobs").json


def test_a_bad_measure_is_refused_before_the_collection_is_created(api: Api, files: dict[str, Path],
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code = client_main(["submit", "--server", URL, "--token", api.tokens["alice"], "--qrels", str(files["qrels"]),
                        "--run", str(files["run"]), "-m", "AP", "ncdg_cut.10", "P.5,10"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.splitlines() == ["measures: error: unknown measure 'ncdg_cut.10'; did you mean ndcg_cut.10?"
                                " [invalid-measure]"]
    assert _stored(api) == ([], [])


def test_good_measures_go_on_to_the_collection_and_the_job(api: Api, files: dict[str, Path],
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    code = client_main(["submit", "--server", URL, "--token", api.tokens["alice"], "--qrels", str(files["qrels"]),
                        "--run", str(files["run"]), "-m", "AP", "ndcg_cut.10,20", "nDCG(gain=exp)@5", "--no-wait"])
    assert code == 0, capsys.readouterr().err
    collections, jobs = _stored(api)
    assert len(collections) == 1 and len(jobs) == 1


def test_the_library_uploads_no_run_for_a_request_with_a_bad_measure(api: Api, files: dict[str, Path]) -> None:
    collection = api.collection()
    stored = api.run(collection)
    with Client(URL, api.tokens["alice"], transport=httpx.WSGITransport(app=api.app)) as client:
        assert client.check_measures(["AP nDCG@10", "P.5,10", "RBP(p=0.8,rel=2)"]) == []
        with pytest.raises(ApiError) as info:
            client.evaluate(collection, [stored, files["run"]], ["AP", "Zzyzx"], wait=False)
    assert (info.value.status, info.value.code) == (422, "invalid-measure")
    runs = api.call("GET", f"/v1/runs?collection={collection}").json
    assert [r["id"] for r in runs] == [stored]
