"""Deliveries are fair across owners, on real processes (127.0.0.1 only, both backends): one user's 30 job
callbacks to a receiver that takes 3 s to answer hold at most the owner's cap of delivery threads (counted at the
receiver: never more than 2 at once), so another organiser's ping, sent when all 30 are queued ahead of it, arrives
less than 2 s later than it does on the same worker idle; and every one of the 30 callbacks held back by the cap
arrives later (deferred, not lost). Without the caps (EVALSERVE_WEBHOOK_OWNER_CONCURRENCY=0 and
EVALSERVE_WEBHOOK_TARGET_CONCURRENCY=0) the same ping waits behind them."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
import pytest

from tests.security.webhook_helpers import own_task, participant_token
from tests.service.live import LiveService
from tests.service.webhook_receiver import Receiver

CALLBACKS = 30
SLOW_SECONDS = 3.0  # under the read timeout (5 s): every callback is delivered, slowly
SLACK_SECONDS = 2.0  # the figure: another owner's delivery is delayed by under 2 s
OWNER_CAP = 2  # EVALSERVE_WEBHOOK_OWNER_CONCURRENCY's default
QRELS = b"1 0 d1 1\n1 0 d2 0\n2 0 d3 1\n"
RUN = b"1 Q0 d1 1 2.0 r\n1 Q0 d2 2 1.0 r\n2 Q0 d3 1 1.0 r\n"


def _ping_seconds(http: httpx.Client, base: str, receiver: Receiver) -> float:
    """From POST .../ping to its arrival at the receiver."""
    hook = http.post(base, json={"url": receiver.url})
    assert hook.status_code == 201, hook.text
    before = len(receiver.requests)
    started = time.monotonic()
    assert http.post(f"{base}/{hook.json()['id']}/ping").status_code == 202
    receiver.wait_for(before + 1, timeout=60)
    return time.monotonic() - started


@pytest.mark.parametrize("backend", ["embedded", "redis-postgres"])
def test_thirty_slow_callbacks_of_one_user_do_not_delay_another_users_ping(
        stack: Callable[..., LiveService], backend: str) -> None:
    service = stack(backend, EVALSERVE_WEBHOOK_ALLOW_NETWORKS="127.0.0.1/32", EVALSERVE_QUOTA_ACTIVE_JOBS="100")
    service.start_api()
    service.start_worker(2, webhooks=False)
    with Receiver(delay=SLOW_SECONDS, path="/slow") as slow, Receiver(path="/fast") as fast, \
            service.client(participant_token(service, "busy user")) as busy, \
            service.client(participant_token(service, "organiser")) as organiser:
        base = f"/v1/tasks/{own_task(organiser, 'pinged')}/webhooks"
        collection = busy.post("/v1/collections", data={"name": "busy"}, files={"qrels": ("qrels", QRELS)})
        assert collection.status_code == 201, collection.text
        run = busy.post(f"/v1/runs?collection={collection.json()['id']}", files={"run": ("r", RUN)})
        assert run.status_code == 201, run.text
        jobs = []
        for _ in range(CALLBACKS):
            job = busy.post("/v1/evaluations", json={"collection": collection.json()["id"], "runs": [run.json()["id"]],
                                                     "measures": ["AP"], "callback_url": slow.url})
            assert job.status_code == 202, job.text
            jobs.append(job.json()["id"])
        for job_id in jobs:  # every callback is stored and queued before a delivery thread runs
            assert service.wait_job(busy, job_id)["state"] == "succeeded"

        service.start_webhook_worker()  # 4 delivery threads, as `evalserve serve` runs them
        slow.wait_for(1, timeout=60)  # the busy user's callbacks are going out
        loaded = _ping_seconds(organiser, base, fast)
        assert slow.in_flight >= 1, "the slow receiver was busy while the other user pinged"
        received = slow.wait_for(CALLBACKS, timeout=CALLBACKS * SLOW_SECONDS + 90)  # deferred, never dropped
        quiet = min(_ping_seconds(organiser, base, fast) for _ in range(2))  # the same worker, idle
        print(f"ping: {quiet:.2f} s idle, {loaded:.2f} s behind {CALLBACKS} slow callbacks ({backend})")
        assert loaded < quiet + SLACK_SECONDS, f"{loaded:.2f} s with 30 slow callbacks queued, {quiet:.2f} s idle"

        delivered = {headers["x-evalserve-delivery"] for headers, _ in received}
        assert len(delivered) == CALLBACKS, "one callback per job, each once"
        assert slow.max_in_flight <= OWNER_CAP, f"{slow.max_in_flight} of one owner's deliveries at once"
        assert len(fast.requests) == 3, "every ping arrived, once"
