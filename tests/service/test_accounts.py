"""Users and tokens over HTTP (``/v1/users``, ``/v1/tokens``; issue 30): an admin creates a user and gets its first
token once; the user lists, creates and revokes their own tokens -- never with a scope the calling token lacks, so
no token makes a stronger one -- and a revoked or expired token is refused at once; another user's tokens are a
404; sign-up is closed unless the operator opens it, and then gives read and submit at most; limits count per
user, whichever of their tokens is used."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from evalserve.service.access.tokens import create_token
from evalserve.service.core.config import Settings
from evalserve.service.store.models import Token, utcnow
from evalserve.service.web.app import create_app


class Server:
    def __init__(self, tmp: Path, **env: str) -> None:
        self.app = create_app(Settings.from_env({"EVALSERVE_DATA_DIR": str(tmp), **env}), migrate=True)
        self.st = self.app.extensions["evalserve"]
        self.admin = create_token(self.st.db, "admin", ("admin", "read", "submit"))[1]
        self.http = self.app.test_client()

    def call(self, method: str, path: str, token: str | None = None, **kw: Any) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return self.http.open(path, method=method, headers=headers, **kw)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path)
    yield s
    s.st.db.dispose()


def test_an_admin_creates_a_user_who_manages_their_own_tokens(server: Server) -> None:
    made = server.call("POST", "/v1/users", server.admin, json={"name": "team-a"})
    assert made.status_code == 201, made.json
    user, first = made.json["user"], made.json["token"]
    assert user["name"] == "team-a" and user["tokens"] == 1
    assert first["scopes"] == ["read", "submit"] and first["token"].startswith("es_") and first["active"]
    secret = first["token"]
    # the user: a second token, read only, expiring; the list shows both and never a secret
    second = server.call("POST", "/v1/tokens", secret, json={"name": "laptop", "scopes": ["read"],
                                                             "expires_in_days": 30})
    assert second.status_code == 201 and second.json["scopes"] == ["read"] and second.json["expires_at"]
    listed = server.call("GET", "/v1/tokens", secret).json
    assert [t["name"] for t in listed] == ["laptop", "team-a"]
    assert [t["current"] for t in listed] == [False, True]
    assert all("token" not in t and "secret_hash" not in t for t in listed)
    assert {t["user"] for t in listed} == {user["id"]}
    # a read-only token cannot make a token that submits, nor a user's token an admin one
    weaker = second.json["token"]
    refused = server.call("POST", "/v1/tokens", weaker, json={"name": "x", "scopes": ["submit"]})
    assert refused.status_code == 403 and refused.json["code"] == "scope-not-held"
    assert "submit" in refused.json["detail"]
    refused = server.call("POST", "/v1/tokens", secret, json={"name": "x", "scopes": ["admin"]})
    assert refused.status_code == 403 and refused.json["code"] == "scope-not-held"
    assert server.call("POST", "/v1/tokens", weaker, json={"name": "x"}).json["scopes"] == ["read"]
    # revoking: refused at once; revoking again changes nothing
    gone = server.call("DELETE", f"/v1/tokens/{second.json['id']}", secret)
    assert gone.status_code == 200 and gone.json["revoked_at"] and not gone.json["active"]
    assert server.call("GET", "/v1/tokens", weaker).status_code == 401
    assert server.call("DELETE", f"/v1/tokens/{second.json['id']}", secret).json == gone.json
    # users are the admin's: a user may not list or create them
    assert server.call("GET", "/v1/users", secret).status_code == 403
    refused = server.call("POST", "/v1/users", secret, json={"name": "sneaky"})
    assert refused.status_code == 403 and refused.json["code"] == "signup-closed"
    users = server.call("GET", "/v1/users", server.admin).json
    assert [u["name"] for u in users] == ["admin", "team-a"] and users[1]["tokens"] == 2  # one revoked


def test_another_users_tokens_are_not_found_but_an_admin_revokes_any(server: Server) -> None:
    a = server.call("POST", "/v1/users", server.admin, json={"name": "a"}).json["token"]
    b = server.call("POST", "/v1/users", server.admin, json={"name": "b"}).json["token"]
    assert server.call("DELETE", f"/v1/tokens/{b['id']}", a["token"]).status_code == 404
    assert server.call("GET", "/v1/tokens", b["token"]).status_code == 200
    assert [t["id"] for t in server.call("GET", "/v1/tokens", a["token"]).json] == [a["id"]]
    assert server.call("DELETE", f"/v1/tokens/{b['id']}", server.admin).status_code == 200
    assert server.call("GET", "/v1/tokens", b["token"]).status_code == 401
    assert server.call("DELETE", "/v1/tokens/nope", server.admin).status_code == 404


def test_an_expired_token_is_refused(server: Server) -> None:
    made = server.call("POST", "/v1/users", server.admin, json={"name": "brief", "expires_in_days": 1}).json
    secret = made["token"]["token"]
    assert server.call("GET", "/v1/tokens", secret).status_code == 200
    with server.st.db.session() as s:
        row = s.get(Token, made["token"]["id"])
        assert row is not None
        row.expires_at = utcnow() - timedelta(seconds=1)
    refused = server.call("GET", "/v1/tokens", secret)
    assert refused.status_code == 401 and refused.json["code"] == "unauthorized"
    listed = server.call("POST", "/v1/tokens", server.admin, json={"name": "n"})
    assert listed.status_code == 201


def test_bad_requests_are_problems(server: Server) -> None:
    for body in ({}, {"name": ""}, {"name": "x", "scopes": ["root"]}, {"name": "x", "expires_in_days": -1}):
        refused = server.call("POST", "/v1/tokens", server.admin, json=body)
        assert refused.status_code == 422 and refused.json["code"] == "invalid-request", body
    assert server.call("GET", "/v1/tokens").status_code == 401
    assert server.call("POST", "/v1/users", json={"name": "anon"}).json["code"] == "signup-closed"


def test_signup_when_the_operator_opens_it(tmp_path: Path) -> None:
    server = Server(tmp_path, EVALSERVE_SIGNUP="open", EVALSERVE_REGISTER_RATE_LIMIT="3/hour")
    made = server.call("POST", "/v1/users", json={"name": "newcomer"})
    assert made.status_code == 201 and made.json["token"]["scopes"] == ["read", "submit"]
    refused = server.call("POST", "/v1/users", json={"name": "greedy", "scopes": ["admin"]})
    assert refused.status_code == 403 and refused.json["code"] == "scope-not-held"
    assert server.call("POST", "/v1/users", json={"name": "third"}).status_code == 201
    limited = server.call("POST", "/v1/users", json={"name": "fourth"})  # a registration attempt: 3 an hour
    assert limited.status_code == 429 and limited.json["code"] == "rate-limited" and limited.headers["Retry-After"]
    server.st.db.dispose()
    with pytest.raises(ValueError, match="EVALSERVE_SIGNUP"):
        Settings.from_env({"EVALSERVE_DATA_DIR": str(tmp_path), "EVALSERVE_SIGNUP": "maybe"})


def test_the_python_client_manages_users_and_tokens(server: Server) -> None:
    import httpx
    from evalserve_client import Client

    transport = httpx.WSGITransport(app=server.app)
    with Client("http://evalserve.test", server.admin, transport=transport) as admin:
        made = admin.create_user("team-b", scopes=["read", "submit"], expires_in_days=90)
        assert made["user"]["name"] == "team-b" and made["token"]["expires_at"]
        assert [u["name"] for u in admin.users()] == ["admin", "team-b"]
    with Client("http://evalserve.test", made["token"]["token"], transport=transport) as team:
        extra = team.create_token("ci", scopes=["read"])
        assert extra["scopes"] == ["read"] and extra["token"].startswith("es_")
        assert [t["name"] for t in team.tokens()] == ["ci", "team-b"]
        assert team.revoke_token(extra)["active"] is False
