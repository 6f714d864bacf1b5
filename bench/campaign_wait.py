"""Participants' submit-to-result in a shared task (issue 30): a 10-team campaign of 26 submissions, as in the
issue's TREC Web 2012 replay, against real processes (gunicorn's ASGI worker + a Celery worker) on the embedded
default or PostgreSQL + Redis. Measures what a participant waits for its scores and compares it with the
evaluation job's own time, whole-process and client-side.

The organiser makes a task over the hidden TREC Web 2012 judgments with seven official measures; ten teams (each
a user of its own) register, and their ten scripts run at once, each submitting its share of the 26 runs (3 or 2,
real 2012 runs in turn) one after the other with the Python client: ``submit_to_task(..., wait=True)``, which
long-polls the submission (``?wait=`` with ``If-None-Match``; ``--wait poll``: polls at ``Retry-After: 1`` as the
participants of the issue did). For each submission:

- *submit-to-result*: from sending the run to holding the evaluated submission (client clock);
- *upload*: from sending the run to its 202 (the API reads, validates and stores it, and queues the job);
- *queue*: the job's ``started_at - created_at`` (waiting for a worker process: other teams' jobs ahead);
- *job*: the evaluation job's ``finished_at - started_at`` (the server's record), and its *life*
  ``finished_at - created_at`` (queue and job: the job's own time from its creation);
- *answer lag*: from the job's ``finished_at`` to the client holding the answer (what waiting costs: the part
  long-polls remove);
- *over job life*: submit-to-result minus the job's life (upload + answer lag), per submission: the done-when
  asks its p50 to be within 0.2 s.

    python3 bench/campaign_wait.py                              # embedded default, long-polls
    python3 bench/campaign_wait.py --backend redis-postgres
    python3 bench/campaign_wait.py --wait poll                  # as before issue 30: polling at Retry-After
    python3 bench/campaign_wait.py --spacing 2                  # teams spread out: no queue for the workers
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalserve_client import Client  # noqa: E402

from tests.conftest import shared_data_dir  # noqa: E402
from tests.service.live import LiveService, deployed  # noqa: E402

MEASURES = ["alpha_nDCG@20", "ERR_IA@20", "NRBP", "nDCG@20", "P@10", "AP", "StRecall@20"]
RUNS = ["ql-results-cata-filtered.txt", "ql-results-catb-filtered.txt", "ql-results-cata.txt.gz",
        "ql-results-catb.txt.gz"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def shares(submissions: int, teams: int) -> list[int]:
    """How many submissions each team makes: as even as possible (26 over 10: six teams 3, four teams 2)."""
    return [submissions // teams + (1 if t < submissions % teams else 0) for t in range(teams)]


def setup(service: LiveService, data: Path, teams: int) -> tuple[str, list[str]]:
    """The organiser's task (the service's admin token: an organiser of every task) and the teams' tokens."""
    qrels = data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt"
    now = datetime.now(timezone.utc)
    with Client(service.url, service.token) as organiser:
        collection = organiser.create_collection(qrels, name="TREC Web 2012 (hidden)", hidden=True)["id"]
        task = organiser.create_task(name="Web 2012 diversity", collection=collection, measures=MEASURES,
                                     primary_measure=MEASURES[0], phases=[{
                                         "name": "test", "opens_at": (now - timedelta(hours=1)).isoformat(),
                                         "closes_at": (now + timedelta(hours=2)).isoformat(),
                                         "quota_per_day": 100}])["id"]
    tokens = [service.user_token(f"team{t:02d}") for t in range(teams)]
    for t, token in enumerate(tokens):
        with Client(service.url, token) as team:
            team.register(task, f"team{t:02d}")
    return task, tokens


