"""A whole shared-task campaign over HTTP only (issue 30's first done-when), on real processes and both backends: no
``evalserve tokens create`` and no database access after the deployment's first admin token. The admin makes an
organiser user; the organiser makes a task with a phase and ten invitations; ten teams redeem them (one more user
joins a team through a code bound to it); every team submits with a long-poll and its own callback; one team
withdraws a submission, one is disqualified; the organiser closes the phase and finalises; then every write is
refused (409 ``task-final``) for every kind of caller, and the final leaderboard's hash and bytes are the same on
every read and after the API and the worker are restarted. The campaign's end-of-task zip (the second done-when)
renders in headless Chromium with every plot, compiles with pdflatex in two passes, and its per-topic scores equal
``evalserve evaluate --per-topic`` offline for every evaluated submission."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
from evalserve_client import ApiError, Client
from evalserve_client.webhooks import verify_signature

from evalserve.cli.main import main as cli_main
from tests.browser import chromium, dump_dom, parse_html  # noqa: F401 -- chromium is a fixture
from tests.latex import pdflatex  # noqa: F401 -- a fixture
from tests.service.live import LiveService
from tests.service.test_task_report import ZIP_FILES, compile_twice
from tests.service.test_task_report_live import PROBE
from tests.service.webhook_receiver import Receiver

#: callbacks go to a receiver on 127.0.0.1; eleven redemptions come from one address (the default is 10 an hour)
LIVE_ENV = {"EVALSERVE_WEBHOOK_ALLOW_NETWORKS": "127.0.0.1/32", "EVALSERVE_REGISTER_RATE_LIMIT": "100/hour"}
TEAMS = [f"team-{i:02d}" for i in range(1, 11)]
SHARED, WITHDRAWING, DISQUALIFIED = "team-03", "team-05", "team-07"
MEASURES = ["nDCG@10", "AP", "P@5"]
TOPICS, DOCS = 6, 24


def _qrels() -> bytes:
    return "".join(f"{t} 0 d{t}-{d} {(t * 5 + d * 7) % 3}\n" for t in range(1, TOPICS + 1)
                   for d in range(DOCS)).encode()


def _run(team: int, variant: int = 0) -> bytes:
    """A distinct, deterministic ranking per team (and per variant)."""
    lines = []
    for t in range(1, TOPICS + 1):
        order = sorted(range(DOCS), key=lambda d: ((d * (team + 3) + t * (variant + 1)) % 17, d))
        lines += [f"{t} Q0 d{t}-{d} {rank} {DOCS - rank}.0 run{team}v{variant}\n"
                  for rank, d in enumerate(order[:15], start=1)]
    return "".join(lines).encode()


@dataclass
class Campaign:
    live: LiveService
    receiver: Receiver
    task: str = ""
    organiser: str = ""
    tokens: dict[str, str] = field(default_factory=dict)  # team (and "team-03b", its second user) -> token
    participants: dict[str, str] = field(default_factory=dict)  # team -> participant id
    submitted: dict[str, dict[str, Any]] = field(default_factory=dict)  # submission id -> the 202's body
    runs: dict[str, bytes] = field(default_factory=dict)  # submission id -> the run it sent
    spare_code: str = ""  # an invitation nobody redeemed before the task was final
    withdrawn: str = ""
    record: dict[str, Any] = field(default_factory=dict)

    def client(self, token: str | None) -> Client:
        return Client(self.live.url, token)


def _submit(c: Campaign, who: str, team_number: int, variant: int = 0) -> dict[str, Any]:
    """A team's submission with its own callback, waited for with long-polls; the evaluated submission."""
    run = _run(team_number, variant)
    with c.client(c.tokens[who]) as client:
        done = client.submit_to_task(c.task, run, description=f"{who} v{variant}",
                                     callback_url=f"{c.receiver.url}/{who}", wait=True, timeout=120)
    assert done["state"] == "succeeded", done
    c.submitted[done["id"]], c.runs[done["id"]] = done, run
    return done


