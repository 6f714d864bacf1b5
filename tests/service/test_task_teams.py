"""Teams as groups, participant and submission management, and the audit log (issue 30), in process: several
users submit for one team (any of their tokens) within the team's quota; only an invitation the organisers bound
to a team's name adds a user to an existing team; the organisers remove a team or disqualify a team or a
submission with a public reason (disqualified rows stay on the leaderboard at their score's place, unranked,
moving nobody), a team
withdraws its own submission while its phase is open (409 once closed); every change refreshes the stored
leaderboards, and every action is an audit row with who and when, for the organisers only."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from typing import Any

from evalserve.service.access.tokens import create_token
from evalserve.service.shared_tasks.stored import refresh_task
from evalserve.service.store.models import Phase, Token, utcnow
from tests.service.test_api import _is_problem
from tests.service.test_tasks import TaskApi, api

__all__ = ["api"]


def _second_member(api: TaskApi, name: str = "erin") -> None:
    """A new user (their own token), not registered anywhere."""
    api.tokens[name] = create_token(api.ctx.db, name, ("read", "submit"))[1]


def _other_token_of(api: TaskApi, who: str, name: str) -> None:
    """Another token of ``who``'s user."""
    with api.ctx.db.session() as s:
        token = s.get(Token, api.tokens[who].split("_")[1])
        assert token is not None
        user = token.user_id
    api.tokens[name] = create_token(api.ctx.db, name, ("read", "submit"), user_id=user)[1]


def _join(api: TaskApi, task: str, team: str, who: str) -> Any:
    """``who`` joins ``team`` with an invitation the organiser bound to it."""
    [inv] = api.call("POST", f"/v1/tasks/{task}/invitations", "alice", json={"team": team}).json
    return api.call("POST", f"/v1/invitations/{inv['code']}", who, json={})


def _board(api: TaskApi, task: str, who: str | None = "alice", fmt: str = "json") -> Any:
    if who is None:
        return api.client.get(f"/v1/tasks/{task}/leaderboard?format={fmt}")
    return api.call("GET", f"/v1/tasks/{task}/leaderboard?format={fmt}", who)


def _teams(board: dict[str, Any]) -> list[tuple[Any, str]]:
    return [(r["rank"], r["extra"]["team"]) for r in board["rows"]]


def _three(api: TaskApi) -> tuple[str, dict[str, str], dict[str, str]]:
    """A task where bob (good), carol (mid) and dave (poor) each submitted one evaluated run."""
    task = str(api.task()["id"])
    participants, subs = {}, {}
    for who, run in (("bob", "good"), ("carol", "mid"), ("dave", "poor")):
        registered = api.register(task, who)
        assert registered.status_code == 201, registered.get_data(as_text=True)
        participants[who] = registered.json["id"]
        submitted = api.submit(task, who, run)
        assert submitted.status_code == 202, submitted.get_data(as_text=True)
        subs[who] = submitted.json["id"]
    api.work()
    return task, participants, subs


