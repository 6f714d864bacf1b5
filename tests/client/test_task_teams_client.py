"""The Python client's team management (issue 30) against the service in process (httpx's WSGI transport): an
organiser binds an invitation to a team and a second user joins it, lists the members, withdraws a submission,
disqualifies a submission and a team, removes a team and reads the audit log."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from evalserve_client import ApiError, Client

from tests.service.test_tasks import RUNS, TaskApi

BASE = "http://evalserve.test"


@pytest.fixture
def api(tmp_path: Path) -> Iterator[TaskApi]:
    made = TaskApi(tmp_path)
    yield made
    made.app.extensions["evalserve"].db.dispose()


def test_the_client_manages_teams_and_reads_the_audit_log(api: TaskApi) -> None:
    transport = httpx.WSGITransport(app=api.app)
    task = api.task()["id"]

    def client(who: str | None) -> Client:
        return Client(BASE, api.tokens[who] if who else None, transport=transport)

    with client("bob") as bob, client("carol") as carol, client("alice") as alice:
        team = bob.register(task, "uogTr")
        carol.register(task, "THUIR")
        [bound] = alice.create_invitations(task, team="uogTr")
        with client(None) as newcomer:
            joined = newcomer.redeem_invitation(bound["code"], name="Craig")
        assert joined["participant"]["id"] == team["id"] and joined["participant"]["members"] == 2
        with Client(BASE, joined["token"]["token"], transport=transport) as craig:
            assert [m["name"] for m in craig.members(task, team["id"])] == ["bob", "Craig"]
            sub = craig.submit_to_task(task, RUNS["good"], description="craig's run")
            withdrawn = craig.withdraw_submission(task, sub["id"], reason="wrong file")
            assert withdrawn["withdrawn_at"]
            assert [p["team"] for p in craig.participants(task)] == ["uogTr"]
        kept = bob.submit_to_task(task, RUNS["mid"])
        out = alice.disqualify(task, submission=kept["id"], reason="used the judgments")
        assert out["disqualified"]["reason"] == "used the judgments"
        thuir = next(p for p in alice.participants(task) if p["team"] == "THUIR")
        assert alice.disqualify(task, participant=thuir["id"], reason="two accounts")["disqualified"]
        assert alice.disqualify(task, participant=thuir["id"], disqualified=False)["disqualified"] is None
        assert alice.remove_participant(task, thuir["id"], reason="asked to leave")["removed"]["reason"]
        with pytest.raises(ValueError):
            alice.disqualify(task, reason="which?")
        with pytest.raises(ApiError) as refused:
            bob.audit(task)
        assert refused.value.status == 403 and refused.value.code == "organisers-only"
        log = alice.audit(task)
        assert [e["action"] for e in alice.audit(task, action="submission.withdrawn")] == ["submission.withdrawn"]
    assert {e["action"] for e in log} >= {"participant.registered", "participant.member_joined",
                                          "invitation.redeemed", "submission.withdrawn", "submission.disqualified",
                                          "participant.disqualified", "participant.reinstated",
                                          "participant.removed"}
