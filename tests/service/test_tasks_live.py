"""Shared tasks end to end, against real processes (gunicorn + a Celery worker) on both backends (embedded, and
PostgreSQL + Redis): an organiser creates a task over the hidden TREC Web 2012 judgments and a phase; three
participants submit real runs; a late submission and one over the quota are refused; the leaderboard ranks by
the primary measure and marks the pairs the offline CLI finds significant; a webhook receiver on localhost gets
signed events; and every route of the API is tried by another participant and by an anonymous caller to show
that nobody reads someone else's runs, jobs, submissions or the hidden judgments."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
from evalserve_client.webhooks import verify_signature

from evalserve.cli.main import main as cli_main
from tests.browser import chromium, dump_dom, screenshot  # noqa: F401 -- chromium is a fixture
from tests.service.live import LiveService
from tests.service.webhook_receiver import Receiver

#: the organiser's webhook receiver listens on 127.0.0.1: the operator allows it (webhooks go to public hosts only)
LIVE_ENV = {"EVALSERVE_WEBHOOK_ALLOW_NETWORKS": "127.0.0.1/32"}
MEASURES = ["alpha_nDCG@20", "ERR_IA@20", "nDCG@20"]
TEAMS = {"bob": "ql-results-cata-filtered.txt", "carol": "ql-results-catb-filtered.txt",
         "dave": "ql-results-cata.txt.gz"}
BASELINE = "ql-results-catb.txt.gz"


@dataclass
class Campaign:
    """A task on a live service with its people, their submissions and the organiser's webhook receiver."""

    live: LiveService
    data: Path
    task: str = ""
    collection: str = ""
    tokens: dict[str, str] = field(default_factory=dict)
    submissions: dict[str, str] = field(default_factory=dict)  # team member -> submission id
    runs: dict[str, str] = field(default_factory=dict)  # team member -> run id
    participants: dict[str, str] = field(default_factory=dict)  # team member -> participant id
    receiver: Receiver | None = None
    secret: str = ""

    def http(self, who: str | None) -> httpx.Client:
        if who is None:
            return httpx.Client(base_url=self.live.url, timeout=60)
        return self.live.client(self.tokens[who])

    def wait_submission(self, who: str, timeout: float = 180) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self.http(who) as http:
            while time.monotonic() < deadline:
                sub = http.get(f"/v1/tasks/{self.task}/submissions/{self.submissions[who]}").json()
                if sub["state"] in ("succeeded", "failed", "cancelled"):
                    return dict(sub)
                time.sleep(0.3)
        raise AssertionError(f"submission of {who} not evaluated: {sub}\n{self.live.log('worker')}")


def _token(live: LiveService, name: str, scopes: tuple[str, ...] = ("read", "submit")) -> str:
    from evalserve.service.access.tokens import create_token
    from evalserve.service.core.config import Settings
    from evalserve.service.store.db import Database

    db = Database(Settings.from_env(live.env).database_url)
    try:
        return create_token(db, name, scopes)[1]
    finally:
        db.dispose()


@pytest.fixture(scope="module")
def campaign(live: LiveService, shared_data: Path) -> Iterator[Campaign]:
    """The organiser (alice) sets the task up; bob, carol and dave register and submit; alice adds a baseline."""
    c = Campaign(live, shared_data)
    for name in ("alice", "bob", "carol", "dave", "mallory"):
        c.tokens[name] = _token(live, name)
    qrels = shared_data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt"
    now = datetime.now(timezone.utc)
    with Receiver() as receiver, c.http("alice") as alice:
        c.receiver = receiver
        created = alice.post("/v1/collections", data={"name": "TREC Web 2012 (hidden)", "hidden": "true"},
                             files={"qrels": qrels.open("rb")})
        assert created.status_code == 201, created.text
        c.collection = created.json()["id"]
        task = alice.post("/v1/tasks", json={
            "name": "Web 2012 diversity", "collection": c.collection, "measures": MEASURES,
            "description": "Rank for novelty and diversity.", "primary_measure": "alpha_nDCG@20",
            "phases": [{"name": "test", "opens_at": (now - timedelta(hours=1)).isoformat(),
                        "closes_at": (now + timedelta(hours=2)).isoformat(), "quota_per_day": 2}]})
        assert task.status_code == 201, task.text
        c.task = task.json()["id"]
        hook = alice.post(f"/v1/tasks/{c.task}/webhooks", json={"url": receiver.url})
        assert hook.status_code == 201, hook.text
        c.secret = hook.json()["secret"]
        runs = shared_data / "trec-web-2012-runs" / "runs"
        for who, filename in [*TEAMS.items(), ("alice", BASELINE)]:
            with c.http(who) as http:
                team = "organisers" if who == "alice" else f"team-{who}"
                registered = http.post(f"/v1/tasks/{c.task}/participants", json={"team": team})
                assert registered.status_code == 201, registered.text
                c.participants[who] = registered.json()["id"]
                form = {"description": f"{filename} by {team}", "baseline": str(who == "alice").lower()}
                r = http.post(f"/v1/tasks/{c.task}/submissions", data=form,
                              files={"run": (filename, (runs / filename).read_bytes())})
                assert r.status_code == 202, r.text
                c.submissions[who] = r.json()["id"]
                c.runs[who] = r.json()["run"]["id"]
        for who in c.submissions:
            assert c.wait_submission(who)["state"] == "succeeded"
        yield c