def team_script(service: LiveService, task: str, token: str, team: int, count: int, first: int, runs: Path,
                wait: str, spacing: float, teams: int) -> list[dict[str, Any]]:
    """One participant's script: its runs submitted one after the other, each waited for; with ``spacing``, the
    teams start ``spacing / teams`` apart and each pauses ``spacing`` between its submissions."""
    out = []
    time.sleep(spacing * team / teams)
    with Client(service.url, token) as client:
        for k in range(count):
            if k:
                time.sleep(spacing)
            index = first + k
            name = RUNS[index % len(RUNS)]
            started = time.time()
            # what submit_to_task(..., wait=True) does, with the moment the 202 came noted between
            queued = client.submit_to_task(task, runs / name, description=f"run {index}")
            accepted = time.time()
            if wait == "longpoll":
                sub = client.wait_for_submission(task, queued["id"], timeout=600)
            else:
                sub = client.wait_for_submission(task, queued, poll=1.0, timeout=600)
            held = time.time()
            out.append({"index": index, "team": team, "submission": sub["id"], "state": sub["state"],
                        "started": started, "accepted": accepted, "held": held, "scores": sub["scores"]})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=("embedded", "redis-postgres"), default="embedded")
    parser.add_argument("--teams", type=int, default=10)
    parser.add_argument("--submissions", type=int, default=26)
    parser.add_argument("--concurrency", type=int, default=2, help="worker processes")
    parser.add_argument("--api-workers", type=int, default=2, help="gunicorn processes (default 2: as serve starts)")
    parser.add_argument("--wait", choices=("longpoll", "poll"), default="longpoll")
    parser.add_argument("--spacing", type=float, default=0.0,
                        help="seconds between a team's submissions, teams starting spread over it (default 0: every"
                             " script submits at once, its next run as soon as the last is evaluated)")
    args = parser.parse_args()
    data = shared_data_dir()
    runs = data / "trec-web-2012-runs" / "runs"
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as cleanup:
        service = cleanup.enter_context(deployed(Path(tmp), args.backend, api_workers=args.api_workers,
                                                 concurrency=args.concurrency))
        task, tokens = setup(service, data, args.teams)
        with Client(service.url, service.token) as organiser:  # untimed: first-use costs of the processes
            organiser.register(task, "organisers")
            organiser.submit_to_task(task, runs / RUNS[0], baseline=True, wait=True, timeout=600)
        counts = shares(args.submissions, args.teams)
        firsts = [sum(counts[:t]) for t in range(args.teams)]
        began = time.perf_counter()
        with ThreadPoolExecutor(args.teams) as pool:
            scripts = list(pool.map(lambda t: team_script(service, task, tokens[t], t, counts[t], firsts[t], runs,
                                                          args.wait, args.spacing, args.teams),
                                 range(args.teams)))
        wall = time.perf_counter() - began
        outcomes = [o for script in scripts for o in script]
        with Client(service.url, service.token) as organiser:
            for o in outcomes:
                job_id = organiser.task_submission(task, o["submission"])["evaluations"][0]["job"]
                job = organiser.job(job_id)
                created, started, finished = (datetime.fromisoformat(job[k]).timestamp()
                                              for k in ("created_at", "started_at", "finished_at"))
                o.update(job_s=finished - started, queue_s=started - created, job_life_s=finished - created,
                         lag_s=o["held"] - finished, upload_s=o["accepted"] - o["started"],
                         submit_to_result_s=o["held"] - o["started"])
    failed = [o for o in outcomes if o["state"] != "succeeded"]
    column = {k: [o[k] for o in outcomes]
              for k in ("submit_to_result_s", "upload_s", "queue_s", "job_s", "job_life_s", "lag_s")}
    over = [o["submit_to_result_s"] - o["job_life_s"] for o in outcomes]

    def p(values: list[float], q: float) -> float:
        return round(percentile(values, q), 3)

    summary = {
        "backend": args.backend, "wait": args.wait, "spacing_s": args.spacing, "teams": args.teams,
        "submissions": len(outcomes),
        "worker_processes": args.concurrency, "api_workers": args.api_workers, "succeeded": len(outcomes) - len(failed),
        "wall_s": round(wall, 2),
        **{f"{k.removesuffix('_s')}_p50_s": p(v, 0.5) for k, v in column.items()},
        **{f"{k.removesuffix('_s')}_p95_s": p(v, 0.95) for k, v in column.items()},
        "over_job_life_p50_s": p(over, 0.5), "over_job_life_p95_s": p(over, 0.95),
        "p50_within_0_2_s_of_job_life": percentile(over, 0.5) <= 0.2,
    }
    print(json.dumps(summary, indent=2))
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
