"""A bound on uploads being validated at once: each holds a reservation of bytes -- its request body plus the
bytes its files inflate to, counted as they are produced -- against a budget per API process and, with Redis, one
shared by every process of the deployment. A request that does not fit is refused at once (``503 uploads-busy``
with ``Retry-After``): before its body is read when its declared size does not fit, else as soon as the running
total passes what is left. An upload alone in flight is never refused for the budget (a legal file always fits
once it is alone), so what a process holds is at most ``max(budget, one upload)`` of inflated input.

The reading code charges the request's reservation through ``progress`` without knowing about requests: the
reservation being charged is a context variable set around the view (one per request thread). Checks that take
a lock until the request commits (quotas, an idempotency key) are deferred under a reservation until just
before the first file is stored (``defer_until_store``/``before_store``), so no lock is held while files are
validated."""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from evalserve.service.core.config import UploadBudget
from evalserve.service.core.errors import ServiceError
from evalserve.service.core.problem_codes import ProblemCode

log = logging.getLogger(__name__)

#: the Retry-After of a refusal for the uploads being validated (slots, per caller), not for their bytes
SLOT_RETRY_SECONDS = 1
#: a reservation grows by at least this much at a time (fewer round trips to Redis while a file inflates)
STEP_BYTES = 32 << 20


class Busy(Exception):
    """A reservation did not fit (``where``: this process, the deployment, the caller or the slots)."""

    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.where = where


class Ledger(Protocol):
    """Where reservations are counted: ``take`` sets ``key``'s amount when it fits (else raises Busy)."""

    def take(self, key: str, amount: int, owner: str) -> None: ...

    def drop(self, key: str) -> None: ...


@dataclass
class LocalLedger:
    """This process's reservations: at most ``slots`` of them, ``per_caller`` per owner, ``budget`` bytes in all
    unless one is alone."""

    budget: int
    slots: int
    per_caller: int
    _amounts: dict[str, int] = field(default_factory=dict)
    _owners: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, key: str, amount: int, owner: str) -> None:
        with self._lock:
            others = {k: v for k, v in self._amounts.items() if k != key}
            if key not in self._amounts:
                if len(others) >= self.slots:
                    raise Busy("slots")
                if sum(1 for k, o in self._owners.items() if o == owner) >= self.per_caller:
                    raise Busy("caller")
            if others and sum(others.values()) + amount > self.budget:
                raise Busy("process")
            self._amounts[key] = amount
            self._owners[key] = owner

    def drop(self, key: str) -> None:
        with self._lock:
            self._amounts.pop(key, None)
            self._owners.pop(key, None)

    def in_flight(self) -> tuple[int, int]:
        """(reservations, bytes) held now."""
        with self._lock:
            return len(self._amounts), sum(self._amounts.values())


#: set ``key``'s amount when the others' (unexpired) amounts plus it fit the budget, or nothing else is held
_TAKE = """
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[4])
for _, member in ipairs(expired) do
  redis.call('HDEL', KEYS[1], member)
  redis.call('ZREM', KEYS[2], member)
end
local values = redis.call('HGETALL', KEYS[1])
local total, others = 0, 0
for i = 1, #values, 2 do
  if values[i] ~= ARGV[1] then
    total = total + tonumber(values[i + 1])
    others = others + 1
  end
end
if others > 0 and total + tonumber(ARGV[2]) > tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], tonumber(ARGV[4]) + tonumber(ARGV[5]), ARGV[1])
return 1
"""


@dataclass
class RedisLedger:
    """The deployment's reservations in Redis (a hash of amounts and a sorted set of expiry times, so the
    reservation of a process that died lapses after ``ttl`` seconds). Redis unreachable: the upload is bounded by
    its process's budget alone (memory stays bounded per process; the rate limits, whose storage is the same Redis,
    refuse callers' uploads then, so only admins' get here), logged."""

    url: str
    prefix: str
    budget: int
    ttl: float = 600.0
    _client: Any = None

    def _redis(self) -> Any:
        if self._client is None:
            import redis

            self._client = redis.Redis.from_url(self.url, socket_timeout=2, socket_connect_timeout=2)
        return self._client

    def take(self, key: str, amount: int, owner: str) -> None:
        try:
            fits = self._redis().eval(_TAKE, 2, f"{self.prefix}:amounts", f"{self.prefix}:expiry", key, amount,
                                      self.budget, time.time(), self.ttl)
        except Exception as exc:  # redis down: the process's own budget still holds, loudly
            log.error("upload budget: Redis unreachable, this upload is bounded by the process's budget only: %s",
                      exc)
            return
        if not fits:
            raise Busy("deployment")

    def drop(self, key: str) -> None:
        try:
            pipe = self._redis().pipeline()
            pipe.hdel(f"{self.prefix}:amounts", key)
            pipe.zrem(f"{self.prefix}:expiry", key)
            pipe.execute()
        except Exception as exc:  # it lapses after ttl
            log.error("upload budget: could not release %s in Redis (it lapses in %.0f s): %s", key, self.ttl, exc)


