"""The client and its command line against real deployments (gunicorn + a Celery worker, embedded and
PostgreSQL + Redis), nothing mocked: results equal the offline CLI's -- the command line's JSON byte for byte --,
bad input exits 2 with every problem, errors carry the problem+json fields, a retried POST gets the same job."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import httpx
import pytest
from evalserve_client import ApiError, Client
from evalserve_client.cli import main as client_main

from evalserve.cli.main import main as evalserve_main
from tests.service.live import LiveService

MEASURES = ["AP", "P@10", "nDCG@10", "ERR@20", "alpha_nDCG@20", "ERR_IA@20", "NRBP", "P_IA@10", "StRecall@20",
            "RBU"]
BAD_RUN = b"101 Q0 doc1 1 0.5 tag\n101 Q0 doc2 two 0.4 tag\n102 Q0 doc3 1 nan tag\n"


@pytest.fixture
def client(live: LiveService) -> Iterator[Client]:
    with Client(live.url, live.token) as c:
        yield c


def offline(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``evalserve <args>`` in process: exit code, stdout, stderr."""
    capsys.readouterr()
    code = evalserve_main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def online(capsys: pytest.CaptureFixture[str], live: LiveService, *args: str) -> tuple[int, str, str]:
    """``evalserve-client <command> --server ... --token ... <args>`` in process: exit code, stdout, stderr."""
    capsys.readouterr()
    code = client_main([args[0], "--server", live.url, "--token", live.token, *args[1:]])
    out, err = capsys.readouterr()
    return code, out, err


def inputs(files: dict[str, Path]) -> list[str]:
    return ["--qrels", str(files["qrels"]), "--run", str(files["run1"]), "--run", str(files["run2"])]


def total(http: httpx.Client, what: str) -> int:
    """How many jobs/runs the server holds (from the pagination header)."""
    response = http.get(f"/v1/{what}", params={"page_size": 1})
    return int(json.loads(response.headers["X-Pagination"])["total"])


# -- the library -------------------------------------------------------------------------------------------------


