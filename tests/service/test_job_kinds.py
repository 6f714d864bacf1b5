"""Job kinds (``service.jobs.kinds``): every request the service stores today round-trips through its typed
request, and a new kind of job needs only an entry in the table and its run function in the runner's ``RUNS`` --
shown with a toy kind that counts a job's runs, run by the real runner and read back through the real job and
result views (SQLite, no broker)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalserve.service.access.tokens import create_token
from evalserve.service.core.config import Settings
from evalserve.service.jobrun import kinds as worker_kinds
from evalserve.service.jobrun.context import WorkerContext
from evalserve.service.jobrun.kinds import RUNS, KindRun
from evalserve.service.jobrun.runner import run_job
from evalserve.service.jobs import kinds as job_kinds
from evalserve.service.jobs.kinds import KINDS, EvaluationRequest, JobKind, MetaRequest
from evalserve.service.jobs.lifecycle import Claim, create_job
from evalserve.service.store.models import Job, RunRecord, new_id
from evalserve.service.web.app import create_app

RUN = b"1 Q0 d1 1 3.0 t\n1 Q0 d2 2 2.0 t\n"
QRELS = b"1 0 d1 1\n"

STORED_REQUESTS = [
    (EvaluationRequest, {"runs": ["run_a", "run_b"], "measures": ["AP", "P@10"], "ties": "trec", "topics": "common",
                         "per_topic": False}),
    (EvaluationRequest, {"runs": ["run_a"], "measures": ["AP"], "ties": "rank", "topics": "all", "per_topic": True,
                         "task": "task_1", "submission": "sub_1", "version": 3}),
    (MetaRequest, {"method": "unanimity", "options": {"seed": 1}, "evaluation": "job_1", "measures": ["AP"]}),
    (MetaRequest, {"method": "correlation", "options": {}, "runs": ["run_a", "run_b"], "measures": ["AP", "RR"],
                   "ties": "trec", "topics": "common"}),
]


@pytest.mark.parametrize(("request_type", "stored"), STORED_REQUESTS)
def test_every_stored_request_shape_round_trips_unchanged(request_type: Any, stored: dict[str, Any]) -> None:
    typed = request_type.from_json(stored)
    assert typed.to_json() == stored
    assert request_type.from_json(typed.to_json()) == typed


def test_the_table_names_every_kind_once() -> None:
    assert sorted(KINDS) == ["evaluation", "meta"]
    assert all(name == kind.name for name, kind in KINDS.items())


def count_runs(ctx: WorkerContext, claim: Claim, lease: Any) -> dict[str, Any]:
    """The toy kind's whole run function: how many runs the job names."""
    return {"counted": len(claim.request["runs"])}


@pytest.fixture
def toy_kind(monkeypatch: pytest.MonkeyPatch) -> Iterator[JobKind]:
    kind = JobKind("count", EvaluationRequest.from_json, ("json",),
                   lambda document, request, fmt, per_topic: json.dumps(document),
                   "a count result is json")
    monkeypatch.setitem(job_kinds.KINDS, "count", kind)
    monkeypatch.setitem(worker_kinds.RUNS, "count", KindRun(count_runs))
    yield kind


def test_a_new_job_kind_is_one_table_entry_and_one_function(tmp_path: Path, toy_kind: JobKind) -> None:
    settings = Settings.from_env({"EVALSERVE_DATA_DIR": str(tmp_path)})
    app = create_app(settings, migrate=True)
    st = app.extensions["evalserve"]
    token = create_token(st.db, "t", ("read", "submit"))[1]
    http = app.test_client()
    auth = {"Authorization": f"Bearer {token}"}
    collection = http.post("/v1/collections", headers=auth, data={"name": "c", "qrels": (io.BytesIO(QRELS), "q")})
    runs = [http.post(f"/v1/runs?collection={collection.json['id']}&name=r{i}", headers=auth, data=RUN).json["id"]
            for i in range(3)]
    with st.db.session() as s:
        run_owner = s.get(RunRecord, runs[0])
        assert run_owner is not None
        request = EvaluationRequest(tuple(runs), ("AP",))
        job = create_job(s, Job(id=new_id("job"), owner_id=run_owner.owner_id, collection_id=collection.json["id"],
                                kind="count", request=request.to_json()))
        job_id = job.id
    ctx = WorkerContext(settings, st.db, st.blobs)
    assert run_job(ctx, job_id) == "succeeded"
    shown = http.get(f"/v1/jobs/{job_id}", headers=auth).json
    assert shown["kind"] == "count" and shown["state"] == "succeeded" and shown["runs"] == runs
    assert http.get(f"/v1/jobs/{job_id}/result", headers=auth).json == {"counted": 3}
    refused = http.get(f"/v1/jobs/{job_id}/result?format=tsv", headers=auth)
    assert refused.status_code == 422 and refused.json["detail"] == "a count result is json"
    no_plot = http.get(f"/v1/jobs/{job_id}/plot", headers=auth)
    assert no_plot.status_code == 422 and no_plot.json["code"] == "plot-unavailable"
    st.db.dispose()


def test_every_kind_has_a_run_an_output_builder_and_a_request_schema() -> None:
    from evalserve.service.web.schemas import REQUEST_SCHEMAS

    assert set(RUNS) == set(KINDS) == set(REQUEST_SCHEMAS)
    assert all(callable(RUNS[name].run) and callable(RUNS[name].outputs) for name in KINDS)