def test_the_leaderboard_ranks_by_the_primary_measure_and_marks_what_the_offline_test_finds(
        campaign: Campaign, capsys: pytest.CaptureFixture[str]) -> None:
    runs = campaign.data / "trec-web-2012-runs" / "runs"
    qrels = campaign.data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt"
    args = ["meta", "significance", "--qrels", str(qrels), "-m", "alpha_nDCG@20", "--topics", "complete",
            "--test", "t", "--correction", "holm", "--format", "json"]
    for filename in TEAMS.values():  # the baseline is shown, never ranked nor tested
        args += ["--run", str(runs / filename)]
    capsys.readouterr()
    assert cli_main(args) == 0
    offline = json.loads(capsys.readouterr().out)["significance"]["alpha_nDCG@20"]
    with campaign.http(None) as anonymous:
        board = anonymous.get(f"/v1/tasks/{campaign.task}/leaderboard").json()
    run_of = {row["key"]: row["extra"]["run"] + (".txt" if not row["extra"]["run"].endswith(".txt") else "")
              for row in board["rows"]}
    ranked = [row for row in board["rows"] if not row["baseline"]]
    means = [offline["means"][run_of[row["key"]]] for row in ranked]
    assert means == sorted(means, reverse=True), "ranked by the primary measure"
    assert [row["rank"] for row in ranked] == [1, 2, 3]
    for row in ranked:
        assert abs(row["scores"]["alpha_nDCG@20"] - offline["means"][run_of[row["key"]]]) < 1e-12
    assert [(r["extra"]["team"], r["rank"]) for r in board["rows"] if r["baseline"]] == [("organisers", None)]
    expected = {frozenset((p["a"], p["b"])): p for p in offline["pairs"]}
    assert len(board["pairs"]) == len(expected) == 3
    for pair in board["pairs"]:
        want = expected[frozenset((run_of[pair["a"]], run_of[pair["b"]]))]
        assert pair["significant"] == want["significant"]
        assert abs(pair["p_adjusted"] - want["p_adjusted"]) < 1e-9
    assert any(p["significant"] for p in board["pairs"]) and not all(p["significant"] for p in board["pairs"])
    for row in ranked:
        wins = {run_of[k] for k in row["better_than"]}
        assert wins == {p["b"] if p["a"] == run_of[row["key"]] else p["a"] for p in offline["pairs"]
                        if p["significant"] and run_of[row["key"]] in (p["a"], p["b"])
                        and (p["mean_difference"] > 0) == (p["a"] == run_of[row["key"]])}


