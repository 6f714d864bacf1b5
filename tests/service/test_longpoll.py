"""``service.core.longpoll.wait_for_change`` on a fake clock: it answers at the first look whose tag is new, when the
value is final, or at the bound (capped at ``MAX_WAIT_SECONDS``); it looks every ``STEP_SECONDS``. ``WaitCount``
admits waits under the caps per caller and in total."""

from __future__ import annotations

from collections.abc import Callable

from evalserve.service.core.longpoll import MAX_WAIT_SECONDS, STEP_SECONDS, WaitCaps, WaitCount, wait_for_change


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def _loader(tags: list[str]) -> Callable[[], tuple[str, str]]:
    def load() -> tuple[str, str]:
        tag = tags.pop(0) if len(tags) > 1 else tags[0]
        return tag, f"value {tag}"

    return load


def test_it_answers_at_the_first_look_that_sees_a_new_tag() -> None:
    clock = Clock()
    tag, value = wait_for_change(_loader(["a", "a", "a", "b"]), {"a"}, 10, clock=lambda: clock.now,
                                 sleep=clock.sleep)
    assert (tag, value) == ("b", "value b")
    assert clock.sleeps == [STEP_SECONDS] * 3


def test_it_answers_at_once_when_the_tag_is_not_known_or_the_value_is_final() -> None:
    clock = Clock()
    assert wait_for_change(_loader(["b"]), {"a"}, 10, clock=lambda: clock.now, sleep=clock.sleep)[0] == "b"
    assert wait_for_change(_loader(["a"]), {"a"}, 10, done=lambda v: True, clock=lambda: clock.now,
                           sleep=clock.sleep)[0] == "a"
    assert clock.sleeps == []


def test_an_unchanged_value_is_answered_at_the_bound_which_is_capped() -> None:
    clock = Clock()
    assert wait_for_change(_loader(["a"]), {"a"}, 1.0, clock=lambda: clock.now, sleep=clock.sleep)[0] == "a"
    assert abs(clock.now - 1.0) < 1e-9
    clock = Clock()
    wait_for_change(_loader(["a"]), {"a"}, 10 * MAX_WAIT_SECONDS, clock=lambda: clock.now, sleep=clock.sleep,
                    step=1.0)
    assert clock.now == MAX_WAIT_SECONDS


def test_wait_count_admits_under_both_caps_and_counts_the_refused() -> None:
    count = WaitCount(WaitCaps(per_caller=2, total=3))
    assert [count.enter("token:a") for _ in range(3)] == [None, None, "caller"]
    assert count.enter("token:b") is None
    assert count.enter("addr:127.0.0.1") == "total"  # three held: nobody else, whoever it is
    count.leave("token:a")
    assert count.enter("addr:127.0.0.1") is None
    assert count.snapshot() == {"open": 3, "refused": 2, "per_caller_cap": 2, "total_cap": 3}
    for owner in ("token:a", "token:b", "addr:127.0.0.1"):
        count.leave(owner)
    assert count.snapshot()["open"] == 0 and count.enter("token:a") is None
