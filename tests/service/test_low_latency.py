"""Low-latency jobs against real processes (gunicorn + workers, both backends): long-polls that answer when the job
changes or at their bound, ETags and 304s on jobs and results, signed ``callback_url`` deliveries (and refused
targets), and the client waiting by long-poll. No timed assertions: the bounds below only catch hangs."""

from __future__ import annotations

import json
import stat
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from evalserve_client import Client
from evalserve_client.webhooks import verify_signature

from tests.service.live import LiveService
from tests.service.webhook_receiver import Receiver

#: the callback receivers of these tests listen on 127.0.0.1
LIVE_ENV = {"EVALSERVE_WEBHOOK_ALLOW_NETWORKS": "127.0.0.1/32"}
QRELS = b"1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n2 0 d4 1\n2 0 d5 1\n"
RUN = b"1 Q0 d1 1 3.0 r\n1 Q0 d3 2 2.0 r\n1 Q0 d2 3 1.0 r\n2 Q0 d5 1 2.0 r\n2 Q0 d9 2 1.0 r\n"
FINAL = ("succeeded", "failed", "cancelled")


def _collection(http: httpx.Client) -> str:
    response = http.post("/v1/collections", data={"name": "tiny"}, files={"qrels": ("qrels.txt", QRELS)})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _submit(http: httpx.Client, collection: str, **form: str) -> httpx.Response:
    response = http.post("/v1/submissions", data={"collection": collection, "measures": "AP P@10", **form},
                         files={"run": ("run.txt", RUN)})
    return response


def _long_poll_until_final(http: httpx.Client, job_id: str, etag: str) -> list[httpx.Response]:
    answers = []
    deadline = time.monotonic() + 120  # catches a hang only
    while time.monotonic() < deadline:
        answer = http.get(f"/v1/jobs/{job_id}", params={"wait": 25}, headers={"If-None-Match": etag})
        answers.append(answer)
        if answer.status_code == 200:
            assert answer.headers["ETag"] != etag  # answered because the job changed
            etag = answer.headers["ETag"]
            if answer.json()["state"] in FINAL:
                return answers
    raise AssertionError(f"job {job_id} did not finish: {[a.status_code for a in answers]}")


def test_a_long_poll_answers_when_the_job_changes_and_the_result_has_an_etag(live: LiveService) -> None:
    with live.client() as http:
        accepted = _submit(http, _collection(http))
        assert accepted.status_code == 202
        job_id, etag = accepted.json()["id"], accepted.headers["ETag"]
        answers = _long_poll_until_final(http, job_id, etag)
        final = answers[-1]
        assert final.json()["state"] == "succeeded"
        assert "Retry-After" not in final.headers
        unchanged = http.get(f"/v1/jobs/{job_id}", headers={"If-None-Match": final.headers["ETag"]})
        assert unchanged.status_code == 304 and unchanged.content == b""
        assert unchanged.headers["ETag"] == final.headers["ETag"]
        held = http.get(f"/v1/jobs/{job_id}", params={"wait": 25}, headers={"If-None-Match": final.headers["ETag"]})
        assert held.status_code == 304  # a final job will not change: answered at once, not at the bound
        result = http.get(f"/v1/jobs/{job_id}/result")
        assert result.status_code == 200 and result.headers["ETag"]
        cached = http.get(f"/v1/jobs/{job_id}/result", headers={"If-None-Match": result.headers["ETag"]})
        assert cached.status_code == 304 and cached.content == b""
        tsv = http.get(f"/v1/jobs/{job_id}/result", params={"format": "tsv"},
                       headers={"If-None-Match": result.headers["ETag"]})
        assert tsv.status_code == 200 and tsv.headers["ETag"] != result.headers["ETag"]  # another representation


def test_the_client_waits_by_long_poll_with_etags(live: LiveService) -> None:
    sent: list[httpx.Request] = []
    with Client(live.url, live.token) as client, live.client() as http:
        client._http.event_hooks["request"].append(sent.append)
        collection = _collection(http)
        seen: list[dict[str, Any]] = []
        job = client.evaluate(collection, [("run.txt", RUN)], ["AP"], progress=seen.append)
        assert job["state"] == "succeeded" and seen[-1]["state"] == "succeeded"
    polls = [r for r in sent if r.method == "GET"]
    assert polls and all(r.url.params.get("wait") and r.headers.get("If-None-Match") for r in polls)


