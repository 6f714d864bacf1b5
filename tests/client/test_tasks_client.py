"""Shared tasks through the client and its command line, against real deployments (gunicorn + a Celery worker,
embedded and PostgreSQL + Redis): an organiser's hidden collection and task, participants who register and submit
real TREC Web 2012 runs with the SDK and with ``evalserve-client task submit --wait`` (the installed console
script), the leaderboard in every format, a retried upload counted once against the quota, 429 and closed-phase
refusals exiting 2, and a real webhook delivery verified with ``evalserve_client.webhooks``.

The SDK's own logic (no server) is checked first: signatures, quota refusals not retried, a caller's idempotency
key, polling a submission, paginated lists."""

from __future__ import annotations

import csv
import gzip
import io
import itertools
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
from evalserve_client import ApiError, Client, JobFailed, WaitTimeout
from evalserve_client.cli import main as client_main
from evalserve_client.webhooks import SIGNATURE_HEADER, verify_signature

from evalserve.cli.main import main as evalserve_main
from evalserve.service.webhooks.delivery import sign
from tests.client.test_client_logic import URL, FakeTime, Recorder, problem
from tests.client.test_end_to_end import DropsFirstAnswer
from tests.service.live import LiveService
from tests.service.webhook_receiver import Receiver

MEASURES = ["alpha_nDCG@20", "ERR_IA@20", "nDCG@10", "P@10"]
#: each run is cut to its first lines: real data, quick evaluations
LINES = 2000
#: the webhook receiver listens on 127.0.0.1: the operator allows it (webhooks go to public hosts only)
LIVE_ENV = {"EVALSERVE_WEBHOOK_ALLOW_NETWORKS": "127.0.0.1/32"}
BAD_RUN = b"151 Q0 doc1 1 0.5 tag\n151 Q0 doc2 two 0.4 tag\n152 Q0 doc3 1 nan tag\n"
NOW = datetime.now(timezone.utc)


# -- shared helpers (test_examples.py uses them too) --------------------------------------------------------------


def make_token(live: LiveService, name: str) -> str:
    """A read+submit token on the deployment's database, made as ``evalserve token create`` makes one."""
    return live.user_token(name)


def truncated_runs(shared_data: Path, directory: Path) -> dict[str, Path]:
    """Real TREC Web 2012 runs cut to their first ``LINES`` lines; ``catb`` stays gzip-compressed."""
    source = shared_data / "trec-web-2012-runs" / "runs"
    out: dict[str, Path] = {}
    for key, name, target in (("cata", "ql-results-cata-filtered.txt", "cata.run"),
                              ("catb", "ql-results-catb.txt.gz", "catb.run.gz"),
                              ("catb_filtered", "ql-results-catb-filtered.txt", "catb-filtered.run"),
                              ("cata_full", "ql-results-cata.txt.gz", "cata-full.run")):
        opener = gzip.open if name.endswith(".gz") else open
        with opener(source / name, "rb") as f:
            head = b"".join(itertools.islice(f, LINES))
        path = directory / target
        path.write_bytes(gzip.compress(head) if target.endswith(".gz") else head)
        out[key] = path
    return out


def open_phase(name: str = "test", **quotas: int) -> dict[str, Any]:
    return {"name": name, "opens_at": NOW - timedelta(days=1), "closes_at": NOW + timedelta(days=2), **quotas}


def new_task(organiser: Client, collection: str, **overrides: Any) -> dict[str, Any]:
    """A public task over the hidden collection, with one open phase (datetimes go through the SDK as they are)."""
    body: dict[str, Any] = {"name": "TREC Web 2012 diversity", "collection": collection, "measures": MEASURES,
                            "primary_measure": "alpha_nDCG@20", "phases": [open_phase()], **overrides}
    return organiser.create_task(**body)


def console_script() -> list[str]:
    """The installed ``evalserve-client`` next to this interpreter."""
    script = Path(sys.executable).parent / "evalserve-client"
    return [str(script)] if script.exists() else [sys.executable, "-m", "evalserve_client"]


