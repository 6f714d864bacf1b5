"""Load test of the service on localhost: N submissions of a TREC-size run (49,413 lines, TREC Web 2012) from C
concurrent clients against real processes (gunicorn + a Celery worker), on the embedded default or PostgreSQL +
Redis. Checks that every submission is accepted and succeeds with the same numbers (none lost) and reports job
latency (submit -> succeeded, as the client sees it, and created -> finished as the server records it).

Each client is a user of its own (its own token, as teams in a shared task's last hour); a submission answered
503 or 429 (uploads in flight, rate limits) is sent again after its ``Retry-After``, as the Python client does.
Clients wait as the Python client does (``--poll longpoll``: ``?wait=25`` with ``If-None-Match``), or poll with
backoff 0.1 s -> 1 s (``--poll backoff``, the figures before issue 29). In the same run, before the service
starts, the engine alone is measured (issue 29's yardstick): ``--concurrency`` processes, each evaluating the
same run in a loop for ``--engine-seconds`` (parse the gzip run, evaluate the same measures per topic against the
judgments parsed once, serialise the JSON document), as jobs per second; the summary gives the service's
throughput as a fraction of it.

    python3 bench/load_service.py                      # 200 submissions, 20 clients, embedded default
    python3 bench/load_service.py --backend redis-postgres --submissions 200 --clients 20
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import shared_data_dir  # noqa: E402
from tests.service.live import LiveService, deployed  # noqa: E402

MEASURES = "AP P@10 nDCG@10 ERR@20 alpha_nDCG@20 ERR_IA@20 NRBP StRecall@20"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def engine_loop(qrels: str, run: bytes, seconds: float, ready: Any, start: Any, counts: Any, slot: int) -> None:
    """One engine process: the worker's work on ``run``, over and over, for ``seconds`` (after an untimed one)."""
    from evaluation.api import evaluate
    from evaluation.formats.qrels import read_qrels

    judgments = read_qrels(qrels)
    measures = MEASURES.split()
    json.dumps(evaluate(judgments, {"run.txt.gz": run}, measures, per_topic=True))
    ready.wait()
    start.wait()
    done, until = 0, time.perf_counter() + seconds
    while time.perf_counter() < until:
        json.dumps(evaluate(judgments, {"run.txt.gz": run}, measures, per_topic=True))
        done += 1
    counts[slot] = done


def engine_alone(qrels: Path, run: bytes, processes: int, seconds: float) -> float:
    """Jobs per second of ``processes`` engine processes evaluating ``run`` side by side (no service)."""
    context = multiprocessing.get_context("spawn")
    ready, start = context.Barrier(processes + 1), context.Event()
    counts = context.Array("i", processes)
    workers = [context.Process(target=engine_loop, args=(str(qrels), run, seconds, ready, start, counts, i))
               for i in range(processes)]
    for worker in workers:
        worker.start()
    ready.wait()
    began = time.perf_counter()
    start.set()
    for worker in workers:
        worker.join()
    return sum(counts) / (time.perf_counter() - began)


def wait_for_job(http: Any, job_id: str, etag: str | None, poll: str) -> dict[str, Any]:
    """The job once final: long-polls (``?wait=25``, ``If-None-Match``) or polls with backoff."""
    delay = 0.1
    while True:
        if poll == "longpoll":
            response = http.get(f"/v1/jobs/{job_id}", params={"wait": 25},
                                headers={"If-None-Match": etag} if etag else {})
            if response.status_code == 304:
                continue
            etag = response.headers.get("ETag")
            if response.status_code in (429, 503):  # a cap on waits: answered at once, wait as told
                time.sleep(float(response.headers.get("Retry-After", "1")))
                continue
            job = response.json()
        else:
            job = http.get(f"/v1/jobs/{job_id}").json()
        if job["state"] in ("succeeded", "failed", "cancelled"):
            return job  # type: ignore[no-any-return]
        if poll != "longpoll":
            time.sleep(delay)
            delay = min(1.0, delay * 1.5)


