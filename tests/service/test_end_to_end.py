"""End to end over HTTP, against real processes (gunicorn + a Celery worker) on both backends: the results of
the service equal the offline CLI's for the TREC Web 2012 runs, in every format; uploads are validated."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from evalserve.cli.main import main as cli_main
from tests.service.live import LiveService

MEASURES = ["AP", "P@10", "nDCG@10", "ERR@20", "alpha_nDCG@20", "ERR_IA@20", "NRBP", "P_IA@10", "StRecall@20",
            "RBU"]


@pytest.fixture(scope="module")
def web2012(shared_data: Path) -> dict[str, Path]:
    runs = shared_data / "trec-web-2012-runs" / "runs"
    return {"qrels": shared_data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt",
            "run1": runs / "ql-results-cata-filtered.txt", "run2": runs / "ql-results-catb.txt.gz"}


def offline(capsys: pytest.CaptureFixture[str], files: dict[str, Path], fmt: str, *extra: str) -> str:
    capsys.readouterr()
    code = cli_main(["evaluate", "--qrels", str(files["qrels"]), "--run", str(files["run1"]), "--run",
                     str(files["run2"]), "-m", *MEASURES, "--format", fmt, "-q", *extra])
    assert code == 0
    return capsys.readouterr().out


def test_results_over_http_equal_the_offline_cli(live: LiveService, web2012: dict[str, Path],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    with live.client() as http:
        created = http.post("/v1/collections", data={"name": "TREC Web 2012", "grade_scale": "0-4"},
                            files={"qrels": web2012["qrels"].open("rb")})
        assert created.status_code == 201, created.text
        collection = created.json()
        assert created.headers["Location"] == f"/v1/collections/{collection['id']}"
        assert collection["n_topics"] == 50
        submitted = http.post("/v1/submissions",
                              data={"collection": collection["id"], "measures": " ".join(MEASURES),
                                    "per_topic": "true"},
                              files=[("run", web2012["run1"].open("rb")), ("run", web2012["run2"].open("rb"))])
        assert submitted.status_code == 202, submitted.text
        job_id = submitted.json()["id"]
        assert submitted.headers["Location"] == f"/v1/jobs/{job_id}"
        job = live.wait_job(http, job_id)
        assert job["state"] == "succeeded", job
        assert job["progress"] == 1.0 and job["links"]["result"] == f"/v1/jobs/{job_id}/result"
        served = http.get(f"/v1/jobs/{job_id}/result").json()
        assert served == json.loads(offline(capsys, web2012, "json", "--per-topic"))
        for fmt in ("tsv", "csv", "trec_eval"):
            for per_topic in ("true", "false"):
                text = http.get(f"/v1/jobs/{job_id}/result", params={"format": fmt, "per_topic": per_topic}).text
                extra = ("--per-topic",) if per_topic == "true" else ()
                assert text == offline(capsys, web2012, fmt, *extra), (fmt, per_topic)


def test_stored_runs_are_evaluated_by_id(live: LiveService, web2012: dict[str, Path]) -> None:
    with live.client() as http:
        collection = http.post("/v1/collections", data={"name": "c"},
                               files={"qrels": web2012["qrels"].open("rb")}).json()
        run = http.post("/v1/runs", params={"collection": collection["id"]},
                        files={"run": web2012["run1"].open("rb")})
        assert run.status_code == 201, run.text
        assert run.json()["name"] == "ql-results-cata-filtered.txt" and run.json()["n_topics"] == 50
        raw = http.post("/v1/runs", params={"collection": collection["id"], "name": "catb.run.gz"},
                        content=web2012["run2"].read_bytes())
        assert raw.status_code == 201, raw.text
        assert raw.json()["name"] == "catb.run"
        job = http.post("/v1/evaluations", json={"collection": collection["id"], "runs": [run.json()["id"],
                        raw.json()["id"]], "measures": ["map", "ndcg_cut_10"]})
        assert job.status_code == 202, job.text
        assert job.json()["measures"] == ["map", "ndcg_cut_10"], "the names as requested (issue 14)"
        done = live.wait_job(http, job.json()["id"])
        assert done["state"] == "succeeded"
        result = http.get(f"/v1/jobs/{done['id']}/result").json()
        assert list(result["runs"]) == ["ql-results-cata-filtered.txt", "catb.run"]
        assert "per_topic" not in result["runs"]["catb.run"]["map"]
        assert result["meta"]["measures"] == {"map": "AP", "ndcg_cut_10": "nDCG@10"}


def test_a_bad_run_and_a_bad_measure_are_reported_in_one_problem(live: LiveService,
                                                                  web2012: dict[str, Path]) -> None:
    """Every bad file and every bad measure name in one 422 (issue 14), and nothing stored."""
    bad = b"101 Q0 doc1 1 0.5 tag\n102 Q0 doc3 1 nan tag\n"
    with live.client() as http:
        collection = http.post("/v1/collections", data={"name": "c"},
                               files={"qrels": web2012["qrels"].open("rb")}).json()
        runs_before = http.get("/v1/runs", params={"page_size": 100}).json()
        refused = http.post("/v1/submissions", data={"collection": collection["id"], "measures": "nDGC@10 P.10 P@1O"},
                            files={"run": ("bad.run", bad)})
        assert refused.status_code == 422, refused.text
        problem = refused.json()
        assert problem["code"] == "invalid-upload"
        assert [p["code"] for p in problem["problems"]] == ["score-nan", "invalid-measure", "invalid-measure"]
        assert "'nDGC'" in problem["detail"] and "'P@1O'" in problem["detail"]
        assert http.get("/v1/runs", params={"page_size": 100}).json() == runs_before


def test_a_malformed_upload_is_refused_with_every_problem_and_creates_nothing(live: LiveService,
                                                                                web2012: dict[str, Path]) -> None:
    bad = b"101 Q0 doc1 1 0.5 tag\n101 Q0 doc2 two 0.4 tag\n102 Q0 doc3 1 nan tag\n"
    with live.client() as http:
        collection = http.post("/v1/collections", data={"name": "c"},
                               files={"qrels": web2012["qrels"].open("rb")}).json()
        jobs_before = http.get("/v1/jobs", params={"page_size": 100}).json()
        refused = http.post("/v1/submissions", data={"collection": collection["id"], "measures": "AP"},
                            files={"run": ("bad.run", bad)})
        assert refused.status_code == 422
        assert refused.headers["Content-Type"] == "application/problem+json"
        problem = refused.json()
        assert problem["code"] == "invalid-upload" and problem["status"] == 422
        assert [(p["line"], p["code"], p["severity"]) for p in problem["problems"]] == [
            (2, "rank-not-integer", "warning"), (3, "score-nan", "error")]
        assert all({"line", "column", "code", "message", "severity"} <= set(p) for p in problem["problems"])
        assert http.get("/v1/jobs", params={"page_size": 100}).json() == jobs_before
        bad_qrels = http.post("/v1/collections", data={"name": "bad"}, files={"qrels": ("q.txt", b"1 0 d x\n")})
        assert bad_qrels.status_code == 422 and bad_qrels.json()["problems"][0]["line"] == 1


def test_a_plot_is_drawn_by_a_worker_while_its_first_requests_wait(live: LiveService,
                                                                    web2012: dict[str, Path]) -> None:
    """A job's plot is not drawn with the job: its first requests (here four at once, both formats) each get it in
    one answer, held without a thread while a worker draws it once; later requests get it as stored."""
    from concurrent.futures import ThreadPoolExecutor

    assert live.logs is not None
    with live.client() as http:
        collection = http.post("/v1/collections", data={"name": "plots"},
                               files={"qrels": web2012["qrels"].open("rb")}).json()["id"]
        submitted = http.post("/v1/submissions", data={"collection": collection, "measures": "AP nDCG@10"},
                              files=[("run", web2012["run1"].open("rb"))])
        job_id = submitted.json()["id"]
        assert live.wait_job(http, job_id)["state"] == "succeeded"
        drawn_before = (live.logs / "worker.log").read_text(errors="replace").count(f"job {job_id}: plot drawn")
        assert drawn_before == 0  # nothing drawn with the job

        def get(fmt: str) -> httpx.Response:
            return http.get(f"/v1/jobs/{job_id}/plot", params={"format": fmt}, timeout=60)

        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(get, ["png", "svg", "png", "svg"]))
        assert [a.status_code for a in answers] == [200] * 4, [a.text[:200] for a in answers]
        assert answers[0].content.startswith(b"\x89PNG") and b"<svg" in answers[1].content[:500]
        assert answers[0].content == answers[2].content and answers[1].content == answers[3].content
        again = get("png")
        assert again.status_code == 200 and again.content == answers[0].content
    assert (live.logs / "worker.log").read_text(errors="replace").count(f"job {job_id}: plot drawn") == 1
