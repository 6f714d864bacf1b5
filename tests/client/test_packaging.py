"""The client stays a small, separate distribution: httpx is its only dependency, importing it loads nothing of
the engine or the service, and CI installs it with the README's test command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "python"


def test_httpx_is_the_only_dependency() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((CLIENT / "pyproject.toml").read_text())["project"]
    assert project["name"] == "evalserve-client"
    assert [d.split(">")[0].split("=")[0] for d in project["dependencies"]] == ["httpx"]
    assert project["scripts"] == {"evalserve-client": "evalserve_client.cli:run"}


def test_importing_the_client_loads_neither_the_engine_nor_the_service() -> None:
    code = ("import sys, evalserve_client, evalserve_client.cli; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'evaluation', 'evalserve', 'service', 'workers',"
            " 'numpy', 'scipy', 'flask', 'sqlalchemy', 'celery', 'pandas'}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=CLIENT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_ci_runs_the_readme_test_command_which_installs_the_client() -> None:
    readme = (ROOT / "README.md").read_text().splitlines()
    block = readme[readme.index("```bash") + 1:]
    command = block[1].split("#")[0].strip()
    assert "-e ./clients/python" in command
    assert (ROOT / ".ci" / "run").read_text().rstrip().splitlines()[-1] == command
