"""``Client.report`` against scripted answers (``httpx.MockTransport``): it waits while a worker builds the
end-of-task report (``202`` with ``Retry-After``), saves the file it is given, and refuses an unknown format
before asking. The server's side is ``tests/service/test_task_report.py``."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from evalserve_client import ApiError, Client

from tests.client.test_client_logic import URL, FakeTime, Recorder, problem

BUILDING = httpx.Response(202, headers={"Retry-After": "2", "Content-Type": "application/json"},
                          content=json.dumps({"state": "building", "detail": "being built"}).encode())
ZIP = b"PK\x03\x04 a zip"


def test_the_sdk_waits_for_the_report_and_saves_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder(BUILDING, BUILDING, httpx.Response(200, headers={"Content-Type": "application/zip"},
                                                           content=ZIP))
    fake = FakeTime()
    with Client(URL, "es_abc_secret", transport=httpx.MockTransport(recorder)) as client:
        client._sleep = fake.sleep
        saved = client.report("task_1", path=tmp_path / "final.zip", phase="test", version=2)
    assert saved == tmp_path / "final.zip" and saved.read_bytes() == ZIP
    assert fake.sleeps == [2.0, 2.0]
    asked = f"{URL}/v1/tasks/task_1/report?format=zip&phase=test&version=2"
    assert [str(r.url) for r in recorder.requests] == [asked] * 3
    monkeypatch.chdir(tmp_path)
    page = Recorder(httpx.Response(200, headers={"Content-Type": "text/html"}, content=b"<html></html>"))
    with Client(URL, "es_abc_secret", transport=httpx.MockTransport(page)) as client:
        assert client.report("task_1", format="html") == Path("task_1-report.html")
    assert (tmp_path / "task_1-report.html").read_bytes() == b"<html></html>"


def test_the_sdk_refuses_an_unknown_format_and_reports_a_refusal(tmp_path: Path) -> None:
    recorder = Recorder(problem(403, "organisers-only", "only the organisers of task task_1 may do this"))
    with Client(URL, "es_abc_secret", transport=httpx.MockTransport(recorder)) as client:
        with pytest.raises(ValueError, match="unknown report format 'pdf'"):
            client.report("task_1", format="pdf")
        assert recorder.requests == []
        with pytest.raises(ApiError) as refused:
            client.report("task_1", path=tmp_path / "r.zip")
    assert refused.value.status == 403 and refused.value.code == "organisers-only"
    assert not (tmp_path / "r.zip").exists()


def test_the_sdk_gives_up_after_its_timeout(tmp_path: Path) -> None:
    with Client(URL, "es_abc_secret", transport=httpx.MockTransport(Recorder(BUILDING))) as client:
        client._sleep = lambda seconds: None
        with pytest.raises(TimeoutError, match="still being built"):
            client.report("task_1", path=tmp_path / "r.zip", timeout=0)
