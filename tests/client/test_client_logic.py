"""The client's own logic, against ``httpx.MockTransport`` (scripted answers, no server): retries and backoff,
idempotency keys reused with identical bytes, Retry-After, polling, progress, errors, run classification.
What the real service answers is checked in ``test_end_to_end.py``."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from evalserve_client import ApiError, Client, JobFailed, ServerUnreachable, WaitTimeout, format_problem
from evalserve_client.client import POLL_CAP, retry_after
from evalserve_client.progress import TerminalProgress

URL = "http://evalserve.test"
PROBLEM = "application/problem+json"

Handler = Callable[[httpx.Request], httpx.Response]


class Recorder:
    """A scripted server: answers requests in order from a list of handlers, recording every request."""

    def __init__(self, *answers: Handler | httpx.Response | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, httpx.Response):
            return answer
        return answer(request)


class FakeTime:
    """Sleeps recorded instead of slept; the clock advances by what was slept."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def make_client(fake_time: FakeTime) -> Iterator[Callable[..., Client]]:
    clients: list[Client] = []

    def make(recorder: Recorder, **options: Any) -> Client:
        client = Client(URL, "es_abc_secret", transport=httpx.MockTransport(recorder), **options)
        client._sleep = fake_time.sleep
        client._clock = fake_time.clock
        clients.append(client)
        return client

    yield make
    for c in clients:
        c.close()


def problem(status: int, code: str, detail: str, problems: list[dict[str, Any]] | None = None,
            headers: dict[str, str] | None = None) -> httpx.Response:
    body = {"type": f"https://evalserve.dev/problems/{code}", "title": "T", "status": status, "detail": detail,
            "code": code, "problems": problems or []}
    return httpx.Response(status, content=json.dumps(body).encode(),
                          headers={"Content-Type": PROBLEM, **(headers or {})})


def job(state: str, progress: float = 0.0, **extra: Any) -> dict[str, Any]:
    return {"id": "job_1", "state": state, "stage": state, "progress": progress, "error": None, "links": {}, **extra}


def job_response(state: str, progress: float = 0.0, status: int = 200, retry: str | None = None,
                 **extra: Any) -> httpx.Response:
    headers = {"Retry-After": retry} if retry is not None else {}
    return httpx.Response(status, json=job(state, progress, **extra), headers=headers)


# -- retries and idempotency -------------------------------------------------------------------------------------


def test_a_post_retried_after_503_resends_the_same_bytes_and_key_and_honours_retry_after(
        make_client: Callable[..., Client], fake_time: FakeTime) -> None:
    created = httpx.Response(201, json={"id": "col_1", "name": "c"})
    server = Recorder(problem(503, "unavailable", "busy", headers={"Retry-After": "3"}),
                      httpx.Response(502, text="<html>bad gateway</html>"), created)
    client = make_client(server)
    assert client.create_collection(b"1 0 d 1\n", name="c")["id"] == "col_1"
    first, second, third = server.requests
    key = first.headers["Idempotency-Key"]
    assert len(key) == 36 and key.count("-") == 4, "a uuid4"
    assert second.headers["Idempotency-Key"] == third.headers["Idempotency-Key"] == key
    assert first.content == second.content == third.content, "same multipart body, boundary included"
    assert b'name="qrels"; filename="qrels"' in first.content
    assert fake_time.sleeps == [3.0, 1.0], "Retry-After 3 s, then the second backoff step"


def test_every_post_gets_its_own_key_and_gets_carry_none(make_client: Callable[..., Client]) -> None:
    server = Recorder(lambda r: httpx.Response(201 if r.method == "POST" else 200, json={"id": "x", "measures": []}))
    client = make_client(server)
    client.create_collection(b"q", name="a")
    client.create_collection(b"q", name="b")
    client.measures()
    keys = [r.headers.get("Idempotency-Key") for r in server.requests]
    assert keys[0] and keys[1] and keys[0] != keys[1] and keys[2] is None
    assert all(r.headers["Authorization"] == "Bearer es_abc_secret" for r in server.requests)