def test_a_round_trip_gives_the_offline_cli_results_and_reports_progress(
        client: Client, web2012: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    collection = client.create_collection(web2012["qrels"], name="TREC Web 2012", grade_scale="0-4")
    assert collection["n_topics"] == 50 and collection["qrels"]["filename"] == "qrels-for-ndeval.txt"
    seen: list[dict[str, Any]] = []
    job = client.evaluate(collection, [web2012["run1"], web2012["run2"]], MEASURES, per_topic=True,
                          progress=seen.append)
    assert job["state"] == "succeeded" and job["progress"] == 1.0
    assert seen[0]["state"] == "queued" and seen[-1] == job and len(seen) >= 2
    assert all(0.0 <= j["progress"] <= 1.0 for j in seen)

    code, expected, _ = offline(capsys, "evaluate", *inputs(web2012), "-m", *MEASURES, "--per-topic", "-q")
    assert code == 0
    assert client.results(job) == json.loads(expected)
    assert client.results_text(job, "json") == expected, "the bytes of `evalserve evaluate --format json`"
    for fmt in ("tsv", "csv", "trec_eval"):
        _, text, _ = offline(capsys, "evaluate", *inputs(web2012), "-m", *MEASURES, "--format", fmt, "-q")
        assert client.results(job, fmt, per_topic=False) == text, fmt
    try:
        import pandas  # noqa: F401
    except ImportError:
        return
    _, tsv, _ = offline(capsys, "evaluate", *inputs(web2012), "-m", *MEASURES, "--format", "tsv", "--per-topic")
    frame = client.results_frame(job)
    rows = [line.split("\t") for line in tsv.splitlines()[1:]]
    assert frame.astype({"value": str}).values.tolist() == [[r, m, t, repr(float(v))] for r, m, t, v in rows]


def test_stored_runs_mixed_with_files_keep_their_order(client: Client, web2012: dict[str, Path]) -> None:
    collection = client.create_collection(web2012["qrels"], name="c")
    stored = client.upload_run(collection, web2012["run2"], name="catb.run.gz")
    assert stored["name"] == "catb.run" and stored["n_topics"] == 50
    job = client.evaluate(collection["id"], [stored, web2012["run1"], stored["id"]], ["map", "ndcg_cut_10"])
    assert job["measures"] == ["map", "ndcg_cut_10"] and len(job["runs"]) == 2, "requested names, duplicates dropped"
    document = client.results(job)
    assert list(document["runs"]) == ["catb.run", "ql-results-cata-filtered.txt"]
    assert "per_topic" not in document["runs"]["catb.run"]["map"]
    assert client.job(job["id"])["links"]["result"] == f"/v1/jobs/{job['id']}/result"
    assert any(m["name"] == "alpha_nDCG" for m in client.measures())
    assert [m["name"] for m in client.measures("map")] == ["AP"]


def test_api_errors_carry_the_problem_fields(live: LiveService, client: Client, web2012: dict[str, Path]) -> None:
    collection = client.create_collection(web2012["qrels"], name="c")
    with pytest.raises(ApiError) as refused:
        client.upload_run(collection, ("bad.run", BAD_RUN))
    error = refused.value
    assert (error.status, error.code, error.title) == (422, "invalid-upload", "Unprocessable Entity")
    assert error.type.endswith("/invalid-upload") and "bad.run" in error.detail
    assert [(p["source"], p["line"], p["column"], p["code"], p["severity"]) for p in error.problems] == [
        ("bad.run", 2, 13, "rank-not-integer", "warning"), ("bad.run", 3, 15, "score-nan", "error")]

    with pytest.raises(ApiError) as unknown:
        client.evaluate(collection, [web2012["run1"]], ["AP", "nonsense@3"], wait=False)
    assert unknown.value.status == 422 and unknown.value.code == "invalid-measure"
    assert [(p["field"], p["code"]) for p in unknown.value.problems] == [("measures", "invalid-measure")]

    with pytest.raises(ApiError) as missing:
        client.job("job_0000")
    assert (missing.value.status, missing.value.code, missing.value.detail) == (404, "not-found", "no job job_0000")

    with Client(live.url, "es_nobody_nothing") as stranger, pytest.raises(ApiError) as denied:
        stranger.job("job_0000")
    assert denied.value.status == 401 and denied.value.code == "unauthorized"
    assert denied.value.headers["www-authenticate"].startswith("Bearer")


class DropsFirstAnswer(httpx.BaseTransport):
    """A real connection that loses the server's first answer to a POST on ``path`` after the server has acted
    on it -- what a connection reset or a proxy timeout does to a client."""

    def __init__(self, path: str) -> None:
        self.inner = httpx.HTTPTransport()
        self.path = path
        self.sent: list[httpx.Request] = []
        self.answers: list[httpx.Response] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.method != "POST" or request.url.path != self.path:
            return response
        response.read()
        self.sent.append(request)
        self.answers.append(response)
        if len(self.answers) == 1:
            raise httpx.ReadError("connection reset by peer", request=request)
        return response

    def close(self) -> None:
        self.inner.close()


def test_a_retried_post_gets_the_same_job(live: LiveService, client: Client, web2012: dict[str, Path]) -> None:
    collection = client.create_collection(web2012["qrels"], name="c")
    lossy = DropsFirstAnswer("/v1/submissions")
    with live.client() as http:
        jobs_before, runs_before = total(http, "jobs"), total(http, "runs")
        with Client(live.url, live.token, transport=lossy) as retrying:
            job = retrying.evaluate(collection, [web2012["run1"]], ["AP"], wait=False)
        first, retry = lossy.sent
        assert first.headers["Idempotency-Key"] == retry.headers["Idempotency-Key"]
        assert first.content == retry.content
        assert lossy.answers[0].status_code == lossy.answers[1].status_code == 202
        assert lossy.answers[0].json()["id"] == lossy.answers[1].json()["id"] == job["id"]
        assert lossy.answers[1].headers["Idempotent-Replayed"] == "true"
        assert total(http, "jobs") == jobs_before + 1 and total(http, "runs") == runs_before + 1
    assert client.wait(job)["state"] == "succeeded"


# -- the command line ----------------------------------------------------------------------------------------------


def test_the_cli_prints_the_bytes_of_evalserve_evaluate(live: LiveService, web2012: dict[str, Path], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    for extra in ([], ["--per-topic"], ["--ties", "rank", "--topics", "complete"]):
        args = [*inputs(web2012), "-m", *MEASURES, "--format", "json", *extra]
        code, expected, _ = offline(capsys, "evaluate", *args)
        assert code == 0
        assert online(capsys, live, "submit", *args) == (0, expected, ""), extra
    # -o FILE, the default measures, and the server and token from the environment
    monkeypatch.setenv("EVALSERVE_URL", live.url)
    monkeypatch.setenv("EVALSERVE_TOKEN", live.token)
    offline(capsys, "evaluate", *inputs(web2012), "-o", str(tmp_path / "offline.json"))
    capsys.readouterr()
    assert client_main(["submit", *inputs(web2012), "-o", str(tmp_path / "online.json")]) == 0
    assert capsys.readouterr() == ("", "")
    assert (tmp_path / "online.json").read_bytes() == (tmp_path / "offline.json").read_bytes()


def test_the_cli_against_an_existing_collection_and_a_file_with_warnings(
        live: LiveService, client: Client, web2012: dict[str, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(b"101 0 doc1 1\n101 0 doc2 0\n102 0 doc3 2\n")
    run = tmp_path / "warned.run"
    run.write_bytes(b"101 Q0 doc1 1 0.5 tag\n101 Q0 doc2 two 0.4 tag\n102 Q0 doc3 1 0.3 tag\n")
    args = ["--run", str(run), "-m", "AP", "P@10", "--per-topic"]
    code, expected, warnings = offline(capsys, "evaluate", "--qrels", str(qrels), *args)
    assert code == 0 and "[rank-not-integer]" in warnings
    assert online(capsys, live, "submit", "--qrels", str(qrels), *args) == (0, expected, warnings)
    collection = client.create_collection(qrels, name="small")
    assert online(capsys, live, "submit", "--collection", collection["id"], "--run", str(run), "-m", "AP", "P@10",
                  "--per-topic", "-q") == (0, expected, "")
    code, tsv, _ = offline(capsys, "evaluate", "--qrels", str(qrels), *args, "--format", "tsv")
    assert online(capsys, live, "submit", "--qrels", str(qrels), *args, "--format", "tsv", "-q") == (0, tsv, "")


def test_bad_input_exits_2_with_every_problem_and_no_traceback(
        live: LiveService, web2012: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.run"
    bad.write_bytes(BAD_RUN)
    args = ["--qrels", str(web2012["qrels"]), "--run", str(bad), "-m", "AP"]
    code, _, problems = offline(capsys, "evaluate", *args)
    assert code == 2
    code, out, err = online(capsys, live, "submit", *args)
    assert (code, out) == (2, "")
    lines = err.splitlines()
    assert lines[:-1] == problems.splitlines(), "the problems `evalserve evaluate` prints, in its layout"
    assert lines[:-1] == [f"{bad}:2:13: warning: rank 'two' is not an integer [rank-not-integer]",
                          f"{bad}:3:15: error: score 'nan' is NaN; ranking would be undefined [score-nan]"]
    assert lines[-1].startswith("evalserve-client: the server refused the request (422 invalid-upload): ")

    bad_qrels = tmp_path / "q.txt"
    bad_qrels.write_bytes(b"1 0 d x\n")
    code, out, err = online(capsys, live, "submit", "--qrels", str(bad_qrels), "--run", str(web2012["run1"]))
    assert code == 2 and err.startswith(f"{bad_qrels}:1:") and "Traceback" not in err

    code, out, err = online(capsys, live, "submit", *inputs(web2012), "-m", "AP", "nonsense@3")
    assert code == 2 and err.splitlines()[0].startswith("measures: error: unknown measure") and "Traceback" not in err

    code, out, err = online(capsys, live, "status", "job_0000")
    assert (code, out) == (2, "") and "(404 not-found): no job job_0000" in err


def test_status_result_cancel_and_measures_commands(live: LiveService, client: Client, web2012: dict[str, Path],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    collection = client.create_collection(web2012["qrels"], name="c")
    code, out, _ = online(capsys, live, "submit", "--collection", collection["id"], "--run", str(web2012["run1"]),
                          "-m", "AP", "nDCG@10", "--no-wait")
    job_id = out.strip()
    assert code == 0 and job_id.startswith("job_")
    code, text, _ = online(capsys, live, "result", job_id, "--wait", "--format", "trec_eval", "--per-topic")
    assert code == 0
    _, expected, _ = offline(capsys, "evaluate", "--qrels", str(web2012["qrels"]), "--run", str(web2012["run1"]),
                             "-m", "AP", "nDCG@10", "--format", "trec_eval", "--per-topic")
    assert text == expected
    code, out, _ = online(capsys, live, "status", job_id)
    assert code == 0 and json.loads(out)["state"] == "succeeded"
    code, out, _ = online(capsys, live, "cancel", job_id)
    assert code == 0 and json.loads(out)["state"] == "succeeded", "a finished job stays as it is"
    code, out, _ = online(capsys, live, "measures", "alpha_nDCG")
    assert code == 0 and out == offline(capsys, "measures", "alpha_nDCG")[1]
    code, out, _ = online(capsys, live, "measures", "--format", "json")
    assert code == 0 and json.loads(out) == json.loads(offline(capsys, "measures", "--format", "json")[1])


def test_the_installed_command(live: LiveService, web2012: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    scripts = {e.name: e.value for e in metadata.entry_points(group="console_scripts")}
    assert scripts["evalserve-client"] == "evalserve_client.cli:run"
    args = [*inputs(web2012), "-m", "AP", "ERR_IA@20", "--per-topic"]
    done = subprocess.run([sys.executable, "-m", "evalserve_client", "submit", "--server", live.url, *args],
                          capture_output=True, env={**live.env, "EVALSERVE_TOKEN": live.token}, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == offline(capsys, "evaluate", *args)[1].encode()