def test_a_late_submission_and_one_over_the_quota_are_refused(campaign: Campaign) -> None:
    run = (campaign.data / "trec-web-2012-runs" / "runs" / TEAMS["bob"]).read_bytes()
    with campaign.http("bob") as bob:
        again = bob.post(f"/v1/tasks/{campaign.task}/submissions", files={"run": ("second.txt", run)})
        assert again.status_code == 202, "the second of two a day"
        over = bob.post(f"/v1/tasks/{campaign.task}/submissions", files={"run": ("third.txt", run)})
        assert over.status_code == 429 and over.json()["code"] == "quota-exceeded", over.text
        assert int(over.headers["Retry-After"]) > 0 and "per day" in over.json()["detail"]
    with campaign.http("alice") as alice:
        closes = datetime.now(timezone.utc) - timedelta(seconds=1)
        moved = alice.patch(f"/v1/tasks/{campaign.task}/phases/test", json={"closes_at": closes.isoformat()})
        assert moved.status_code == 200, moved.text
    try:
        with campaign.http("carol") as carol:
            late = carol.post(f"/v1/tasks/{campaign.task}/submissions", files={"run": ("late.txt", run)})
            assert late.status_code == 409 and late.json()["code"] == "phase-closed", late.text
            assert "ended at" in late.json()["detail"]
            assert len(carol.get(f"/v1/tasks/{campaign.task}/submissions").json()) == 1, "nothing stored"
    finally:
        with campaign.http("alice") as alice:
            reopened = (datetime.now(timezone.utc) + timedelta(hours=2)).isoformat()
            alice.patch(f"/v1/tasks/{campaign.task}/phases/test", json={"closes_at": reopened})
    campaign.wait_submission("bob")


def test_the_organisers_webhook_receives_signed_events(campaign: Campaign) -> None:
    assert campaign.receiver is not None
    received = campaign.receiver.wait_for(2 * len(campaign.submissions), timeout=60)
    events: dict[str, int] = {}
    for headers, body in received:
        lower = {k.lower(): v for k, v in headers.items()}
        assert verify_signature(campaign.secret, body, lower["x-evalserve-signature"])
        assert not verify_signature("another secret", body, lower["x-evalserve-signature"])
        payload = json.loads(body)
        assert payload["task"] == campaign.task and payload["event"] == lower["x-evalserve-event"]
        events[payload["event"]] = events.get(payload["event"], 0) + 1
        if payload["event"] == "submission.evaluated":
            assert payload["data"]["state"] == "succeeded" and set(payload["data"]["scores"]) == set(MEASURES)
    assert events["submission.evaluated"] >= len(campaign.submissions)
    assert events["leaderboard.changed"] >= 1
    # The receiver counts a request before it answers, and the worker marks the delivery once it has the answer;
    # later submissions (bob's second) add events too. So read the log once nothing is in flight any more.
    with campaign.http("alice") as alice:
        hooks = alice.get(f"/v1/tasks/{campaign.task}/webhooks").json()
        deliveries = f"/v1/tasks/{campaign.task}/webhooks/{hooks[0]['id']}/deliveries"
        deadline = time.monotonic() + 60
        log = alice.get(deliveries).json()
        while any(d["state"] == "pending" for d in log) and time.monotonic() < deadline:
            time.sleep(0.2)
            log = alice.get(deliveries).json()
    assert log and all(d["state"] == "delivered" and d["log"][-1]["status"] == 200 for d in log), log


def test_the_html_leaderboard_renders_in_chromium(campaign: Campaign, chromium: str,  # noqa: F811
                                                 tmp_path: Path) -> None:
    url = f"{campaign.live.url}/v1/tasks/{campaign.task}/leaderboard?format=html"
    png = tmp_path / "leaderboard.png"
    screenshot(chromium, url, png)
    assert png.read_bytes().startswith(b"\x89PNG") and png.stat().st_size > 5000
    dom = dump_dom(chromium, url)
    rows = re.findall(r'<tr class="entry[^"]*"', dom)
    assert len(rows) == len(campaign.submissions), dom[:2000]
    for team in ("team-bob", "team-carol", "team-dave", "organisers"):
        assert team in dom


# --- every route, tried by someone who must not get through --------------------------------------------------

