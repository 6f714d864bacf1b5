"""What a client waits for a large job's report and plot, and what the API process holds meanwhile (issue 27):
a synthetic 100-run x 200-measure x 50-topic evaluation result (``report_size.document``) stored as a succeeded
job, its outputs built by the worker's own function (``jobrun.outputs.store_outputs``, timed), then, against a
live gunicorn API on 127.0.0.1 (one process, as ``tests/service/live.py`` starts it), time to first byte and
total time of ``/result?format=html|latex`` and ``/plot?format=png|svg`` (each ``--repeat`` times on fresh
connections, after one GET of the job; median and worst) and the API processes' peak RSS (VmHWM from
/proc/<pid>/status); then, once each, the JSON and TSV results the API formats from the stored document.

Goals: first byte < 50 ms, total < 1 s, API RSS < 400 MB.

Usage: ``python3 bench/report_http.py [--runs 100] [--measures 200] [--topics 50] [--repeat 5] [--out FILE]``
(default out: bench/report_http_results.json)
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from report_size import document  # noqa: E402

#: the requests the goals are about: reports and plots
PATHS = ("result?format=html", "result?format=latex", "plot?format=png", "plot?format=svg")
#: measured after them (their RSS apart): text formats rendered from the stored document in the API
TEXT_PATHS = ("result", "result?format=tsv")


def store_job(env: dict[str, str], runs: int, measures: int, topics: int) -> tuple[str, str, dict[str, Any]]:
    """A succeeded evaluation job holding the synthetic result and its outputs; (job id, token, timings)."""
    from evalserve.service.access.tokens import create_token
    from evalserve.service.core.config import Settings
    from evalserve.service.jobrun.context import WorkerContext
    from evalserve.service.jobrun.kinds import RUNS
    from evalserve.service.jobrun.outputs import store_outputs
    from evalserve.service.jobs.kinds import KINDS, EvaluationRequest
    from evalserve.service.store.blobs import BlobStore
    from evalserve.service.store.db import Database
    from evalserve.service.store.models import Collection, Job, JobOutput, JobState, new_id, utcnow

    settings = Settings.from_env(env)
    db, blobs = Database(settings.database_url), BlobStore(settings.blob_dir)
    token, secret = create_token(db, "bench", ("read", "submit"))
    doc = json.loads(json.dumps(document(runs, measures, topics)))
    request = EvaluationRequest(tuple(doc["runs"]), tuple(doc["meta"]["measures"]))
    with db.session() as s:
        result = blobs.put(s, json.dumps(doc, separators=(",", ":")).encode())
        qrels = blobs.put(s, b"q000 0 d1 1\n")
        collection = Collection(id=new_id("col"), owner_id=token.id, name="bench", qrels_filename="q",
                                qrels_format="trec", qrels_sha256=qrels, n_topics=1, n_judgments=1, n_intents=0)
        s.add(collection)
        s.flush()
        job = Job(id=new_id("job"), owner_id=token.id, collection_id=collection.id, kind="evaluation",
                  request=request.to_json(), state=JobState.SUCCEEDED, stage="succeeded", progress=1.0,
                  result_sha256=result, finished_at=utcnow())
        s.add(job)
        job_id = job.id
    started = time.perf_counter()
    kind = KINDS["evaluation"]
    outputs = store_outputs(WorkerContext(settings, db, blobs), kind, RUNS[kind.name].outputs, doc, request)
    built = time.perf_counter() - started
    with db.session() as s:
        s.add_all(JobOutput(job_id=job_id, name=name, blob_sha256=sha) for name, sha in outputs.items())
        sizes = {name: len(blobs.get(s, sha)) for name, sha in outputs.items()}
    db.dispose()
    return job_id, secret, {"build_outputs_seconds": round(built, 2), "output_bytes": sizes,
                            "result_bytes": len(json.dumps(doc, separators=(",", ":")))}


def fetch(port: int, path: str, token: str) -> tuple[int, float, float, int]:
    """(status, seconds to the first body byte, seconds to the last, body bytes) of one GET on a new connection."""
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    conn.request("GET", path, headers={"Authorization": f"Bearer {token}"})
    response = conn.getresponse()
    first = response.read(1)
    ttfb = time.perf_counter() - started
    rest = response.read()
    total = time.perf_counter() - started
    conn.close()
    return response.status, ttfb, total, len(first) + len(rest)


def vm_hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            if any(line == f"PPid:\t{pid}" for line in status.splitlines()):
                out.append(int(entry.name))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--measures", type=int, default=200)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "report_http_results.json")
    args = parser.parse_args()
    from tests.service.live import LiveService, service_env

    with tempfile.TemporaryDirectory() as tmp:
        env = service_env(Path(tmp), "embedded")
        service = LiveService(env)
        service.logs = Path(tmp)
        service.setup()
        job_id, token, stored = store_job(env, args.runs, args.measures, args.topics)
        print(f"outputs built by the worker's function in {stored['build_outputs_seconds']} s: "
              f"{stored['output_bytes']}", flush=True)
        service.start_api(workers=1)
        try:
            assert service.api is not None
            api_pids = [service.api.pid, *children(service.api.pid)]
            warm_up = fetch(service.port, f"/v1/jobs/{job_id}", token)  # the worker's first request: its imports
            assert warm_up[0] == 200, warm_up
            requests: dict[str, Any] = {}
            for path in PATHS:
                rows = [fetch(service.port, f"/v1/jobs/{job_id}/{path}", token) for _ in range(args.repeat)]
                assert all(status == 200 for status, *_ in rows), (path, rows)
                ttfb = [r[1] * 1000 for r in rows]
                total = [r[2] * 1000 for r in rows]
                requests[path] = {"bytes": rows[0][3], "first_byte_ms": {"median": round(statistics.median(ttfb), 1),
                                                                         "max": round(max(ttfb), 1)},
                                  "total_ms": {"median": round(statistics.median(total), 1),
                                               "max": round(max(total), 1)}}
                print(f"{path:24} {rows[0][3]:>11,} bytes  first byte {requests[path]['first_byte_ms']}  "
                      f"total {requests[path]['total_ms']}", flush=True)
            rss = {str(pid): vm_hwm_mb(pid) for pid in api_pids if Path(f"/proc/{pid}").exists()}
            text: dict[str, Any] = {}
            for path in TEXT_PATHS:  # informative, not a goal: the document is read and formatted in the API
                status, ttfb_s, total_s, size = fetch(service.port, f"/v1/jobs/{job_id}/{path}", token)
                assert status == 200, (path, status)
                text[path] = {"bytes": size, "first_byte_ms": round(ttfb_s * 1000, 1),
                              "total_ms": round(total_s * 1000, 1)}
                print(f"{path:24} {size:>11,} bytes  first byte {text[path]['first_byte_ms']}  total "
                      f"{text[path]['total_ms']}  (once)", flush=True)
            text_rss = {str(pid): vm_hwm_mb(pid) for pid in api_pids if Path(f"/proc/{pid}").exists()}
        finally:
            service.stop()
    worst_first = max(r["first_byte_ms"]["max"] for r in requests.values())
    worst_total = max(r["total_ms"]["max"] for r in requests.values())
    result = {
        "command": "python3 bench/report_http.py " + " ".join(sys.argv[1:]),
        "document": {"runs": args.runs, "measures": args.measures, "topics": args.topics},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "worker": stored, "requests": requests, "repeat": args.repeat,
        "api_vm_hwm_mb": rss, "api_vm_hwm_mb_max": max(rss.values()),
        "text_formats_once": text, "api_vm_hwm_mb_after_text_formats": text_rss,
        "goals": {"first_byte_ms_lt_50": worst_first < 50, "total_ms_lt_1000": worst_total < 1000,
                  "api_rss_mb_lt_400": max(rss.values()) < 400},
    }
    print(json.dumps({k: result[k] for k in ("api_vm_hwm_mb", "goals")}))
    args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