def test_connection_errors_are_retried_with_backoff_then_reported(make_client: Callable[..., Client],
                                                                  fake_time: FakeTime) -> None:
    server = Recorder(httpx.ConnectError("refused"), httpx.ReadError("reset"),
                      httpx.Response(200, json={"measures": [{"name": "AP"}]}))
    assert make_client(server).measures() == [{"name": "AP"}]
    assert fake_time.sleeps == [0.5, 1.0]

    fake_time.sleeps.clear()
    down = Recorder(httpx.ConnectError("[Errno 111] Connection refused"))
    with pytest.raises(ServerUnreachable) as caught:
        make_client(down, retries=4).job("job_1")
    assert len(down.requests) == 5 and fake_time.sleeps == [0.5, 1.0, 2.0, 4.0]
    assert caught.value.attempts == 5 and caught.value.url == URL
    assert str(caught.value) == (f"cannot reach the evalserve server at {URL} (5 attempts):"
                                 " [Errno 111] Connection refused")


def test_backoff_is_capped(make_client: Callable[..., Client], fake_time: FakeTime) -> None:
    server = Recorder(httpx.Response(504, text="timeout"))
    with pytest.raises(ApiError) as caught:
        make_client(server, retries=6).job("job_1")
    assert fake_time.sleeps == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]
    assert caught.value.status == 504 and caught.value.code == "http-504" and caught.value.detail == "timeout"


def test_client_errors_are_not_retried_and_carry_the_problem(make_client: Callable[..., Client],
                                                            fake_time: FakeTime) -> None:
    items = [{"line": 3, "column": 15, "code": "score-nan", "message": "score 'nan' is NaN", "severity": "error",
              "source": "bad.run"}]
    server = Recorder(problem(422, "invalid-upload", "bad.run: 1 error(s); nothing was stored", items))
    with pytest.raises(ApiError) as caught:
        make_client(server).upload_run("col_1", ("bad.run", b"x"))
    error = caught.value
    assert len(server.requests) == 1 and fake_time.sleeps == []
    assert (error.status, error.code) == (422, "invalid-upload")
    assert error.detail == "bad.run: 1 error(s); nothing was stored"
    assert error.problems == items and error.title == "T"
    assert error.type == "https://evalserve.dev/problems/invalid-upload"
    assert str(error) == "422 invalid-upload: bad.run: 1 error(s); nothing was stored"
    assert [format_problem(p) for p in error.problems] == ["bad.run:3:15: error: score 'nan' is NaN [score-nan]"]
    assert server.requests[0].url.params["collection"] == "col_1"


def test_format_problem_for_fields_and_lineless_problems() -> None:
    assert format_problem({"field": "measures", "code": "invalid-measure", "message": "unknown measure 'X'",
                           "severity": "error"}) == "measures: error: unknown measure 'X' [invalid-measure]"
    assert format_problem({"line": None, "column": None, "code": "duplicate-run-name", "message": "m",
                           "severity": "error"}) == "<input>: error: m [duplicate-run-name]"
    assert format_problem({"line": 2, "column": None, "code": "c", "message": "m", "severity": "warning",
                           "source": "f"}) == "f:2: warning: m [c]"


def test_retry_after_in_seconds_or_as_a_date() -> None:
    def with_header(value: str) -> httpx.Response:
        return httpx.Response(503, headers={"Retry-After": value})

    assert retry_after(with_header("2")) == 2.0
    assert retry_after(httpx.Response(200)) is None
    assert retry_after(with_header("soon")) is None
    later = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    assert 25 < (retry_after(with_header(later)) or 0) <= 30


def test_the_url_must_be_http() -> None:
    with pytest.raises(ValueError, match="http:// or https://"):
        Client("localhost:8000", "t")


