"""The watcher of parked waits (``web.waiting._look_all``) looks at the keys of a family that can be read together
in one go -- every parked job in one query, however many wait on how many jobs -- and at any other key once,
however many wait on it; a look that fails is tried again next round, settling nothing."""

from __future__ import annotations

from typing import Any

from evalserve.service.web.waiting import Park, _look_all


def _park(key: str, calls: list[Any], *, family: bool, target: str = "done") -> Park:
    def look() -> tuple[str, Any]:
        calls.append(("one", key))
        return "t", target

    def look_many(keys: list[str]) -> dict[str, tuple[str, Any]]:
        calls.append(("many", tuple(keys)))
        return {k: ("t", "done" if k != "slow" else "running") for k in keys}

    return Park("owner", key, 30, look=look, settled=lambda _t, v: v == "done",
                finish=lambda _t, _v: (200, {}, b""), family="job" if family else None,
                look_many=look_many if family else None)


def test_a_family_is_read_in_one_look_and_other_keys_once_each() -> None:
    calls: list[Any] = []
    parks = [_park(k, calls, family=True) for k in ("j1", "j2", "j1", "slow")]
    parks += [_park("p/plot.png", calls, family=False), _park("p/plot.png", calls, family=False)]
    settled = _look_all(parks)
    assert calls == [("many", ("j1", "j2", "slow")), ("one", "p/plot.png")]
    assert [p.key for p, _ in settled] == ["j1", "j2", "j1", "p/plot.png", "p/plot.png"]


def test_a_failed_look_settles_nothing() -> None:
    def broken(keys: list[str]) -> dict[str, tuple[str, Any]]:
        raise OSError("database away")

    park = Park("owner", "j1", 30, look=lambda: ("t", "done"), settled=lambda _t, v: v == "done",
                finish=lambda _t, _v: (200, {}, b""), family="job", look_many=broken)
    assert _look_all([park]) == []
