"""Request rate limits per user, Flask-free: fixed-window counters (the ``limits`` package) in a storage every API
process shares -- Redis when the deployment has one, else a SQLite file in the data directory (``rate_store``) --
and what to do when that storage cannot be reached.

Fail safe, loudly: while the storage is down, the groups that guard against guessing and flooding (registration
attempts, uploads) are refused (``UNCHECKED_REFUSED``: 503 with ``Retry-After``), every other request is let through
(``UNCHECKED_PASSED``), and each such decision is logged and counted (``RateLimits.status``, on ``/health``)."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from enum import Enum
from urllib.parse import urlparse

from limits import RateLimitItem, parse
from limits.errors import StorageError
from limits.storage import Storage, storage_from_string
from limits.strategies import FixedWindowRateLimiter

from evalserve.service.access import rate_store
from evalserve.service.core.config import Settings

log = logging.getLogger(__name__)

#: the groups refused while their counters cannot be checked (the others are let through)
FAIL_CLOSED = frozenset({"uploads", "registrations"})
#: ``Retry-After`` of a refusal because the storage is down
UNAVAILABLE_RETRY_SECONDS = 30
#: after a failure, the storage is not tried again for this long (each request would wait for its timeout)
RETRY_STORAGE_SECONDS = 1.0
#: connect/read timeout of a Redis storage: a request never waits longer on the limiter
REDIS_TIMEOUT_SECONDS = 1.0


class Verdict(Enum):
    ALLOWED = "allowed"
    LIMITED = "limited"  # over a limit: 429
    UNCHECKED_REFUSED = "unchecked-refused"  # the storage is down and the group fails closed: 503
    UNCHECKED_PASSED = "unchecked-passed"  # the storage is down and the request is let through


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    group: str = ""  # the group that decided (the breached one, or the one refused unchecked)
    limit: str = ""  # the breached limit, for people: "20 per 1 minute"
    retry_after: int = 0
    reason: str = ""  # why the storage is down


def storage_uri(settings: Settings) -> str:
    """``EVALSERVE_RATE_LIMIT_STORAGE`` if set; else Redis when the deployment has one; else the SQLite file
    ``DATA_DIR/ratelimits.db`` that every API process of the machine shares."""
    if settings.limits.storage:
        return settings.limits.storage
    if not settings.embedded_broker:
        return settings.broker_url
    return f"{rate_store.SCHEME}://{settings.data_dir / 'ratelimits.db'}"


def where(uri: str) -> str:
    """The storage URI without a password, for logs and ``/health``."""
    parsed = urlparse(uri)
    if parsed.password is None:
        return uri
    return parsed._replace(netloc=parsed.netloc.replace(f":{parsed.password}@", ":***@")).geturl()


def _storage(uri: str) -> Storage:
    options: dict[str, float | str | bool] = {}
    if urlparse(uri).scheme in ("redis", "rediss", "redis+unix"):
        options = {"socket_connect_timeout": REDIS_TIMEOUT_SECONDS, "socket_timeout": REDIS_TIMEOUT_SECONDS}
    storage = storage_from_string(uri, wrap_exceptions=True, **options)
    assert isinstance(storage, Storage)
    return storage


class RateLimits:
    """The deployment's rate-limit groups (``requests``, ``uploads``, ``registrations``; an empty setting is off)
    over one storage, and this process's record of the decisions taken while that storage was down."""

    def __init__(self, settings: Settings) -> None:
        limits = settings.limits
        texts = {"requests": limits.rate, "uploads": limits.upload_rate, "registrations": limits.register_rate}
        self.groups: dict[str, RateLimitItem] = {name: parse(text) for name, text in texts.items() if text}
        self.uri = storage_uri(settings)
        self.storage = _storage(self.uri)
        self.limiter = FixedWindowRateLimiter(self.storage)
        self.prefix = f"{settings.queue}:ratelimit"
        self._lock = threading.Lock()
        self._down: str | None = None  # why the storage failed last, while it is failing
        self._retry_at = 0.0
        self.refused = 0  # decisions taken unchecked since this process started
        self.passed = 0

    @property
    def enabled(self) -> bool:
        return bool(self.groups)

    def check(self, hits: list[tuple[str, str]], what: str) -> Decision:
        """Count one request in each ``(group, key)`` of ``hits`` (groups that are off are skipped) and decide;
        ``what`` describes the request for the log (method, path, caller key)."""
        hits = [(group, key) for group, key in hits if group in self.groups]
        if not hits:
            return Decision(Verdict.ALLOWED)
        reason = self._down if time.monotonic() < self._retry_at else None
        if reason is None:
            try:
                for group, key in hits:
                    item = self.groups[group]
                    if not self.limiter.hit(item, self.prefix, group, key):
                        return Decision(Verdict.LIMITED, group, str(item), self._wait(item, group, key))
                self._recovered()
                return Decision(Verdict.ALLOWED)
            except StorageError as exc:
                reason = self._failed(exc)
        return self._unchecked(hits, what, reason)

    def status(self) -> dict[str, object]:
        """For ``/health``: is the storage reachable now (checked), and this process's unchecked decisions."""
        try:
            ok = bool(self.storage.check())
            reason = "" if ok else "unavailable: it does not answer"
        except (StorageError, OSError) as exc:
            ok, reason = False, f"unavailable: {_cause(exc)}"
        if ok:
            self._recovered()
        else:
            self._failed_reason(reason)
        return {"storage": "ok" if ok else reason, "where": where(self.uri), "refused_unchecked": self.refused,
                "passed_unchecked": self.passed}

    def _wait(self, item: RateLimitItem, group: str, key: str) -> int:
        """Seconds until the breached window ends (at least 1)."""
        try:
            reset = self.limiter.get_window_stats(item, self.prefix, group, key).reset_time
        except StorageError:
            return item.get_expiry()
        return max(1, int(reset - time.time()) + 1)

    def _failed(self, exc: Exception) -> str:
        return self._failed_reason(f"unavailable: {_cause(exc)}")

    def _failed_reason(self, reason: str) -> str:
        with self._lock:
            if self._down is None:
                log.error("rate limits: their storage %s is %s; until it is back, registration attempts and uploads"
                          " are refused (503) and other requests are let through unchecked", where(self.uri), reason)
            self._down = reason
            self._retry_at = time.monotonic() + RETRY_STORAGE_SECONDS
        return reason

    def _recovered(self) -> None:
        if self._down is None:
            return
        with self._lock:
            if self._down is not None:
                log.warning("rate limits: their storage %s is available again (%d requests refused and %d let through"
                            " unchecked by this process meanwhile)", where(self.uri), self.refused, self.passed)
            self._down = None

    def _unchecked(self, hits: list[tuple[str, str]], what: str, reason: str) -> Decision:
        closed = next((group for group, _ in hits if group in FAIL_CLOSED), None)
        with self._lock:
            if closed:
                self.refused += 1
            else:
                self.passed += 1
            refused, passed = self.refused, self.passed
        verdict = Verdict.UNCHECKED_REFUSED if closed else Verdict.UNCHECKED_PASSED
        log.warning("rate limits unchecked (storage %s %s): %s %s (%s); %d refused and %d let through unchecked by"
                    " this process", where(self.uri), reason, "refused" if closed else "let through", what,
                    closed or ", ".join(group for group, _ in hits), refused, passed)
        return Decision(verdict, closed or "", retry_after=UNAVAILABLE_RETRY_SECONDS, reason=reason)


def _cause(exc: BaseException) -> str:
    """The underlying error's type name (a StorageError wraps the storage's own)."""
    inner = exc.storage_error if isinstance(exc, StorageError) else exc
    return type(inner).__name__