def test_a_token_is_sent_without_surrounding_white_space() -> None:
    """A token read from a file or pasted often ends in a newline; the header carries the token alone."""
    server = Recorder(httpx.Response(200, json={"status": "ok"}))
    with Client(URL, "  es_a_b\n", transport=httpx.MockTransport(server)) as client:
        client.health()
    assert server.requests[0].headers["Authorization"] == "Bearer es_a_b"


@pytest.mark.parametrize("token", ["es_a_b\ntoken id a, scopes read: store it now", "es_a b", "es_a_\u00e9"])
def test_a_malformed_token_is_refused_before_anything_is_sent(token: str) -> None:
    """Not a network failure to retry: a local mistake named at once, without echoing the secret."""
    with pytest.raises(ValueError, match="not a valid API token") as refused:
        Client(URL, token, transport=httpx.MockTransport(Recorder(AssertionError("nothing may be sent"))))
    assert "es_a" not in str(refused.value)


# -- evaluations and polling -------------------------------------------------------------------------------------


def test_files_go_up_in_one_submission(make_client: Callable[..., Client], tmp_path: Path) -> None:
    a, b = tmp_path / "a.run", tmp_path / "b.run.gz"
    a.write_bytes(b"A")
    b.write_bytes(b"B")
    server = Recorder(job_response("queued", status=202))
    started = make_client(server).evaluate({"id": "col_1"}, [a, str(b)], ["AP", "nDCG@10"], per_topic=True,
                                           wait=False)
    assert started["state"] == "queued"
    (sent,) = server.requests
    assert sent.method == "POST" and sent.url.path == "/v1/submissions"
    body = sent.content
    assert body.index(b'filename="a.run"') < body.index(b'filename="b.run.gz"')
    for field, value in (("collection", b"col_1"), ("measures", b"AP nDCG@10"), ("ties", b"trec"),
                         ("topics", b"common"), ("per_topic", b"true")):
        assert f'name="{field}"\r\n\r\n'.encode() + value + b"\r\n" in body, field


def test_run_ids_and_mixed_runs_use_evaluations_in_order(make_client: Callable[..., Client],
                                                         tmp_path: Path) -> None:
    path = tmp_path / "x.run"
    path.write_bytes(b"X")

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/runs":
            return httpx.Response(201, json={"id": "run_uploaded"})
        if request.url.path.startswith("/v1/measures/"):
            return httpx.Response(200, json={"measures": [{"name": "AP"}]})
        return job_response("queued", status=202)

    server = Recorder(answer)
    make_client(server).evaluate("col_1", ["run_aaa", path, {"id": "run_bbb"}], ["AP"], ties="rank",
                                 topics="complete", wait=False)
    check, upload, evaluation = server.requests
    assert check.method == "GET" and check.url.path == "/v1/measures/AP"  # the measures first: a file goes up next
    assert upload.url.path == "/v1/runs" and b'filename="x.run"' in upload.content
    assert evaluation.url.path == "/v1/evaluations"
    assert json.loads(evaluation.content) == {"collection": "col_1", "runs": ["run_aaa", "run_uploaded", "run_bbb"],
                                              "measures": ["AP"], "ties": "rank", "topics": "complete",
                                              "per_topic": False}


def test_waiting_backs_off_from_0_2_s_to_5_s_and_reports_progress(make_client: Callable[..., Client],
                                                                  fake_time: FakeTime) -> None:
    polls = [job_response("queued")] + [job_response("running", i / 12) for i in range(12)]
    server = Recorder(job_response("queued", status=202), *polls, job_response("succeeded", 1.0))
    seen: list[dict[str, Any]] = []
    done = make_client(server).evaluate("col_1", [("r.run", b"x")], ["AP"], progress=seen.append)
    assert done["state"] == "succeeded"
    expected = [min(POLL_CAP, 0.2 * 1.5**i) for i in range(14)]
    assert fake_time.sleeps == pytest.approx(expected)
    assert fake_time.sleeps[0] == pytest.approx(0.2) and fake_time.sleeps[-1] == POLL_CAP
    assert [j["state"] for j in seen] == ["queued", "queued", *["running"] * 12, "succeeded"]
    assert seen[-1]["progress"] == 1.0
    assert all(r.url.path == "/v1/jobs/job_1" for r in server.requests[1:])