@pytest.fixture(scope="module")
def campaign(live: LiveService) -> Iterator[Campaign]:
    with Receiver() as receiver:
        c = Campaign(live, receiver)
        with c.client(live.token) as admin:  # the deployment's first admin token: the operator's only step
            c.organiser = admin.create_user("organiser")["token"]["token"]
        now = datetime.now(timezone.utc)
        with c.client(c.organiser) as organiser:
            collection = organiser.create_collection(_qrels(), name="campaign judgments", hidden=True)
            c.task = organiser.create_task(
                name="A whole campaign", collection=collection["id"], measures=MEASURES,
                phases=[{"name": "test", "opens_at": now - timedelta(hours=1), "closes_at": now + timedelta(hours=2),
                         "quota_per_day": 5}])["id"]
            codes = [made["code"] for made in organiser.create_invitations(c.task, count=11, expires_in_days=7)]
        c.spare_code = codes.pop()
        for team, code in zip(TEAMS, codes, strict=True):  # each team: no token yet, a code, a user and a token
            with c.client(None) as anyone:
                redeemed = anyone.redeem_invitation(code, team=team, name=f"{team} lead")
            c.tokens[team], c.participants[team] = redeemed["token"]["token"], redeemed["participant"]["id"]
        with c.client(c.organiser) as organiser:  # a second user joins team-03 with a code bound to it
            [bound] = organiser.create_invitations(c.task, team=SHARED)
        with c.client(None) as anyone:
            joined = anyone.redeem_invitation(bound["code"], name=f"{SHARED} second")
        c.tokens[f"{SHARED}b"] = joined["token"]["token"]
        assert joined["participant"]["id"] == c.participants[SHARED], "the bound code joins the team, no new one"

        with ThreadPoolExecutor(len(TEAMS)) as pool:  # ten teams' scripts at once, each long-polling its result
            list(pool.map(lambda item: _submit(c, item[1], item[0] + 1), enumerate(TEAMS)))
        _submit(c, f"{SHARED}b", TEAMS.index(SHARED) + 1, variant=1)  # the second member, on the team's quota
        _submit(c, WITHDRAWING, TEAMS.index(WITHDRAWING) + 1, variant=2)
        latest = max((s for s in c.submitted.values() if s["team"] == WITHDRAWING), key=lambda s: s["submitted_at"])
        with c.client(c.tokens[WITHDRAWING]) as team:
            c.withdrawn = team.withdraw_submission(c.task, latest["id"], reason="a bug in our ranker")["id"]
        with c.client(c.organiser) as organiser:
            organiser.disqualify(c.task, participant=c.participants[DISQUALIFIED], reason="used the judgments")
            organiser.update_phase(c.task, "test", closes_at=datetime.now(timezone.utc))
            c.record = organiser.finalise(c.task)
        yield c


def test_every_team_got_its_result_by_long_poll_and_its_own_signed_callback(campaign: Campaign) -> None:
    received = campaign.receiver.wait_for(len(campaign.submitted), timeout=60)
    by_submission = {json.loads(body)["data"]["id"]: (headers, body) for headers, body in received}
    assert set(by_submission) == set(campaign.submitted), "one callback per submission"
    for sub_id, accepted in campaign.submitted.items():
        headers, body = by_submission[sub_id]
        assert verify_signature(accepted["callback_secret"], body, headers["x-evalserve-signature"])
        data = json.loads(body)["data"]
        assert data["team"] == accepted["team"] and data["scores"] == accepted["scores"]
        others = [s["callback_secret"] for k, s in campaign.submitted.items() if s["team"] != accepted["team"]]
        assert not any(verify_signature(secret, body, headers["x-evalserve-signature"]) for secret in others)


def test_the_final_board_ranks_nine_teams_shows_the_disqualified_one_unranked_and_not_the_withdrawn_run(
        campaign: Campaign) -> None:
    with httpx.Client(base_url=campaign.live.url, timeout=60) as anonymous:
        board = anonymous.get(campaign.record["leaderboard"]).json()
    rows = board["rows"]
    assert board["final"]["hash"] == campaign.record["hash"]
    assert sorted(r["extra"]["team"] for r in rows) == TEAMS
    ranked = [r for r in rows if r["rank"] is not None]
    assert len(ranked) == 9 and ranked[0]["rank"] == 1, "nine teams ranked (ties may share a rank)"
    [banned] = [r for r in rows if r["extra"]["team"] == DISQUALIFIED]
    assert banned["rank"] is None and banned["disqualified"]["reason"] == "used the judgments"
    assert campaign.withdrawn not in {r["key"] for r in rows}, "the withdrawn submission left the board"
    [shared] = [r for r in rows if r["extra"]["team"] == SHARED]
    assert shared["key"] in campaign.submitted


