"""Finalising a shared task (``POST /v1/tasks/{id}/finalise``; issue 30) in process: the final record (content hash,
evalserve version, judgments' SHA-256, measure definitions), every format saying "final", the hash stable across
reads and a worker's refresh, every write refused (409 ``task-final``) for organisers, participants and admins,
baselines shown unranked, and ``better_than`` as submission keys."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from typing import Any

from evalserve.service.access.tokens import create_token
from evalserve.service.shared_tasks.final import content_hash
from evalserve.service.shared_tasks.stored import refresh_task
from evalserve.service.store.models import Collection, Webhook, new_id
from evaluation.version import engine_version
from tests.service.test_api import _file, _is_problem
from tests.service.test_tasks import NEW_QRELS, NOW, QRELS, RUNS, TaskApi, api

__all__ = ["api"]  # the task tests' fixture, used here


def _campaign(api: TaskApi) -> str:
    """Three teams and the organisers' baseline (the best run: it would take rank 1 if baselines were ranked)."""
    task_id = str(api.task()["id"])
    for who, run in (("bob", "mid"), ("carol", "poor"), ("dave", "poor")):
        assert api.register(task_id, who).status_code == 201
        assert api.submit(task_id, who, run, description=f"{run} system").status_code == 202
    assert api.register(task_id, "alice", "organisers").status_code == 201
    assert api.submit(task_id, "alice", "good", baseline="true", description="BM25").status_code == 202
    api.work()
    return task_id


def _board(api: TaskApi, task_id: str, who: str | None = "bob", fmt: str = "json") -> Any:
    path = f"/v1/tasks/{task_id}/leaderboard?format={fmt}"
    r = api.client.get(path) if who is None else api.call("GET", path, who)
    assert r.status_code == 200, r.get_data(as_text=True)
    return r.json if fmt == "json" else r.get_data(as_text=True)


def test_baselines_are_shown_but_never_ranked(api: TaskApi) -> None:
    task_id = _campaign(api)
    board = _board(api, task_id)
    rows = board["rows"]
    assert rows[0]["baseline"] and rows[0]["rank"] is None, "the best row is the baseline: shown first, no rank"
    assert rows[0]["extra"]["unranked"] == "baseline"
    assert [r["rank"] for r in rows[1:]] == [1, 2, 2], "teams are ranked among themselves (a tie shares a rank)"
    assert rows[1]["delta_best"] == 0.0 and rows[0]["delta_best"] > 0, "the leader is the best ranked team"
    assert all(not r["better_than"] and not r["worse_than"] for r in rows if r["baseline"])
    assert all(rows[0]["key"] not in r["better_than"] + r["worse_than"] for r in rows), "the baseline is not tested"
    html = _board(api, task_id, fmt="html")
    assert 'class="entry baseline"' in html and "baseline" in html
    lines = list(csv.DictReader(io.StringIO(_board(api, task_id, fmt="csv"))))
    assert [line["rank"] for line in lines] == ["", "1", "2", "2"] and lines[0]["baseline"] == "true"


def test_better_than_holds_submission_keys_in_every_format(api: TaskApi) -> None:
    task_id = str(api.task(measures=["nDCG@10", "P@5"], primary_measure="nDCG@10")["id"])
    for who, run in (("bob", "good"), ("carol", "mid"), ("dave", "poor")):
        api.register(task_id, who)
        api.submit(task_id, who, run)
    api.work()
    board = _board(api, task_id)
    keys = {r["key"] for r in board["rows"]}
    assert all(set(r["better_than"]) <= keys for r in board["rows"])
    for r in board["rows"]:
        assert set(r["better_than_by_measure"]) == {"nDCG@10", "P@5"}, "significance on every measure"
        assert r["better_than_by_measure"]["nDCG@10"] == r["better_than"]
    by_key = {r["key"]: r for r in board["rows"]}
    for line in csv.DictReader(io.StringIO(_board(api, task_id, fmt="csv"))):
        assert line["better_than"].split() == by_key[line["key"]]["better_than"]


def test_finalise_stores_the_final_record(api: TaskApi) -> None:
    task_id = _campaign(api)
    _is_problem(api.call("POST", f"/v1/tasks/{task_id}/finalise", "bob"), 403, "organisers-only")
    _is_problem(api.client.post(f"/v1/tasks/{task_id}/finalise"), 401, "unauthorized")
    r = api.call("POST", f"/v1/tasks/{task_id}/finalise", "alice")
    assert r.status_code == 200, r.get_data(as_text=True)
    record = r.json
    assert record["evalserve"] == engine_version()
    with api.ctx.db.session() as s:
        collection = s.get(Collection, api.call("GET", f"/v1/tasks/{task_id}", "alice").json["collection"])
        assert collection is not None
        assert record["judgments_sha256"] == collection.qrels_sha256 == hashlib.sha256(QRELS).hexdigest()
    assert [m["measure"] for m in record["measures"]] == ["nDCG@10", "P@5", "AP"]
    assert record["measures"][0]["name"] == "nDCG" and record["measures"][0]["cutoff"] == 10
    assert record["measures"][0]["parameters"]["gain"] and record["measures"][0]["reference"]
    assert (record["phase"], record["version"], record["selection"], record["rows"], record["ranked"]) == (
        "test", 1, "latest", 4, 3)
    assert record["leaderboard"] == f"/v1/tasks/{task_id}/leaderboard?version=1&selection=latest&phase=test"
    again = api.call("POST", f"/v1/tasks/{task_id}/finalise", "admin")
    assert again.status_code == 200 and again.json == record, "idempotent: the same record"
    for who in ("alice", "bob", "reader"):
        assert api.call("GET", f"/v1/tasks/{task_id}", who).json["final"] == record
    assert api.client.get(f"/v1/tasks/{task_id}").json["final"] == record


