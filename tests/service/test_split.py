"""Split jobs without a broker (``service.jobrun.split`` called directly on a real SQLite database): a 40-run job cut
into parts gives byte for byte the document of the same job unsplit and of ``evalserve evaluate``; a part whose
worker died is re-run; a job's failure is the one an unsplit job reports; cancelling stops every part."""

from __future__ import annotations

import gzip
import io
import json
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from evalserve.cli.main import main as cli_main
from evalserve.service.access.tokens import create_token
from evalserve.service.core.config import Settings
from evalserve.service.jobrun import stored_runs
from evalserve.service.jobrun.context import WorkerContext
from evalserve.service.jobrun.runner import run_job
from evalserve.service.jobrun.split import merge, run_part, slices, split_into
from evalserve.service.jobs import lifecycle as jobs
from evalserve.service.jobs import parts as job_parts
from evalserve.service.store.models import Job, WebhookDelivery
from evalserve.service.web.app import create_app
from tests.service.split_runs import make_run, write_runs

MEASURES = ["P@10", "AP", "nDCG@10", "RR", "Rprec"]


class Deployment:
    """An app and a worker context on one SQLite database; no broker (parts are run by calling ``run_part``)."""

    def __init__(self, tmp: Path, **env: str) -> None:
        self.settings = Settings.from_env({"EVALSERVE_DATA_DIR": str(tmp), "EVALSERVE_LEASE_SECONDS": "1",
                                           "EVALSERVE_QUOTA_ACTIVE_JOBS": "0", **env})
        self.app = create_app(self.settings, migrate=True)
        st = self.app.extensions["evalserve"]
        self.ctx = WorkerContext(self.settings, st.db, st.blobs)
        self.token = create_token(st.db, "t", ("read", "submit"))[1]
        self.http = self.app.test_client()
        self.headers = {"Authorization": f"Bearer {self.token}"}

    def collection(self, qrels: bytes) -> str:
        return str(self.http.post("/v1/collections", headers=self.headers,
                                  data={"name": "c", "qrels": (io.BytesIO(qrels), "qrels.test")}).json["id"])

    def job(self, collection: str, runs: list[tuple[str, bytes]], measures: list[str] = MEASURES,
            **extra: str) -> str:
        ids = []
        for name, data in runs:
            made = self.http.post(f"/v1/runs?collection={collection}&name={name}", headers=self.headers, data=data)
            assert made.status_code == 201, made.json
            ids.append(made.json["id"])
        job = self.http.post("/v1/evaluations", headers=self.headers,
                             json={"collection": collection, "runs": ids, "measures": measures, **extra})
        assert job.status_code == 202, job.json
        return str(job.json["id"])

    def result(self, job_id: str) -> bytes:
        response = self.http.get(f"/v1/jobs/{job_id}/result?per_topic=true", headers=self.headers)
        assert response.status_code == 200, self.row(job_id).error
        return bytes(response.data)

    def row(self, job_id: str) -> Job:
        with self.ctx.db.session() as s:
            found = s.get(Job, job_id)
            assert found is not None
            s.expunge(found)
            return found

    def run_parts(self, job_id: str) -> list[str]:
        return [run_part(self.ctx, job_id, i) for i in range(len(job_parts.parts(self.ctx.db, job_id)))]


@pytest.fixture(scope="module")
def qrels(shared_data: Path) -> bytes:
    return (shared_data / "trec_eval-test" / "qrels.test").read_bytes()