def submit_and_wait(service: LiveService, collection: str, run: bytes, index: int,
                    poll: str = "longpoll", token: str | None = None) -> dict[str, Any]:
    """One client's submission, as the Python client makes it: a 503/429 (a cap on uploads in flight, a rate
    limit) is sent again after its ``Retry-After`` with the same idempotency key."""
    with service.client(token) as http:
        started = time.perf_counter()
        retries = 0
        while True:
            response = http.post("/v1/submissions", data={"collection": collection, "measures": MEASURES},
                                 files={"run": (f"run{index:03d}.txt.gz", run)},
                                 headers={"Idempotency-Key": f"load-{index}"})
            if response.status_code not in (429, 503) or retries >= 20:
                break
            retries += 1
            time.sleep(float(response.headers.get("Retry-After", "1")))
        accepted = time.perf_counter()
        if response.status_code != 202:
            return {"index": index, "error": f"{response.status_code} {response.text[:200]}", "retries": retries}
        job_id = response.json()["id"]
        job = wait_for_job(http, job_id, response.headers.get("ETag"), poll)
        seen = time.perf_counter()
        result = http.get(f"/v1/jobs/{job_id}/result").json() if job["state"] == "succeeded" else None
    server = (datetime.fromisoformat(job["finished_at"]) - datetime.fromisoformat(job["created_at"])).total_seconds()
    return {"index": index, "job": job_id, "state": job["state"], "submit_s": accepted - started, "retries": retries,
            "client_latency_s": seen - started, "server_latency_s": server,
            "values": result["runs"][f"run{index:03d}.txt"] if result else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=("embedded", "redis-postgres"), default="embedded")
    parser.add_argument("--submissions", type=int, default=200)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=2, help="worker processes")
    parser.add_argument("--api-workers", type=int, default=2, help="gunicorn processes (default 2: as serve starts)")
    parser.add_argument("--poll", choices=("longpoll", "backoff"), default="longpoll")
    parser.add_argument("--engine-seconds", type=float, default=15.0,
                        help="how long the engine-alone yardstick runs (0: skip it)")
    args = parser.parse_args()
    data = shared_data_dir()
    qrels = data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt"
    run = (data / "trec-web-2012-runs" / "runs" / "ql-results-catb.txt.gz").read_bytes()
    engine = engine_alone(qrels, run, args.concurrency, args.engine_seconds) if args.engine_seconds > 0 else None
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as cleanup:
        service = cleanup.enter_context(deployed(Path(tmp), args.backend, api_workers=args.api_workers,
                                                 concurrency=args.concurrency))
        with service.client() as http:
            collection = http.post("/v1/collections", data={"name": "web2012"},
                                   files={"qrels": qrels.open("rb")}).json()["id"]
            warm = submit_and_wait(service, collection, run, 9999)  # untimed: first-use costs
            assert warm["state"] == "succeeded", warm
        # each client is a team of its own (a user with its own budgets), as in a shared task's last hour
        tokens = [service.user_token(f"team-{c}") for c in range(args.clients)]
        lock = threading.Lock()
        done = 0

        def one(i: int) -> dict[str, Any]:
            nonlocal done
            outcome = submit_and_wait(service, collection, run, i, args.poll, tokens[i % args.clients])
            with lock:
                done += 1
                if done % 20 == 0:
                    print(f"  {done}/{args.submissions} done", file=sys.stderr, flush=True)
            return outcome

        started = time.perf_counter()
        with ThreadPoolExecutor(args.clients) as pool:
            outcomes = list(pool.map(one, range(args.submissions)))
        wall = time.perf_counter() - started
    failed = [o for o in outcomes if o.get("state") != "succeeded"]
    reference = warm["values"]
    differing = [o["index"] for o in outcomes if o.get("values") is not None and o["values"] != reference]
    client = [o["client_latency_s"] for o in outcomes if "client_latency_s" in o]
    server = [o["server_latency_s"] for o in outcomes if "server_latency_s" in o]
    submit = [o["submit_s"] for o in outcomes if "submit_s" in o]
    summary = {
        "backend": args.backend, "submissions": args.submissions, "clients": args.clients,
        "worker_processes": args.concurrency, "api_workers": args.api_workers, "poll": args.poll,
        "succeeded": args.submissions - len(failed), "lost_or_failed": len(failed), "results_differing": differing,
        "wall_s": round(wall, 2), "throughput_jobs_per_s": round(args.submissions / wall, 2),
        "engine_alone_jobs_per_s": round(engine, 2) if engine else None,
        "service_over_engine": round(args.submissions / wall / engine, 3) if engine else None,
        "submissions_retried": sum(1 for o in outcomes if o.get("retries")),
        "submit_p50_s": round(percentile(submit, 0.5), 3), "submit_p95_s": round(percentile(submit, 0.95), 3),
        "latency_client_p50_s": round(percentile(client, 0.5), 3),
        "latency_client_p95_s": round(percentile(client, 0.95), 3),
        "latency_server_p50_s": round(percentile(server, 0.5), 3),
        "latency_server_p95_s": round(percentile(server, 0.95), 3),
        "latency_server_mean_s": round(statistics.mean(server), 3) if server else None,
    }
    print(json.dumps(summary, indent=2))
    return 0 if not failed and not differing else 1


if __name__ == "__main__":
    sys.exit(main())