def test_every_format_says_final_and_the_hash_is_stable(api: TaskApi) -> None:
    task_id = _campaign(api)
    before = _board(api, task_id)
    assert before["final"] is None and api.call("GET", f"/v1/tasks/{task_id}", "bob").json["final"] is None
    record = api.call("POST", f"/v1/tasks/{task_id}/finalise", "alice").json
    board = _board(api, task_id)
    final = board["final"]
    assert final["hash"] == record["hash"] == content_hash(board)
    assert {k: final[k] for k in ("at", "evalserve", "judgments_sha256", "measures")} == {
        k: record[k] for k in ("at", "evalserve", "judgments_sha256", "measures")}
    assert board["rows"] == before["rows"], "finalising changes no number"
    # the documented recipe, by hand
    hashed = {"task": task_id, **{k: board[k] for k in ("phase", "version", "selection", "measures", "primary",
                                                       "order", "significance", "topics", "rows", "pairs")}}
    text = json.dumps(hashed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert hashlib.sha256(text.encode()).hexdigest() == record["hash"]
    # stable across reads (anonymous and token holders), a worker's refresh and another selection's read
    assert _board(api, task_id, None)["final"]["hash"] == record["hash"]
    assert refresh_task(api.ctx.db, api.ctx.blobs, task_id) >= 0
    assert _board(api, task_id, "carol")["final"]["hash"] == record["hash"]
    assert refresh_task(api.ctx.db, api.ctx.blobs, task_id) == 0, "a final board is never computed again"
    every = api.call("GET", f"/v1/tasks/{task_id}/leaderboard?selection=all", "alice").json
    assert every["final"]["at"] == record["at"] and every["final"]["hash"] == content_hash(every)
    lines = list(csv.DictReader(io.StringIO(_board(api, task_id, fmt="csv"))))
    assert {(line["final_at"], line["final_hash"]) for line in lines} == {(record["at"], record["hash"])}
    html = _board(api, task_id, None, "html")
    assert 'class="final"' in html and "Final results" in html and record["hash"] in html
    latex = _board(api, task_id, fmt="latex")
    assert "Final results" in latex and record["hash"] in latex


def test_finalise_waits_for_evaluations(api: TaskApi) -> None:
    task_id = str(api.task()["id"])
    api.register(task_id, "bob")
    api.submit(task_id, "bob")
    refused = api.call("POST", f"/v1/tasks/{task_id}/finalise", "alice")
    _is_problem(refused, 409, "evaluations-pending")
    assert refused.headers["Retry-After"] == "1"
    assert api.call("GET", f"/v1/tasks/{task_id}", "alice").json["final"] is None
    api.work()
    assert api.call("POST", f"/v1/tasks/{task_id}/finalise", "alice").status_code == 200


def test_every_write_is_refused_after_finalisation(api: TaskApi) -> None:
    task_id = _campaign(api)
    subs = {s["participant"]: s["id"] for s in api.call("GET", f"/v1/tasks/{task_id}/submissions", "alice").json}
    mine = api.call("GET", f"/v1/tasks/{task_id}/submissions", "bob").json[0]["id"]
    [invitation] = api.call("POST", f"/v1/tasks/{task_id}/invitations", "alice", json={}).json
    with api.ctx.db.session() as s:
        hook = Webhook(id=new_id("whk"), task_id=task_id, url="https://example.org/hook",
                       events=["leaderboard.changed"], active=True, secret="s")
        s.add(hook)
        s.commit()
        hook_id = hook.id
    api.tokens["erin"] = create_token(api.ctx.db, "erin", ("read", "submit"))[1]
    record = api.call("POST", f"/v1/tasks/{task_id}/finalise", "alice").json
    board = _board(api, task_id)
    later = (NOW.replace(year=NOW.year + 1)).isoformat()
    window = {"name": "extra", "opens_at": later, "closes_at": later.replace(str(NOW.year + 1), str(NOW.year + 2))}
    writes: list[tuple[str, str, str | None, dict[str, Any]]] = []
    for who in ("alice", "bob", "admin"):
        sub = mine if who == "bob" else next(iter(subs.values()))
        writes += [
            ("POST", f"/v1/tasks/{task_id}/submissions", who,
             {"data": {"run": (_file(RUNS["good"]), "good.run"), **({"baseline": "true"} if who != "bob" else {})}}),
            ("PATCH", f"/v1/tasks/{task_id}/submissions/{sub}", who, {"json": {"selected": True}}),
        ]
    for who in ("alice", "admin"):
        writes += [
            ("PATCH", f"/v1/tasks/{task_id}", who, {"json": {"description": "changed"}}),
            ("PATCH", f"/v1/tasks/{task_id}", who, {"json": {"significance": {"test": "randomisation"}}}),
            ("POST", f"/v1/tasks/{task_id}/phases", who, {"json": window}),
            ("PATCH", f"/v1/tasks/{task_id}/phases/test", who, {"json": {"closes_at": later}}),
            ("POST", f"/v1/tasks/{task_id}/judgments", who,
             {"data": {"qrels": (_file(NEW_QRELS), "q"), "note": "fixed"}}),
            ("POST", f"/v1/tasks/{task_id}/invitations", who, {"json": {"count": 1}}),
            ("POST", f"/v1/tasks/{task_id}/webhooks", who,
             {"json": {"url": "https://example.org/other", "events": ["leaderboard.changed"]}}),
            ("DELETE", f"/v1/tasks/{task_id}/webhooks/{hook_id}", who, {}),
            ("POST", f"/v1/tasks/{task_id}/finalise", who, {}),  # the one write that answers: the same record
        ]
    writes += [("POST", f"/v1/tasks/{task_id}/participants", who, {"json": {"team": f"late-{who}"}})
               for who in ("erin", "admin", "alice")]
    writes += [("POST", f"/v1/invitations/{invitation['code']}", who, {"json": {"team": "late"}})
               for who in ("erin", None)]
    for method, path, who, kw in writes:
        r = api.call(method, path, who, **kw) if who else api.client.open(path, method=method, **kw)
        if path.endswith("/finalise"):
            assert r.status_code == 200 and r.json == record
            continue
        body = _is_problem(r, 409, "task-final")
        assert "finalised" in body["detail"], (method, path, who)
    api.work()
    after = _board(api, task_id)
    assert after["rows"] == board["rows"] and after["final"]["hash"] == record["hash"]
    task = api.call("GET", f"/v1/tasks/{task_id}", "alice").json
    assert task["description"] != "changed" and [p["name"] for p in task["phases"]] == ["test"]
    assert task["version"] == 1 and task["significance"]["test"] == "t"
    assert api.call("GET", f"/v1/tasks/{task_id}/webhooks/{hook_id}", "alice").json["active"] is True
    # reads keep working
    assert api.call("GET", f"/v1/tasks/{task_id}/submissions", "bob").status_code == 200
    assert api.call("GET", f"/v1/tasks/{task_id}/participants", "alice").status_code == 200
    assert api.call("GET", f"/v1/tasks/{task_id}/invitations", "alice").status_code == 200


def test_a_task_finalised_with_public_per_topic_scores_lets_everyone_who_sees_it_export_them(api: TaskApi) -> None:
    closed, opened = _campaign(api), _campaign(api)
    assert api.call("POST", f"/v1/tasks/{closed}/finalise", "alice").json["per_topic"] == "organisers"
    record = api.call("POST", f"/v1/tasks/{opened}/finalise", "alice", json={"per_topic": "public"}).json
    assert record["per_topic"] == "public"
    _is_problem(api.call("POST", f"/v1/tasks/{closed}/finalise", "alice", json={"per_topic": "everyone"}), 422,
                "invalid-request")
    for who in ("bob", "reader"):  # a participant; a caller who takes no part in the public task
        _is_problem(api.call("GET", f"/v1/tasks/{closed}/per-topic", who), 403, "organisers-only")
        exported = api.call("GET", f"/v1/tasks/{opened}/per-topic?format=json", who)
        assert exported.status_code == 200, exported.get_data(as_text=True)
        assert exported.json["rows"], "every shown submission's per-topic scores"
    assert api.client.get(f"/v1/tasks/{opened}/per-topic").status_code == 401, "a token is still asked for"


def test_a_worker_that_read_the_task_before_the_freeze_never_replaces_the_final_board(api: TaskApi) -> None:
    """The race the whole-campaign test caught: a refresh that read the task before it was finalised finishes
    after: its board (not final) is not stored over the final one."""
    from evalserve.service.shared_tasks.leaderboard import phase_named
    from evalserve.service.shared_tasks.stored import refresh_board
    from evalserve.service.store.models import Task, utcnow

    task_id = _campaign(api)
    state = api.app.extensions["evalserve"]
    with state.db.session() as s:
        task = s.get(Task, task_id)  # read before the freeze, as a worker's refresh does
        assert task is not None and task.finalised_at is None
        phase = phase_named(s, task, None, utcnow())
        record = api.call("POST", f"/v1/tasks/{task_id}/finalise", "alice").json  # meanwhile, in the API
        refresh_board(s, state.blobs, task, phase, task.version, "latest")
        s.commit()
    board = _board(api, task_id, who=None)
    assert board["final"] is not None and board["final"]["hash"] == record["hash"]
