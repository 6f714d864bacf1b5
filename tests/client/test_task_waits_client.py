"""The participant's side of issue 30 in the client, no server (a scripted transport): ``wait_for_submission``
and ``submit_to_task(wait=True)`` long-poll (the first GET at once, then ``?wait=`` with the ``ETag`` as
``If-None-Match``: no pause between answers), ``callback_url`` goes up as a form field and its secret comes back;
``per_topic_export`` asks for each format and parses JSON only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from evalserve_client import ApiError, Client

from tests.client import test_tasks_client as _tasks_client
from tests.client.test_client_logic import FakeTime, Recorder, problem

#: the SDK tests' fixtures: a fake clock and clients on scripted answers
fake_time, scripted = _tasks_client.fake_time, _tasks_client.scripted


def _sub(state: str, **extra: Any) -> dict[str, Any]:
    return {"id": "sub_1", "task": "task_1", "state": state, "stage": state, "progress": 0.0, "scores": None,
            "error": None, **extra}


def _held(fake_time: FakeTime, seconds: float, response: httpx.Response) -> Callable[[httpx.Request], httpx.Response]:
    """An answer the server held ``seconds`` (the fake clock moves on)."""

    def answer(_request: httpx.Request) -> httpx.Response:
        fake_time.now += seconds
        return response

    return answer


def test_submit_with_wait_long_polls_and_keeps_the_callback_secret(scripted: Callable[..., Client],
                                                                   fake_time: FakeTime) -> None:
    accepted = _sub("queued", callback_url="https://ci.example.org/scores", callback_secret="Xq3")
    server = Recorder(httpx.Response(202, json=accepted, headers={"Retry-After": "1"}),
                      httpx.Response(200, json=_sub("queued"), headers={"ETag": '"a"', "Retry-After": "1"}),
                      _held(fake_time, 25.0, httpx.Response(304, headers={"ETag": '"a"'})),
                      _held(fake_time, 0.3, httpx.Response(200, json=_sub("running"), headers={"ETag": '"b"'})),
                      _held(fake_time, 0.2, httpx.Response(200, json=_sub("succeeded", scores={"AP": 0.5}),
                                                           headers={"ETag": '"c"'})))
    done = scripted(server).submit_to_task("task_1", ("a.run", b"151 Q0 d 1 1 t\n"), wait=True,
                                           callback_url="https://ci.example.org/scores")
    assert done["state"] == "succeeded" and done["scores"] == {"AP": 0.5}
    assert done["callback_secret"] == "Xq3" and done["callback_url"] == "https://ci.example.org/scores"
    assert fake_time.sleeps == [], "never a pause: every wait is the server's"
    post, first, *polls = server.requests
    assert b'name="callback_url"\r\n\r\nhttps://ci.example.org/scores' in post.content
    assert first.url.path == "/v1/tasks/task_1/submissions/sub_1" and not first.url.params
    assert [r.headers["If-None-Match"] for r in polls] == ['"a"', '"a"', '"b"']
    assert all(float(r.url.params["wait"]) > 0 for r in polls)


def test_without_long_polls_the_wait_polls_and_a_fixed_poll_stays_a_poll(scripted: Callable[..., Client],
                                                                         fake_time: FakeTime) -> None:
    old = Recorder(httpx.Response(200, json=_sub("running")), httpx.Response(200, json=_sub("succeeded")))
    assert scripted(old).wait_for_submission("task_1", "sub_1")["state"] == "succeeded"
    assert fake_time.sleeps == [0.2] and "wait" not in old.requests[1].url.params, "no ETag: polled"
    fake_time.sleeps.clear()
    given = Recorder(httpx.Response(200, json=_sub("running"), headers={"ETag": '"a"'}),
                     _held(fake_time, 0.4, httpx.Response(200, json=_sub("succeeded"), headers={"ETag": '"b"'})))
    seen: list[dict[str, Any]] = []
    assert scripted(given).wait_for_submission("task_1", _sub("queued"), on_progress=seen.append)["state"] == \
        "succeeded"
    assert [s["state"] for s in seen] == ["queued", "running", "succeeded"], "the given submission is shown first"
    assert fake_time.sleeps == [] and given.requests[1].headers["If-None-Match"] == '"a"', "then asked at once"
    fixed = Recorder(httpx.Response(200, json=_sub("running"), headers={"ETag": '"a"'}),
                     httpx.Response(200, json=_sub("succeeded"), headers={"ETag": '"b"'}))
    assert scripted(fixed).wait_for_submission("task_1", _sub("queued"), poll=0.5)["state"] == "succeeded"
    assert fake_time.sleeps == [0.5, 0.5] and all("wait" not in r.url.params for r in fixed.requests)


def test_per_topic_export_in_each_format(scripted: Callable[..., Client]) -> None:
    text = "submission,team,run,baseline,measure,topic,value\nsub_1,ann,a,False,AP,151,0.5\n"
    server = Recorder(httpx.Response(200, text=text, headers={"Content-Type": "text/csv"}),
                      httpx.Response(200, json={"columns": ["submission"], "rows": [["sub_1"]]}),
                      httpx.Response(200, content=b"PAR1...PAR1"),
                      problem(403, "organisers-only", "only the organisers of task task_1 may export"))
    client = scripted(server)
    assert client.per_topic_export("task_1") == text
    assert client.per_topic_export("task_1", format="json", selection="all", phase="test",
                                   version=2)["rows"] == [["sub_1"]]
    assert client.per_topic_export("task_1", format="parquet") == b"PAR1...PAR1"
    with pytest.raises(ApiError) as refused:
        client.per_topic_export("task_1")
    assert refused.value.code == "organisers-only"
    assert [dict(r.url.params) for r in server.requests[:3]] == [
        {"format": "csv", "selection": "latest"}, {"format": "json", "selection": "all", "phase": "test",
                                                   "version": "2"}, {"format": "parquet", "selection": "latest"}]
    assert server.requests[0].url.path == "/v1/tasks/task_1/per-topic"
    with pytest.raises(ValueError, match="unknown export format"):
        client.per_topic_export("task_1", format="xlsx")
