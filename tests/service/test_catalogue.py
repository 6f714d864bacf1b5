"""The benchmark catalogue (``service.inputs.catalogue``, issue 17): published judgment sets loaded from the operator's
data directory as public collections with their citation and topics -- by ``evalserve collections import`` and by
the admin route -- idempotently; and a run evaluated against one with no judgments upload gives the offline
numbers. Uses the real TREC Web 2009-2014 and NTCIR WWW files of ../shared/data."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalserve.service.access.tokens import create_token
from evalserve.service.core.config import Settings
from evalserve.service.inputs.catalogue.published import PUBLISHED
from evalserve.service.inputs.catalogue.topics import read_topic_xml
from evalserve.service.jobrun.context import WorkerContext
from evalserve.service.jobrun.runner import run_job
from evalserve.service.web.app import create_app

ROOT = Path(__file__).resolve().parents[2]


def cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "EVALSERVE_DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT)}
    env.pop("DATABASE_URL", None)
    return subprocess.run([sys.executable, "-m", "evalserve.cli.main", *args], env=env, capture_output=True,
                          text=True, timeout=300)


def test_every_published_set_is_found_in_the_shared_data_layout(shared_data: Path) -> None:
    for published in PUBLISHED.values():
        assert (shared_data / published.qrels).is_file(), published.key
        assert published.topics is None or (shared_data / published.topics).is_file(), published.key
        assert published.citation and published.name


@pytest.mark.parametrize("year", [2009, 2010, 2011, 2012, 2013, 2014])
def test_the_trec_web_topic_files_are_read(shared_data: Path, year: int) -> None:
    published = PUBLISHED[f"trec-web-{year}-diversity"]
    assert published.topics is not None
    topics = read_topic_xml((shared_data / published.topics).read_bytes())
    assert len(topics) == 50 and all(t["query"] for t in topics.values())
    undescribed = sorted(n for n, t in topics.items() if not t["description"])
    assert undescribed == (["269", "296"] if year == 2014 else [])  # as published: two 2014 topics have none
    if year == 2012:
        assert topics["151"]["query"] == "403b" and len(topics["151"]["subtopics"]) == 5
        assert topics["151"]["subtopics"][2] == {"number": "3", "type": "nav",
                                                 "text": "What are the rules for a 403b retirement plan?"}


def test_topic_files_declaring_entities_are_refused() -> None:
    bomb = b'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaa">]><t><topic number="1"><query>&a;</query></topic></t>'
    with pytest.raises(ValueError, match="entity"):
        read_topic_xml(bomb)
    with pytest.raises(ValueError, match="not topic XML"):
        read_topic_xml(b"<t><topic")


def test_the_cli_lists_and_loads_sets_once(tmp_path: Path, shared_data: Path) -> None:
    listed = cli(tmp_path, "collections", "list")
    assert listed.returncode == 0 and [line.split("\t")[0] for line in listed.stdout.splitlines()] == list(PUBLISHED)
    keys = ["trec-web-2012-adhoc", "ntcir-13-www-1"]
    first = cli(tmp_path, "collections", "import", "--from", str(shared_data), *keys)
    assert first.returncode == 0, first.stderr
    rows = [line.split("\t") for line in first.stdout.splitlines()]
    assert [(r[0], r[1]) for r in rows] == [(k, "created") for k in keys]
    again = cli(tmp_path, "collections", "import", "--from", str(shared_data), *keys)
    assert [line.split("\t")[:3] for line in again.stdout.splitlines()] == [[k, "exists", r[2]] for k, r in
                                                                           zip(keys, rows)]
    unknown = cli(tmp_path, "collections", "import", "--from", str(shared_data), "trec-web-1999")
    assert unknown.returncode == 2 and "no published set trec-web-1999" in unknown.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = cli(tmp_path, "collections", "import", "--from", str(empty), "trec-web-2011-adhoc")
    assert missing.returncode == 1 and missing.stdout.startswith("trec-web-2011-adhoc\tmissing\t-\tno file")
    assert cli(tmp_path, "collections", "import").returncode == 2  # no --from and no EVALSERVE_CATALOGUE_DIR


class Server:
    def __init__(self, tmp: Path, catalogue: Path | None) -> None:
        env = {"EVALSERVE_DATA_DIR": str(tmp)}
        if catalogue is not None:
            env["EVALSERVE_CATALOGUE_DIR"] = str(catalogue)
        self.settings = Settings.from_env(env)
        self.app = create_app(self.settings, migrate=True)
        st = self.app.extensions["evalserve"]
        self.ctx = WorkerContext(self.settings, st.db, st.blobs)
        self.admin = {"Authorization": f"Bearer {create_token(st.db, 'admin', ('admin',))[1]}"}
        self.user = {"Authorization": f"Bearer {create_token(st.db, 'user', ('read', 'submit'))[1]}"}
        self.http = self.app.test_client()


@pytest.fixture
def server(tmp_path: Path, shared_data: Path) -> Iterator[Server]:
    made = Server(tmp_path, shared_data)
    yield made
    made.ctx.db.dispose()


def test_an_admin_loads_a_set_and_anyone_evaluates_a_run_against_it(server: Server, shared_data: Path,
                                                                    tmp_path: Path) -> None:
    http = server.http
    assert http.post("/v1/catalogue", json={"keys": ["trec-web-2012-adhoc"]},
                     headers=server.user).status_code == 403
    answer = http.post("/v1/catalogue", json={"keys": ["trec-web-2012-adhoc"]}, headers=server.admin)
    assert answer.status_code == 200
    [loaded] = answer.json["loaded"]
    assert loaded["key"] == "trec-web-2012-adhoc" and loaded["status"] == "created"
    collection = loaded["collection"]
    again = http.post("/v1/catalogue", json={"keys": ["trec-web-2012-adhoc"]}, headers=server.admin)
    assert again.json["loaded"][0] == {**loaded, "status": "exists"}
    shown = http.get(f"/v1/collections/{collection}", headers=server.user).json
    assert shown["catalogue_key"] == "trec-web-2012-adhoc" and "TREC 2012 Web Track" in shown["citation"]
    assert shown["n_topics"] == 50 and not shown["hidden"]
    topics = http.get(f"/v1/collections/{collection}/topics", headers=server.user).json["topics"]
    assert topics["151"]["query"] == "403b"
    bad = http.post("/v1/catalogue", json={"keys": ["nope"]}, headers=server.admin)
    assert bad.status_code == 422 and bad.json["code"] == "unknown-catalogue-key"

    # a participant's run against the hosted judgments: no qrels upload, the offline numbers
    run_path = shared_data / "trec-web-2012-runs" / "runs" / "ql-results-cata-filtered.txt"
    run = http.post(f"/v1/runs?collection={collection}&name=ql.run", data=run_path.read_bytes(),
                    headers=server.user)
    assert run.status_code == 201, run.json
    job = http.post("/v1/evaluations", json={"collection": collection, "runs": [run.json["id"]],
                                             "measures": ["AP", "nDCG@20", "P@10"]}, headers=server.user).json
    assert run_job(server.ctx, job["id"]) == "succeeded"
    online = http.get(f"/v1/jobs/{job['id']}/result", headers=server.user).json
    out = tmp_path / "offline.json"
    offline = subprocess.run([sys.executable, "-m", "evalserve.cli.main", "evaluate", "--qrels",
                              str(shared_data / PUBLISHED["trec-web-2012-adhoc"].qrels), "--run", str(run_path),
                              "-m", "AP", "nDCG@20", "P@10", "-o", str(out)], env={**os.environ,
                              "PYTHONPATH": str(ROOT)}, capture_output=True, text=True)
    assert offline.returncode == 0, offline.stderr
    [expected] = json.loads(out.read_text())["runs"].values()  # named by file offline, by upload name online
    [got] = online["runs"].values()
    assert {m: got[m]["mean"] for m in expected} == {m: v["mean"] for m, v in expected.items()}


def test_without_a_catalogue_directory_the_route_says_so(tmp_path: Path) -> None:
    bare = Server(tmp_path, None)
    answer = bare.http.post("/v1/catalogue", json={}, headers=bare.admin)
    assert answer.status_code == 422 and answer.json["code"] == "catalogue-unavailable"
    bare.ctx.db.dispose()


def test_an_uploaded_collection_has_no_catalogue_fields(server: Server) -> None:
    made = server.http.post("/v1/collections", data={"name": "c", "qrels": (io.BytesIO(b"1 0 d1 1\n"), "q")},
                            headers=server.user).json
    assert made["catalogue_key"] is None and made["citation"] == ""
    assert server.http.get(f"/v1/collections/{made['id']}/topics", headers=server.user).json == {"topics": {}}


def test_the_catalogue_lists_every_set_and_what_it_was_loaded_as(server: Server) -> None:
    before = server.http.get("/v1/catalogue", headers=server.user).json
    assert [entry["key"] for entry in before] == list(PUBLISHED) and all(e["collection"] is None for e in before)
    loaded = server.http.post("/v1/catalogue", json={"keys": ["ntcir-13-www-1"]}, headers=server.admin).json
    after = {entry["key"]: entry for entry in server.http.get("/v1/catalogue", headers=server.user).json}
    assert after["ntcir-13-www-1"]["collection"] == loaded["loaded"][0]["collection"]
    assert "NTCIR-13" in after["ntcir-13-www-1"]["citation"]
