"""The architecture's rules, checked on the import graph (tests/import_graph.py; docs/architecture.md, "Layers and
rooms"): the engine knows nothing of the service, the service nothing of the workers; inside ``service/`` each room
imports only the rooms below it, only ``web`` touches Flask and its kin, and nothing imports ``web`` but the CLI.
No module imports itself back, directly or through others, string-named imports included. Each rule is also run on
the real graph with one violation added, to show it would catch one."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.import_graph import ROOT, Graph, Import, cycles, product_graph

#: the rooms of ``service/``, lowest first: a room imports only rooms of a lower rank (and itself)
ROOMS = {"core": 0, "store": 1, "broker": 2, "access": 2, "webhooks": 3, "inputs": 3, "jobs": 4, "jobrun": 5,
         "shared_tasks": 5, "web": 6}
#: what only the web room may import
WEB_LIBRARIES = {"flask", "werkzeug", "flask_smorest", "marshmallow", "webargs", "flask_limiter", "apispec", "a2wsgi"}
#: product package -> the packages its modules must never import
FORBIDDEN = {
    "evaluation": {"evalserve", "flask", "celery", "sqlalchemy", "kombu"},
    "evalserve.service": {"evalserve.workers", "evalserve.cli"},
}

Rule = Callable[[Graph], list[str]]


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if parts[:2] == ["evalserve", "service"] and len(parts) > 2 else None


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def rooms_import_downwards(graph: Graph) -> list[str]:
    wrong = []
    for module, imports in graph.imports.items():
        room = _room(module)
        if module == "evalserve.service":
            wrong += [f"{module} -> {i.module}" for i in imports]  # the package's face imports nothing
        if room is None:
            continue
        assert room in ROOMS, f"{module}: a room not in ROOMS (add it with its rank)"
        for imp in imports:
            for target in () if imp.type_only else graph.resolve(imp):
                other = _room(target)
                if other is not None and other != room and ROOMS[other] >= ROOMS[room]:
                    wrong.append(f"{module}:{imp.line} ({room}) -> {target} ({other})")
    return wrong


def only_web_imports_web_libraries(graph: Graph) -> list[str]:
    return [f"{module}:{imp.line} -> {imp.module}" for module, imports in graph.imports.items()
            if not _within(module, "evalserve.service.web") for imp in imports
            if imp.module.split(".")[0] in WEB_LIBRARIES]


def nothing_below_the_cli_imports_web(graph: Graph) -> list[str]:
    return [f"{module}:{imp.line} -> {target}" for module, imports in graph.imports.items()
            if not _within(module, "evalserve.service.web") and not _within(module, "evalserve.cli")
            for imp in imports for target in graph.resolve(imp) if _within(target, "evalserve.service.web")]


def layers_never_import_upwards(graph: Graph) -> list[str]:
    return [f"{module}:{imp.line} -> {imp.module}" for module, imports in graph.imports.items()
            for package, banned in FORBIDDEN.items() if _within(module, package)
            for imp in imports if not imp.type_only and any(_within(imp.module, b) for b in banned)]


def no_circles(graph: Graph) -> list[str]:
    return [" <-> ".join(component) for component in cycles(graph.arrows())]


def string_imports_resolve(graph: Graph) -> list[str]:
    """``OnDemand("m", "n")`` and ``import_module("m")`` name a product module that defines ``n``."""
    wrong = []
    for module, imports in graph.imports.items():
        for imp in imports:
            if not imp.by_string or not imp.module.startswith(("evaluation", "evalserve")):
                continue
            if imp.module not in graph.files:
                wrong.append(f"{module}:{imp.line} names no module {imp.module}")
                continue
            source = graph.files[imp.module].read_text()
            for name in imp.names:
                if f"def {name}(" not in source and f"class {name}" not in source and f"\n{name} =" not in source:
                    wrong.append(f"{module}:{imp.line} {imp.module} defines no {name}")
    return wrong


RULES: dict[str, tuple[Rule, str, str]] = {
    # rule: (check, a module, a module it must not import) -- the second pair is the violation the rule must catch
    "rooms": (rooms_import_downwards, "evalserve.service.store.db", "evalserve.service.jobs.lifecycle"),
    "web libraries": (only_web_imports_web_libraries, "evalserve.service.jobs.submit", "flask"),
    "web": (nothing_below_the_cli_imports_web, "evalserve.workers.tasks", "evalserve.service.web.app"),
    "upwards": (layers_never_import_upwards, "evaluation.report", "evalserve.service.store.models"),
    "circles": (no_circles, "evalserve.service.core.config", "evalserve.service.web.app"),
    "strings": (string_imports_resolve, "evalserve.service.jobs.kinds", "evalserve.service.jobrun.nowhere"),
}


@pytest.fixture(scope="module")
def graph() -> Graph:
    return product_graph()


@pytest.mark.parametrize("rule", sorted(RULES))
def test_the_product_keeps_the_rule(graph: Graph, rule: str) -> None:
    check = RULES[rule][0]
    assert check(graph) == []


@pytest.mark.parametrize("rule", sorted(RULES))
def test_the_rule_catches_a_violation(graph: Graph, rule: str) -> None:
    check, module, target = RULES[rule]
    bad = Graph(dict(graph.files), {m: list(i) for m, i in graph.imports.items()})
    bad.imports[module].append(Import(graph.files[module], 1, target, by_string=rule == "strings"))
    assert check(bad) != []


def test_the_graph_reads_every_kind_of_import(graph: Graph) -> None:
    """Function-level and string-named imports are arrows too (the runner reaches split inside a function)."""
    assert "evalserve.service.jobrun.split" in graph.arrows()["evalserve.workers.tasks"]
    strings = [i for imps in graph.imports.values() for i in imps if i.by_string]
    assert any(i.module == "evaluation.docsim.readers" for i in strings)


def test_the_service_root_holds_only_its_face() -> None:
    assert sorted(p.name for p in (ROOT / "service").glob("*.py")) == ["__init__.py"]
    assert {p.name for p in (ROOT / "service").iterdir() if p.is_dir() and p.name != "__pycache__"} == set(ROOMS)


def test_workers_hold_only_the_celery_app_and_the_task_declarations() -> None:
    assert sorted(p.name for p in (ROOT / "workers").glob("*.py")) == ["__init__.py", "celery_app.py", "tasks.py"]


def test_nothing_imports_the_folders_by_their_repository_names() -> None:
    """``service`` and ``workers`` are folders of the checkout; the code imports them as ``evalserve.service`` and
    ``evalserve.workers`` only (importing both names would load every module twice)."""
    wrong = []
    for folder in ("evaluation", "evalserve", "service", "workers", "tests", "bench", "scripts"):
        graph_files = [p for p in (ROOT / folder).rglob("*.py") if not p.is_symlink()
                       and not any(part in ("service", "workers") for part in p.relative_to(ROOT).parts[1:2]
                                   if folder == "evalserve")]
        for path in graph_files:
            for line_no, line in enumerate(path.read_text().splitlines(), 1):
                stripped = line.strip()
                if stripped.startswith(("import service", "from service", "import workers", "from workers")):
                    wrong.append(f"{path.relative_to(ROOT)}:{line_no}: {stripped}")
    assert wrong == []


def test_importing_the_service_builds_no_celery_app_and_writes_no_file(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    probe = ("import evalserve.service.web.app, evalserve.service.jobs.queue, evalserve.service.webhooks.delivery\n"
             "import evalserve.service.jobrun.runner, evalserve.service.jobrun.split\n"
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
    probe = ("import evalserve.workers.tasks as t\n"
             "print(t.app.main, sorted(n for n in t.app.tasks if n.startswith('evalserve.')))\n")
    out = subprocess.run([sys.executable, "-c", probe], env=env, cwd=tmp_path, capture_output=True, text=True,
                         check=True).stdout
    assert out.split(" ", 1) == ["evalserve",
                                 "['evalserve.build_report', 'evalserve.deliver_webhook', 'evalserve.draw_plots',"
                                 " 'evalserve.evaluate',"
                                 " 'evalserve.evaluate_part', 'evalserve.refresh_task']\n"]


def test_the_distribution_installs_only_evalserve_and_the_engine() -> None:
    """docs/architecture.md says why ``evaluation`` stays a top-level name; ``service`` and ``workers`` install
    inside ``evalserve`` (links in evalserve/), so no generic name lands in site-packages."""
    text = (ROOT / "pyproject.toml").read_text()
    assert 'include = ["evaluation*", "evalserve*"]' in text
    tops = sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").exists() and p.name != "tests")
    assert tops == ["evalserve", "evaluation", "service", "workers"]  # the folders; the last two install linked
    assert (ROOT / "evalserve" / "service").resolve() == ROOT / "service"
    assert (ROOT / "evalserve" / "workers").resolve() == ROOT / "workers"
    spec = importlib.util.find_spec("evalserve.service")
    assert spec is not None and spec.origin is not None
    assert Path(spec.origin).resolve() == ROOT / "service" / "__init__.py"