@pytest.fixture(scope="module")
def runs(qrels: bytes, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return write_runs(qrels, tmp_path_factory.mktemp("runs"), 40)


def offline(shared_data: Path, runs: list[Path], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    args = ["evaluate", "--qrels", str(shared_data / "trec_eval-test" / "qrels.test"), "--format", "json",
            "--per-topic", "-q", "-m", *MEASURES]
    for run in runs:
        args += ["--run", str(run)]
    assert cli_main(args) == 0
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return document


def unsplit(tmp_path: Path, qrels: bytes, files: list[tuple[str, bytes]]) -> tuple[Deployment, str]:
    """The reference: the same job run whole by one worker (splitting off); its deployment and job id."""
    one = Deployment(tmp_path / "one", EVALSERVE_SPLIT_RUNS="0")
    whole = one.job(one.collection(qrels), files)
    assert run_job(one.ctx, whole) == "succeeded"
    return one, whole


def test_slices_keep_order_and_differ_by_at_most_one() -> None:
    cut = slices([str(i) for i in range(41)], 4)
    assert [len(s) for s in cut] == [11, 10, 10, 10] and [r for s in cut for r in s] == [str(i) for i in range(41)]
    settings = Settings.from_env({})
    assert settings.split_runs == 10 and split_into(settings, 19) == 1 and split_into(settings, 40) == 4
    assert split_into(settings, 10_000) == settings.split_max_parts
    assert split_into(Settings.from_env({"EVALSERVE_SPLIT_RUNS": "0"}), 40) == 1


def test_a_split_job_gives_the_document_of_one_worker_and_of_the_cli(
        tmp_path: Path, qrels: bytes, runs: list[Path], shared_data: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    files = [(p.name, p.read_bytes()) for p in runs]
    one, whole = unsplit(tmp_path, qrels, files)

    split = Deployment(tmp_path / "split", EVALSERVE_SPLIT_RUNS="10")
    job_id = split.job(split.collection(qrels), files)
    assert run_job(split.ctx, job_id) == "split"
    row = split.row(job_id)
    assert row.state == "running" and (row.lease_owner or "").startswith("parts:")
    assert split.run_parts(job_id) == ["succeeded"] * 4
    assert split.row(job_id).state == "succeeded" and split.row(job_id).progress == 1.0

    assert split.result(job_id) == one.result(whole), "the same bytes as one worker"
    document = json.loads(split.result(job_id))
    assert document == offline(shared_data, runs, capsys)
    assert list(document["runs"]) == [p.name for p in runs]
    assert document["meta"]["warnings"], "the runs' warnings are merged too"
    assert run_job(split.ctx, job_id) == "skipped" and split.run_parts(job_id) == ["skipped"] * 4
    assert outputs_of(split, job_id) == outputs_of(one, whole), "the merge stores the same report (plots: on request)"


def outputs_of(d: Deployment, job_id: str) -> list[str]:
    """The names of what the worker built from the job's result (``job_outputs``)."""
    from sqlalchemy import select

    from evalserve.service.store.models import JobOutput

    with d.ctx.db.session() as s:
        names = sorted(s.execute(select(JobOutput.name).where(JobOutput.job_id == job_id)).scalars())
    assert "report" in names and not any(name.startswith("plot") for name in names)  # drawn when first asked for
    return names


def test_a_part_whose_worker_died_is_run_again(tmp_path: Path, qrels: bytes, runs: list[Path]) -> None:
    files = [(p.name, p.read_bytes()) for p in runs[:20]]
    one, whole = unsplit(tmp_path, qrels, files)

    d = Deployment(tmp_path / "split", EVALSERVE_SPLIT_RUNS="10")
    job_id = d.job(d.collection(qrels), files)
    assert run_job(d.ctx, job_id) == "split"
    dead = job_parts.claim(d.ctx.db, job_id, 0, "host:1:dead", d.settings.lease_seconds, d.settings.max_attempts)
    assert isinstance(dead, job_parts.PartClaim)
    assert run_part(d.ctx, job_id, 0) == "skipped", "held under a live lease"
    assert run_part(d.ctx, job_id, 1) == "succeeded" and d.row(job_id).state == "running"
    time.sleep(1.2)  # the dead worker's lease runs out
    assert job_parts.sweep(d.ctx.db, 1, 60) == [(job_id, 0)], "the sweeper republishes the part"
    assert run_part(d.ctx, job_id, 0) == "succeeded"
    part = job_parts.parts(d.ctx.db, job_id)[0]
    assert part.attempts == 2 and part.workers[0] == "host:1:dead" and len(part.workers) == 2
    assert d.row(job_id).state == "succeeded" and d.result(job_id) == one.result(whole)
    assert not job_parts.finish(d.ctx.db, dead, "succeeded"), "the dead worker's claim is gone"


def test_the_merge_is_taken_once_and_by_a_new_attempt_if_the_merger_died(
        tmp_path: Path, qrels: bytes, runs: list[Path]) -> None:
    d = Deployment(tmp_path, EVALSERVE_SPLIT_RUNS="10")
    job_id = d.job(d.collection(qrels), [(p.name, p.read_bytes()) for p in runs[:20]])
    assert run_job(d.ctx, job_id) == "split"
    with d.ctx.db.session() as s:  # both parts finish, but their worker dies before merging
        for part in job_parts.parts(d.ctx.db, job_id):
            row = s.get(job_parts.JobPart, (job_id, part.index))
            assert row is not None
            row.state = "succeeded"
    first = job_parts.take_for_merge(d.ctx.db, job_id, "merger", 1)
    assert first is not None and job_parts.take_for_merge(d.ctx.db, job_id, "other", 1) is None
    time.sleep(1.2)
    assert jobs.jobs_to_republish(d.ctx.db, 60) == [job_id]
    assert run_job(d.ctx, job_id) == "failed", "claimed again: every part final, so it merges at once"
    assert d.row(job_id).error["code"] == "internal-error"  # type: ignore[index]  # parts without results


def test_a_failed_split_job_reports_what_one_worker_reports(tmp_path: Path, qrels: bytes) -> None:
    """Runs with no judged topic in two parts: one no-topics-scored error naming both, as unsplit."""
    unjudged = b"q1 Q0 d1 1 3.0 t\n"
    files = [(f"r{i:02d}", unjudged if i in (3, 17) else make_run(qrels, i)) for i in range(20)]
    one = Deployment(tmp_path / "one", EVALSERVE_SPLIT_RUNS="0")
    whole = one.job(one.collection(qrels), files)
    assert run_job(one.ctx, whole) == "failed"
    d = Deployment(tmp_path / "split", EVALSERVE_SPLIT_RUNS="10")
    job_id = d.job(d.collection(qrels), files)
    assert run_job(d.ctx, job_id) == "split" and d.run_parts(job_id) == ["failed", "failed"]
    assert d.row(job_id).state == "failed"
    assert d.row(job_id).error == one.row(whole).error
    assert [p["source"] for p in d.row(job_id).error["problems"]] == ["r03", "r17"]  # type: ignore[index]


def test_reading_problems_come_before_other_failures() -> None:
    def outcome(problems: list[dict[str, Any]], phase: str | None) -> dict[str, Any]:
        error = {"phase": phase, "problems": [], "detail": {"code": "x"}} if phase else None
        return {"judgments": {"files": [], "problems": [], "omitted": 0},
                "runs": {"files": [], "names": [], "problems": problems, "omitted": 0},
                "fit_warnings": [], "document": None, "error": error}

    bad = {"line": 1, "column": None, "code": "bad", "message": "m", "severity": "error", "source": "b"}
    merged = merge([outcome([], "other"), outcome([bad], "read")])
    assert merged["error"]["code"] == "invalid-input" and merged["error"]["problems"] == [bad]
    assert merge([outcome([], None), outcome([], "other")])["error"] == {"code": "x"}


def test_cancelling_a_split_job_cancels_its_parts(tmp_path: Path, qrels: bytes, runs: list[Path]) -> None:
    d = Deployment(tmp_path, EVALSERVE_SPLIT_RUNS="10")
    job_id = d.job(d.collection(qrels), [(p.name, p.read_bytes()) for p in runs[:20]])
    assert run_job(d.ctx, job_id) == "split"
    assert jobs.request_cancel(d.ctx.db, job_id) == "running"
    assert run_part(d.ctx, job_id, 0) == "cancelled"
    job_parts.sweep(d.ctx.db, 1, 60)  # the sweeper cancels a split job asked to stop
    assert d.row(job_id).state == "cancelled"
    assert {p.state for p in job_parts.parts(d.ctx.db, job_id)} == {"cancelled"}


@pytest.mark.parametrize("end", ["succeeded", "cancelled"])
def test_a_split_job_sends_its_callback_once_when_it_ends(
        tmp_path: Path, qrels: bytes, runs: list[Path], end: str) -> None:
    """The job's ``callback_url`` delivery is recorded once, by whoever ends the job (the merger, or the sweeper
    that cancels it), as for a job one worker runs."""
    d = Deployment(tmp_path, EVALSERVE_SPLIT_RUNS="10", EVALSERVE_WEBHOOK_ALLOW_NETWORKS="127.0.0.0/8")
    job_id = d.job(d.collection(qrels), [(p.name, p.read_bytes()) for p in runs[:20]],
                   callback_url="http://127.0.0.1:9/callback")
    assert run_job(d.ctx, job_id) == "split"
    assert _callbacks(d, job_id) == [], "handing the job to its parts is not its end"
    if end == "cancelled":
        assert jobs.request_cancel(d.ctx.db, job_id) == "running"
    assert set(d.run_parts(job_id)) == {end}
    if end == "cancelled":
        job_parts.sweep(d.ctx.db, 1, 60)  # parts refused to start; the sweeper ends the job
    assert d.row(job_id).state == end
    job_parts.sweep(d.ctx.db, 1, 60)
    assert _callbacks(d, job_id) == ["job.finished"]


def _callbacks(d: Deployment, job_id: str) -> list[str]:
    with d.ctx.db.session() as s:
        return list(s.execute(select(WebhookDelivery.event).where(WebhookDelivery.job_id == job_id)).scalars())


def test_runs_parsed_from_a_temporary_file_give_the_same_bytes(
        tmp_path: Path, qrels: bytes, runs: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Large stored runs are inflated into a file and parsed from its path (``service.jobrun.stored_runs``): the same
    document as the ``Blob`` path, split or not, gzipped or not; runs with warnings take the ``Blob`` path."""
    files = [(f"{p.name}.gz", gzip.compress(p.read_bytes())) if i % 2 else (p.name, p.read_bytes())
             for i, p in enumerate(runs[:20])]
    files[4] = ("odd.run", b"301 Q0 CR93E-1282 one 3.0 t\n" + files[4][1])  # a warning: rank not an integer
    plain = Deployment(tmp_path / "blob", EVALSERVE_SPLIT_RUNS="0")
    reference = plain.job(plain.collection(qrels), files)
    assert run_job(plain.ctx, reference) == "succeeded"

    taken: list[bool] = []
    real = stored_runs.parse_streamed

    def counted(*args: Any) -> Any:
        run = real(*args)
        taken.append(run is not None)
        return run

    monkeypatch.setattr(stored_runs, "STREAM_FROM_BYTES", 0)
    monkeypatch.setattr(stored_runs, "parse_streamed", counted)
    for split_runs, outcome in (("0", "succeeded"), ("10", "split")):
        d = Deployment(tmp_path / f"streamed-{split_runs}", EVALSERVE_SPLIT_RUNS=split_runs)
        job_id = d.job(d.collection(qrels), files)
        assert run_job(d.ctx, job_id) == outcome
        if outcome == "split":
            assert d.run_parts(job_id) == ["succeeded", "succeeded"]
        assert d.result(job_id) == plain.result(reference)
    assert taken.count(True) == 38 and taken.count(False) == 2, taken  # a run with a warning falls back


def test_the_job_time_limit_covers_all_its_parts(tmp_path: Path, qrels: bytes, runs: list[Path]) -> None:
    d = Deployment(tmp_path, EVALSERVE_SPLIT_RUNS="10", EVALSERVE_JOB_TIME_LIMIT_SECONDS="0.3")
    job_id = d.job(d.collection(qrels), [(p.name, p.read_bytes()) for p in runs[:20]])
    assert run_job(d.ctx, job_id) == "split"
    time.sleep(0.4)  # the job's limit passes before its parts start
    assert d.run_parts(job_id) == ["failed", "failed"]
    row = d.row(job_id)
    assert row.state == "failed" and row.error is not None and row.error["code"] == "time-limit", row.error