def test_waiting_never_polls_sooner_than_retry_after(make_client: Callable[..., Client],
                                                     fake_time: FakeTime) -> None:
    server = Recorder(job_response("queued", status=202, retry="1"), job_response("running", 0.5, retry="2"),
                      job_response("running", 0.5), job_response("succeeded", 1.0))
    make_client(server).evaluate("col_1", [("r.run", b"x")], ["AP"])
    assert fake_time.sleeps == pytest.approx([1.0, 2.0, 0.45])


def test_a_failed_or_cancelled_job_raises_job_failed_with_the_job(make_client: Callable[..., Client]) -> None:
    error = {"code": "invalid-input", "message": "two runs would both be named x.run",
             "problems": [{"line": None, "column": None, "code": "duplicate-run-name", "message": "m",
                           "severity": "error"}]}
    server = Recorder(job_response("running", 0.1), job_response("failed", 0.1, error=error))
    with pytest.raises(JobFailed) as caught:
        make_client(server).wait("job_1")
    failed = caught.value
    assert failed.job["state"] == "failed" and failed.job["error"] == error
    assert (failed.state, failed.code, failed.message) == ("failed", "invalid-input", error["message"])
    assert failed.problems == error["problems"]

    with pytest.raises(JobFailed) as cancelled:
        make_client(Recorder(job_response("cancelled"))).wait({"id": "job_1"})
    assert cancelled.value.state == "cancelled" and cancelled.value.code == "cancelled"
    assert str(cancelled.value) == "job job_1 cancelled: the job was cancelled [cancelled]"


def test_waiting_gives_up_after_the_timeout(make_client: Callable[..., Client], fake_time: FakeTime) -> None:
    server = Recorder(job_response("queued", status=202), job_response("running", 0.3))
    with pytest.raises(WaitTimeout) as caught:
        make_client(server).evaluate("col_1", [("r.run", b"x")], ["AP"], timeout=2.0)
    assert caught.value.job["state"] == "running" and caught.value.timeout == 2.0
    assert isinstance(caught.value, TimeoutError)
    assert sum(fake_time.sleeps) == pytest.approx(2.0), "the last pause is cut to the deadline"


# -- results -----------------------------------------------------------------------------------------------------

DOCUMENT = {"meta": {"warnings": []}, "runs": {"a": {"AP": {"mean": 0.5, "per_topic": {"1": 0.25, "2": 0.75}}}}}


def test_results_parse_json_and_return_text_otherwise(make_client: Callable[..., Client]) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.params["format"] == "json":
            return httpx.Response(200, text=json.dumps(DOCUMENT, indent=2) + "\n",
                                  headers={"Content-Type": "application/json"})
        return httpx.Response(200, text="run\tmeasure\ttopic\tvalue\n", headers={"Content-Type": "text/plain"})

    server = Recorder(answer)
    client = make_client(server)
    assert client.results("job_1") == DOCUMENT
    assert client.results({"id": "job_1"}, "tsv", per_topic=False) == "run\tmeasure\ttopic\tvalue\n"
    assert client.results_text("job_1", "json", per_topic=True) == json.dumps(DOCUMENT, indent=2) + "\n"
    params = [dict(r.url.params) for r in server.requests]
    assert params == [{"format": "json"}, {"format": "tsv", "per_topic": "false"},
                      {"format": "json", "per_topic": "true"}]


