"""What ``evalserve serve`` tells its terminal about the deployment's health. At start it waits for the API's
first answer on ``/health`` -- whatever the answer says: a 503 naming a component that is down comes from an API
that is up -- and never gives up on an API process that runs (issue 29: a working API was stopped after 60 s
because the broker was down). Afterwards a thread reads ``/health`` every few seconds and says what is down, and
when it is back, naming the component and the setting that points at it."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from evalserve.service.core.config import Settings
from evalserve.supervisor import Child, Supervisor

#: how often the watch reads /health once the API is up
WATCH_SECONDS = 5.0
#: the components whose absence makes /health answer 503, as the report names them
COMPONENTS = ("database", "broker")


@dataclass(frozen=True)
class Probe:
    """One ``GET /health``: the HTTP status (None: no answer) and the report (None: not a JSON object)."""

    status: int | None
    report: dict[str, Any] | None = field(default=None)

    @property
    def answered(self) -> bool:
        return self.status is not None


def probe_health(url: str, timeout: float = 5.0) -> Probe:
    """Read ``url``/health once."""
    try:
        with urllib.request.urlopen(url + "/health", timeout=timeout) as response:
            status, body = response.status, response.read(65536)
    except urllib.error.HTTPError as answer:  # a 503 is an answer
        status, body = answer.code, answer.read(65536)
    except (OSError, ValueError):
        return Probe(None)
    try:
        report = json.loads(body)
    except ValueError:
        report = None
    return Probe(status, report if isinstance(report, dict) else None)


def redacted(url: str) -> str:
    """A database or broker URL without its password."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = f"{parts.username}:***@" if parts.username else ":***@"
    return urlunsplit(parts._replace(netloc=user + netloc))


def component_names(settings: Settings) -> dict[str, str]:
    """Each component as the operator configured it: what it is and the setting that points at it."""
    broker = (f"the embedded broker ({settings.broker_url.removeprefix('sqlite:///')})" if settings.embedded_broker
              else f"the broker (REDIS_URL={redacted(settings.broker_url)})")
    database = (f"the embedded database ({settings.database_url.removeprefix('sqlite:///')})"
                if settings.database_url.startswith("sqlite") else
                f"the database (DATABASE_URL={redacted(settings.database_url)})")
    return {"database": database, "broker": broker}


#: what the service does while a component is down
CONSEQUENCES = {
    "database": "requests that need it fail (5xx) until it is back; nothing accepted is lost",
    "broker": "the API keeps accepting jobs; they wait in the database and run when the broker is back",
}


def problems(probe: Probe, settings: Settings, url: str) -> dict[str, str]:
    """What is wrong, by key (a component's name, or the problem's own text), as ``serve`` says it."""
    if not probe.answered:
        return {"api": f"the API does not answer on {url}/health"}
    report = probe.report
    if report is None:
        return {"api": f"the API answers /health with {probe.status} and no report"}
    names = component_names(settings)
    found = {name: f"{names[name]} is unavailable ({str(report.get(name)).removeprefix('unavailable: ')}):"
                   f" {CONSEQUENCES[name]}" for name in COMPONENTS if report.get(name, "ok") != "ok"}
    for problem in report.get("problems") or []:
        if not any(str(problem).startswith(name + " ") for name in COMPONENTS):
            found[str(problem)] = f"/health is degraded: {problem}"
    return found


def recovered(key: str, settings: Settings) -> str:
    """What ``serve`` says when the problem under ``key`` is over."""
    if key in COMPONENTS:
        return f"{component_names(settings)[key]} answers again" + (
            ": jobs that waited are published and run" if key == "broker" else "")
    if key == "api":
        return "the API answers /health again"
    return f"/health no longer says: {key}"


def wait_for_api(url: str, supervisor: Supervisor, api: Child, warn_after: float,
                 say: Callable[[str], None], hint: Callable[[], str] = str) -> Probe | None:
    """Wait for the API's first answer on /health, restarting workers that die meanwhile; once, after
    ``warn_after`` s without one, say so (with ``hint()``: where its messages are) and keep waiting while the API
    process runs. None when the API process exits first (e.g. it cannot import the app) or a stop signal comes."""
    started, warned = time.monotonic(), False
    while not supervisor.stopping:
        if api.proc is not None and api.proc.poll() is not None:
            api.exits.append(api.proc.returncode)
            return None
        supervisor.check()
        probe = probe_health(url)  # longer than /health's own checks (2 s each): a slow 503 is an answer too
        if probe.answered:
            return probe
        if not warned and time.monotonic() - started >= warn_after:
            say(f"the API has not answered on {url} after {warn_after:g} s (EVALSERVE_SERVE_START_SECONDS); still"
                f" waiting while it runs{hint()}")
            warned = True
        time.sleep(0.3)
    return None


class HealthWatch(threading.Thread):
    """Reads /health every ``every`` s and says on the terminal what went wrong and what is back. A component
    that is down is said at once; other problems (no worker heard from, an old queued job) when two reads in a
    row show them, so workers still starting do not make noise."""

    def __init__(self, url: str, settings: Settings, say: Callable[[str], None], shown: dict[str, str],
                 every: float = WATCH_SECONDS) -> None:
        super().__init__(name="evalserve-health-watch", daemon=True)
        self.url, self.settings, self.say, self.every = url, settings, say, every
        self.shown = dict(shown)  # what the terminal was last told is wrong
        self.halt = threading.Event()

    def step(self, now: dict[str, str], before: dict[str, str]) -> None:
        """Say what is newly wrong (components at once, the rest when ``before`` had it too) and what is over."""
        for key, message in now.items():
            if key not in self.shown and (key in COMPONENTS or key in before):
                self.say(message)
                self.shown[key] = message
        for key in [k for k in self.shown if k not in now]:
            del self.shown[key]
            self.say(recovered(key, self.settings))

    def run(self) -> None:
        before: dict[str, str] = {}
        while not self.halt.wait(self.every):
            now = problems(probe_health(self.url), self.settings, self.url)
            if not self.halt.is_set():
                self.step(now, before)
            before = now
