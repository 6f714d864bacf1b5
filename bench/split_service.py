"""One job of many runs on one worker, then split over two: real processes (gunicorn + Celery workers, embedded
default or PostgreSQL + Redis). The job evaluates N copies (default 40, distinct names) of a real 49,413-line
TREC Web 2012 run (``ql-results-catb``) against the 2012 ad hoc qrels with AP, nDCG@10 and P@10; each setting
submits it ``--repeat`` times and reports the median submit-to-result time (client side: POST until the result
document is fetched) and checks that every result is the same bytes.

    python3 bench/split_service.py                          # embedded default, ~1-2 min
    python3 bench/split_service.py --backend redis-postgres --runs 80 --repeat 5

Two worker processes can shorten a job only as far as the machine has free cores; on other machines they add
their own.
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import shared_data_dir  # noqa: E402
from tests.service.live import LiveService, postgres_database, service_env  # noqa: E402

MEASURES = ["AP", "nDCG@10", "P@10"]


def timed_job(service: LiveService, collection: str, runs: list[str]) -> tuple[float, bytes]:
    with service.client() as http:
        started = time.perf_counter()
        job = http.post("/v1/evaluations", json={"collection": collection, "runs": runs, "measures": MEASURES})
        assert job.status_code == 202, job.text
        state: dict[str, Any] = {}
        while state.get("state") not in ("succeeded", "failed", "cancelled"):
            time.sleep(0.02)
            state = http.get(f"/v1/jobs/{job.json()['id']}").json()
        assert state["state"] == "succeeded", state
        result = http.get(f"/v1/jobs/{job.json()['id']}/result", params={"per_topic": "true"}).content
        return time.perf_counter() - started, result


def setting(service: LiveService, workers: int, split_runs: int, collection: str, runs: list[str],
            repeat: int) -> tuple[list[float], set[bytes]]:
    env = service.env
    service.env = {**env, "EVALSERVE_SPLIT_RUNS": str(split_runs)}
    procs = [service.start_worker(concurrency=1, webhooks=False) for _ in range(workers)]
    service.env = env
    try:
        timed_job(service, collection, runs)  # warm-up: workers started and connected
        outcomes = [timed_job(service, collection, runs) for _ in range(repeat)]
    finally:
        for proc in procs:
            service.workers.remove(proc)
            LiveService.kill(proc, signal.SIGTERM)
    return [t for t, _ in outcomes], {r for _, r in outcomes}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=("embedded", "redis-postgres"), default="embedded")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    data = shared_data_dir()
    run = (data / "trec-web-2012-runs" / "runs" / "ql-results-catb.txt.gz").read_bytes()
    qrels = data / "trec-web-2009-2014" / "2012" / "qrels.adhoc.txt"
    with ExitStack() as cleanup:
        home = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="split-bench-")))
        url = cleanup.enter_context(postgres_database()) if args.backend == "redis-postgres" else None
        service = LiveService(service_env(home, args.backend, url), logs=home)
        service.setup()
        cleanup.callback(service.stop)
        service.start_api()
        with service.client() as http:
            collection = http.post("/v1/collections", data={"name": "web2012"},
                                   files={"qrels": (qrels.name, qrels.read_bytes())}).json()["id"]
            ids = [http.post("/v1/runs", params={"collection": collection, "name": f"copy{i:03d}.txt.gz"},
                             content=run).json()["id"] for i in range(args.runs)]
        one, one_results = setting(service, 1, 0, collection, ids, args.repeat)
        two, two_results = setting(service, 2, 10, collection, ids, args.repeat)
    assert len(one_results) == 1 and one_results == two_results, "every result the same bytes"
    print(json.dumps({
        "backend": args.backend, "runs": args.runs, "lines_per_run": 49_413, "repeat": args.repeat,
        "one_worker_unsplit_s": [round(t, 2) for t in one], "two_workers_split_s": [round(t, 2) for t in two],
        "median_one_s": round(statistics.median(one), 2), "median_two_s": round(statistics.median(two), 2),
        "ratio_two_over_one": round(statistics.median(two) / statistics.median(one), 2),
        "identical_results": True,
    }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
