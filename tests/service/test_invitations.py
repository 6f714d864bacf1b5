"""Invitations to a shared task (``/v1/tasks/{id}/invitations``, ``/v1/invitations/{code}``; issue 30): an
organiser makes codes -- single or several uses, expiring, bound to a team or not -- and a team redeems one without
the server's shell: with no token it gets a new user and token (read, submit, shown once) registered as the team,
and submits with it; with a token, that token is registered. A used-up, expired or unknown code is a 404
``invitation-invalid``; a code for n redemptions registers n teams, never more; only organisers make or list
codes, and codes are never shown again. Redeeming counts as a registration attempt (rate limited)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from evalserve.service.store.models import Invitation, utcnow
from tests.service.test_tasks import TaskApi, api

__all__ = ["api"]


def _redeem(api: TaskApi, code: str, who: str | None = None, **body: Any) -> Any:
    if who is None:
        return api.app.test_client().post(f"/v1/invitations/{code}", json=body)
    return api.call("POST", f"/v1/invitations/{code}", who, json=body)


def test_a_team_redeems_an_invitation_and_submits_with_its_new_token(api: TaskApi) -> None:
    task = api.task(registration="code", registration_code="s3cret")["id"]
    made = api.call("POST", f"/v1/tasks/{task}/invitations", "alice", json={"count": 3})
    assert made.status_code == 201, made.get_data(as_text=True)
    codes = [inv["code"] for inv in made.json]
    assert len(set(codes)) == 3 and all(inv["uses_left"] == 1 and inv["usable"] for inv in made.json)
    redeemed = _redeem(api, codes[0], team="uogTr", name="Glasgow")
    assert redeemed.status_code == 201, redeemed.get_data(as_text=True)
    participant, token = redeemed.json["participant"], redeemed.json["token"]
    assert participant["team"] == "uogTr" and participant["task"] == task
    assert token["scopes"] == ["read", "submit"] and token["token"].startswith("es_")
    # the new token is the team's: it submits and sees its submission
    api.tokens["uog"] = token["token"]
    submitted = api.submit(task, "uog")
    assert submitted.status_code == 202, submitted.get_data(as_text=True)
    api.work()
    assert api.call("GET", f"/v1/tasks/{task}/submissions/{submitted.json['id']}", "uog").json["state"] == "succeeded"
    # single use: the code is spent; an unknown code is the same refusal
    spent = _redeem(api, codes[0], team="again")
    assert spent.status_code == 404 and spent.json["code"] == "invitation-invalid" and "used up" in spent.json["detail"]
    unknown = _redeem(api, "inv_nope", team="x")
    assert unknown.status_code == 404 and unknown.json["code"] == "invitation-invalid"
    # the organiser's list: codes never shown again
    listed = api.call("GET", f"/v1/tasks/{task}/invitations", "alice").json
    assert len(listed) == 3 and all("code" not in inv for inv in listed)
    assert sorted(inv["uses_left"] for inv in listed) == [0, 1, 1]


def test_a_token_holder_registers_with_a_team_bound_code(api: TaskApi) -> None:
    task = api.task()["id"]
    [bound] = api.call("POST", f"/v1/tasks/{task}/invitations", "alice", json={"team": "ICTNET"}).json
    wrong = _redeem(api, bound["code"], "bob", team="other")
    assert wrong.status_code == 422 and "ICTNET" in wrong.json["detail"]
    redeemed = _redeem(api, bound["code"], "bob")
    assert redeemed.status_code == 201 and redeemed.json["token"] is None
    assert redeemed.json["participant"]["team"] == "ICTNET"
    assert api.submit(task, "bob").status_code == 202
    refused = api.call("POST", f"/v1/tasks/{task}/invitations", "alice", json={"team": "x", "count": 2})
    assert refused.status_code == 422


def test_a_shared_code_registers_as_many_teams_as_it_allows(api: TaskApi) -> None:
    task = api.task()["id"]
    [shared] = api.call("POST", f"/v1/tasks/{task}/invitations", "alice", json={"uses": 2}).json
    assert _redeem(api, shared["code"]).status_code == 422  # no team named anywhere
    assert _redeem(api, shared["code"], team="t1").status_code == 201
    taken = _redeem(api, shared["code"], team="t1")
    assert taken.status_code == 409 and taken.json["code"] == "team-taken"  # and the redemption is not spent
    assert _redeem(api, shared["code"], team="t2").status_code == 201
    assert _redeem(api, shared["code"], team="t3").json["code"] == "invitation-invalid"


def test_an_expired_code_is_refused(api: TaskApi) -> None:
    task = api.task()["id"]
    [inv] = api.call("POST", f"/v1/tasks/{task}/invitations", "alice", json={"expires_in_days": 1}).json
    with api.app.extensions["evalserve"].db.session() as s:
        row = s.get(Invitation, inv["id"])
        assert row is not None
        row.expires_at = utcnow() - timedelta(minutes=1)
    expired = _redeem(api, inv["code"], team="late")
    assert expired.status_code == 404 and "expired" in expired.json["detail"]


def test_only_organisers_make_or_list_codes(api: TaskApi) -> None:
    task = api.task()["id"]
    for method in ("GET", "POST"):
        refused = api.call(method, f"/v1/tasks/{task}/invitations", "bob", json={})
        assert refused.status_code == 403 and refused.json["code"] == "organisers-only"
        assert api.app.test_client().open(f"/v1/tasks/{task}/invitations", method=method).status_code == 401


def test_the_python_client_makes_and_redeems_invitations(api: TaskApi) -> None:
    import httpx
    from evalserve_client import Client

    task = api.task()["id"]
    transport = httpx.WSGITransport(app=api.app)
    with Client("http://evalserve.test", api.tokens["alice"], transport=transport) as organiser:
        [made] = organiser.create_invitations(task, uses=1, expires_in_days=7)
    with Client("http://evalserve.test", None, transport=transport) as newcomer:
        redeemed = newcomer.redeem_invitation(made["code"], team="THUIR", name="Tsinghua")
    assert redeemed["participant"]["team"] == "THUIR" and redeemed["token"]["token"].startswith("es_")
    with Client("http://evalserve.test", api.tokens["alice"], transport=transport) as organiser:
        assert [i["uses_left"] for i in organiser.invitations(task)] == [0]
