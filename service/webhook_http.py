"""One webhook POST over a connection pinned to a checked Target's addresses: the TCP connection goes to an
address ``service.webhook_targets.check`` allowed, never to a fresh DNS answer, while the ``Host`` header, TLS SNI
and certificate verification use the URL's host name. Redirects are not followed and the answer's body is not read.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterable, Mapping
from typing import Any

import httpcore
import httpx

from service.webhook_targets import Target


class PinnedBackend(httpcore.SyncBackend):
    """Connects to the target's checked addresses (in order, the first that answers) instead of resolving the
    host again; refuses any other host or port, should the connection pool ask for one."""

    def __init__(self, target: Target) -> None:
        self.target = target

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        if (host, port) != (self.target.host, self.target.port) or not self.target.addresses:
            raise httpcore.ConnectError(f"{host}:{port} is not the checked target")
        last: Exception | None = None
        for address in self.target.addresses:
            try:
                return super().connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        assert last is not None
        raise last


def post(target: Target, body: bytes, headers: Mapping[str, str], timeout: float,
         ssl_context: ssl.SSLContext | None = None) -> int:
    """POST ``body`` to the target once; its HTTP status. httpcore's exceptions (no answer, timeout, TLS) and
    OSError propagate. ``ssl_context`` defaults to httpx's (certifi's CAs, hostname verification on)."""
    url = httpcore.URL(scheme=target.scheme.encode(), host=target.host.encode(), port=target.port,
                       target=target.url.raw_path)
    sent = [(b"Host", target.url.netloc), *((k.encode(), v.encode()) for k, v in headers.items()),
            (b"Content-Length", str(len(body)).encode())]
    extensions = {"timeout": {"connect": timeout, "read": timeout, "write": timeout, "pool": timeout}}
    with httpcore.ConnectionPool(ssl_context=ssl_context or httpx.create_ssl_context(), max_connections=1,
                                 retries=0, network_backend=PinnedBackend(target)) as pool, \
            pool.stream("POST", url, headers=sent, content=body, extensions=extensions) as response:
        return int(response.status)
