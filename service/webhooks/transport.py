"""One webhook POST over a connection pinned to a checked Target's addresses: the TCP connection goes to an
address ``webhooks.targets.check`` allowed, never to a fresh DNS answer, while the ``Host`` header, TLS SNI
and certificate verification use the URL's host name. Redirects are not followed and the answer's body is not read.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable, Mapping
from typing import Any

import httpcore
import httpx

from evalserve.service.webhooks.targets import Target

#: an attempt's whole exchange (connect, TLS, send, the answer's head) takes at most this many times the timeout:
#: a receiver that drips its answer a byte at a time cannot hold a delivery thread for long
DEADLINE_FACTOR = 2.0


def remaining(deadline: float, timeout: float | None) -> float:
    """The wait allowed for one operation: ``timeout`` cut to what is left before ``deadline``;
    ``httpcore.ReadTimeout`` once it passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout("the delivery attempt's deadline passed")
    return left if timeout is None else min(timeout, left)


class DeadlineStream(httpcore.NetworkStream):
    """A network stream whose every read and write waits at most until a shared deadline (monotonic seconds);
    past it, ``httpcore.ReadTimeout``."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: float) -> None:
        self.inner = inner
        self.deadline = deadline

    def _left(self, timeout: float | None) -> float:
        return remaining(self.deadline, timeout)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, self._left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, self._left(timeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return DeadlineStream(self.inner.start_tls(ssl_context, server_hostname, self._left(timeout)), self.deadline)

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class PinnedBackend(httpcore.SyncBackend):
    """Connects to the target's checked addresses (in order, the first that answers) instead of resolving the
    host again; refuses any other host or port, should the connection pool ask for one. Its streams stop at
    ``deadline`` (monotonic seconds), if given."""

    def __init__(self, target: Target, deadline: float | None = None) -> None:
        self.target = target
        self.deadline = deadline

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        if (host, port) != (self.target.host, self.target.port) or not self.target.addresses:
            raise httpcore.ConnectError(f"{host}:{port} is not the checked target")
        last: Exception | None = None
        for address in self.target.addresses:
            if self.deadline is not None:
                timeout = remaining(self.deadline, timeout)
            try:
                stream = super().connect_tcp(address, port, timeout, local_address, socket_options)
                return stream if self.deadline is None else DeadlineStream(stream, self.deadline)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        assert last is not None
        raise last


def post(target: Target, body: bytes, headers: Mapping[str, str], timeout: float,
         ssl_context: ssl.SSLContext | None = None, *, connect_timeout: float | None = None) -> int:
    """POST ``body`` to the target once; its HTTP status. Connecting waits at most ``connect_timeout`` seconds
    (default ``timeout``), each other network operation ``timeout``; the whole attempt ``connect_timeout +
    timeout`` (without a connect timeout: ``DEADLINE_FACTOR * timeout``). httpcore's exceptions (no answer,
    timeout, TLS) and OSError propagate. ``ssl_context`` defaults to httpx's (certifi's CAs, hostname
    verification on)."""
    url = httpcore.URL(scheme=target.scheme.encode(), host=target.host.encode(), port=target.port,
                       target=target.url.raw_path)
    sent = [(b"Host", target.url.netloc), *((k.encode(), v.encode()) for k, v in headers.items()),
            (b"Content-Length", str(len(body)).encode())]
    whole = DEADLINE_FACTOR * timeout if connect_timeout is None else connect_timeout + timeout
    deadline = time.monotonic() + whole
    connect = timeout if connect_timeout is None else connect_timeout
    extensions = {"timeout": {"connect": connect, "read": timeout, "write": timeout, "pool": connect}}
    with httpcore.ConnectionPool(ssl_context=ssl_context or httpx.create_ssl_context(), max_connections=1,
                                 retries=0, network_backend=PinnedBackend(target, deadline)) as pool, \
            pool.stream("POST", url, headers=sent, content=body, extensions=extensions) as response:
        return int(response.status)
