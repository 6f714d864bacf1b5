"""Per-topic feedback cannot be mined on a task with default settings, on real processes (127.0.0.1 only, both
backends). The probe of issue 29 -- one submission that puts one docno first on every topic, whose per-topic
P@10 is > 0 exactly where that document is relevant and whose nDCG@10 gives its grade -- learns nothing per topic:
``.../per-topic`` is 403 ``per-topic-feedback-off`` and nothing a participant reads holds a per-topic value; the
phase got the default daily quota, so the sixth submission of the day is 429 with Retry-After (the five accepted
are all evaluated). An organiser who turns feedback on explicitly still gets it, and existing tasks keep their
stored setting through the migration."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import text

from tests.service.live import LiveService

TOPICS = [str(t) for t in range(1, 51)]
PROBE_DOC = "doc-probe"
MEASURES = ["P@10", "nDCG@10", "AP"]
DEFAULT_QUOTA = 5  # EVALSERVE_TASK_DEFAULT_QUOTA_PER_DAY's default


def _judgments() -> bytes:
    """50 topics; the probe document is judged on every topic, relevant (grade 1 or 2) on some."""
    lines = [f"{t} 0 {PROBE_DOC} {int(t) % 3}\n" for t in TOPICS]
    lines += [f"{t} 0 other-{t}-{d} {d % 2}\n" for t in TOPICS for d in range(5)]
    return "".join(lines).encode()


PROBE_RUN = "".join(f"{t} Q0 {PROBE_DOC} 1 1.0 probe\n" for t in TOPICS).encode()


def _task(organiser: httpx.Client, **settings: Any) -> str:
    collection = organiser.post("/v1/collections", data={"name": "hidden judgments"},
                                files={"qrels": ("qrels", _judgments())})
    assert collection.status_code == 201, collection.text
    now = datetime.now(UTC)
    phase = {"name": "test", "opens_at": (now - timedelta(hours=1)).isoformat(),
             "closes_at": (now + timedelta(days=2)).isoformat()}
    task = organiser.post("/v1/tasks", json={"name": "probed", "collection": collection.json()["id"],
                                             "measures": MEASURES, "phases": [phase], **settings})
    assert task.status_code == 201, task.text
    return str(task.json()["id"])


def _evaluated(live: LiveService, http: httpx.Client, task: str, sub: str) -> dict[str, Any]:
    deadline = datetime.now(UTC) + timedelta(seconds=120)
    while datetime.now(UTC) < deadline:
        doc = http.get(f"/v1/tasks/{task}/submissions/{sub}").json()
        if doc["state"] in ("succeeded", "failed"):
            return dict(doc)
        time.sleep(0.2)
    raise AssertionError(f"submission {sub} not evaluated: {live.log('worker')}")


def _per_topic_values(document: Any) -> list[Any]:
    """Every mapping keyed by the task's topic ids anywhere in a JSON document."""
    found: list[Any] = []
    if isinstance(document, dict):
        if document and set(document) <= set(TOPICS) and len(document) > 1:
            found.append(document)
        for value in document.values():
            found += _per_topic_values(value)
    elif isinstance(document, list):
        for value in document:
            found += _per_topic_values(value)
    return found


