"""Plots come with every install (issue 17): matplotlib is one of the project's own dependencies -- what a plain
``pip install .`` (and the Docker image, which runs exactly that) installs -- pinned in constraints.txt like the
rest, and still imported only when a plot is drawn (the API and workers start without it:
tests/evalserve/test_startup_imports.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[2]


def test_matplotlib_is_a_core_dependency_and_pinned() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0].lower() for requirement in project["dependencies"]}
    assert "matplotlib" in names
    assert re.search(r"^matplotlib==\S+$", (ROOT / "constraints.txt").read_text(), re.M)


def test_the_image_installs_the_project_with_its_dependencies() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"pip install --constraint=constraints.txt \.(\s|$)", dockerfile)