def cli(live: LiveService, token: str | None, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``evalserve-client <args>`` in a subprocess; the server and token come from the environment."""
    env = {**os.environ, "EVALSERVE_URL": live.url}
    env.pop("EVALSERVE_TOKEN", None)
    if token:
        env["EVALSERVE_TOKEN"] = token
    return subprocess.run([*console_script(), *args], capture_output=True, text=True, env=env, timeout=timeout)


@dataclass
class World:
    """One deployment's people (tokens) and the organiser's hidden collection of TREC Web 2012 judgments."""

    live: LiveService
    tokens: dict[str, str]
    collection: str
    runs: dict[str, Path]

    def client(self, who: str | None, **options: Any) -> Client:
        return Client(self.live.url, self.tokens[who] if who else None, **options)


def make_world(live: LiveService, qrels: Path, runs: dict[str, Path]) -> World:
    tokens = {who: make_token(live, who) for who in ("organiser", "ann", "ben", "cat", "dan")}
    with Client(live.url, tokens["organiser"]) as organiser:
        collection = organiser.create_collection(qrels, name="TREC Web 2012 judgments", hidden=True)
    assert collection["hidden"] is True and collection["n_topics"] == 50
    return World(live, tokens, collection["id"], runs)


@pytest.fixture(scope="module")
def runs(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return truncated_runs(shared_data, tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="module")
def world(live: LiveService, web2012: dict[str, Path], runs: dict[str, Path]) -> World:
    return make_world(live, web2012["qrels"], runs)


@pytest.fixture
def organiser(world: World) -> Iterator[Client]:
    with world.client("organiser") as c:
        yield c


def offline_scores(capsys: pytest.CaptureFixture[str], qrels: Path, run: Path) -> dict[str, float]:
    """The means ``evalserve evaluate`` computes offline with the task's settings (ties trec, topics complete)."""
    capsys.readouterr()
    code = evalserve_main(["evaluate", "--qrels", str(qrels), "--run", str(run), "-m", *MEASURES,
                           "--topics", "complete", "-q"])
    out, _ = capsys.readouterr()
    assert code == 0
    by_measure = next(iter(json.loads(out)["runs"].values()))
    return {m: item["mean"] for m, item in by_measure.items()}


# -- the SDK's own logic, no server ---------------------------------------------------------------------------------


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def scripted(fake_time: FakeTime) -> Iterator[Callable[..., Client]]:
    made: list[Client] = []

    def make(recorder: Recorder, **options: Any) -> Client:
        client = Client(URL, "es_abc_secret", transport=httpx.MockTransport(recorder), **options)
        client._sleep = fake_time.sleep
        client._clock = fake_time.clock
        made.append(client)
        return client

    yield make
    for c in made:
        c.close()


def test_verify_signature_accepts_what_the_server_signs_and_nothing_else() -> None:
    body = b'{"event": "submission.evaluated", "data": {"id": "sub_1"}}'
    header = sign("s3cret-s3cret-s3cret", body, 1_700_000_000)
    assert verify_signature("s3cret-s3cret-s3cret", body, header, now=1_700_000_100)
    assert not verify_signature("s3cret-s3cret-s3cret", body + b" ", header, now=1_700_000_100), "tampered body"
    assert not verify_signature("another-secret-value", body, header, now=1_700_000_100), "another secret"
    assert not verify_signature("s3cret-s3cret-s3cret", body, header, now=1_700_000_301), "stale"
    assert verify_signature("s3cret-s3cret-s3cret", body, header, now=1_700_000_301, tolerance=400)
    assert not verify_signature("s3cret-s3cret-s3cret", body, header, now=1_699_999_000), "from the future"
    rotated = f"{header},v1={'0' * 64}"
    assert verify_signature("s3cret-s3cret-s3cret", body, rotated, now=1_700_000_000), "any v1 may match"
    for malformed in ("", "t=1700000000", "v1=abc", "t=x,v1=abc", "garbage", "t=1700000000;v1=ab"):
        assert not verify_signature("s3cret-s3cret-s3cret", body, malformed, now=1_700_000_000), malformed
    assert SIGNATURE_HEADER == "X-Evalserve-Signature"


def test_a_quota_refusal_is_not_retried_and_says_when_to_come_back(scripted: Callable[..., Client],
                                                                  fake_time: FakeTime) -> None:
    quota = Recorder(problem(429, "quota-exceeded", "team 'ann' made all 2 submissions allowed per day",
                             headers={"Retry-After": "3600"}))
    with pytest.raises(ApiError) as refused:
        scripted(quota).submit_to_task("task_1", ("a.run", b"151 Q0 d 1 1 t\n"))
    assert len(quota.requests) == 1 and fake_time.sleeps == [], "retrying cannot cure a used-up quota"
    assert (refused.value.status, refused.value.code, refused.value.retry_after) == (429, "quota-exceeded", 3600.0)

    busy = Recorder(problem(429, "too-many-requests", "slow down", headers={"Retry-After": "2"}),
                    httpx.Response(200, json={"id": "task_1"}))
    assert scripted(busy).task("task_1") == {"id": "task_1"}
    assert fake_time.sleeps == [2.0], "any other 429 is retried after its Retry-After"


def test_an_own_idempotency_key_makes_two_clients_send_the_same_request(scripted: Callable[..., Client]) -> None:
    server = Recorder(lambda r: httpx.Response(202, json={"id": "sub_1", "state": "queued"}))
    run = b"151 Q0 doc1 1 0.5 tag\n"
    for _ in range(2):  # as a script re-run after a crash would
        assert scripted(server).submit_to_task("task_1", ("a.run", run), description="BM25", phase="test",
                                               idempotency_key="ann-bm25-v1")["id"] == "sub_1"
    scripted(server).submit_to_task("task_1", ("a.run", run), description="BM25", phase="test")
    first, second, fresh = server.requests
    assert first.headers["Idempotency-Key"] == second.headers["Idempotency-Key"] == "ann-bm25-v1"
    assert first.content == second.content, "the boundary is derived from the key"
    assert fresh.headers["Idempotency-Key"] != "ann-bm25-v1" and fresh.content != first.content
    assert first.url.path == "/v1/tasks/task_1/submissions"
    for part in (b'name="run"; filename="a.run"', b'name="description"\r\n\r\nBM25',
                 b'name="phase"\r\n\r\ntest', b'name="baseline"\r\n\r\nfalse', run):
        assert part in first.content


def test_waiting_for_a_submission_honours_retry_after_and_a_fixed_poll(scripted: Callable[..., Client],
                                                                      fake_time: FakeTime) -> None:
    def sub(state: str, progress: float, **extra: Any) -> dict[str, Any]:
        return {"id": "sub_1", "task": "task_1", "state": state, "stage": state, "progress": progress,
                "scores": None, "error": None, **extra}

    server = Recorder(httpx.Response(200, json=sub("running", 0.5), headers={"Retry-After": "3"}),
                      httpx.Response(200, json=sub("running", 0.9)),
                      httpx.Response(200, json=sub("succeeded", 1.0, scores={"AP": 0.25})))
    seen: list[dict[str, Any]] = []
    done = scripted(server).wait_for_submission("task_1", sub("queued", 0.0), poll=0.5, on_progress=seen.append)
    assert done["scores"] == {"AP": 0.25} and [s["state"] for s in seen] == ["queued", "running", "running",
                                                                              "succeeded"]
    assert fake_time.sleeps == [0.5, 3.0, 0.5], "every 0.5 s, but not sooner than Retry-After"
    assert all(r.url.path == "/v1/tasks/task_1/submissions/sub_1" for r in server.requests)

    failed = Recorder(httpx.Response(200, json=sub("failed", 1.0, error={"code": "worker-crashed",
                                                                         "message": "the worker died"})))
    with pytest.raises(JobFailed) as caught:
        scripted(failed).wait_for_submission("task_1", "sub_1")
    assert str(caught.value) == "submission sub_1 failed: the worker died [worker-crashed]"
    assert caught.value.kind == "submission" and caught.value.code == "worker-crashed"

    fake_time.sleeps.clear()
    slow = Recorder(httpx.Response(200, json=sub("queued", 0.0)))
    with pytest.raises(WaitTimeout) as late:
        scripted(slow).wait_for_submission("task_1", "sub_1", timeout=2.0)
    assert str(late.value) == "submission sub_1 is still queued after 2 s" and sum(fake_time.sleeps) == 2.0


def test_lists_follow_every_page_and_leaderboards_parse_json_only(scripted: Callable[..., Client]) -> None:
    def page(request: httpx.Request) -> httpx.Response:
        number = int(request.url.params["page"])
        header = {"total": 3, "page": number, **({"next_page": number + 1} if number < 2 else {})}
        items = [{"id": f"task_{number}a"}] + ([{"id": f"task_{number}b"}] if number == 1 else [])
        return httpx.Response(200, json=items, headers={"X-Pagination": json.dumps(header)})

    server = Recorder(page)
    client = scripted(server)
    assert [t["id"] for t in client.tasks()] == ["task_1a", "task_1b", "task_2a"]
    assert [r.url.params["page_size"] for r in server.requests] == ["100", "100"]

    board = Recorder(lambda r: httpx.Response(200, text='{"rows": []}\n' if r.url.params["format"] == "json"
                                              else "rank,key\n", headers={"Content-Type": "text/plain"}))
    client = scripted(board)
    assert client.leaderboard("task_1") == {"rows": []}
    assert client.leaderboard("task_1", format="csv", phase="test", version=2, selection="all") == "rank,key\n"
    assert dict(board.requests[-1].url.params) == {"format": "csv", "selection": "all", "phase": "test",
                                                   "version": "2"}
    with pytest.raises(ValueError, match="unknown leaderboard format"):
        client.leaderboard("task_1", format="xml")


# -- the SDK against real deployments ------------------------------------------------------------------------------


def test_participants_register_submit_and_follow_their_runs_with_the_sdk(
        world: World, organiser: Client, web2012: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    task = new_task(organiser, world.collection, phases=[open_phase(quota_per_day=5)])
    assert task["role"] == "organiser" and task["current_phase"] == "test" and task["measures"] == MEASURES
    assert organiser.collection(world.collection)["hidden"] is True
    task_id = task["id"]
    with world.client(None) as anonymous, world.client("ann") as ann, world.client("ben") as ben:
        assert anonymous.task(task_id)["role"] == "public" and anonymous.task(task_id)["collection"] is None
        assert task_id in [t["id"] for t in anonymous.tasks()]
        assert ann.register(task_id, "team-ann")["team"] == "team-ann"
        with pytest.raises(ApiError) as again:
            ann.register(task_id, "team-ann-2")
        assert (again.value.status, again.value.code) == (409, "already-registered")
        assert (ann.task(task_id)["role"], ann.task(task_id)["team"]) == ("participant", "team-ann")

        queued = ann.submit_to_task(task_id, world.runs["catb"], description="QL, category B")
        assert queued["state"] in ("queued", "running") and queued["phase"] == "test"
        assert queued["run"]["name"] == "catb.run" and queued["description"] == "QL, category B"
        assert queued["links"]["self"] == f"/v1/tasks/{task_id}/submissions/{queued['id']}"
        seen: list[dict[str, Any]] = []
        first = ann.wait_for_submission(task_id, queued, timeout=120, on_progress=seen.append)
        assert first["state"] == "succeeded" and first["progress"] == 1.0 and first["error"] is None
        assert seen[0] == queued and seen[-1] == first and all(0 <= s["progress"] <= 1 for s in seen)
        assert first["scores"] == pytest.approx(offline_scores(capsys, web2012["qrels"], world.runs["catb"]))
        assert list(first["scores"]) == MEASURES
        assert ann.task_submission(task_id, first["id"]) == first

        with pytest.raises(ApiError) as foreign:
            ben.task_submission(task_id, first["id"])
        assert (foreign.value.status, foreign.value.code) == (404, "not-found")
        with pytest.raises(ApiError) as unregistered:
            ben.submit_to_task(task_id, world.runs["cata"])
        assert (unregistered.value.status, unregistered.value.code) == (403, "not-registered")

        ben.register(task_id, "team-ben")
        ben_sub = ben.wait_for_submission(task_id, ben.submit_to_task(task_id, world.runs["cata"]), timeout=120)
        second = ann.wait_for_submission(task_id, ann.submit_to_task(task_id, world.runs["catb_filtered"]),
                                         timeout=120, poll=0.3)
        assert [s["id"] for s in ann.task_submissions(task_id)] == [second["id"], first["id"]], "newest first"
        assert [s["id"] for s in ann.task_submissions(task_id, phase="test")] == [second["id"], first["id"]]
        assert len(organiser.task_submissions(task_id)) == 3, "organisers see everyone's"

        board = anonymous.leaderboard(task_id)
        assert board["primary"] == "alpha_nDCG@20" and board["pending"] == 0
        assert {r["key"] for r in board["rows"]} == {second["id"], ben_sub["id"]}, "each team's latest"
        assert ann.select_submission(task_id, first["id"])["selected"] is True
        rows = anonymous.leaderboard(task_id)["rows"]
        assert {r["key"] for r in rows} == {first["id"], ben_sub["id"]}, "ann's chosen one replaces her latest"
        mine = next(r for r in rows if r["key"] == first["id"])
        assert mine["scores"] == pytest.approx(first["scores"])
        assert [r["rank"] for r in rows] == sorted(r["rank"] for r in rows)
        everything = anonymous.leaderboard(task_id, selection="all")
        assert len(everything["rows"]) == 3
        text = anonymous.leaderboard(task_id, format="csv")
        assert [r["key"] for r in csv.DictReader(io.StringIO(text))] == [r["key"] for r in rows]
        assert "\\begin{tabular}" in anonymous.leaderboard(task_id, format="latex")
        assert anonymous.leaderboard(task_id, format="html").lstrip().lower().startswith("<!doctype html")


def test_a_real_webhook_delivery_verifies_with_the_client(world: World, organiser: Client) -> None:
    task_id = new_task(organiser, world.collection)["id"]
    with Receiver() as receiver, world.live.client(world.tokens["organiser"]) as http, \
            world.client("cat") as cat:
        made = http.post(f"/v1/tasks/{task_id}/webhooks", json={"url": receiver.url,
                                                                 "events": ["submission.evaluated"]})
        assert made.status_code == 201, made.text
        secret = made.json()["secret"]
        cat.register(task_id, "team-cat")
        done = cat.wait_for_submission(task_id, cat.submit_to_task(task_id, world.runs["cata"]), timeout=120)
        headers, body = receiver.wait_for(1, timeout=60)[0]
    assert verify_signature(secret, body, headers[SIGNATURE_HEADER.lower()])
    assert not verify_signature(secret, body.replace(done["id"].encode(), b"sub_forged"),
                                headers[SIGNATURE_HEADER.lower()])
    assert not verify_signature("not-the-secret-at-all", body, headers[SIGNATURE_HEADER.lower()])
    assert done["id"] in body.decode()


class Counting(httpx.BaseTransport):
    """A real connection that counts the requests it sends."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.sent: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def test_a_retried_upload_counts_once_and_a_used_up_quota_exits_2(world: World, organiser: Client) -> None:
    task_id = new_task(organiser, world.collection, phases=[open_phase(quota_per_day=2)])["id"]
    run = world.runs["cata"]
    lossy = DropsFirstAnswer(f"/v1/tasks/{task_id}/submissions")
    with world.client("dan") as dan, world.client("dan", transport=lossy) as retrying:
        dan.register(task_id, "team-dan")
        first = retrying.submit_to_task(task_id, run, description="lost answer")
        sent, retry = lossy.sent
        assert sent.headers["Idempotency-Key"] == retry.headers["Idempotency-Key"] and sent.content == retry.content
        assert lossy.answers[0].json()["id"] == lossy.answers[1].json()["id"] == first["id"]
        assert lossy.answers[1].headers["Idempotent-Replayed"] == "true"

        # a script re-run with its own key: a new client, the same request, the first answer
        with world.client("dan") as rerun:
            again = rerun.submit_to_task(task_id, run, description="keyed", idempotency_key=f"{task_id}-dan-1")
        with world.client("dan") as rerun:
            replayed = rerun.submit_to_task(task_id, run, description="keyed", idempotency_key=f"{task_id}-dan-1")
        assert replayed["id"] == again["id"] != first["id"]
        assert [s["id"] for s in dan.task_submissions(task_id)] == [again["id"], first["id"]], "two, not four"

        counting = Counting()
        with world.client("dan", transport=counting) as counted:
            counted._sleep = lambda seconds: pytest.fail(f"slept {seconds} s: a quota refusal was retried")
            with pytest.raises(ApiError) as refused:
                counted.submit_to_task(task_id, run)
        assert len(counting.sent) == 1
        error = refused.value
        assert (error.status, error.code) == (429, "quota-exceeded") and "all 2 submissions" in error.detail
        assert error.retry_after is not None and 0 < error.retry_after <= 86401

    done = cli(world.live, world.tokens["dan"], "task", "submit", task_id, str(run), "--wait")
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("evalserve-client: the server refused the request (429 quota-exceeded): team 'team-dan'"
                           " made all 2 submissions allowed per day")
    assert "(retry after " in line and "Traceback" not in done.stderr


def test_an_invalid_run_and_a_closed_phase_exit_2_with_every_problem(
        world: World, organiser: Client, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task_id = new_task(organiser, world.collection)["id"]
    bad = tmp_path / "bad.run"
    bad.write_bytes(BAD_RUN)
    with world.client("ann") as ann:
        ann.register(task_id, "team-ann")
        with pytest.raises(ApiError) as invalid:
            ann.submit_to_task(task_id, bad)
        assert (invalid.value.status, invalid.value.code) == (422, "invalid-upload")
        assert [(p["line"], p["code"]) for p in invalid.value.problems] == [(2, "rank-not-integer"),
                                                                           (3, "score-nan")]
    server = ["--server", world.live.url, "--token", world.tokens["ann"]]
    capsys.readouterr()
    assert client_main(["task", "submit", task_id, str(bad), "--wait", *server]) == 2
    out, err = capsys.readouterr()
    *problems, summary = err.splitlines()
    assert out == "" and problems == [
        f"{bad}:2:13: warning: rank 'two' is not an integer [rank-not-integer]",
        f"{bad}:3:15: error: score 'nan' is NaN; ranking would be undefined [score-nan]"]
    assert summary.startswith("evalserve-client: the server refused the request (422 invalid-upload): ")
    assert summary.endswith("nothing was stored")
    assert client_main(["task", "submit", task_id, str(tmp_path / "missing.run"), *server]) == 2
    assert capsys.readouterr().err == f"{tmp_path / 'missing.run'}: error: no such file: {tmp_path / 'missing.run'}" \
                                      " [file-not-found]\n"

    closed = organiser.update_phase(task_id, "test", closes_at=datetime.now(timezone.utc))
    assert closed["open"] is False
    with world.client("ann") as ann, pytest.raises(ApiError) as late:
        ann.submit_to_task(task_id, world.runs["cata"])
    assert (late.value.status, late.value.code) == (409, "phase-closed")
    done = cli(world.live, world.tokens["ann"], "task", "submit", task_id, str(world.runs["cata"]))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"evalserve-client: the server refused the request (409 phase-closed): submissions"
                                  f" to task {task_id} closed: phase 'test' ended at ")
    assert len(done.stderr.splitlines()) == 1

    assert client_main(["task", "submit", task_id, str(world.runs["cata"]), "--server", world.live.url,
                        "--token", world.tokens["ben"]]) == 1, "a token that is not registered is refused (403)"
    assert "(403 not-registered)" in capsys.readouterr().err


# -- the command line against real deployments --------------------------------------------------------------------


def test_the_cli_registers_submits_waits_and_prints_the_leaderboard_in_rank_order(
        world: World, organiser: Client, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task_id = new_task(organiser, world.collection)["id"]
    server = ["--server", world.live.url]
    capsys.readouterr()
    for who in ("ann", "ben", "cat"):
        assert client_main(["task", "register", task_id, f"team-{who}", *server, "--token", world.tokens[who]]) == 0
        assert json.loads(capsys.readouterr().out)["team"] == f"team-{who}"

    done = cli(world.live, world.tokens["ann"], "task", "submit", task_id, str(world.runs["catb"]), "--wait",
               "--description", "QL, category B")
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", "no progress bar when stderr is not a terminal"
    ann_sub = json.loads(done.stdout)
    assert ann_sub["state"] == "succeeded" and list(ann_sub["scores"]) == MEASURES
    assert ann_sub["description"] == "QL, category B" and ann_sub["run"]["name"] == "catb.run"
    assert ann_sub["run"]["filename"] == "catb.run.gz", "the organisers see no local directories"

    done = cli(world.live, world.tokens["ben"], "task", "submit", task_id, str(world.runs["cata"]), "--wait",
               "--format", "table")
    assert done.returncode == 0, done.stderr
    table = dict(line.split(None, 1) for line in done.stdout.splitlines())
    assert table["state"] == "succeeded" and table["team"] == "team-ben" and table["run"] == "cata.run"
    assert set(MEASURES) <= set(table) and float(table["alpha_nDCG@20"]) >= 0

    queued = cli(world.live, world.tokens["cat"], "task", "submit", task_id, str(world.runs["cata_full"]))
    assert queued.returncode == 0, queued.stderr
    cat_sub = json.loads(queued.stdout)
    assert cat_sub["state"] in ("queued", "running", "succeeded")
    with world.client("cat") as cat:
        cat.wait_for_submission(task_id, cat_sub["id"], timeout=120)
    capsys.readouterr()
    assert client_main(["task", "status", task_id, cat_sub["id"], *server, "--token", world.tokens["cat"]]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["state"] == "succeeded" and status["id"] == cat_sub["id"]

    document = cli(world.live, None, "task", "leaderboard", task_id)
    assert document.returncode == 0, document.stderr
    rows = json.loads(document.stdout)["rows"]
    assert {r["label"] for r in rows} == {"team-ann", "team-ben", "team-cat"}
    listed = cli(world.live, None, "task", "leaderboard", task_id, "--format", "csv")
    assert listed.returncode == 0, listed.stderr
    csv_rows = list(csv.DictReader(io.StringIO(listed.stdout)))
    assert [(r["rank"], r["key"], r["label"]) for r in csv_rows] == [(str(r["rank"]), r["key"], r["label"])
                                                                      for r in rows], "the JSON's order"
    with httpx.Client(base_url=world.live.url) as http:
        served = http.get(f"/v1/tasks/{task_id}/leaderboard", params={"format": "csv"})
    assert listed.stdout.encode() == served.content
    latex = tmp_path / "board.tex"
    assert client_main(["task", "leaderboard", task_id, "--format", "latex", "--selection", "all", "--phase", "test",
                        "--version", "1", "-o", str(latex), *server]) == 0
    assert capsys.readouterr().out == "" and "\\begin{tabular}" in latex.read_text()

    listing = cli(world.live, world.tokens["ann"], "task", "list")
    assert listing.returncode == 0, listing.stderr
    header, *lines = listing.stdout.splitlines()
    assert header.split() == ["TASK", "OPEN", "PHASE", "ROLE", "TEAM", "VISIBILITY", "NAME"]
    mine = next(line for line in lines if line.startswith(task_id))
    assert mine.split()[1:5] == ["test", "participant", "team-ann", "public"]

    assert client_main(["task", "leaderboard", "task_nonexistent", *server]) == 2
    assert "(404 not-found)" in capsys.readouterr().err
    assert client_main(["task"]) == 2
    assert "SUBCOMMAND" in capsys.readouterr().err


def test_measure_advice_asks_for_the_format_selection_and_options(scripted: Callable[..., Client]) -> None:
    """Issue 30: the task meta-evaluation with its advice, as a dict or as the typeset text."""
    server = Recorder(lambda r: httpx.Response(200, json={"advice": {"sentences": ["s"]}}),
                      httpx.Response(200, text="<!DOCTYPE html>", headers={"Content-Type": "text/html"}))
    assert scripted(server).measure_advice("task_1", selection="all", seed=7)["advice"]["sentences"] == ["s"]
    assert scripted(server).measure_advice("task_1", format="html", phase="test") == "<!DOCTYPE html>"
    first, second = server.requests
    assert first.url.path == "/v1/tasks/task_1/meta"
    assert dict(first.url.params) == {"format": "json", "selection": "all", "seed": "7"}
    assert dict(second.url.params) == {"format": "html", "selection": "latest", "phase": "test"}
    with pytest.raises(ValueError, match="unknown measure advice format"):
        scripted(server).measure_advice("task_1", format="csv")  # type: ignore[call-overload]