def test_two_users_submit_for_one_team_and_share_its_quota(api: TaskApi) -> None:
    task = str(api.task()["id"])  # quota_total 3
    team = api.register(task, "bob", "uogTr").json
    assert team["members"] == 1 and team["removed"] is None and team["disqualified"] is None
    _second_member(api)
    # naming an existing team is not joining it: that is the organisers' choice, through a bound invitation
    _is_problem(api.register(task, "erin", "uogTr"), 409, "team-taken")
    joined = _join(api, task, "uogTr", "erin")
    assert joined.status_code == 201, joined.get_data(as_text=True)
    assert joined.json["participant"]["id"] == team["id"] and joined.json["participant"]["members"] == 2
    _is_problem(_join(api, task, "uogTr", "erin"), 409, "already-registered")
    # both see the team; each sees the other's submissions; any token of a member's user acts for the team
    _other_token_of(api, "erin", "erin-ci")
    assert api.call("GET", f"/v1/tasks/{task}", "erin-ci").json["team"] == "uogTr"
    first = api.submit(task, "bob").json["id"]
    second = api.submit(task, "erin", "mid").json["id"]
    third = api.submit(task, "erin-ci", "poor").json["id"]
    assert {s["id"] for s in api.call("GET", f"/v1/tasks/{task}/submissions", "bob").json} == {first, second, third}
    assert api.call("GET", f"/v1/tasks/{task}/submissions/{first}", "erin").status_code == 200
    # the team's quota (3 in the phase) is spent, whoever submitted
    _is_problem(api.submit(task, "bob"), 429, "quota-exceeded")
    _is_problem(api.submit(task, "erin"), 429, "quota-exceeded")
    # the members, for the team and the organisers; not for another team
    members = api.call("GET", f"/v1/tasks/{task}/participants/{team['id']}/members", "erin")
    assert members.status_code == 200 and [m["name"] for m in members.json] == ["bob", "erin"]
    assert api.call("GET", f"/v1/tasks/{task}/participants/{team['id']}/members", "alice").json == members.json
    api.register(task, "carol")
    _is_problem(api.call("GET", f"/v1/tasks/{task}/participants/{team['id']}/members", "carol"), 404, "not-found")
    assert api.client.get(f"/v1/tasks/{task}/participants/{team['id']}/members").status_code == 401
    # the leaderboard shows the team once (its latest)
    api.work()
    board = _board(api, task).json
    assert _teams(board) == [(1, "uogTr")]
    assert [r["key"] for r in board["rows"] if r["extra"]["team"] == "uogTr"] == [third]


def test_a_registration_with_a_bound_invitation_code_joins_the_team(api: TaskApi) -> None:
    task = str(api.task()["id"])
    api.register(task, "bob", "THUIR")
    [inv] = api.call("POST", f"/v1/tasks/{task}/invitations", "alice", json={"team": "THUIR"}).json
    _second_member(api)
    joined = api.register(task, "erin", "THUIR", code=inv["code"])
    assert joined.status_code == 201 and joined.json["members"] == 2, joined.get_data(as_text=True)
    other = str(api.task()["id"])  # a code of another task is no code here
    [elsewhere] = api.call("POST", f"/v1/tasks/{other}/invitations", "alice", json={}).json
    _is_problem(api.register(task, "carol", "x", code=elsewhere["code"]), 404, "invitation-invalid")


def test_removal_takes_the_team_off_the_leaderboard_and_keeps_its_rows(api: TaskApi) -> None:
    task, participants, subs = _three(api)
    refresh_task(api.ctx.db, api.ctx.blobs, task)  # the worker stores the boards as the jobs finish
    assert _teams(_board(api, task, None).json) == [(1, "team-bob"), (2, "team-carol"), (3, "team-dave")]
    removed = api.call("DELETE", f"/v1/tasks/{task}/participants/{participants['bob']}?reason=shared+runs", "alice")
    assert removed.status_code == 200, removed.get_data(as_text=True)
    assert removed.json["removed"]["reason"] == "shared runs"
    # the stored board is stale for anonymous readers until a worker stores the new one
    stale = _board(api, task, None)
    assert stale.headers.get("Evalserve-Stale") == "true"
    assert refresh_task(api.ctx.db, api.ctx.blobs, task) >= 1  # what the worker does on evalserve.refresh_task
    fresh = _board(api, task, None)
    assert "Evalserve-Stale" not in fresh.headers
    assert _teams(fresh.json) == [(1, "team-carol"), (2, "team-dave")]
    # bob acts for the team no more, and cannot register again; the organisers still see everything
    _is_problem(api.submit(task, "bob"), 403, "not-registered")
    _is_problem(api.register(task, "bob", "reborn"), 403, "participant-removed")
    listed = {p["id"]: p for p in api.call("GET", f"/v1/tasks/{task}/participants", "alice").json}
    assert listed[participants["bob"]]["removed"]["reason"] == "shared runs"
    assert api.call("GET", f"/v1/tasks/{task}/submissions/{subs['bob']}", "alice").json["state"] == "succeeded"
    # organisers only
    _is_problem(api.call("DELETE", f"/v1/tasks/{task}/participants/{participants['dave']}", "carol"), 403,
                "organisers-only")
    assert api.client.delete(f"/v1/tasks/{task}/participants/{participants['dave']}").status_code == 401


