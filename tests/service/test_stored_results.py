"""Stored leaderboards and meta-evaluations in process (``shared_tasks.stored``): an anonymous read never ranks
(202 before anything is stored, the stored board after), a worker's refresh is idempotent, a token holder's read
of changed inputs computes once and stores it for everyone, and an organiser's meta-evaluation is served as stored
for the same options."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from evalserve.service.shared_tasks import leaderboard
from evalserve.service.shared_tasks.stored import refresh_task
from evalserve.service.store.models import Task
from tests.service.test_tasks import TaskApi, _three_teams


@pytest.fixture
def api(tmp_path: Path) -> Iterator[TaskApi]:
    made = TaskApi(tmp_path)
    yield made
    made.app.extensions["evalserve"].db.dispose()


@pytest.fixture
def rankings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the engine's rankings (the significance tests run inside)."""
    calls: list[int] = []
    real = leaderboard.rank_entries

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(leaderboard, "rank_entries", counted)
    return calls


def test_anonymous_reads_never_rank_and_token_reads_compute_once(api: TaskApi, rankings: list[int]) -> None:
    task_id = _three_teams(api)
    url = f"/v1/tasks/{task_id}/leaderboard"
    waiting = api.client.get(url)
    assert waiting.status_code == 202 and waiting.headers["Retry-After"] == "2" and rankings == []
    blobs = api.app.extensions["evalserve"].blobs
    assert refresh_task(api.ctx.db, blobs, task_id) == 2  # both selections of the one phase
    assert refresh_task(api.ctx.db, blobs, task_id) == 0 and len(rankings) == 2  # idempotent
    stored = [api.client.get(url + q) for q in ("", "?format=csv", "?format=latex", "?format=html")]
    assert all(r.status_code == 200 for r in stored) and len(rankings) == 2
    tagged = api.client.get(url, headers={"If-None-Match": stored[0].headers["ETag"]})
    assert tagged.status_code == 304 and len(rankings) == 2
    assert api.call("GET", url, "bob").get_data() == stored[0].get_data(), "a token holder gets the same bytes"

    changed = api.call("PATCH", f"/v1/tasks/{task_id}", "alice", json={"significance": {"test": "bootstrap"}})
    assert changed.status_code == 200
    assert api.client.get(url).json["significance"]["test"] == "t", "anonymous: the board as last stored"
    assert len(rankings) == 2
    assert api.call("GET", url, "bob").json["significance"]["test"] == "bootstrap"  # computed once, stored
    assert len(rankings) == 3
    assert api.client.get(url).json["significance"]["test"] == "bootstrap" and len(rankings) == 3
    assert api.call("GET", url, "carol").json["significance"]["test"] == "bootstrap" and len(rankings) == 3


def test_the_stored_board_is_the_one_computed_per_request(api: TaskApi) -> None:
    task_id = _three_teams(api)
    served = api.call("GET", f"/v1/tasks/{task_id}/leaderboard?selection=all", "bob")


    with api.ctx.db.session() as s:
        task = s.get(Task, task_id)
        assert task is not None
        old = leaderboard.task_leaderboard(s, api.app.extensions["evalserve"].blobs, task, selection="all",
                                           at=datetime.fromisoformat(served.json["generated_at"]))
    assert served.get_data(as_text=True) == json.dumps(old.document, indent=2) + "\n"


def test_an_organisers_meta_evaluation_is_stored_under_its_options(api: TaskApi) -> None:
    task_id = _three_teams(api)
    first = api.call("GET", f"/v1/tasks/{task_id}/meta?resamples=200", "alice").json
    again = api.call("GET", f"/v1/tasks/{task_id}/meta?resamples=200", "alice").json
    other = api.call("GET", f"/v1/tasks/{task_id}/meta?resamples=300", "alice").json
    assert again == first, "served as stored (same generated_at)"
    assert other["options"]["resamples"] == 300 and other["generated_at"] != first["generated_at"]
