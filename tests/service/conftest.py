"""Fixtures for service tests: ``live`` is a running deployment (API + one worker), parametrised over the
embedded default and PostgreSQL + Redis; ``stack`` builds one without starting it (fault tests)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.service.live import LiveService, postgres_available, postgres_database, redis_available, service_env

BACKENDS = ["embedded", "redis-postgres"]


def _skip_unavailable(backend: str) -> None:
    if backend == "redis-postgres" and not (postgres_available() and redis_available()):
        pytest.skip("PostgreSQL and Redis on localhost are needed (they run on the CI machine)")


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Callable[..., LiveService]]:
    """Make a deployment for a backend (set up, not started); everything is stopped and removed afterwards."""
    with ExitStack() as cleanup:

        def make(backend: str, **env: str) -> LiveService:
            _skip_unavailable(backend)
            url = cleanup.enter_context(postgres_database()) if backend == "redis-postgres" else None
            home = tmp_path / f"{backend}-{len(list(tmp_path.iterdir()))}"
            home.mkdir()
            service = LiveService(service_env(home, backend, url, **env), logs=home)
            service.setup()
            cleanup.callback(service.stop)
            return service

        yield make


@pytest.fixture(scope="module", params=BACKENDS)
def live(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    """A running deployment shared by a module's tests (one per backend); a module's ``LIVE_ENV`` dict adds to
    its environment (e.g. ``EVALSERVE_WEBHOOK_ALLOW_NETWORKS`` for a webhook receiver on 127.0.0.1)."""
    backend = str(request.param)
    _skip_unavailable(backend)
    home = tmp_path_factory.mktemp(backend)
    with ExitStack() as cleanup:
        url = cleanup.enter_context(postgres_database()) if backend == "redis-postgres" else None
        extra = dict(getattr(request.module, "LIVE_ENV", {}))
        service = LiveService(service_env(home, backend, url, **extra), logs=home)
        service.setup()
        cleanup.callback(service.stop)
        service.start_api()
        service.start_worker()
        yield service
