"""A task submission that shares no topic with the hidden judgments is refused at upload (issue 28: it was
accepted, 202, and then failed ``no-topics-scored``): a 422 problem+json ``no-topics-scored`` that quotes the run's
own topics and says nothing of the judgments -- not which topics are judged, not how many -- and nothing is stored
or counted against the quota. Flask's test client over SQLite, as tests/service/test_tasks.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.jobrun.runner import run_job
from tests.service.test_api import _file, _is_problem
from tests.service.test_tasks import TaskApi

#: judged topics with ids that cannot be mistaken for anything else in a message
JUDGED = b"topic401 0 d1 1\ntopic402 0 d2 1\ntopic403 0 d3 0\ntopic404 0 d4 1\n"
ELSEWHERE = b"q7 Q0 d1 1 2.0 mine\nq7 Q0 d2 2 1.0 mine\nq8 Q0 d3 1 1.0 mine\n"
ONE_IN_COMMON = ELSEWHERE + b"topic402 Q0 d2 1 1.0 mine\n"


@pytest.fixture
def api(tmp_path: Path) -> Iterator[TaskApi]:
    made = TaskApi(tmp_path)
    yield made
    made.app.extensions["evalserve"].db.dispose()


def _task(api: TaskApi) -> str:
    task_id = str(api.task(collection=api.hidden_collection(JUDGED))["id"])
    assert api.register(task_id, "bob").status_code == 201
    return task_id


def _submit(api: TaskApi, task_id: str, run: bytes) -> object:
    return api.call("POST", f"/v1/tasks/{task_id}/submissions", "bob", data={"run": (_file(run), "mine.run")})


def test_no_topic_in_common_is_a_422_that_reveals_nothing_of_the_judgments(api: TaskApi) -> None:
    task_id = _task(api)
    body = _is_problem(_submit(api, task_id, ELSEWHERE), 422, ProblemCode.NO_TOPICS_SCORED)
    detail = body["detail"]
    assert "no topic in common" in detail and "(q7, q8)" in detail and "mine.run" in detail
    assert "topic40" not in detail and " 4 " not in detail and "4 judged" not in detail
    [problem] = body["problems"]
    assert (problem["code"], problem["source"], problem["message"]) == ("no-topics-scored", "mine.run", detail)
    assert api.call("GET", f"/v1/tasks/{task_id}/submissions", "bob").json == []


def test_the_refusal_uses_no_quota_and_one_topic_in_common_is_enough(api: TaskApi) -> None:
    task_id = _task(api)  # quota_total 3
    for _ in range(3):
        assert _submit(api, task_id, ELSEWHERE).status_code == 422
    accepted = _submit(api, task_id, ONE_IN_COMMON)
    assert accepted.status_code == 202, accepted.get_data(as_text=True)
    api.work()  # the one judged topic is scored: the job succeeds
    [sub] = api.call("GET", f"/v1/tasks/{task_id}/submissions", "bob").json
    assert sub["state"] == "succeeded" and sub["error"] is None


def test_new_judgments_are_the_ones_checked(api: TaskApi) -> None:
    task_id = _task(api)
    r = api.call("POST", f"/v1/tasks/{task_id}/judgments", "alice",
                 data={"qrels": (_file(b"q7 0 d1 1\nq8 0 d3 1\n"), "new.qrels"), "note": "topics renamed"})
    assert r.status_code == 202, r.get_data(as_text=True)
    assert _submit(api, task_id, ELSEWHERE).status_code == 202
    _is_problem(_submit(api, task_id, b"topic401 Q0 d1 1 1.0 mine\n"), 422, "no-topics-scored")


def test_a_run_left_without_judged_topics_by_new_judgments_fails_without_naming_them(api: TaskApi) -> None:
    """New judgments can leave an accepted run with no judged topic: its re-evaluation fails no-topics-scored, and
    the participant reads that it has no topic in common -- not the judged topics the engine's message names
    (organisers read it whole)."""
    task_id = _task(api)
    accepted = _submit(api, task_id, ONE_IN_COMMON)
    assert accepted.status_code == 202
    api.work()
    r = api.call("POST", f"/v1/tasks/{task_id}/judgments", "alice",
                 data={"qrels": (_file(b"secret9 0 d1 1\nsecret8 0 d2 1\n"), "new.qrels"), "note": "new topics"})
    assert r.status_code == 202, r.get_data(as_text=True)
    [job_id] = r.json["jobs"]
    assert run_job(api.ctx, job_id) == "failed"
    sub_id = accepted.json["id"]
    mine = api.call("GET", f"/v1/tasks/{task_id}/submissions/{sub_id}", "bob").json
    assert mine["state"] == "failed" and mine["error"]["code"] == "no-topics-scored"
    assert "no topic in common" in mine["error"]["message"] and "secret" not in json.dumps(mine)
    organiser = api.call("GET", f"/v1/tasks/{task_id}/submissions/{sub_id}", "alice").json
    assert "secret8" in organiser["error"]["message"]