def test_after_finalising_every_write_is_refused_for_everyone(campaign: Campaign) -> None:
    c = campaign
    mine = {s["team"]: sid for sid, s in c.submitted.items() if sid != c.withdrawn}
    refused: list[tuple[str, str]] = []

    def refuse(who: str, what: str, call: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        with pytest.raises(ApiError) as caught:
            call(*args, **kwargs)
        assert (caught.value.status, caught.value.code) == (409, "task-final"), (who, what, caught.value)
        refused.append((who, what))

    for who in (TEAMS[0], f"{SHARED}b"):
        team = who[:7]
        with c.client(c.tokens[who]) as participant:
            refuse(who, "submit", participant.submit_to_task, c.task, _run(1, 9))
            refuse(who, "select", participant.select_submission, c.task, mine[team])
            refuse(who, "withdraw", participant.withdraw_submission, c.task, mine[team])
    for who, token in (("organiser", c.organiser), ("admin", c.live.token)):
        with c.client(token) as organiser:
            refuse(who, "baseline", organiser.submit_to_task, c.task, _run(1, 8), baseline=True)
            refuse(who, "disqualify", organiser.disqualify, c.task, submission=mine[TEAMS[1]], reason="x")
            refuse(who, "reinstate", organiser.disqualify, c.task, participant=c.participants[DISQUALIFIED],
                   disqualified=False)
            refuse(who, "remove", organiser.remove_participant, c.task, c.participants[TEAMS[2]])
            refuse(who, "settings", organiser.update_task, c.task, description="changed")
            refuse(who, "phase", organiser.update_phase, c.task, "test", closes_at="2040-01-01T00:00:00Z")
            refuse(who, "invitations", organiser.create_invitations, c.task)
    with c.client(None) as anyone:
        refuse("anyone", "redeem", anyone.redeem_invitation, c.spare_code, team="late team")
    with c.client(c.live.token) as admin:  # a latecomer: a user the admin makes over HTTP, then registers
        late_token = admin.create_user("latecomer")["token"]["token"]
    with c.client(late_token) as latecomer:
        refuse("latecomer", "register", latecomer.register, c.task, "late team")
    assert len(refused) == 2 * 3 + 2 * 7 + 2
    with c.client(c.organiser) as organiser:
        actions = {entry["action"] for entry in organiser.audit(c.task)}
    assert {"participant.registered", "participant.member_joined", "invitation.created", "invitation.redeemed",
            "submission.withdrawn", "participant.disqualified", "phase.updated"} <= actions, actions


def test_the_final_hash_and_bytes_hold_across_reads_and_restarts(campaign: Campaign) -> None:
    live, path = campaign.live, f"/v1/tasks/{campaign.task}/leaderboard"
    with httpx.Client(base_url=live.url, timeout=60) as anonymous:
        before = {fmt: anonymous.get(path, params={"format": fmt}) for fmt in ("json", "csv", "html")}
        again = anonymous.get(path, params={"format": "json"})
    assert again.text == before["json"].text and again.json()["final"]["hash"] == campaign.record["hash"]
    live.restart()
    with httpx.Client(base_url=live.url, timeout=60) as anonymous:
        for fmt, answer in before.items():
            after = anonymous.get(path, params={"format": fmt})
            assert after.status_code == 200 and after.text == answer.text, fmt
    with campaign.client(campaign.organiser) as organiser:
        assert organiser.finalise(campaign.task) == campaign.record
        assert organiser.task(campaign.task)["final"]["hash"] == campaign.record["hash"]


def test_the_end_of_task_zip_renders_compiles_and_equals_the_offline_per_topic_scores(
        campaign: Campaign, chromium: str, pdflatex: str, tmp_path: Path,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    with campaign.client(campaign.organiser) as organiser:
        archive = organiser.report(campaign.task, format="zip", path=tmp_path / "report.zip", timeout=240)
    with zipfile.ZipFile(archive) as z:
        files = {name.removeprefix("report/"): z.read(name) for name in z.namelist()}
    assert set(files) == ZIP_FILES

    page = tmp_path / "html" / "report.html"  # every plot loaded and drawn in headless Chromium
    page.parent.mkdir()
    page.write_text(files["report.html"].decode().replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = parse_html(dump_dom(chromium, page.as_uri(), flags=("--virtual-time-budget=5000",)))
    images = json.loads(dom.find("body").attrs["data-images"])
    assert images and all(width > 0 and height > 0 for _, width, height in images), images
    assert "Final results" in dom.text() and campaign.record["hash"] in dom.text()
    compile_twice(pdflatex, files, tmp_path / "latex")  # two passes, no column-width or label warnings

    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(_qrels())
    rows = list(csv.DictReader(io.StringIO(files["per-topic.csv"].decode())))
    evaluated = {r["submission"] for r in rows}
    assert evaluated == set(campaign.submitted) - {campaign.withdrawn}, "every evaluated submission but the withdrawn"
    for submission in sorted(evaluated):
        run, out = tmp_path / f"{submission}.run", tmp_path / f"{submission}.json"
        run.write_bytes(campaign.runs[submission])
        capsys.readouterr()
        assert cli_main(["evaluate", "--qrels", str(qrels), "--run", str(run), "-m", *MEASURES, "--per-topic",
                         "--topics", "complete", "--format", "json", "-o", str(out)]) == 0
        offline = next(iter(json.loads(out.read_text())["runs"].values()))
        expected = {(m, topic): value for m in MEASURES for topic, value in offline[m]["per_topic"].items()}
        expected |= {(m, "all"): offline[m]["mean"] for m in MEASURES}
        assert {(r["measure"], r["topic"]): float(r["value"]) for r in rows if r["submission"] == submission} \
            == expected, submission
