"""The layers import one way -- workers -> service -> evaluation (docs/architecture.md, "Layers"): the engine knows
nothing of the service, the service nothing of the workers, and importing the service builds no Celery app and
writes no file (the workers' app is built by ``workers.celery_app`` alone)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: package -> the top-level packages its modules must never import
FORBIDDEN = {
    "evaluation": {"service", "workers", "evalserve", "flask", "celery", "sqlalchemy"},
    "service": {"workers"},
}


def imported_packages(path: Path) -> set[str]:
    """Top-level names of every module ``path`` imports (at module level or inside functions)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_layer_never_imports_the_layers_above_it(package: str) -> None:
    wrong = {str(p.relative_to(ROOT)): sorted(imported_packages(p) & FORBIDDEN[package])
             for p in sorted((ROOT / package).rglob("*.py"))}
    assert {path: names for path, names in wrong.items() if names} == {}


def test_workers_hold_only_the_celery_app_and_the_task_declarations() -> None:
    assert sorted(p.name for p in (ROOT / "workers").glob("*.py")) == ["__init__.py", "celery_app.py", "tasks.py"]


def test_importing_the_service_builds_no_celery_app_and_writes_no_file(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    probe = ("import service.app, service.queue, service.webhooks, service.jobrun.runner, service.jobrun.split\n"
             "import sys\n"
             "from celery import _state\n"
             "print(len(list(_state._get_active_apps())))\n")
    env = {**os.environ, "EVALSERVE_DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT)}
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    out = subprocess.run([sys.executable, "-c", probe], env=env, cwd=tmp_path, capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "0"
    assert list(tmp_path.iterdir()) == []  # not even the data directory


def test_the_workers_app_is_built_from_the_service_factory(tmp_path: Path) -> None:
    env = {**os.environ, "EVALSERVE_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)}
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    probe = ("import workers.tasks as t\n"
             "print(t.app.main, sorted(n for n in t.app.tasks if n.startswith('evalserve.')))\n")
    out = subprocess.run([sys.executable, "-c", probe], env=env, cwd=tmp_path, capture_output=True, text=True,
                         check=True).stdout
    assert out.split(" ", 1) == ["evalserve",
                                 "['evalserve.deliver_webhook', 'evalserve.evaluate', 'evalserve.evaluate_part']\n"]


def test_the_distribution_installs_only_its_four_top_level_packages() -> None:
    """docs/architecture.md says why these names and no more: a new generic top-level name must be a decision."""
    text = (ROOT / "pyproject.toml").read_text()
    assert 'include = ["evaluation*", "evalserve*", "service*", "workers*"]' in text
    tops = sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").exists() and p.name != "tests")
    assert tops == ["evalserve", "evaluation", "service", "workers"]