def test_the_probe_submission_learns_nothing_per_topic_on_a_default_task(live: LiveService) -> None:
    with live.client(live.user_token("organiser")) as organiser, live.client(live.user_token("prober")) as prober:
        task = _task(organiser)
        shown = prober.get(f"/v1/tasks/{task}").json()
        assert shown["per_topic_feedback"] is False, "off unless the organiser turns it on"
        assert [p["quota_per_day"] for p in shown["phases"]] == [DEFAULT_QUOTA], "a daily quota by default"
        assert prober.post(f"/v1/tasks/{task}/participants", json={"team": "probe"}).status_code == 201

        accepted = []
        for _ in range(DEFAULT_QUOTA):
            sub = prober.post(f"/v1/tasks/{task}/submissions", files={"run": ("probe.run", PROBE_RUN)})
            assert sub.status_code == 202, sub.text
            accepted.append(sub.json()["id"])
        refused = prober.post(f"/v1/tasks/{task}/submissions", files={"run": ("probe.run", PROBE_RUN)})
        assert refused.status_code == 429 and refused.json()["code"] == "quota-exceeded", refused.text
        assert int(refused.headers["Retry-After"]) >= 1
        for sub in accepted:  # nothing accepted was lost
            assert _evaluated(live, prober, task, sub)["state"] == "succeeded"

        per_topic = prober.get(f"/v1/tasks/{task}/submissions/{accepted[0]}/per-topic")
        assert per_topic.status_code == 403 and per_topic.json()["code"] == "per-topic-feedback-off"
        readable = [prober.get(f"/v1/tasks/{task}/submissions").json(),
                    prober.get(f"/v1/tasks/{task}/submissions/{accepted[0]}").json(),
                    prober.get(f"/v1/tasks/{task}/leaderboard").json(), prober.get(f"/v1/tasks/{task}").json()]
        assert _per_topic_values(readable) == [], "no per-topic value anywhere a participant reads"
        jobs = [e.get("job") for e in readable[1].get("evaluations", [])]
        assert all(j is None for j in jobs), "no job id to read its result through"

        organiser_view = organiser.get(f"/v1/tasks/{task}/submissions/{accepted[0]}/per-topic")
        assert organiser_view.status_code == 200 and set(organiser_view.json()["per_topic"]["P@10"]) == set(TOPICS)


def test_an_organisers_explicit_choice_is_kept(live: LiveService) -> None:
    with live.client(live.user_token("open organiser")) as organiser, \
            live.client(live.user_token("team")) as team:
        task = _task(organiser, per_topic_feedback=True)
        now = datetime.now(UTC)
        unlimited = organiser.post(f"/v1/tasks/{task}/phases", json={
            "name": "later", "opens_at": (now + timedelta(days=3)).isoformat(),
            "closes_at": (now + timedelta(days=4)).isoformat(), "quota_per_day": None})
        assert unlimited.status_code == 201 and unlimited.json()["quota_per_day"] is None, "null: no limit"
        assert team.post(f"/v1/tasks/{task}/participants", json={"team": "t"}).status_code == 201
        sub = team.post(f"/v1/tasks/{task}/submissions", files={"run": ("probe.run", PROBE_RUN)})
        assert sub.status_code == 202, sub.text
        assert _evaluated(live, team, task, sub.json()["id"])["state"] == "succeeded"
        answer = team.get(f"/v1/tasks/{task}/submissions/{sub.json()['id']}/per-topic")
        assert answer.status_code == 200 and set(answer.json()["per_topic"]["P@10"]) == set(TOPICS), "opted in"


def test_existing_tasks_keep_their_stored_feedback_setting_through_the_migration(tmp_path: Path) -> None:
    from evalserve.service.store.db import Database
    from evalserve.service.store.migrate import upgrade

    url = f"sqlite:///{tmp_path / 'old.db'}"
    upgrade(url, "0011")
    db = Database(url)
    try:
        with db.engine.begin() as c:
            c.execute(text("PRAGMA foreign_keys=OFF"))
            c.execute(text("INSERT INTO tasks (id, owner_id, name, description, collection_id, version, measures,"
                           " primary_measure, sort_order, ties, topics, visibility, registration, significance,"
                           " created_at, updated_at) VALUES ('task_old', 'tok', 'old', '', 'col', 1, '[\"AP\"]',"
                           " 'AP', 'desc', 'trec', 'complete', 'public', 'open', '{}', '2026-01-01', '2026-01-01')"))
        upgrade(url, "0014")
        with db.engine.begin() as c:
            c.execute(text("PRAGMA foreign_keys=OFF"))
            c.execute(text("INSERT INTO tasks (id, owner_id, name, description, collection_id, version, measures,"
                           " primary_measure, sort_order, ties, topics, visibility, registration, significance,"
                           " created_at, updated_at) VALUES ('task_new', 'tok', 'new', '', 'col', 1, '[\"AP\"]',"
                           " 'AP', 'desc', 'trec', 'complete', 'public', 'open', '{}', '2026-01-01', '2026-01-01')"))
            stored = dict(c.execute(text("SELECT id, per_topic_feedback FROM tasks")).all())
    finally:
        db.dispose()
    assert stored == {"task_old": 1, "task_new": 0}, "an existing task keeps feedback on; a new row defaults to off"

