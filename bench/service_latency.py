"""Service latency as a user feels it: one 50,000-line run (TREC Web 2012, 49,413 lines) submitted N times in a row
with ``evalserve_client`` against an existing collection, on an idle deployment of real processes (gunicorn + the
supervised workers, as ``evalserve serve`` starts them), embedded default or PostgreSQL + Redis.

Whole-service, client-side figures: submit-to-result is the client's POST start to the result document in hand
(``Client.evaluate(..., wait=True)`` then ``Client.results``); the long-poll lag is the arrival of the answer that
shows the job finished, minus the job's ``finished_at`` as the worker recorded it (one machine, one clock). The
breakdown splits each job with the server's timestamps. It also checks that an unchanged job and a result answer
``304`` to their ETag.

    python3 bench/service_latency.py                              # embedded default, 30 submissions
    python3 bench/service_latency.py --backend redis-postgres --n 30
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "clients" / "python"))

from evalserve_client import Client  # noqa: E402

from tests.conftest import shared_data_dir  # noqa: E402
from tests.service.live import LiveService, deployed  # noqa: E402

MEASURES = ["P@10", "AP", "nDCG@10"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _ts(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def one_submission(client: Client, collection: str, run: Path, requests: list[tuple[str, float]]) -> dict[str, Any]:
    """Submit, wait (long-poll), fetch the result; the client-side and server-side times of this job."""
    final: dict[str, Any] = {}

    def progress(job: dict[str, Any]) -> None:
        if job["state"] in ("succeeded", "failed", "cancelled") and not final:
            final.update(job, seen_at=time.time())

    del requests[:]
    started = time.perf_counter()
    job = client.evaluate(collection, [run], MEASURES, progress=progress)
    document = client.results(job)
    elapsed = time.perf_counter() - started
    post_s = requests[0][1] - started if requests else float("nan")
    return {
        "submit_to_result_s": elapsed,
        "post_s": post_s,
        "pickup_s": _ts(job["started_at"]) - _ts(job["created_at"]),
        "worker_s": _ts(job["finished_at"]) - _ts(job["started_at"]),
        "long_poll_lag_s": final["seen_at"] - _ts(final["finished_at"]),
        "requests": len(requests),
        "job": job["id"],
        "runs": sorted(document["runs"]),
    }


def check_not_modified(service: LiveService, job_id: str) -> dict[str, int]:
    """An unchanged job and its result answer 304 to their own ETag."""
    with service.client() as http:
        job = http.get(f"/v1/jobs/{job_id}")
        again = http.get(f"/v1/jobs/{job_id}", headers={"If-None-Match": job.headers["ETag"]})
        result = http.get(f"/v1/jobs/{job_id}/result")
        cached = http.get(f"/v1/jobs/{job_id}/result", headers={"If-None-Match": result.headers["ETag"]})
    return {"job_first": job.status_code, "job_unchanged": again.status_code, "result_first": result.status_code,
            "result_unchanged": cached.status_code}


def cli_submissions(service: LiveService, collection: str, run: Path, n: int) -> list[float]:
    """``evalserve-client submit --wait`` as a user types it, timed as a whole process (interpreter start included)."""
    env = {**service.env, "EVALSERVE_URL": service.url, "EVALSERVE_TOKEN": service.token,
           "PYTHONPATH": os.pathsep.join([str(ROOT / "clients" / "python"), service.env.get("PYTHONPATH", "")])}
    argv = [sys.executable, "-m", "evalserve_client", "submit", "--collection", collection, "--run", str(run),
            "-m", *MEASURES, "-q"]
    times = []
    for _ in range(n):
        started = time.perf_counter()
        subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return times


def summary(values: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(values, 0.5), 4), "p95": round(percentile(values, 0.95), 4),
            "min": round(min(values), 4), "max": round(max(values), 4), "mean": round(statistics.mean(values), 4)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=("embedded", "redis-postgres"), default="embedded")
    parser.add_argument("--n", type=int, default=30, help="timed submissions (after 3 untimed ones)")
    parser.add_argument("--concurrency", type=int, default=2, help="evaluation worker processes (serve: one per CPU)")
    parser.add_argument("--api-workers", type=int, default=2)
    parser.add_argument("--cli-n", type=int, default=10, help="timed `evalserve-client submit` processes")
    args = parser.parse_args()
    data = shared_data_dir()
    qrels = data / "trec-web-2009-2014" / "2012" / "qrels.adhoc.txt"
    run = data / "trec-web-2012-runs" / "runs" / "ql-results-catb.txt.gz"
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as cleanup:
        service = cleanup.enter_context(deployed(Path(tmp), args.backend, api_workers=args.api_workers,
                                                 concurrency=args.concurrency))
        client = cleanup.enter_context(Client(service.url, service.token))
        requests: list[tuple[str, float]] = []
        client._http.event_hooks["response"].append(
            lambda response: requests.append((response.request.method, time.perf_counter())))
        collection = client.create_collection(qrels, name="web2012")["id"]
        for _ in range(3):  # untimed: first-use costs (imports, connections, caches)
            one_submission(client, collection, run, requests)
        outcomes = [one_submission(client, collection, run, requests) for _ in range(args.n)]
        not_modified = check_not_modified(service, outcomes[-1]["job"])
        cli = cli_submissions(service, collection, run, args.cli_n) if args.cli_n else []
    report = {
        "backend": args.backend, "submissions": args.n, "run_lines": 49413, "measures": MEASURES,
        "kind": "whole-service, client-side (real gunicorn + worker processes on this machine)",
        "submit_to_result_s": summary([o["submit_to_result_s"] for o in outcomes]),
        "long_poll_lag_s": summary([o["long_poll_lag_s"] for o in outcomes]),
        "breakdown_p50_s": {
            "post_until_202": round(percentile([o["post_s"] for o in outcomes], 0.5), 4),
            "created_to_started": round(percentile([o["pickup_s"] for o in outcomes], 0.5), 4),
            "started_to_finished": round(percentile([o["worker_s"] for o in outcomes], 0.5), 4),
        },
        "cli_submit_wait_whole_process_s": summary(cli) if cli else None,
        "requests_per_submission": sorted({o["requests"] for o in outcomes}),
        "not_modified": not_modified,
        "httpx": httpx.__version__,
    }
    print(json.dumps(report, indent=2))
    ok = not_modified["job_unchanged"] == 304 and not_modified["result_unchanged"] == 304
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
