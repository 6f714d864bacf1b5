"""An MS MARCO-size run over HTTP: 7,000 topics x 1,000 passages (7 million lines, gzipped for upload) evaluated
with P@10, AP and nDCG@10 by real processes (gunicorn + one Celery worker, embedded default or PostgreSQL +
Redis) on the default upload limits. Prints JSON: the upload time of the run (client side, the API validates it
while the client waits), submit-to-result time (client side: POST /v1/evaluations until the result document is
fetched), the peak RSS (VmHWM from /proc) of the worker process that ran the job and of the API's gunicorn
workers, and the same evaluation offline (``evalserve evaluate``, whole process: time and peak RSS).

    python3 bench/msmarco_http.py                              # embedded default, ~2-3 min
    python3 bench/msmarco_http.py --backend redis-postgres
    python3 bench/msmarco_http.py --workdir /tmp/msmarco       # keep (and reuse) the generated files

The data are synthetic and seeded (``--seed``): integer query ids, integer passage ids below 8.8 million,
``%.6f`` scores in ranked order, 1-2 relevant passages per query (1.1 on average; most retrieved).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import resource
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.service.live import LiveService, postgres_database, service_env  # noqa: E402

MEASURES = ["P@10", "AP", "nDCG@10"]
N_TOPICS, DEPTH, N_PASSAGES = 7_000, 1_000, 8_841_823


def generate(directory: Path, seed: int) -> tuple[Path, Path]:
    """Write ``qrels.msmarco`` and ``run.msmarco.gz`` (reused when present)."""
    qrels, run = directory / "qrels.msmarco", directory / "run.msmarco.gz"
    if qrels.exists() and run.exists():
        return qrels, run
    rng = np.random.default_rng(seed)
    qids = np.sort(rng.choice(1_200_000, N_TOPICS, replace=False)) + 1
    relevant_lines = []
    with gzip.open(run, "wt", compresslevel=1) as out:
        ranks = np.arange(1, DEPTH + 1)
        for qid in qids.tolist():
            passages = rng.choice(N_PASSAGES, DEPTH, replace=False)
            scores = np.sort(rng.gamma(9.0, 2.0, DEPTH))[::-1]
            n_relevant = 1 + int(rng.random() < 0.1)
            for _ in range(n_relevant):  # mostly retrieved, at a rank skewed towards the top
                hit = rng.random() < 0.85
                doc = int(passages[min(DEPTH - 1, int(rng.exponential(60)))]) if hit else int(rng.integers(N_PASSAGES))
                relevant_lines.append(f"{qid} 0 {doc} 1\n")
            out.write("".join(f"{qid} Q0 {p} {r} {s:.6f} bench\n"
                              for p, r, s in zip(passages.tolist(), ranks.tolist(), scores.tolist())))
    qrels.write_text("".join(relevant_lines))
    return qrels, run


def vm_hwm_mb(pid: int) -> float | None:
    """A live process's peak resident set (VmHWM), in MB."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return None


def descendants(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                found += [int(child), *descendants(int(child))]
    return found


def cmdline(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    return ""


def offline(qrels: Path, run: Path) -> dict[str, Any]:
    """``evalserve evaluate`` as a user runs it: wall time and the child's peak RSS."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "evalserve.cli.main", "evaluate", "--qrels", str(qrels), "--run",
                           str(run), "-m", *MEASURES, "--format", "json", "-q"], cwd=ROOT, capture_output=True)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return {"offline_s": round(seconds, 2), "offline_peak_rss_mb": round(max(peak, before) / 1024, 1),
            "offline_means": json.loads(done.stdout)["runs"]["run.msmarco"]}


def over_http(service: LiveService, qrels: Path, run: Path) -> dict[str, Any]:
    service.start_api(workers=2)
    service.start_worker(concurrency=1, webhooks=False)
    assert service.api is not None
    with service.client() as http:
        created = http.post("/v1/collections", data={"name": "msmarco"}, files={"qrels": qrels.open("rb")})
        assert created.status_code == 201, created.text
        collection = created.json()["id"]
        body = run.read_bytes()
        started = time.perf_counter()
        uploaded = http.post("/v1/runs", params={"collection": collection, "name": run.name}, content=body,
                             timeout=600)
        upload_s = time.perf_counter() - started
        assert uploaded.status_code == 201, uploaded.text
        api_hwm = max(filter(None, (vm_hwm_mb(p) for p in [service.api.pid, *descendants(service.api.pid)])))
        started = time.perf_counter()
        job = http.post("/v1/evaluations", json={"collection": collection, "runs": [uploaded.json()["id"]],
                                                 "measures": MEASURES})
        assert job.status_code == 202, job.text
        job_id = job.json()["id"]
        state: dict[str, Any] = {}
        while state.get("state") not in ("succeeded", "failed", "cancelled"):
            time.sleep(0.05)
            state = http.get(f"/v1/jobs/{job_id}").json()
        assert state["state"] == "succeeded", state
        result = http.get(f"/v1/jobs/{job_id}/result", timeout=600).json()
        result_s = time.perf_counter() - started
    workers = [p for w in service.workers for p in descendants(w.pid) if "--pool solo" in cmdline(p)]
    return {"upload_mb": round(len(body) / 2**20, 1), "upload_s": round(upload_s, 2),
            "submit_to_result_s": round(result_s, 2),
            "worker_vm_hwm_mb": round(max(filter(None, (vm_hwm_mb(p) for p in workers))), 1),
            "api_vm_hwm_mb": round(api_hwm, 1), "http_means": result["runs"]["run.msmarco"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=("embedded", "redis-postgres"), default="embedded")
    parser.add_argument("--seed", type=int, default=20261124)
    parser.add_argument("--workdir", type=Path, help="where to write (and reuse) the generated files")
    parser.add_argument("--no-offline", action="store_true", help="skip the offline evaluation")
    args = parser.parse_args()
    with ExitStack() as cleanup:
        workdir = args.workdir or Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="msmarco-")))
        workdir.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        qrels, run = generate(workdir, args.seed)
        report: dict[str, Any] = {"lines": N_TOPICS * DEPTH, "generate_s": round(time.perf_counter() - started, 1),
                                  "backend": args.backend}
        home = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="msmarco-service-")))
        url = cleanup.enter_context(postgres_database()) if args.backend == "redis-postgres" else None
        service = LiveService(service_env(home, args.backend, url), logs=home)
        service.setup()
        cleanup.callback(service.stop)
        report.update(over_http(service, qrels, run))
        if not args.no_offline:
            report.update(offline(qrels, run))
            assert report["offline_means"] == {m: {"mean": v["mean"]} for m, v in report["http_means"].items()}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
