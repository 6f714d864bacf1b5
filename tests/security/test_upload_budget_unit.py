"""The upload gate in process (``inputs.inflight``): slots, per-caller and byte budgets, the rule that an upload
alone is never refused for the budget, a reservation charged while files inflate (a 503 with ``Retry-After`` as
soon as it no longer fits) and released however the request ends."""

from __future__ import annotations

import gzip

import pytest

from evalserve.service.core.config import UploadBudget
from evalserve.service.core.errors import ServiceError
from evalserve.service.inputs.inflight import Busy, LocalLedger, UploadGate
from evalserve.service.inputs.uploads import check_runs, to_blob
from evaluation.formats.source import DecodeLimits

MIB = 1 << 20


def _gate(budget_mb: int = 64, slots: int = 4, per_caller: int = 2) -> tuple[UploadGate, LocalLedger]:
    settings = UploadBudget(process_bytes=budget_mb * MIB, global_bytes=0, slots=slots, per_caller=per_caller,
                            assumed_ratio=20, retry_seconds=7)
    gate = UploadGate.build(settings, 2048 * MIB, None, "q")
    ledger = gate.ledgers[0]
    assert isinstance(ledger, LocalLedger)
    return gate, ledger


def _run(lines: int, tag: bytes = b"t") -> bytes:
    text = b"".join(b"%d Q0 doc-%s-%d %d 1.0 %s\n" % (i // 1000, b"x" * 100, i, i % 1000, tag) for i in range(lines))
    return gzip.compress(text, 1)


def test_ledger_slots_callers_and_budget() -> None:
    ledger = LocalLedger(budget=100, slots=3, per_caller=2)
    ledger.take("a", 500, "u1")  # alone: admitted although over the budget
    with pytest.raises(Busy, match="process"):
        ledger.take("b", 1, "u2")
    ledger.drop("a")
    ledger.take("a", 40, "u1")
    ledger.take("b", 40, "u1")
    with pytest.raises(Busy, match="caller"):
        ledger.take("c", 1, "u1")
    ledger.take("c", 20, "u2")
    with pytest.raises(Busy, match="slots"):
        ledger.take("d", 0, "u3")
    with pytest.raises(Busy, match="process"):
        ledger.take("a", 41, "u1")  # growing past the budget while others hold
    for key in "abc":
        ledger.drop(key)
    assert ledger.in_flight() == (0, 0)


def test_refused_before_the_body_when_its_declared_size_does_not_fit() -> None:
    gate, ledger = _gate(budget_mb=64)
    with gate.reserve(5 * MIB, "u1"):  # 5 MiB assumed to inflate 20x: 105 MiB, alone
        with pytest.raises(ServiceError) as refused, gate.reserve(5 * MIB, "u2"):
            pass
        assert refused.value.status == 503 and refused.value.extra_headers == {"Retry-After": "7"}
        assert refused.value.problem_code == "uploads-busy"
        assert ledger.in_flight() == (1, 105 * MIB)
    assert ledger.in_flight() == (0, 0)


def test_a_run_that_inflates_past_what_is_left_is_refused_while_it_inflates() -> None:
    gate, ledger = _gate(budget_mb=64)
    data = _run(400_000)  # ~55 MB of text, ~1.5 MB gzipped: declared it fits, inflated it does not
    limits = DecodeLimits()
    with gate.reserve(1 * MIB, "other"):
        with pytest.raises(ServiceError) as refused, gate.reserve(len(data), "u1"):
            check_runs([("big.run.gz", data)], limits)
        assert refused.value.status == 503, refused.value.detail
        assert ledger.in_flight()[0] == 1
    assert ledger.in_flight() == (0, 0)
    with gate.reserve(len(data), "u1") as alone:  # alone it is read, charged at what it inflated to
        [checked] = check_runs([("big.run.gz", data)], limits)
        assert len(checked.run) == 400_000
        assert alone.amount >= len(gzip.decompress(data))
    assert ledger.in_flight() == (0, 0)


def test_a_blob_is_charged_before_it_is_inflated_and_released_on_errors() -> None:
    gate, ledger = _gate(budget_mb=64)
    data = gzip.compress(b"1 0 d1 1\n" * 8_000_000, 1)  # 72 MB of judgments in 200 kB
    with gate.reserve(MIB, "other"):
        with pytest.raises(ServiceError) as refused, gate.reserve(len(data), "u1"):
            to_blob(data, "q.gz", DecodeLimits())
        assert refused.value.status == 503
    with pytest.raises(RuntimeError), gate.reserve(len(data), "u1"):
        raise RuntimeError("the client went away")
    assert ledger.in_flight() == (0, 0)


def test_without_a_reservation_nothing_is_counted() -> None:
    data = _run(1000)
    [checked] = check_runs([("r.run.gz", data)], DecodeLimits())
    assert len(checked.run) == 1000


class _Refusing:
    """A second ledger (as the deployment's Redis one) that refuses everything."""

    def take(self, key: str, amount: int, owner: str) -> None:
        raise Busy("deployment")

    def drop(self, key: str) -> None:
        pass


def test_a_refusal_by_the_deployment_ledger_releases_the_process_ledger() -> None:
    gate, ledger = _gate()
    gate.ledgers = (ledger, _Refusing())
    with pytest.raises(ServiceError) as refused, gate.reserve(MIB, "u1"):
        pass
    assert refused.value.status == 503 and "service" in refused.value.detail
    assert ledger.in_flight() == (0, 0)


def test_quota_checks_wait_until_the_files_are_valid() -> None:
    """Under a reservation a quota check (which takes the caller's lock: on SQLite the database's write lock) is
    made once, just before the first file is stored, not while the files are validated; outside one, at once."""
    from evalserve.service.inputs.inflight import before_store, defer_until_store

    made: list[str] = []
    assert not defer_until_store(lambda: made.append("now"))
    gate, _ = _gate()
    with gate.reserve(MIB, "u1"):
        assert defer_until_store(lambda: made.append("deferred"))
        check_runs([("r.run.gz", _run(1000))], DecodeLimits())
        assert made == []
        before_store()
        before_store()
        assert made == ["deferred"]
    with gate.reserve(MIB, "u1"):  # a block that never stored: checked when it ends, before the answer
        defer_until_store(lambda: made.append("at the end"))
    assert made == ["deferred", "at the end"]


def test_taken_slots_ask_to_retry_in_a_second_a_full_budget_after_the_setting() -> None:
    gate, _ = _gate(budget_mb=64, slots=1, per_caller=1)
    with gate.reserve(1024, "u1"):
        for owner in ("u1", "u2"):  # the caller's slot, then the process's
            with pytest.raises(ServiceError) as refused, gate.reserve(1024, owner):
                pass
            assert refused.value.status == 503 and refused.value.extra_headers == {"Retry-After": "1"}
            assert refused.value.problem_code == "uploads-busy"
