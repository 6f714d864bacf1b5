"""Client tests reuse the service's real deployments: ``live`` (gunicorn + a Celery worker, on the embedded default
and on PostgreSQL + Redis) and ``stack`` (a deployment set up but not started)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.service.conftest import live, stack  # noqa: F401


@pytest.fixture(scope="module")
def web2012(shared_data: Path) -> dict[str, Path]:
    """TREC Web 2012 diversity qrels and two real runs (one gzip-compressed)."""
    runs = shared_data / "trec-web-2012-runs" / "runs"
    return {"qrels": shared_data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt",
            "run1": runs / "ql-results-cata-filtered.txt", "run2": runs / "ql-results-catb.txt.gz"}