@dataclass
class UploadGate:
    """The ledgers every reservation of this process is taken in (this process's first, then the deployment's)."""

    settings: UploadBudget
    ledgers: tuple[Ledger, ...]
    cap_bytes: int  # what one file may inflate to (EVALSERVE_MAX_DECOMPRESSED_MB)

    @classmethod
    def build(cls, settings: UploadBudget, cap_bytes: int, redis_url: str | None, queue: str) -> UploadGate:
        local = LocalLedger(settings.process_bytes, settings.slots, settings.per_caller)
        ledgers: tuple[Ledger, ...] = (local,)
        if redis_url and settings.global_bytes > 0:
            ledgers += (RedisLedger(redis_url, f"evalserve:{queue}:uploads", settings.global_bytes),)
        return cls(settings, ledgers, cap_bytes)

    @contextlib.contextmanager
    def reserve(self, declared: int | None, owner: str) -> Iterator[Reservation]:
        """Hold a reservation for one request whose body is ``declared`` bytes (None: unknown) for the block;
        released however the block ends. ServiceError 503 when it does not fit."""
        reservation = Reservation(self, uuid.uuid4().hex, owner, declared or 0)
        token = _CURRENT.set(reservation)
        try:  # a refusal by a later ledger must release what an earlier one took
            reservation.set(self.estimate(declared))
            yield reservation
            before_store()  # checks the block deferred but did not reach (it stored nothing through ``inputs``)
        finally:
            _CURRENT.reset(token)
            reservation.release()

    def estimate(self, declared: int | None) -> int:
        """What a body of ``declared`` bytes is assumed to inflate to before it is read: ``assumed_ratio`` times
        its size, at most the decompressed cap (unknown: nothing yet, counted as it is read)."""
        if not declared:
            return 0
        return int(min(declared * self.settings.assumed_ratio, self.cap_bytes)) + declared

    def refusal(self, where: str) -> ServiceError:
        # busy slots free up as soon as one upload is validated (a TREC run: a tenth of a second): ask again
        # soon; a memory budget is held by large uploads, for longer
        wait = SLOT_RETRY_SECONDS if where in ("slots", "caller") else self.settings.retry_seconds
        reason = {"slots": f"{self.settings.slots} uploads are being validated by this server process",
                  "caller": f"you have {self.settings.per_caller} uploads being validated already",
                  "process": "the uploads being validated by this server process would pass its memory budget"
                             f" ({self.settings.process_bytes >> 20} MiB of inflated input,"
                             " EVALSERVE_UPLOAD_BUDGET_MB)",
                  "deployment": "the uploads being validated by the service would pass its memory budget"
                                f" ({self.settings.global_bytes >> 20} MiB of inflated input,"
                                " EVALSERVE_UPLOAD_GLOBAL_BUDGET_MB)"}[where]
        return ServiceError(503, ProblemCode.UPLOADS_BUSY, f"{reason}; retry in {wait} s (nothing was stored)",
                            headers={"Retry-After": str(wait)})


@dataclass
class Reservation:
    """One request's bytes in flight: its body and what its files inflated to so far (``charged``), held in
    every ledger as the larger of that and the estimate made before the body was read."""

    gate: UploadGate
    key: str
    owner: str
    body: int
    amount: int = 0
    inflated: int = 0  # files finished
    deferred: list[Callable[[], None]] = field(default_factory=list)  # checks to make just before storing
    _held: list[Ledger] = field(default_factory=list)

    def set(self, amount: int) -> None:
        """Hold ``amount`` bytes in every ledger, or raise the 503 (what is held is dropped when the request
        ends, ``UploadGate.reserve``)."""
        for ledger in self.gate.ledgers:
            try:
                ledger.take(self.key, amount, self.owner)
            except Busy as busy:
                log.info("upload refused: %s (%d bytes in flight for %s)", busy.where, amount, self.owner)
                raise self.gate.refusal(busy.where) from None
            if ledger not in self._held:
                self._held.append(ledger)
        self.amount = amount

    def charge(self, inflated: int) -> None:
        """``inflated`` bytes are held in all (finished files and the one being read): grow when past."""
        needed = self.body + inflated
        if needed > self.amount:
            self.set(max(needed, self.amount + STEP_BYTES))

    def release(self) -> None:
        for ledger in self._held:
            ledger.drop(self.key)
        self._held.clear()


_CURRENT: contextvars.ContextVar[Reservation | None] = contextvars.ContextVar("upload_reservation", default=None)
_FILE: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("upload_file", default=None)


@contextlib.contextmanager
def one_file() -> Iterator[None]:
    """Count what one file inflates to once, however many readers inflate it (the largest total they report);
    nested calls join the outer file."""
    if _FILE.get() is not None:
        yield
        return
    seen = [0]
    token = _FILE.set(seen)
    try:
        yield
    finally:
        _FILE.reset(token)
        reservation = _CURRENT.get()
        if reservation is not None:
            reservation.inflated += seen[0]


def progress(total: int) -> None:
    """The file being read has produced ``total`` bytes so far: charge the request's reservation (ServiceError
    503 when that no longer fits); nothing when no reservation is held (the CLI, workers, tests)."""
    reservation = _CURRENT.get()
    if reservation is None:
        return
    seen = _FILE.get()
    if seen is not None:
        seen[0] = max(seen[0], total)
    reservation.charge(reservation.inflated + total)


def charging() -> bool:
    """Whether a request's reservation is being charged (else counting what a file inflates to is not needed)."""
    return _CURRENT.get() is not None


def defer_until_store(check: Callable[[], None]) -> bool:
    """Run ``check`` just before the request stores its first file (``before_store``) rather than now, when a
    reservation is held: a quota check takes the caller's lock (on SQLite the database's write lock), which must
    not be held while files are validated. False (nothing deferred) outside a reservation: run it now."""
    reservation = _CURRENT.get()
    if reservation is None:
        return False
    reservation.deferred.append(check)
    return True


def before_store() -> None:
    """The request is about to store what it validated: make the checks deferred until now, in order, once."""
    reservation = _CURRENT.get()
    while reservation is not None and reservation.deferred:
        reservation.deferred.pop(0)()


def discard_deferred(check: Callable[[], None]) -> None:
    """Forget ``check`` if it was deferred and not yet made (its request answered without storing)."""
    reservation = _CURRENT.get()
    if reservation is not None and check in reservation.deferred:
        reservation.deferred.remove(check)
