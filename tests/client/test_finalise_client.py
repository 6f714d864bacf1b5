"""``Client.finalise`` (issue 30) against a scripted server: the final record, waiting while submissions are being
evaluated (409 ``evaluations-pending`` with Retry-After), and any other refusal raised at once."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest
from evalserve_client import ApiError, Client

from tests.client.test_client_logic import FakeTime, Recorder, fake_time, make_client, problem  # noqa: F401

RECORD = {"at": "2026-11-27T21:00:00+00:00", "hash": "ab" * 32, "evalserve": "0.1.0", "judgments_sha256": "cd" * 32,
          "measures": [], "phase": "test", "version": 1, "selection": "latest", "rows": 4, "ranked": 3,
          "leaderboard": "/v1/tasks/task_1/leaderboard?version=1&selection=latest&phase=test"}


def test_finalise_posts_once_and_returns_the_record(make_client: Callable[..., Client]) -> None:  # noqa: F811
    server = Recorder(httpx.Response(200, json=RECORD))
    assert make_client(server).finalise("task_1") == RECORD
    [request] = server.requests
    assert (request.method, request.url.path) == ("POST", "/v1/tasks/task_1/finalise")
    assert json.loads(request.content) == {"per_topic": "organisers"}


def test_finalise_can_publish_the_per_topic_scores(make_client: Callable[..., Client]) -> None:  # noqa: F811
    server = Recorder(httpx.Response(200, json={**RECORD, "per_topic": "public"}))
    assert make_client(server).finalise("task_1", per_topic="public")["per_topic"] == "public"
    assert json.loads(server.requests[0].content) == {"per_topic": "public"}


def test_finalise_waits_for_evaluations_then_gives_up(make_client: Callable[..., Client],  # noqa: F811
                                                      fake_time: FakeTime) -> None:  # noqa: F811
    pending = problem(409, "evaluations-pending", "2 submission(s) are still being evaluated",
                      headers={"Retry-After": "1"})
    server = Recorder(pending, pending, httpx.Response(200, json=RECORD))
    assert make_client(server).finalise("task_1") == RECORD
    assert len(server.requests) == 3 and fake_time.sleeps == [1.0, 1.0]

    fake_time.sleeps.clear()
    with pytest.raises(ApiError) as late:
        make_client(Recorder(pending)).finalise("task_1", timeout=3)
    assert late.value.code == "evaluations-pending" and sum(fake_time.sleeps) == 3.0
    with pytest.raises(ApiError):
        make_client(Recorder(pending)).finalise("task_1", timeout=None)


def test_other_refusals_are_raised_at_once(make_client: Callable[..., Client], fake_time: FakeTime) -> None:  # noqa: F811
    for status, code in ((403, "organisers-only"), (404, "not-found")):
        server = Recorder(problem(status, code, "no"))
        with pytest.raises(ApiError) as refused:
            make_client(server).finalise("task_1")
        assert refused.value.code == code and len(server.requests) == 1
    assert fake_time.sleeps == []
