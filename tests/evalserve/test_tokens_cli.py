"""``evalserve tokens``: stdout carries only what a script captures (``TOKEN=$(evalserve tokens create ...)``);
notices and errors go to stderr. Runs on the embedded SQLite default in a temporary data directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalserve.cli.main import main


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("EVALSERVE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    return tmp_path


def test_create_prints_the_token_alone_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tokens", "create", "--name", "ann", "--scopes", "read,submit"]) == 0
    out, err = capsys.readouterr()
    assert out.count("\n") == 1 and out.startswith("es_") and " " not in out.strip()
    token_id = out.split("_")[1]
    assert "store it now" in err and token_id in err and "read submit" in err
    assert main(["tokens", "list"]) == 0
    assert f"{token_id}\tread submit\tactive\tann" in capsys.readouterr().out


def test_errors_go_to_stderr_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tokens", "create", "--name", "ann", "--scopes", "read,fly"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "fly" in err
    assert main(["tokens", "revoke", "0123456789abcdef"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "no token 0123456789abcdef" in err


def test_revoke_confirms_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tokens", "create", "--name", "ann"]) == 0
    token_id = capsys.readouterr().out.split("_")[1]
    assert main(["tokens", "revoke", token_id]) == 0
    assert capsys.readouterr().out == f"revoked {token_id}\n"
    assert main(["tokens", "list"]) == 0
    assert "\trevoked\t" in capsys.readouterr().out


def test_create_says_which_database_it_wrote_to_and_warns_when_it_made_a_new_one(
        data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without the server's EVALSERVE_DATA_DIR a token lands in a new, empty database the server never reads."""
    database = data_dir / "evalserve.db"
    assert main(["tokens", "create", "--name", "ann"]) == 0
    err = capsys.readouterr().err
    assert f"written to the database {database}" in err
    assert "warning: there was no evalserve database" in err and "EVALSERVE_DATA_DIR" in err
    assert main(["tokens", "create", "--name", "ben"]) == 0  # the database is there now: no warning
    err = capsys.readouterr().err
    assert f"written to the database {database}" in err and "warning" not in err


def test_each_token_gets_a_new_user_unless_given_one(capsys: pytest.CaptureFixture[str]) -> None:
    """A user's tokens share one budget: ``--user`` gives a token to an existing user, ``--user-name`` names the
    new one (default: the token's name)."""
    assert main(["tokens", "create", "--name", "ann laptop", "--user-name", "ann"]) == 0
    err = capsys.readouterr().err
    user = err.split("user ", 1)[1].split(":", 1)[0]
    assert user.startswith("user_")
    assert main(["tokens", "create", "--name", "ann ci", "--user", user]) == 0
    assert f"user {user}:" in capsys.readouterr().err
    assert main(["tokens", "create", "--name", "ben"]) == 0
    capsys.readouterr()
    assert main(["tokens", "list"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    users = {row[3]: row[4] for row in rows}
    assert users["ann laptop"] == users["ann ci"] == user != users["ben"]
    assert main(["tokens", "create", "--name", "x", "--user", "user_nobody"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "no user user_nobody" in err