#: what another registered participant (carol) gets on each operation when every path parameter names someone
#: else's resource (bob's run, submission and token, the organiser's job, webhook and hidden collection); "public" ones
#: answer 200 by design and must not show the hidden data. A new route fails the test until it is classified.
AS_OTHER_PARTICIPANT: dict[tuple[str, str], int | str] = {
    ("GET", "/health"): "public", ("GET", "/v1/measures"): "public", ("GET", "/v1/measures/{name}"): "public",
    ("GET", "/v1/collections"): "public", ("POST", "/v1/collections"): "own",
    ("GET", "/v1/collections/{collection_id}"): 404, ("GET", "/v1/collections/{collection_id}/hierarchies"): 404,
    ("GET", "/v1/collections/{collection_id}/topics"): 404,
    ("GET", "/v1/catalogue"): "public", ("POST", "/v1/catalogue"): 403,
    ("GET", "/v1/runs"): "public", ("POST", "/v1/runs"): 404, ("GET", "/v1/runs/{run_id}"): 404,
    ("POST", "/v1/evaluations"): 404, ("POST", "/v1/submissions"): 404, ("POST", "/v1/meta-evaluations"): 404,
    ("GET", "/v1/jobs"): "public", ("GET", "/v1/jobs/{job_id}"): 404, ("DELETE", "/v1/jobs/{job_id}"): 404,
    ("GET", "/v1/jobs/{job_id}/result"): 404, ("GET", "/v1/jobs/{job_id}/plot"): 404,
    ("GET", "/v1/tasks"): "public", ("POST", "/v1/tasks"): 404,
    ("GET", "/v1/tasks/{task_id}"): "public", ("PATCH", "/v1/tasks/{task_id}"): 403,
    ("POST", "/v1/tasks/{task_id}/finalise"): 403,
    ("GET", "/v1/tasks/{task_id}/phases"): "public", ("POST", "/v1/tasks/{task_id}/phases"): 403,
    ("PATCH", "/v1/tasks/{task_id}/phases/{name}"): 403,
    ("GET", "/v1/tasks/{task_id}/participants"): "public", ("POST", "/v1/tasks/{task_id}/participants"): 409,
    ("GET", "/v1/tasks/{task_id}/submissions"): "public", ("POST", "/v1/tasks/{task_id}/submissions"): "own",
    ("GET", "/v1/tasks/{task_id}/submissions/{submission_id}"): 404,
    ("PATCH", "/v1/tasks/{task_id}/submissions/{submission_id}"): 404,
    ("GET", "/v1/tasks/{task_id}/submissions/{submission_id}/per-topic"): 404,
    ("GET", "/v1/tasks/{task_id}/per-topic"): 403,
    ("GET", "/v1/tasks/{task_id}/judgments"): 403, ("POST", "/v1/tasks/{task_id}/judgments"): 403,
    ("GET", "/v1/tasks/{task_id}/leaderboard"): "public", ("GET", "/v1/tasks/{task_id}/meta"): 403,
    ("GET", "/v1/tasks/{task_id}/report"): 403,
    ("GET", "/v1/tasks/{task_id}/webhooks"): 403, ("POST", "/v1/tasks/{task_id}/webhooks"): 403,
    ("GET", "/v1/tasks/{task_id}/webhooks/{webhook_id}"): 403,
    ("DELETE", "/v1/tasks/{task_id}/webhooks/{webhook_id}"): 403,
    ("GET", "/v1/tasks/{task_id}/webhooks/{webhook_id}/deliveries"): 403,
    ("POST", "/v1/tasks/{task_id}/webhooks/{webhook_id}/ping"): 403,
    ("GET", "/v1/tokens"): "own", ("POST", "/v1/tokens"): "own", ("DELETE", "/v1/tokens/{token_id}"): 404,
    ("GET", "/v1/users"): 403, ("POST", "/v1/users"): 403,
    ("GET", "/v1/tasks/{task_id}/invitations"): 403, ("POST", "/v1/tasks/{task_id}/invitations"): 403,
    ("POST", "/v1/invitations/{code}"): 404,
    ("DELETE", "/v1/tasks/{task_id}/participants/{participant_id}"): 403,
    ("PATCH", "/v1/tasks/{task_id}/participants/{participant_id}"): 403,
    ("GET", "/v1/tasks/{task_id}/participants/{participant_id}/members"): 404,
    ("DELETE", "/v1/tasks/{task_id}/submissions/{submission_id}"): 404, ("GET", "/v1/tasks/{task_id}/audit"): 403,
}
#: operations an anonymous caller may use (a public task's pages, the catalogue, health); the rest answer 401
ANONYMOUS_OK = {("GET", "/health"), ("GET", "/v1/measures"), ("GET", "/v1/measures/{name}"), ("GET", "/v1/tasks"),
                ("GET", "/v1/tasks/{task_id}"), ("GET", "/v1/tasks/{task_id}/phases"),
                ("GET", "/v1/tasks/{task_id}/leaderboard")}
