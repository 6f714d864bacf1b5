"""What starting a command imports (structural, never timed): ``evalserve --version`` and ``--help`` load no
subcommand, no numpy and no service; ``evaluate`` loads the engine but no scipy, pandas or web stack; the engine
package and ``evalserve.service.core.config`` stay light. Each check runs a fresh interpreter, as a user's shell does.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evalserve.cli.commands import COMMANDS, requested
from evalserve.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "evalserve" / "samples"
#: libraries a plain evaluation never needs (scipy: significance tests only; the rest: the service, plots, SDK)
HEAVY = ("scipy", "pandas", "matplotlib", "httpx", "flask", "flask_smorest", "celery", "kombu", "sqlalchemy",
         "alembic", "marshmallow", "yaml")

#: runs ``main(argv)`` and writes the exit code and every imported module's name to the file named first
PROBE = """
import contextlib, io, json, sys
from evalserve.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    try:
        code = main(sys.argv[2:])
    except SystemExit as exc:
        code = exc.code
with open(sys.argv[1], "w") as f:
    json.dump({"code": code, "modules": sorted(sys.modules), "stdout": out.getvalue()}, f)
"""


def run_cli(tmp_path: Path, *argv: str) -> dict[str, Any]:
    """``evalserve ARGV`` in a fresh interpreter: its exit code, standard output and imported modules."""
    result = tmp_path / "probe.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", PROBE, str(result), *argv], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(result.read_text())
    return found


def imported_by(tmp_path: Path, statement: str) -> set[str]:
    """The modules loaded by running ``statement`` in a fresh interpreter."""
    result = tmp_path / "modules.json"
    code = f"import json, sys\n{statement}\njson.dump(sorted(sys.modules), open({str(result)!r}, 'w'))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return set(json.loads(result.read_text()))


def loaded(modules: list[str] | set[str], *packages: str) -> list[str]:
    """The top-level packages of ``packages`` that are among ``modules``."""
    return [p for p in packages if p in modules]


@pytest.mark.parametrize("argv", [["--version"], ["--help"], []], ids=["version", "help", "no-command"])
def test_version_and_help_load_no_subcommand_numpy_or_service(tmp_path: Path, argv: list[str]) -> None:
    found = run_cli(tmp_path, *argv)
    assert found["code"] == (2 if not argv else 0)
    modules = found["modules"]
    assert loaded(modules, "numpy", *HEAVY) == []
    subcommands = sorted({f"evalserve.cli.{c.module}" for c in COMMANDS} & set(modules))
    assert subcommands == [], "only the subcommand being run is imported"
    ours = [m for m in modules if m.startswith(("evaluation.", "evalserve.service", "evalserve.workers"))]
    assert ours == ["evaluation.problems"] + (["evaluation.version"] if argv == ["--version"] else [])
    if argv == ["--version"]:
        assert found["stdout"].startswith("evalserve ")


def test_evaluate_loads_the_engine_but_no_scipy_pandas_or_web_stack(tmp_path: Path) -> None:
    found = run_cli(tmp_path, "evaluate", "--qrels", str(SAMPLES / "sample.qrels"), "--run", str(SAMPLES / "bm25.run"),
                    "--run", str(SAMPLES / "neural.run"), "-m", "P@10", "AP", "nDCG@10", "RR", "Rprec")
    assert found["code"] == 0
    assert json.loads(found["stdout"])["runs"]["bm25.run"]["AP"]["mean"] > 0
    modules = found["modules"]
    assert "numpy" in modules and "evalserve.cli.evaluate" in modules
    assert loaded(modules, *HEAVY) == []
    others = {f"evalserve.cli.{c.module}" for c in COMMANDS} - {"evalserve.cli.evaluate"}
    assert sorted(others & set(modules)) == []
    assert family_code(modules) == ["evaluation.measures.adhoc"], "only the families of the measures asked for"
    assert "numpy.ma" not in modules, "plain np.unique imports numpy.ma: not on the reading path"


#: the code an ad hoc evaluation never needs: the other measure families and what they are built on
FAMILY_CODE = ("evaluation.hierarchy", "evaluation.preference", "evaluation.docsim", "evaluation.measures.adhoc",
               "evaluation.measures.diversity", "evaluation.measures.similarity", "evaluation.measures.scored",
               "evaluation.measures.hierarchical", "evaluation.measures.preference")


def family_code(modules: list[str] | set[str]) -> list[str]:
    """Which of ``FAMILY_CODE``'s packages ``modules`` imported (a package counts if any of its modules did)."""
    return [p for p in FAMILY_CODE if any(m == p or m.startswith(p + ".") for m in modules)]


