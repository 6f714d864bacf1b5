"""A webhook receiver on localhost for tests: records every POST and answers with programmed status codes.

    with Receiver(statuses=[500, 500, 200]) as receiver:
        ...  # point a webhook at receiver.url
        receiver.wait_for(3, timeout=10)
        headers, body = receiver.requests[-1]

Answers follow ``statuses`` in order, then ``default`` (200) once the list is used up. Thread-safe: the server
answers each request in its own thread, and the API or worker processes under test may post concurrently.
"""

from __future__ import annotations

import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


class _QuietServer(ThreadingHTTPServer):
    """No traceback on stderr when a client drops its connection (a sender that timed out, or closed early)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class Receiver:
    """A ``ThreadingHTTPServer`` on 127.0.0.1 (a free port) in a background thread; a context manager."""

    def __init__(self, statuses: list[int] | None = None, *, default: int = 200, delay: float = 0.0,
                 path: str = "/hook", tls: ssl.SSLContext | None = None) -> None:
        self.statuses = list(statuses or [])
        self.default = default
        self.delay = delay  # seconds to wait before answering (timeouts, overlapping deliveries)
        self.path = path
        #: (headers with lower-case names, body) of every POST, in arrival order
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.in_flight = 0  # requests being answered now
        self.max_in_flight = 0  # the most answered at once so far
        self._changed = threading.Condition()
        self._server = _QuietServer(("127.0.0.1", 0), self._handler())
        self.tls = tls  # a server context: the receiver speaks https (``url`` then names 127.0.0.1 still)
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="webhook-receiver", daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}{self.path}"

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    def wait_for(self, n: int, timeout: float = 10.0) -> list[tuple[dict[str, str], bytes]]:
        """Block until at least ``n`` requests arrived; AssertionError after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while len(self.requests) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"the receiver got {len(self.requests)} request(s), expected {n}")
                self._changed.wait(left)
            return list(self.requests)

    def _next_status(self) -> int:
        with self._changed:
            return self.statuses.pop(0) if self.statuses else self.default

    def _record(self, headers: dict[str, str], body: bytes) -> int:
        with self._changed:
            self.requests.append((headers, body))
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._changed.notify_all()
        return self._next_status()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                status = receiver._record({k.lower(): v for k, v in self.headers.items()}, body)
                if receiver.delay:
                    time.sleep(receiver.delay)
                with receiver._changed:
                    receiver.in_flight -= 1
                reply = b'{"ok": true}' if 200 <= status < 300 else b'{"error": "programmed failure"}'
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.send_header("Connection", "close")
                self.close_connection = True
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                pass

        return Handler