#: operations an anonymous caller is refused otherwise than 401: creating a user where sign-up is closed, redeeming
#: an unknown invitation code
ANONYMOUS_REFUSED = {("POST", "/v1/users"): 403, ("POST", "/v1/invitations/{code}"): 404}


def _request(c: Campaign, http: httpx.Client, method: str, template: str, job: str, webhook: str) -> httpx.Response:
    """The operation with every path parameter naming another's resource, and a body that would be valid."""
    values = {"collection_id": c.collection, "run_id": c.runs["bob"], "job_id": job, "task_id": c.task,
              "token_id": c.tokens["bob"].split("_")[1],
              "submission_id": c.submissions["bob"], "webhook_id": webhook, "participant_id": c.participants["bob"],
              "name": "AP" if template.startswith("/v1/measures") else "test"}
    path = re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), "AP"), template)
    run = ("r.txt", b"151 Q0 clueweb12-0000tw-00-00000 1 1.0 r\n")
    qrels = ("q.txt", b"151 0 clueweb12-0000tw-00-00000 1\n")
    bodies: dict[tuple[str, str], dict[str, Any]] = {
        ("POST", "/v1/collections"): {"data": {"name": "x"}, "files": {"qrels": qrels}},
        ("POST", "/v1/runs"): {"params": {"collection": c.collection}, "files": {"run": run}},
        ("POST", "/v1/evaluations"): {"json": {"collection": c.collection, "runs": [c.runs["bob"]],
                                               "measures": ["AP"], "per_topic": True}},
        ("POST", "/v1/submissions"): {"data": {"collection": c.collection, "measures": "AP"}, "files": {"run": run}},
        ("POST", "/v1/meta-evaluations"): {"json": {"method": "significance", "evaluation": job}},
        ("POST", "/v1/tasks"): {"json": {"name": "x", "collection": c.collection, "measures": ["AP"]}},
        ("PATCH", "/v1/tasks/{task_id}"): {"json": {"visibility": "private"}},
        ("POST", "/v1/tasks/{task_id}/phases"): {"json": {"name": "late", "opens_at": "2030-01-01T00:00:00Z",
                                                          "closes_at": "2030-02-01T00:00:00Z"}},
        ("PATCH", "/v1/tasks/{task_id}/phases/{name}"): {"json": {"closes_at": "2031-01-01T00:00:00Z"}},
        ("POST", "/v1/tasks/{task_id}/participants"): {"json": {"team": "another"}},
        ("POST", "/v1/tasks/{task_id}/submissions"): {"files": {"run": run}},
        ("PATCH", "/v1/tasks/{task_id}/submissions/{submission_id}"): {"json": {"selected": True}},
        ("POST", "/v1/tasks/{task_id}/judgments"): {"files": {"qrels": qrels}},
        ("POST", "/v1/tasks/{task_id}/webhooks"): {"json": {"url": "http://127.0.0.1:9/"}},
        ("POST", "/v1/tokens"): {"json": {"name": "x"}},
        ("POST", "/v1/users"): {"json": {"name": "x"}},
        ("POST", "/v1/tasks/{task_id}/invitations"): {"json": {"count": 1}},
        ("POST", "/v1/invitations/{code}"): {"json": {"team": "x"}},
        ("PATCH", "/v1/tasks/{task_id}/participants/{participant_id}"): {"json": {"disqualified": True,
                                                                                "reason": "x"}},
    }
    return http.request(method, path, **bodies.get((method, template), {}))


def _shows(response: httpx.Response, secret: str) -> bool:
    """Does the answer show ``secret`` that the request did not carry itself ("no run X" only echoes X)?"""
    asked = str(response.request.url) + response.request.read().decode(errors="replace")
    return secret in response.text and secret not in asked


def _operations(c: Campaign) -> list[tuple[str, str]]:
    with c.http(None) as anonymous:
        paths = anonymous.get("/openapi.json").json()["paths"]
    return [(method.upper(), path) for path, item in paths.items() for method in item
            if method in ("get", "post", "put", "patch", "delete")]


