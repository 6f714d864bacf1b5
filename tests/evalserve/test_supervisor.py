"""``evalserve.supervisor``: children that die are restarted (with a growing backoff when they keep crashing),
a stop ends every child -- SIGTERM, then SIGKILL for one that ignores it; ``service.jobrun.time_limit`` stops a job at
its soft limit."""

from __future__ import annotations

import sys
import time

import pytest
from celery.exceptions import SoftTimeLimitExceeded

from evalserve import supervisor
from evalserve.service.jobrun.time_limit import time_limit
from evalserve.supervisor import Child, Supervisor

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]
CRASHER = [sys.executable, "-c", "raise SystemExit(3)"]
STUBBORN = [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready',"
            " flush=True); time.sleep(60)"]


def _run_for(sup: Supervisor, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        sup.check()
        time.sleep(0.05)


def test_a_dead_child_is_restarted_and_a_crashing_one_backs_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(supervisor, "FIRST_BACKOFF_SECONDS", 0.2)
    logged: list[str] = []
    sleeper, crasher = Child("sleeper", SLEEPER), Child("crasher", CRASHER, backoff=0.2)
    sup = Supervisor([sleeper, crasher], log=logged.append)
    sup.start()
    try:
        first = sleeper.pid
        assert first is not None and sleeper.proc is not None
        sleeper.proc.kill()
        _run_for(sup, 3.0)
        assert sleeper.alive and sleeper.pid != first and sleeper.restarts == 1
        # 0.2 + 0.4 + 0.8 + 1.6 s of backoff: a handful of restarts in 3 s, not dozens
        assert 2 <= crasher.restarts <= 5 and set(crasher.exits) == {3}
        assert any("crasher" in line and "exited with code 3" in line for line in logged)
        assert any("sleeper" in line and "signal SIGKILL" in line for line in logged)
    finally:
        sup.stop()
    assert not sleeper.alive and not crasher.alive


def test_stop_kills_a_child_that_ignores_sigterm() -> None:
    import subprocess

    stubborn = Child("stubborn", STUBBORN)
    sup = Supervisor([stubborn, Child("sleeper", SLEEPER)], grace_seconds=1.0, log=lambda _: None)
    stubborn.proc = subprocess.Popen(STUBBORN, stdout=subprocess.PIPE)
    assert stubborn.proc.stdout is not None and stubborn.proc.stdout.readline() == b"ready\n"
    sup._spawn(sup.children[1])
    started = time.monotonic()
    sup.stop()
    assert time.monotonic() - started < 5
    assert not any(c.alive for c in sup.children)
    assert stubborn.proc.returncode == -9


def test_the_soft_time_limit_interrupts_a_job() -> None:
    started = time.monotonic()
    with pytest.raises(SoftTimeLimitExceeded), time_limit(0.3, 60):
        while time.monotonic() - started < 10:
            time.sleep(0.01)
    assert time.monotonic() - started < 5
    with time_limit(0.3, 60):  # a job within its limits is untouched
        pass
    time.sleep(0.5)


def test_a_recycling_child_is_restarted_at_once_and_every_exit_is_told() -> None:
    """A child that exits with its ``recycle_code`` (a worker giving its memory back) comes back at once, with no
    backoff and no crash line; ``on_exit`` hears of every exit with the dead process's pid."""
    recycler = Child("recycler", [sys.executable, "-c", "raise SystemExit(79)"], recycle_code=79, backoff=5.0)
    told: list[tuple[str, int, int]] = []
    logged: list[str] = []
    sup = Supervisor([recycler], log=logged.append, on_exit=lambda child, pid, code: told.append((child.name, pid,
                                                                                                   code)))
    sup.start()
    try:
        first = recycler.pid
        _run_for(sup, 2.0)
        assert recycler.recycles >= 2 and recycler.restarts == 0 and recycler.exits == []
        assert told[0] == ("recycler", first, 79) and len(told) >= 2
        assert not any("exited with" in line for line in logged)
        assert any("gave its memory back" in line for line in logged)
    finally:
        sup.stop()