def test_a_diversity_measure_loads_the_diversity_family_and_no_other(tmp_path: Path) -> None:
    found = run_cli(tmp_path, "evaluate", "--qrels", str(SAMPLES / "sample.qrels"), "--run", str(SAMPLES / "bm25.run"),
                    "-m", "alpha_nDCG@10", "P@10")
    assert found["code"] == 0
    assert json.loads(found["stdout"])["runs"]["bm25.run"]["alpha_nDCG@10"]["mean"] > 0
    assert family_code(found["modules"]) == ["evaluation.measures.adhoc", "evaluation.measures.diversity"]


def test_listing_the_measures_loads_every_family(tmp_path: Path) -> None:
    found = run_cli(tmp_path, "measures", "--format", "json")
    assert set(family_code(found["modules"])) >= {p for p in FAMILY_CODE if p.startswith("evaluation.measures.")}


@pytest.mark.parametrize("argv", [["measures", "AP"], ["measures", "--format", "json"], ["demo"]])
def test_catalogue_and_demo_load_no_scipy_or_web_stack(tmp_path: Path, argv: list[str]) -> None:
    found = run_cli(tmp_path, *argv)
    assert found["code"] == 0 and found["stdout"]
    assert loaded(found["modules"], *HEAVY) == []


def test_meta_loads_scipy_only_for_the_methods_that_use_it(tmp_path: Path) -> None:
    """Building ``evalserve meta``'s parser (every method's options) needs no scipy; a t-test does."""
    assert loaded(run_cli(tmp_path, "meta", "significance", "--help")["modules"], *HEAVY) == []
    assert "scipy" in imported_by(tmp_path, "from evaluation.meta.significance import paired_t_test\n"
                                            "paired_t_test([[0.1, 0.3, 0.2]])")


@pytest.mark.parametrize("statement", [
    "import evaluation",
    "from evaluation import evaluate, iter_calc, InputError, MeasureError, NothingScored",
    "import evaluation.api, evaluation.pipeline, evaluation.measures.registry, evaluation.formats",
    "import evaluation.meta, evaluation.meta.methods, evaluation.leaderboard.ranking",
])
def test_the_engine_imports_no_scipy_or_pandas(tmp_path: Path, statement: str) -> None:
    modules = imported_by(tmp_path, statement)
    assert loaded(modules, "scipy", "pandas", "matplotlib", "httpx", "flask", "celery", "sqlalchemy") == []
    if statement == "import evaluation":
        assert "numpy" not in modules, "the package's names are imported on first use"


def test_service_config_imports_no_httpx_or_web_stack(tmp_path: Path) -> None:
    modules = imported_by(tmp_path, "from evalserve.service.core.config import Settings\nSettings.from_env({})")
    assert loaded(modules, "httpx", "flask", "celery", "sqlalchemy", "scipy") == []


@pytest.mark.parametrize("module", ["evalserve.service.web.app", "evalserve.workers.tasks"])
def test_the_api_and_the_workers_start_without_scipy(tmp_path: Path, module: str) -> None:
    """scipy is loaded by the first significance test a meta job runs, not by every API or worker process."""
    assert loaded(imported_by(tmp_path, f"import {module}"), "scipy", "pandas", "matplotlib") == []


def test_the_client_cli_version_loads_httpx_but_nothing_heavier(tmp_path: Path) -> None:
    modules = imported_by(tmp_path, "from evalserve_client.cli import main\n"
                                    "try:\n    main(['--version'])\nexcept SystemExit:\n    pass")
    assert loaded(modules, "numpy", "evaluation", "evalserve", "flask", "celery", "sqlalchemy", "pandas") == []


def test_the_engine_package_exports_every_name_it_lists() -> None:
    import evaluation

    for name in evaluation.__all__:
        assert getattr(evaluation, name) is not None, name
    assert set(dir(evaluation)) >= set(evaluation.__all__)
    with pytest.raises(AttributeError):
        _ = evaluation.no_such_name  # type: ignore[attr-defined]


# --- the parser: the light one (--help) says what the full one says ------------------------------------------


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(actions[0].choices)


def test_the_light_top_level_help_is_the_full_parsers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    assert build_parser(()).format_help() == build_parser().format_help()


@pytest.mark.parametrize("name", [c.name for c in COMMANDS])
def test_a_subcommand_alone_has_the_parser_it_has_among_all(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    alone, among_all = _subparsers(build_parser((name,)))[name], _subparsers(build_parser())[name]
    assert alone.format_help() == among_all.format_help()


@pytest.mark.parametrize(("argv", "command"), [
    ([], None), (["--version"], None), (["evaluate", "--qrels", "q"], "evaluate"), (["-h", "meta"], "meta"),
    (["--", "worker"], "worker"), (["tokens", "create", "--name", "x"], "tokens"),
])
def test_the_requested_subcommand_is_the_first_word_that_is_not_an_option(argv: list[str],
                                                                         command: str | None) -> None:
    assert requested(argv) == command