def test_every_route_keeps_others_runs_jobs_submissions_and_the_hidden_judgments_private(campaign: Campaign) -> None:
    operations = _operations(campaign)
    assert set(operations) == set(AS_OTHER_PARTICIPANT), "classify every route in AS_OTHER_PARTICIPANT"
    with campaign.http("alice") as alice:
        evaluations = alice.get(f"/v1/tasks/{campaign.task}/submissions/{campaign.submissions['bob']}").json()
        job = evaluations["evaluations"][0]["job"]
        webhook = alice.get(f"/v1/tasks/{campaign.task}/webhooks").json()[0]["id"]
        qrels_sha = alice.get(f"/v1/collections/{campaign.collection}").json()["qrels"]["sha256"]
    # the hidden collection's id is no secret (a participant's own runs name it; it opens nothing): its contents are
    secrets = [qrels_sha, campaign.runs["bob"], job, webhook]
    with campaign.http("carol") as carol, campaign.http(None) as anonymous:
        for method, template in operations:
            expected = AS_OTHER_PARTICIPANT[(method, template)]
            response = _request(campaign, carol, method, template, job, webhook)
            where = f"{method} {template} as another participant: {response.status_code} {response.text[:300]}"
            if expected in ("public", "own"):
                assert response.status_code < 400, where
                if template != "/v1/tasks/{task_id}/leaderboard":
                    assert campaign.submissions["bob"] not in response.text, where
            else:
                assert response.status_code == expected, where
                assert response.headers["content-type"] == "application/problem+json", where
            for secret in secrets:
                assert not _shows(response, secret), f"{where} shows {secret}"
            response = _request(campaign, anonymous, method, template, job, webhook)
            where = f"{method} {template} anonymously: {response.status_code} {response.text[:300]}"
            if (method, template) in ANONYMOUS_OK:
                assert response.status_code == 200, where
            else:
                assert response.status_code == ANONYMOUS_REFUSED.get((method, template), 401), where
            for secret in secrets:
                assert not _shows(response, secret), f"{where} shows {secret}"
    with campaign.http("mallory") as mallory:  # not registered: sees the public task, none of its submissions
        assert mallory.get(f"/v1/tasks/{campaign.task}/submissions").json() == []
        assert mallory.post(f"/v1/tasks/{campaign.task}/submissions",
                            files={"run": ("r.txt", b"151 Q0 d 1 1 r\n")}).json()["code"] == "not-registered"


def test_an_organiser_meta_evaluates_its_participants_runs_and_another_participant_cannot(
        campaign: Campaign) -> None:
    """Issue 30: runs belong to the teams that submitted them; the task's organiser may meta-evaluate them with
    ``POST /v1/meta-evaluations`` (here the measure advice), a participant may not touch the other teams' runs."""
    body = {"method": "advice", "collection": campaign.collection, "runs": [campaign.runs[who] for who in TEAMS],
            "measures": MEASURES, "options": {"primary": "alpha_nDCG@20", "resamples": 200}}
    with campaign.http("carol") as carol:
        refused = carol.post("/v1/meta-evaluations", json=body)
        assert refused.status_code == 404 and refused.json()["code"] == "not-found", refused.text
    with campaign.http("alice") as alice:
        accepted = alice.post("/v1/meta-evaluations", json=body)
        assert accepted.status_code == 202, accepted.text
        job = accepted.json()["id"]
        deadline = time.monotonic() + 180
        state = ""
        while state not in ("succeeded", "failed") and time.monotonic() < deadline:
            state = alice.get(f"/v1/jobs/{job}", params={"wait": 25}).json()["state"]
        assert state == "succeeded", campaign.live.log("worker")
        result = alice.get(f"/v1/jobs/{job}/result", params={"format": "json"}).json()
        assert list(result["advice"]) == MEASURES and result["primary"] == "alpha_nDCG@20" and result["sentences"]
        page = alice.get(f"/v1/tasks/{campaign.task}/meta", params={"format": "latex", "selection": "all"})
        assert page.status_code == 200 and page.headers["content-type"].startswith("application/x-latex")
        assert "\\begin{document}" in page.text


# --- teams of several users, withdrawal, disqualification and the audit log -----------------------------------

