"""Shared test configuration: where the read-only real data lives.

The data sits next to the checkout, in ``<repo>/../shared/data`` (one folder per data set, each with a README);
set ``EVALSERVE_SHARED_DATA`` to use another location. Tests that need it take the ``shared_data`` fixture and
are skipped, with the reason, when it is absent.
"""

from __future__ import annotations

import os
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