def test_a_disqualified_submission_stays_visible_unranked_and_moves_nobody(api: TaskApi) -> None:
    task, _, subs = _three(api)
    _is_problem(api.call("PATCH", f"/v1/tasks/{task}/submissions/{subs['bob']}", "alice",
                         json={"disqualified": True}), 422, "invalid-request")  # a reason is required
    _is_problem(api.call("PATCH", f"/v1/tasks/{task}/submissions/{subs['bob']}", "bob",
                         json={"disqualified": True, "reason": "mine"}), 403, "organisers-only")
    out = api.call("PATCH", f"/v1/tasks/{task}/submissions/{subs['bob']}", "alice",
                   json={"disqualified": True, "reason": "used the judgments"})
    assert out.status_code == 200 and out.json["disqualified"]["reason"] == "used the judgments"
    board = _board(api, task).json
    assert _teams(board) == [(None, "team-bob"), (1, "team-carol"), (2, "team-dave")]  # at its score's place
    dq = board["rows"][0]
    assert dq["disqualified"]["reason"] == "used the judgments" and dq["disqualified"]["scope"] == "submission"
    assert dq["better_than"] == [] and dq["scores"]["nDCG@10"] > board["rows"][1]["scores"]["nDCG@10"]
    assert all(dq["key"] not in (p["a"], p["b"]) for p in board["pairs"])  # in no test
    assert bob_sees_it(api, task, subs["bob"])
    csv_rows = list(csv.DictReader(io.StringIO(_board(api, task, "alice", "csv").get_data(as_text=True))))
    assert [(r["rank"], r["disqualified"]) for r in csv_rows] == [("", "used the judgments"), ("1", ""), ("2", "")]
    html = _board(api, task, "alice", "html").get_data(as_text=True)
    assert 'class="entry unranked"' in html and "disqualified: used the judgments" in html
    # reinstated: ranked again
    api.call("PATCH", f"/v1/tasks/{task}/submissions/{subs['bob']}", "alice", json={"disqualified": False})
    assert _teams(_board(api, task).json)[0] == (1, "team-bob")


def bob_sees_it(api: TaskApi, task: str, sub: str) -> bool:
    """The team sees its submission's disqualification and the public reason."""
    seen = api.call("GET", f"/v1/tasks/{task}/submissions/{sub}", "bob").json
    return bool(seen["disqualified"] and seen["disqualified"]["reason"])


def test_a_disqualified_team_is_shown_with_its_reason(api: TaskApi) -> None:
    task, participants, _ = _three(api)
    out = api.call("PATCH", f"/v1/tasks/{task}/participants/{participants['carol']}", "alice",
                   json={"disqualified": True, "reason": "two accounts"})
    assert out.status_code == 200 and out.json["disqualified"]["reason"] == "two accounts"
    board = _board(api, task).json
    assert _teams(board) == [(1, "team-bob"), (None, "team-carol"), (2, "team-dave")]
    assert board["rows"][1]["disqualified"]["scope"] == "team"
    _is_problem(api.call("PATCH", f"/v1/tasks/{task}/participants/{participants['bob']}", "carol",
                         json={"disqualified": True, "reason": "x"}), 403, "organisers-only")
    missing = api.call("PATCH", f"/v1/tasks/{task}/participants/part_nope", "alice",
                       json={"disqualified": True, "reason": "x"})
    _is_problem(missing, 404, "not-found")