def _stored_board(c: Campaign, check: Any, timeout: float = 60) -> dict[str, Any]:
    """The public leaderboard as an anonymous reader gets it, once a worker stored one that passes ``check``."""
    deadline = time.monotonic() + timeout
    with c.http(None) as anonymous:
        while True:
            r = anonymous.get(f"/v1/tasks/{c.task}/leaderboard")
            board: dict[str, Any] = r.json()
            if r.status_code == 200 and "Evalserve-Stale" not in r.headers and check(board):
                return board
            assert time.monotonic() < deadline, f"no stored board as expected: {r.status_code} {r.text[:1500]}"
            time.sleep(0.3)


def test_a_team_of_two_users_shares_its_quota_withdraws_and_is_audited(campaign: Campaign) -> None:
    """A second user joins dave's team by a bound invitation (no token before); the team's quota (2 a day) is
    shared; the new member withdraws a submission; carol's team is disqualified with a public reason and the
    worker stores the board that shows it unranked; the audit log has it all."""
    run = (campaign.data / "trec-web-2012-runs" / "runs" / TEAMS["dave"]).read_bytes()
    task = campaign.task
    with campaign.http("alice") as alice, campaign.http(None) as anonymous:
        [bound] = alice.post(f"/v1/tasks/{task}/invitations", json={"team": "team-dave"}).json()
        redeemed = anonymous.post(f"/v1/invitations/{bound['code']}", json={"name": "erin"})
        assert redeemed.status_code == 201, redeemed.text
        assert redeemed.json()["participant"]["id"] == campaign.participants["dave"]
        campaign.tokens["erin"] = redeemed.json()["token"]["token"]
        with campaign.http("erin") as erin, campaign.http("dave") as dave:
            members = erin.get(f"/v1/tasks/{task}/participants/{campaign.participants['dave']}/members")
            assert [m["name"] for m in members.json()] == ["dave", "erin"], members.text
            second = erin.post(f"/v1/tasks/{task}/submissions", files={"run": ("erin.txt", run)})
            assert second.status_code == 202, second.text
            over = dave.post(f"/v1/tasks/{task}/submissions", files={"run": ("third.txt", run)})
            assert over.status_code == 429 and over.json()["code"] == "quota-exceeded", over.text
            withdrawn = erin.delete(f"/v1/tasks/{task}/submissions/{second.json()['id']}")
            assert withdrawn.status_code == 200 and withdrawn.json()["withdrawn_at"], withdrawn.text
            assert dave.get(f"/v1/tasks/{task}/submissions/{second.json()['id']}").json()["withdrawn_at"]
        dq = alice.patch(f"/v1/tasks/{task}/participants/{campaign.participants['carol']}",
                         json={"disqualified": True, "reason": "two accounts"})
        assert dq.status_code == 200, dq.text
        try:
            board = _stored_board(campaign, lambda b: any(r.get("disqualified") for r in b["rows"]))
            carol = [r for r in board["rows"] if r["extra"]["team"] == "team-carol"]
            assert carol and carol[0]["rank"] is None and carol[0]["disqualified"]["reason"] == "two accounts"
            assert [r["extra"]["team"] for r in board["rows"] if r.get("disqualified")] == ["team-carol"]
            ranks = [r["rank"] for r in board["rows"] if r["rank"] is not None]
            assert ranks == sorted(ranks) and ranks[0] == 1
            dave_rows = [r["key"] for r in board["rows"] if r["extra"]["team"] == "team-dave"]
            assert dave_rows == [campaign.submissions["dave"]], "the withdrawn submission is not shown"
            log = alice.get(f"/v1/tasks/{task}/audit", params={"page_size": 100}).json()
            actions = [e["action"] for e in log]
            for action in ("participant.registered", "invitation.created", "invitation.redeemed",
                           "participant.member_joined", "submission.withdrawn", "participant.disqualified"):
                assert action in actions, actions
            joined = next(e for e in log if e["action"] == "participant.member_joined")
            assert joined["token"] == campaign.tokens["erin"].split("_")[1] and joined["at"]
        finally:
            alice.patch(f"/v1/tasks/{task}/participants/{campaign.participants['carol']}",
                        json={"disqualified": False})
        _stored_board(campaign, lambda b: not any(r.get("disqualified") for r in b["rows"]))
