"""Per-topic feedback (issue 17): a participant reads the per-topic scores of its own submissions, as TREC gives
each team its per-topic evaluation; never another team's (404, as every other read of a submission), never the
judgments; organisers read everyone's; a task setting (``per_topic_feedback``) turns it on. It is off by default
since issue 29 (one crafted submission's per-topic scores reveal judgments): these tests turn it on explicitly."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.service.test_api import _is_problem
from tests.service.test_tasks import NOW, TaskApi, _three_teams


@pytest.fixture
def api(tmp_path: Path) -> Iterator[TaskApi]:
    made = TaskApi(tmp_path)
    yield made
    made.app.extensions["evalserve"].db.dispose()


def _mine(api: TaskApi, task_id: str, who: str) -> dict[str, Any]:
    subs = api.call("GET", f"/v1/tasks/{task_id}/submissions", who).json
    assert len(subs) == 1
    return dict(subs[0])


def _per_topic(api: TaskApi, task_id: str, sub: str, who: str) -> Any:
    return api.call("GET", f"/v1/tasks/{task_id}/submissions/{sub}/per-topic", who)


def test_a_participant_reads_its_own_per_topic_scores_exactly_as_evaluated(api: TaskApi) -> None:
    task_id = _three_teams(api, per_topic_feedback=True)
    assert api.call("GET", f"/v1/tasks/{task_id}", "bob").json["per_topic_feedback"] is True, "as asked"
    sub = _mine(api, task_id, "bob")
    r = _per_topic(api, task_id, sub["id"], "bob")
    assert r.status_code == 200, r.get_data(as_text=True)
    doc = r.json
    assert doc["submission"] == sub["id"] and doc["team"] == "team-bob" and doc["state"] == "succeeded"
    assert doc["version"] == 1 and doc["measures"] == ["nDCG@10", "P@5", "AP"] and doc["topics"] == ["1", "2", "3"]
    assert doc["scores"] == sub["scores"]
    # the organiser's job result is the oracle: the same per-topic values, exactly
    job = api.call("GET", f"/v1/tasks/{task_id}/submissions/{sub['id']}", "alice").json["evaluations"][0]["job"]
    result = api.call("GET", f"/v1/jobs/{job}/result", "alice").json
    (by_measure,) = result["runs"].values()
    assert doc["per_topic"] == {m: item["per_topic"] for m, item in by_measure.items()}
    text = r.get_data(as_text=True)
    assert "sha256" not in text and "inputs" not in text, "nothing about the judgments' files"
    assert set(doc) == {"submission", "task", "team", "version", "state", "measures", "topics", "scores",
                        "per_topic", "links"}


def test_another_team_gets_404_and_organisers_see_everyone(api: TaskApi) -> None:
    task_id = _three_teams(api)
    bobs = _mine(api, task_id, "bob")["id"]
    _is_problem(_per_topic(api, task_id, bobs, "carol"), 404, "not-found")
    _is_problem(_per_topic(api, task_id, bobs, "reader"), 404, "not-found")  # not registered
    _is_problem(api.client.get(f"/v1/tasks/{task_id}/submissions/{bobs}/per-topic"), 401, "unauthorized")
    _is_problem(_per_topic(api, task_id, "sub_nope", "bob"), 404, "not-found")
    _is_problem(_per_topic(api, "task_nope", bobs, "bob"), 404, "not-found")
    for who in ("bob", "carol", "dave"):
        sub = _mine(api, task_id, who)["id"]
        assert _per_topic(api, task_id, sub, "alice").status_code == 200, "organisers read every submission"


def test_organisers_turn_per_topic_feedback_off_and_on(api: TaskApi) -> None:
    task_id = _three_teams(api, per_topic_feedback=False)
    assert api.call("GET", f"/v1/tasks/{task_id}", "bob").json["per_topic_feedback"] is False
    bobs = _mine(api, task_id, "bob")["id"]
    body = _is_problem(_per_topic(api, task_id, bobs, "bob"), 403, "per-topic-feedback-off")
    assert "organisers" in body["detail"]
    _is_problem(_per_topic(api, task_id, _mine(api, task_id, "carol")["id"], "bob"), 404, "not-found")
    assert _per_topic(api, task_id, bobs, "alice").status_code == 200, "organisers always"
    _is_problem(api.call("PATCH", f"/v1/tasks/{task_id}", "bob", json={"per_topic_feedback": True}), 403,
                "organisers-only")
    r = api.call("PATCH", f"/v1/tasks/{task_id}", "alice", json={"per_topic_feedback": True})
    assert r.status_code == 200 and r.json["per_topic_feedback"] is True
    assert _per_topic(api, task_id, bobs, "bob").status_code == 200


def test_a_blinded_task_hides_per_topic_scores_until_its_date(api: TaskApi) -> None:
    task_id = _three_teams(api, visibility="blinded", blinded_until=(NOW + timedelta(days=5)).isoformat(),
                           per_topic_feedback=True)
    bobs = _mine(api, task_id, "bob")["id"]
    body = _is_problem(_per_topic(api, task_id, bobs, "bob"), 403, "scores-hidden")
    assert "until" in body["detail"]
    assert _per_topic(api, task_id, bobs, "alice").status_code == 200
    api.call("PATCH", f"/v1/tasks/{task_id}", "alice", json={"blinded_until": NOW.isoformat()})
    assert _per_topic(api, task_id, bobs, "bob").status_code == 200


def test_before_its_evaluation_a_submission_has_no_per_topic_scores_yet(api: TaskApi) -> None:
    task_id = str(api.task(per_topic_feedback=True)["id"])
    api.register(task_id, "bob")
    sub = api.submit(task_id, "bob").json["id"]
    r = _per_topic(api, task_id, sub, "bob")
    assert r.status_code == 200 and r.json["state"] == "queued" and r.json["per_topic"] is None
    assert r.headers["Retry-After"] == "1"
    api.work()
    assert _per_topic(api, task_id, sub, "bob").json["per_topic"]["AP"]