def test_a_team_withdraws_its_submission_while_the_phase_is_open(api: TaskApi) -> None:
    task, _, subs = _three(api)
    older = subs["bob"]
    newer = api.submit(task, "bob", "poor").json["id"]
    api.work()
    assert [r["key"] for r in _board(api, task).json["rows"] if r["extra"]["team"] == "team-bob"] == [newer]
    _is_problem(api.call("DELETE", f"/v1/tasks/{task}/submissions/{newer}", "carol"), 404, "not-found")
    assert api.client.delete(f"/v1/tasks/{task}/submissions/{newer}").status_code == 401
    out = api.call("DELETE", f"/v1/tasks/{task}/submissions/{newer}", "bob")
    assert out.status_code == 200 and out.json["withdrawn_at"], out.get_data(as_text=True)
    assert api.call("DELETE", f"/v1/tasks/{task}/submissions/{newer}", "bob").status_code == 200  # no change
    board = _board(api, task).json
    assert [r["key"] for r in board["rows"] if r["extra"]["team"] == "team-bob"] == [older]  # the earlier one shows
    assert newer not in [r["key"] for r in _board(api, task, "alice").json["rows"]]
    # still stored and listed, never on the board again
    assert api.call("GET", f"/v1/tasks/{task}/submissions/{newer}", "bob").json["withdrawn_at"]
    _is_problem(api.call("PATCH", f"/v1/tasks/{task}/submissions/{newer}", "bob", json={"selected": True}), 409,
                "submission-withdrawn")
    # once the phase closed: 409
    with api.ctx.db.session() as s:
        for phase in s.query(Phase).filter(Phase.task_id == task):
            phase.closes_at = utcnow() - timedelta(minutes=1)
            phase.opens_at = utcnow() - timedelta(days=2)
    _is_problem(api.call("DELETE", f"/v1/tasks/{task}/submissions/{older}", "bob"), 409, "phase-closed")


def test_the_audit_log_lists_every_action_with_who_and_when(api: TaskApi) -> None:
    task, participants, subs = _three(api)
    _second_member(api)
    _join(api, task, "team-bob", "erin")
    api.call("PATCH", f"/v1/tasks/{task}", "alice", json={"description": "new words"})
    api.call("PATCH", f"/v1/tasks/{task}/phases/test", "alice", json={"quota_total": 5})
    api.call("PATCH", f"/v1/tasks/{task}/submissions/{subs['carol']}", "alice",
             json={"disqualified": True, "reason": "late run"})
    api.call("PATCH", f"/v1/tasks/{task}/participants/{participants['carol']}", "alice",
             json={"disqualified": True, "reason": "two accounts"})
    api.call("DELETE", f"/v1/tasks/{task}/submissions/{subs['bob']}", "erin")
    api.call("DELETE", f"/v1/tasks/{task}/participants/{participants['dave']}?reason=asked+to+leave", "alice")
    log = api.call("GET", f"/v1/tasks/{task}/audit?page_size=100", "alice")
    assert log.status_code == 200, log.get_data(as_text=True)
    actions = [e["action"] for e in reversed(log.json)]
    assert actions == ["participant.registered"] * 3 + [
        "invitation.created", "participant.member_joined", "invitation.redeemed", "task.updated", "phase.updated",
        "submission.disqualified", "participant.disqualified", "submission.withdrawn", "participant.removed"]
    by_action = {e["action"]: e for e in log.json}
    erin = api.tokens["erin"].split("_")[1]
    assert by_action["submission.withdrawn"]["token"] == erin and by_action["submission.withdrawn"]["user"]
    assert by_action["submission.withdrawn"]["target"] == subs["bob"]
    assert by_action["participant.removed"]["reason"] == "asked to leave"
    assert by_action["participant.disqualified"]["target"] == participants["carol"]
    assert all(e["at"] and e["user"] for e in log.json)
    # paginated like every list, newest first; filtered by action
    page = api.call("GET", f"/v1/tasks/{task}/audit?page_size=2", "alice")
    assert [e["id"] for e in page.json] == [e["id"] for e in log.json[:2]] and "X-Pagination" in page.headers
    only = api.call("GET", f"/v1/tasks/{task}/audit?action=participant.registered", "alice").json
    assert len(only) == 3
    # the organisers' only
    _is_problem(api.call("GET", f"/v1/tasks/{task}/audit", "bob"), 403, "organisers-only")
    assert api.client.get(f"/v1/tasks/{task}/audit").status_code == 401