def test_a_callback_receives_the_signed_job_document(live: LiveService) -> None:
    with Receiver() as receiver, live.client() as http:
        accepted = _submit(http, _collection(http), callback_url=receiver.url)
        assert accepted.status_code == 202, accepted.text
        body = accepted.json()
        secret = body["callback_secret"]
        assert body["callback_url"] == receiver.url
        job = live.wait_job(http, body["id"])
        assert "callback_secret" not in job and job["callback_url"] == receiver.url
        headers, raw = receiver.wait_for(1, timeout=60)[0]
    assert verify_signature(secret, raw, headers["x-evalserve-signature"])
    assert not verify_signature("another secret", raw, headers["x-evalserve-signature"])
    delivery = json.loads(raw)
    assert headers["x-evalserve-event"] == delivery["event"] == "job.finished"
    assert delivery["task"] is None
    assert delivery["data"]["id"] == body["id"] and delivery["data"]["state"] == "succeeded"
    assert delivery["data"]["links"]["result"] == f"/v1/jobs/{body['id']}/result"


@pytest.mark.parametrize("url", ["http://10.0.0.1/hook", "http://169.254.169.254/latest", "ftp://127.0.0.1/x",
                                 "http://user:pw@127.0.0.1/x"])
def test_callbacks_to_forbidden_targets_are_refused_like_webhooks(live: LiveService, url: str) -> None:
    with live.client() as http:
        collection = _collection(http)
        refused = _submit(http, collection, callback_url=url)
        assert refused.status_code == 422
        assert refused.json()["code"] == "webhook-target-refused"
        run = http.post("/v1/runs", params={"collection": collection}, files={"run": ("r.txt", RUN)}).json()
        by_json = http.post("/v1/evaluations", json={"collection": collection, "runs": [run["id"]],
                                                     "measures": ["AP"], "callback_url": url})
        assert by_json.status_code == 422 and by_json.json()["code"] == "webhook-target-refused"


# --- a deployment without evaluation workers: jobs stay queued until cancelled ----------------------------------


def _held_long_poll(http: httpx.Client, job_id: str, etag: str, out: list[httpx.Response]) -> threading.Thread:
    thread = threading.Thread(target=lambda: out.append(
        http.get(f"/v1/jobs/{job_id}", params={"wait": 25}, headers={"If-None-Match": etag})), daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("backend", ["embedded", "redis-postgres"])
def test_a_long_poll_answers_a_cancel_at_once_and_an_unchanged_job_at_its_bound(
        stack: Callable[..., LiveService], backend: str) -> None:
    service = stack(backend, **LIVE_ENV)
    service.start_api()
    service.start_webhook_worker()
    with Receiver() as receiver, service.client() as http, service.client() as other:
        accepted = _submit(http, _collection(http), callback_url=receiver.url)
        job_id, etag = accepted.json()["id"], accepted.headers["ETag"]
        started = time.monotonic()
        at_bound = http.get(f"/v1/jobs/{job_id}", params={"wait": 1}, headers={"If-None-Match": etag})
        assert at_bound.status_code == 304 and time.monotonic() - started >= 0.9  # held to its bound
        now = http.get(f"/v1/jobs/{job_id}", params={"wait": 1})  # no If-None-Match: the job as it was asked for
        assert now.status_code == 200 and now.headers["ETag"] == etag and now.json()["state"] == "queued"
        held: list[httpx.Response] = []
        thread = _held_long_poll(other, job_id, etag, held)
        time.sleep(0.3)  # let the long-poll start waiting (if it has not, it answers the cancel all the same)
        assert http.delete(f"/v1/jobs/{job_id}").json()["state"] == "cancelled"
        thread.join(20)  # well before its 25 s bound
        assert not thread.is_alive() and held[0].status_code == 200
        assert held[0].json()["state"] == "cancelled" and held[0].headers["ETag"] != etag
        headers, raw = receiver.wait_for(1, timeout=60)[0]
    assert verify_signature(accepted.json()["callback_secret"], raw, headers["x-evalserve-signature"])
    assert json.loads(raw)["data"]["state"] == "cancelled"


def test_wait_is_bounded(live: LiveService) -> None:
    with live.client() as http:
        assert http.get("/v1/jobs/job_x", params={"wait": 31}).status_code == 422
        assert http.get("/v1/jobs/job_x", params={"wait": -1}).status_code == 422
        assert http.get("/v1/jobs/job_x", params={"wait": 1}).status_code == 404


def test_embedded_workers_wait_on_their_queues_wake_up_pipes(live: LiveService) -> None:
    """The worker processes opened the pipe of their queue (service.broker.wakeup), the one the API pokes after a
    publish."""
    from evalserve.service.broker import wakeup
    from evalserve.service.core.config import Settings

    settings = Settings.from_env(live.env)
    directory = wakeup.pipe_dir(settings.broker_url)
    if directory is None:
        pytest.skip("Redis consumers block on BRPOP")
    with live.client() as http:
        live.wait_job(http, _submit(http, _collection(http)).json()["id"])
    for queue in (settings.queue, settings.webhook_queue):
        assert stat.S_ISFIFO(wakeup.pipe_path(directory, queue).stat().st_mode)
    assert wakeup.poke(directory, settings.queue)  # a reader holds it open: the byte is taken
