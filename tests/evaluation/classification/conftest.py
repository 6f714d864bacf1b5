"""The PyEvALL oracle for the classification tests (tests/pyevall_oracle.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.fixture(scope="session")
def pyevall() -> Callable[..., dict[str, Any]]:
    """``run_pyevall`` once PyEvALL's own venv is built; skips, saying why, where it cannot be (no PyPI)."""
    from tests.pyevall_oracle import PyEvALLUnavailable, pyevall_python, run_pyevall

    try:
        pyevall_python()
    except PyEvALLUnavailable as exc:
        pytest.skip(f"PyEvALL oracle unavailable: {exc}")
    return run_pyevall