def test_registrations_made_before_teams_keep_working_after_the_migration(api: TaskApi) -> None:
    """0017 makes each existing registration's token's user its member; a user who had registered two teams in
    one task with two tokens (possible before) is a member of the earlier one, and the later one still acts by the
    token that registered it."""
    from alembic import command
    from sqlalchemy import create_engine, text

    from evalserve.service.store.migrate import alembic_config, upgrade

    task = str(api.task()["id"])
    first = api.register(task, "bob").json["id"]
    _other_token_of(api, "bob", "bob-ci")
    url = api.settings.database_url
    api.ctx.db.dispose()
    command.downgrade(alembic_config(url), "0016")
    engine = create_engine(url)
    with engine.begin() as c:
        c.execute(text("INSERT INTO task_participants (id, task_id, token_id, team, submissions_made, registered_at)"
                       " VALUES ('part_legacy', :task, :token, 'legacy', 0, :at)"),
                  {"task": task, "token": api.tokens["bob-ci"].split("_")[1],
                   "at": (utcnow() + timedelta(seconds=5)).replace(tzinfo=None)})
    upgrade(url)
    with engine.begin() as c:
        rows = c.execute(text("SELECT participant_id FROM task_participant_members WHERE task_id = :task"),
                         {"task": task}).scalars().all()
    engine.dispose()
    assert rows == [first]
    assert api.call("GET", f"/v1/tasks/{task}", "bob").json["team"] == "team-bob"
    assert api.call("GET", f"/v1/tasks/{task}", "bob-ci").json["team"] == "legacy"
    assert api.submit(task, "bob-ci").status_code == 202
    assert [m["name"] for m in api.call("GET", f"/v1/tasks/{task}/participants/{first}/members", "bob").json] == [
        "bob"]


def test_after_finalisation_no_team_or_submission_changes(api: TaskApi) -> None:
    """A finalised task refuses removals, disqualifications, withdrawals and new members (409 task-final), for
    everyone; its final leaderboard stays as it was."""
    task, participants, subs = _three(api)
    [bound] = api.call("POST", f"/v1/tasks/{task}/invitations", "alice", json={"team": "team-bob"}).json
    _second_member(api)
    finalised = api.call("POST", f"/v1/tasks/{task}/finalise", "alice")
    assert finalised.status_code == 200, finalised.get_data(as_text=True)
    before = _board(api, task).json["final"]["hash"]
    refused = [
        api.call("DELETE", f"/v1/tasks/{task}/participants/{participants['dave']}", "alice"),
        api.call("PATCH", f"/v1/tasks/{task}/participants/{participants['dave']}", "alice",
                 json={"disqualified": True, "reason": "late"}),
        api.call("PATCH", f"/v1/tasks/{task}/submissions/{subs['carol']}", "alice",
                 json={"disqualified": True, "reason": "late"}),
        api.call("DELETE", f"/v1/tasks/{task}/submissions/{subs['bob']}", "bob"),
        api.call("POST", f"/v1/invitations/{bound['code']}", "erin", json={}),
        api.register(task, "erin", "team-bob", code=bound["code"]),
    ]
    for answer in refused:
        _is_problem(answer, 409, "task-final")
    assert _board(api, task).json["final"]["hash"] == before
    assert len(api.call("GET", f"/v1/tasks/{task}/participants/{participants['bob']}/members", "bob").json) == 1
