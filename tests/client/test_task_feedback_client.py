"""``evalserve-client task status --per-topic`` and ``Client.task_submission_per_topic`` against scripted answers
(``httpx.MockTransport``): the submission with its per-topic scores as JSON or as a topic-by-measure table, and a
task that gives no per-topic feedback refused in one line. The server's side is ``tests/service/
test_task_feedback.py``."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from evalserve_client import ApiError, Client
from evalserve_client import cli as client_cli
from evalserve_client.cli import main as client_main

from tests.client.test_client_logic import URL, Recorder, problem

SUBMISSION = {"id": "sub_1", "task": "task_1", "team": "team-bob", "phase": "test", "state": "succeeded",
              "run": {"name": "bm25.run"}, "description": "BM25", "scores": {"AP": 0.5, "P@10": 0.25}}
PER_TOPIC = {"submission": "sub_1", "task": "task_1", "team": "team-bob", "version": 1, "state": "succeeded",
             "measures": ["AP", "P@10"], "topics": ["151", "152"], "scores": {"AP": 0.5, "P@10": 0.25},
             "per_topic": {"AP": {"151": 0.75, "152": 0.25}, "P@10": {"151": 0.5, "152": 0.0}},
             "links": {}}


def _scripted(monkeypatch: pytest.MonkeyPatch, recorder: Recorder) -> None:
    """The command line's Client, talking to ``recorder`` instead of a server."""

    def make(server: str, token: str | None, **options: Any) -> Client:
        return Client(server, token, transport=httpx.MockTransport(recorder), **options)

    monkeypatch.setattr(client_cli, "Client", make)


def _status(*extra: str) -> int:
    return client_main(["task", "status", "task_1", "sub_1", "--server", URL, "--token", "es_abc_secret", *extra])


def test_the_sdk_reads_a_submissions_per_topic_scores() -> None:
    recorder = Recorder(httpx.Response(200, json=PER_TOPIC))
    with Client(URL, "es_abc_secret", transport=httpx.MockTransport(recorder)) as client:
        assert client.task_submission_per_topic("task_1", "sub_1") == PER_TOPIC
    assert recorder.requests[0].url.path == "/v1/tasks/task_1/submissions/sub_1/per-topic"


def test_status_per_topic_prints_the_submission_with_its_per_topic_scores(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    recorder = Recorder(httpx.Response(200, json=SUBMISSION), httpx.Response(200, json=PER_TOPIC))
    _scripted(monkeypatch, recorder)
    assert _status("--per-topic") == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == {**SUBMISSION, "topics": ["151", "152"], "per_topic": PER_TOPIC["per_topic"]}
    assert [r.url.path for r in recorder.requests] == ["/v1/tasks/task_1/submissions/sub_1",
                                                       "/v1/tasks/task_1/submissions/sub_1/per-topic"]


def test_status_per_topic_as_a_table_has_a_row_per_topic(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _scripted(monkeypatch, Recorder(httpx.Response(200, json=SUBMISSION), httpx.Response(200, json=PER_TOPIC)))
    assert _status("--per-topic", "--format", "table") == 0
    lines = capsys.readouterr().out.splitlines()
    at = lines.index("")
    assert dict(line.split(None, 1) for line in lines[:at])["state"] == "succeeded"
    assert [line.split() for line in lines[at + 1:]] == [["topic", "AP", "P@10"], ["151", "0.75", "0.5"],
                                                        ["152", "0.25", "0.0"], ["mean", "0.5", "0.25"]]


def test_without_per_topic_only_the_submission_is_read(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    recorder = Recorder(httpx.Response(200, json=SUBMISSION))
    _scripted(monkeypatch, recorder)
    assert _status() == 0
    assert json.loads(capsys.readouterr().out) == SUBMISSION and len(recorder.requests) == 1


def test_a_task_without_per_topic_feedback_is_refused_in_one_line(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    refused = problem(403, "per-topic-feedback-off", "task task_1 gives no per-topic feedback to participants")
    _scripted(monkeypatch, Recorder(httpx.Response(200, json=SUBMISSION), refused))
    assert _status("--per-topic") == 1
    err = capsys.readouterr().err
    assert "403 per-topic-feedback-off" in err and "no per-topic feedback" in err
    with pytest.raises(ApiError):
        recorder = Recorder(refused)
        with Client(URL, "es_abc_secret", transport=httpx.MockTransport(recorder)) as client:
            client.task_submission_per_topic("task_1", "sub_1")