def test_results_frame_without_pandas_says_how_to_get_it(make_client: Callable[..., Client],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    server = Recorder(httpx.Response(200, json=DOCUMENT))
    with pytest.raises(ImportError, match=r"pip install 'evalserve-client\[pandas\]'"):
        make_client(server).results_frame("job_1")
    assert server.requests == [], "nothing is fetched"


def test_results_frame_is_long_format(make_client: Callable[..., Client]) -> None:
    pytest.importorskip("pandas")
    server = Recorder(httpx.Response(200, json=DOCUMENT))
    frame = make_client(server).results_frame("job_1")
    assert list(frame.columns) == ["run", "measure", "topic", "value"]
    assert frame.values.tolist() == [["a", "AP", "1", 0.25], ["a", "AP", "2", 0.75], ["a", "AP", "all", 0.5]]
    assert server.requests[0].url.params["per_topic"] == "true"


# -- progress on a terminal ----------------------------------------------------------------------------------------


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_is_drawn_only_on_a_terminal() -> None:
    tty = Terminal()
    bar = TerminalProgress(tty)
    bar(job("running", 0.5, stage="evaluating run 1 of 2: a"))
    bar(job("succeeded", 1.0))
    bar.close()
    out = tty.getvalue()
    assert "\r[############------------]  50% running: evaluating run 1 of 2: a" in out
    assert "100% succeeded" in out and out.endswith("\n")

    pipe = io.StringIO()
    quiet = TerminalProgress(pipe)
    quiet(job("running", 0.5))
    quiet.close()
    assert pipe.getvalue() == ""


def test_a_single_run_and_space_separated_measures_are_accepted(make_client: Callable[..., Client],
                                                                 tmp_path: Path) -> None:
    path = tmp_path / "only.run"
    path.write_bytes(b"O")
    server = Recorder(job_response("queued", status=202))
    make_client(server).evaluate("col_1", str(path), "AP nDCG@10", wait=False)
    body = server.requests[0].content
    assert body.count(b'name="run"') == 1 and b'filename="only.run"' in body
    assert b'name="measures"\r\n\r\nAP nDCG@10\r\n' in body


# -- long-polls ----------------------------------------------------------------------------------------------------


def _tagged(state: str, tag: str, status: int = 200, progress: float = 0.0) -> httpx.Response:
    return httpx.Response(status, json=job(state, progress), headers={"ETag": tag})


def test_waiting_long_polls_with_the_last_etag_and_does_not_sleep(make_client: Callable[..., Client],
                                                                  fake_time: FakeTime) -> None:
    held = []

    def not_modified(request: httpx.Request) -> httpx.Response:
        fake_time.now += 20.0  # the server held it to its bound
        held.append(request)
        return httpx.Response(304, headers={"ETag": '"t1"'})

    server = Recorder(_tagged("queued", '"t0"', 202), _tagged("running", '"t1"', progress=0.5), not_modified,
                      _tagged("succeeded", '"t2"', progress=1.0))
    seen: list[dict[str, Any]] = []
    done = make_client(server).evaluate("col_1", [("r.run", b"x")], ["AP"], progress=seen.append)
    assert done["state"] == "succeeded" and [j["state"] for j in seen] == ["queued", "running", "succeeded"]
    gets = server.requests[1:]
    assert [r.headers["If-None-Match"] for r in gets] == ['"t0"', '"t1"', '"t1"']
    assert all(r.url.params["wait"] == "20" for r in gets)
    assert fake_time.sleeps == [] and len(held) == 1


def test_a_304_that_was_not_held_falls_back_to_pauses(make_client: Callable[..., Client],
                                                      fake_time: FakeTime) -> None:
    server = Recorder(_tagged("queued", '"t0"', 202), httpx.Response(304, headers={"ETag": '"t0"'}),
                      httpx.Response(304, headers={"ETag": '"t0"'}), _tagged("succeeded", '"t1"', progress=1.0))
    assert make_client(server).evaluate("col_1", [("r.run", b"x")], ["AP"])["state"] == "succeeded"
    assert fake_time.sleeps == pytest.approx([0.2, 0.3])  # no busy loop against a server that does not hold
