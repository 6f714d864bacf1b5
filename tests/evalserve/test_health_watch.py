"""``evalserve.cli.health_watch``: what ``serve`` says on its terminal about /health -- a component that is down at
once, naming it and its setting (never a password), other problems only when two reads in a row show them, and
what is back."""

from __future__ import annotations

from pathlib import Path

from evalserve.cli.health_watch import HealthWatch, Probe, problems, redacted
from evalserve.service.core.config import Settings

URL = "http://127.0.0.1:8000"


def settings(tmp_path: Path, **env: str) -> Settings:
    return Settings.from_env({"EVALSERVE_DATA_DIR": str(tmp_path), **env})


def test_a_component_that_is_down_is_named_with_its_setting(tmp_path: Path) -> None:
    redis = settings(tmp_path, REDIS_URL="redis://:secret@10.0.0.5:6379/0")
    down = Probe(503, {"database": "ok", "broker": "unavailable: OperationalError",
                       "problems": ["broker unavailable: OperationalError"]})
    said = problems(down, redis, URL)
    assert list(said) == ["broker"]
    assert "REDIS_URL=redis://:***@10.0.0.5:6379/0" in said["broker"] and "secret" not in said["broker"]
    assert "(OperationalError)" in said["broker"] and "keeps accepting jobs" in said["broker"]
    embedded = problems(down, settings(tmp_path), URL)["broker"]
    assert embedded.startswith(f"the embedded broker ({tmp_path / 'broker.db'}) is unavailable")
    assert problems(Probe(None), redis, URL) == {"api": f"the API does not answer on {URL}/health"}
    assert redacted("postgresql://u:pw@db/x") == "postgresql://u:***@db/x"


def test_the_watch_says_what_is_down_and_what_is_back(tmp_path: Path) -> None:
    said: list[str] = []
    watch = HealthWatch(URL, settings(tmp_path), said.append, shown={})
    broker = {"broker": "the broker is unavailable"}
    slow = {"no worker has sent a heartbeat": "/health is degraded: no worker has sent a heartbeat"}
    watch.step({**broker, **slow}, before={})
    assert said == ["the broker is unavailable"]  # at once; the other problem waits for a second read
    watch.step({**broker, **slow}, before={**broker, **slow})
    assert said[-1] == "/health is degraded: no worker has sent a heartbeat"
    watch.step({}, before={**broker, **slow})
    assert said[-2:] == [f"the embedded broker ({tmp_path / 'broker.db'}) answers again: jobs that waited are"
                         " published and run", "/health no longer says: no worker has sent a heartbeat"]
    watch.step({}, before={})
    assert len(said) == 4
