"""The command line's answers that need no server: unreadable local files (exit 2, as ``evalserve evaluate``
reports them, before anything is sent), an unreachable server (exit 1, one line), usage errors (exit 2)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from evalserve_client.cli import main as client_main

from evalserve.cli.main import main as evalserve_main
from tests.service.live import free_port


def test_unreadable_files_are_reported_like_evalserve_before_anything_is_sent(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--qrels", str(tmp_path / "missing.qrels"), "--run", str(tmp_path), "--run", str(tmp_path / "gone.run")]
    assert evalserve_main(["evaluate", *args]) == 2
    expected = capsys.readouterr().err
    unreachable = f"http://127.0.0.1:{free_port()}"
    assert client_main(["submit", "--server", unreachable, "--token", "es_a_b", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == expected
    assert err.splitlines()[0] == f"{tmp_path / 'missing.qrels'}: error: no such file: {tmp_path / 'missing.qrels'}" \
        " [file-not-found]"


def test_an_unreachable_server_is_one_clear_line(capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    url = f"http://127.0.0.1:{free_port()}"
    assert client_main(["status", "job_1", "--server", url, "--token", "es_a_b"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1
    assert err.startswith(f"evalserve-client: cannot reach the evalserve server at {url} (4 attempts): ")
    assert slept == [0.5, 1.0, 2.0]


@pytest.mark.parametrize(("argv", "message"), [
    (["status", "job_1", "--token", "t"], "no server: give --server URL or set EVALSERVE_URL"),
    (["status", "job_1", "--server", "localhost:8000", "--token", "t"], "must be an http:// or https:// URL"),
    (["status", "job_1", "--server", "http://h"], "no API token: give --token es_... or set EVALSERVE_TOKEN"),
    (["status", "job_1", "--server", "http://h", "--token", "es_a_b\ntoken id a"],
     "is not a valid API token: it has a line break"),
    (["submit", "--server", "http://h", "--token", "t", "--collection", "col_1", "--intent-weights", "w",
      "--run", "r"], "--intent-weights belongs to a new collection"),
    (["submit", "--server", "http://h", "--token", "t", "--run", "r"], "one of the arguments --qrels --collection"),
    (["submit", "--server", "http://h", "--token", "t", "--qrels", "q", "--run", "r", "--format", "xml"],
     "invalid choice: 'xml'"),
])
def test_usage_errors_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str],
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALSERVE_URL", raising=False)
    monkeypatch.delenv("EVALSERVE_TOKEN", raising=False)
    with pytest.raises(SystemExit) as exited:
        client_main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert client_main([]) == 2
    assert "submit" in capsys.readouterr().err
