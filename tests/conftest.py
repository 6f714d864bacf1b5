"""Shared test configuration: where the read-only real data lives.

The data sits next to the checkout, in ``<repo>/../shared/data`` (one folder per data set, each with a README);
set ``EVALSERVE_SHARED_DATA`` to use another location. Tests that need it take the ``shared_data`` fixture and
are skipped, with the reason, when it is absent.
"""

from __future__ import annotations

import compileall
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ENV_VAR = "EVALSERVE_SHARED_DATA"
# No test hands its commands to a warm engine (nor leaves one running) unless it asks (test_warm_engine.py)
os.environ["EVALSERVE_WARM"] = "0"


def shared_data_dir() -> Path:
    """The shared data directory (it may not exist): ``$EVALSERVE_SHARED_DATA`` or ``<repo>/../shared/data``."""
    override = os.environ.get(ENV_VAR)
    return Path(override).expanduser() if override else REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared real-data directory; skips the test when it is missing."""
    path = shared_data_dir()
    if not path.is_dir():
        pytest.skip(
            f"shared evaluation data not found at {path} "
            f"(set {ENV_VAR} to the directory holding trec_eval-test/, trec-web-2012-runs/, ...)"
        )
    return path


@pytest.fixture(scope="session")
def shared_file(shared_data: Path):  # type: ignore[no-untyped-def]
    """``shared_file("trec_eval-test", "qrels.test")``: a path inside the shared data; skips if it is missing."""

    def locate(*parts: str) -> Path:
        path = shared_data.joinpath(*parts)
        if not path.exists():
            pytest.skip(f"shared data file {path} is missing")
        return path

    return locate


@pytest.fixture(scope="session")
def oracles():  # type: ignore[no-untyped-def]
    """The real trec_eval 10.0, ndeval and gdeval, built from ``../shared/oracles`` (tests/oracle_tools.py);
    skips, saying why, where they cannot be built."""
    from tests.oracle_tools import OracleUnavailable, oracle_tools

    try:
        return oracle_tools()
    except OracleUnavailable as exc:
        pytest.skip(str(exc))



def pytest_sessionstart(session: pytest.Session) -> None:
    """Under ``PYTHONDONTWRITEBYTECODE`` (this machine sets it) every Python process the suite starts -- hundreds of
    gunicorn, Celery and ``evalserve`` processes -- would compile the project from source again; compile it once,
    before the tests, as Python does on a first import elsewhere (the controller only, under xdist)."""
    if sys.dont_write_bytecode and not hasattr(session.config, "workerinput"):
        for package in ("evaluation", "service", "workers", "evalserve", "clients/python"):
            compileall.compile_dir(REPO / package, quiet=2)


# ---- running the suite in parallel (pytest-xdist; pyproject.toml's addopts: -n auto --dist loadgroup) -------------

#: test modules that run first: the longest single chains of the suite (tests/deploy/test_image.py installs podman
#: and builds the image), so that everything else runs beside them instead of after
FIRST = ("tests/deploy/test_image.py",)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: two workers per core. A test here mostly waits on the processes it starts (an API, workers,
    the image build), so one worker per core leaves the cores half idle; measured on 2 cores, 4 workers ran the
    suite in 12 min 25 s where 2 took 13 min 14 s. ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides when set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return 2 * cores


def _shared_instances(item: pytest.Item) -> list[str]:
    """The costly fixture instances ``item`` shares with other tests: those of module, class, package or session
    scope that the test module defines itself or that are parametrised (``live``: one deployment per backend),
    each named by its module, its name and the parameters it was made with (its own and those of the fixtures it
    depends on). Session fixtures of the conftest files and helper modules (``chromium``, ``oracles``,
    ``shared_data``) are left out: each worker sets them up once, as a serial run does."""
    module = item.nodeid.split("::", 1)[0]
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    indices: dict[str, int] = getattr(getattr(item, "callspec", None), "indices", {})

    def closure(name: str, seen: set[str]) -> set[str]:
        for arg in getattr((info.name2fixturedefs.get(name) or [None])[-1], "argnames", ()):
            if arg not in seen:
                seen.add(arg)
                closure(arg, seen)
        return seen

    shared = []
    for name in info.names_closure:
        defs = info.name2fixturedefs.get(name)
        if not defs or defs[-1].scope == "function":
            continue
        own = getattr(defs[-1].func, "__module__", None) == getattr(item.module, "__name__", "")
        if not own and defs[-1].params is None:
            continue
        params = ",".join(f"{arg}={indices[arg]}" for arg in sorted(closure(name, {name})) if arg in indices)
        shared.append(f"{module}::{name}({params})")
    return shared


def _shared_setup_groups(items: list[pytest.Item]) -> dict[pytest.Item, str]:
    """xdist groups that keep every shared fixture instance on one worker (set up once, as in a serial run): tests
    sharing an instance, directly or through another test, form one group. Tests sharing nothing get no group
    and go to whichever worker is free; session fixtures from conftest files are set up once per worker."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    uses = {item: _shared_instances(item) for item in items}
    for keys in uses.values():
        for key in keys:
            parent[root(key)] = root(keys[0])
    members: dict[str, list[str]] = {}
    for key in list(parent):
        members.setdefault(root(key), []).append(key)
    # named by the component's first instance; xdist finds the group after the last "@" only if no "]" follows
    names = {top: min(keys).replace("@", "_").replace("]", "_") for top, keys in members.items()}
    return {item: names[root(keys[0])] for item, keys in uses.items() if keys}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--dist loadgroup`` tests that share a costly fixture (a running deployment, the built image,
    generated inputs) stay on one worker (:func:`_shared_setup_groups`); every other test goes to whichever worker
    is free. Longest first: the modules of :data:`FIRST`, then the groups, then the single tests (which even out
    the workers' ends), each in collection order; the same order on every worker (xdist checks that all workers
    collected the same list)."""
    groups = _shared_setup_groups(items)
    for item, group in groups.items():
        item.add_marker(pytest.mark.xdist_group(group))
    first = {name: rank for rank, name in enumerate(FIRST)}

    def rank(item: pytest.Item) -> tuple[int, int]:
        module = item.nodeid.split("::", 1)[0]
        return (0, first[module]) if module in first else (1 if item in groups else 2, 0)

    items.sort(key=rank)
