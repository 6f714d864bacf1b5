"""Long-polls that hold no request thread (issue 29). The API runs under gunicorn's ASGI worker: one asyncio loop
per process, and the Flask app on a pool of ``threads`` threads through a2wsgi, as it ran under gthread. A view
may *park* its request (``offer_park``): it answers what it would answer at once and hands over a ``Park`` --
what to watch and how to answer later. The loop then holds the connection (a coroutine, no thread) until the
watched thing changes, the wait's bound passes or the client disconnects, and sends the park's ``finish``.

One watcher thread per process looks at every parked key every ``WATCH_SECONDS`` (one look per distinct key,
however many wait on it, and one for all the keys of a family that can be read together: every parked job in one
query; when a round of looks takes longer, the pause is twice the round, so the thread is never
more than about a third busy). Parked waits are counted per budget owner and in total (``core.longpoll.WaitCount``);
over a cap the immediate answer goes out at once with ``Retry-After: REFUSED_RETRY_AFTER``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from a2wsgi import WSGIMiddleware
from flask import Flask, request

from evalserve.service.core.longpoll import WaitCaps, WaitCount

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
#: (status, headers, body) of a parked request's answer
Answer = tuple[int, dict[str, str], bytes]

#: the ASGI scope's key under which a parkable request carries its slot (``environ["asgi.scope"]`` in the view)
PARK_KEY = "evalserve.park"
#: request threads per API process: that many requests are served at once, parked waits not counted
THREADS = 8
#: seconds between two looks at the parked keys: a change is answered within this (plus one read)
WATCH_SECONDS = 0.02
#: ``Retry-After`` of a wait answered at once because it was over a cap
REFUSED_RETRY_AFTER = 5
#: the extension under which the Flask app finds its process's ``WaitCount`` (for /health)
EXTENSION = "evalserve.waits"
_REPLACED = {b"content-length", b"content-type", b"etag", b"retry-after"}


@dataclass(eq=False)
class Park:
    """A parked request: ``owner`` it counts under, ``key`` of what it watches, for at most ``seconds``;
    ``look()`` reads (tag, value) now, ``settled(tag, value)`` says whether that ends the wait, and
    ``finish(tag, value)`` makes the answer. The three run on the watcher thread, never on the loop."""

    owner: str
    key: str
    seconds: float
    look: Callable[[], tuple[str, Any]]
    settled: Callable[[str, Any], bool]
    finish: Callable[[str, Any], Answer]
    #: parks of one ``family`` may be looked at together: ``look_many(keys)`` reads (tag, value) of every key in
    #: one go (one query for every parked job, not one per job), in place of each one's ``look``
    family: str | None = None
    look_many: Callable[[list[str]], dict[str, tuple[str, Any]]] | None = None


def offer_park(park: Park) -> bool:
    """From a view: hand ``park`` to the evented layer; False when the request is not served by it (a plain WSGI
    server, Flask's test client): the view then waits itself."""
    scope = request.environ.get("asgi.scope")
    slot = scope.get(PARK_KEY) if isinstance(scope, dict) else None
    if not isinstance(slot, list) or slot:
        return False
    slot.append(park)
    return True


def evented() -> bool:
    """Whether the request is served by the evented layer (where no view may hold its thread to wait)."""
    return isinstance(request.environ.get("asgi.scope"), dict)


def wait_count() -> WaitCount | None:
    """This process's count of parked waits, for /health (None when not served by the evented layer)."""
    from flask import current_app

    found = current_app.extensions.get(EXTENSION)
    return found if isinstance(found, WaitCount) else None


class Watcher:
    """The process's one thread that looks at parked keys, and the loop task that asks it every ``every`` s."""

    def __init__(self, every: float = WATCH_SECONDS) -> None:
        self.every = every
        self.executor = ThreadPoolExecutor(1, thread_name_prefix="waits")
        self._parked: dict[Park, asyncio.Future[tuple[str, Any]]] = {}
        self._task: asyncio.Task[None] | None = None

    def add(self, park: Park) -> asyncio.Future[tuple[str, Any]]:
        """Watch ``park``: the future gets (tag, value) once settled."""
        woken: asyncio.Future[tuple[str, Any]] = asyncio.get_running_loop().create_future()
        self._parked[park] = woken
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())
        return woken

    def remove(self, park: Park) -> None:
        self._parked.pop(park, None)

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        pause = self.every
        while self._parked:
            await asyncio.sleep(pause)
            started = loop.time()
            settled = await loop.run_in_executor(self.executor, _look_all, list(self._parked))
            pause = max(self.every, 2 * (loop.time() - started))  # many parked jobs: the thread stays a third busy
            for park, seen in settled:
                woken = self._parked.get(park)
                if woken is not None and not woken.done():
                    woken.set_result(seen)

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)


def _look_all(parks: list[Park]) -> list[tuple[Park, tuple[str, Any]]]:
    """On the watcher thread: one look per distinct key (one per family for the keys of a family that looks at
    many at once); the parks it settles."""
    seen: dict[str, tuple[str, Any] | None] = {}
    families: dict[str, list[Park]] = {}
    for park in parks:
        if park.family is not None and park.look_many is not None:
            families.setdefault(park.family, []).append(park)
    for members in families.values():
        keys = sorted({park.key for park in members})
        try:
            seen.update(members[0].look_many(keys))  # type: ignore[misc]
        except Exception:  # the database is away for a moment: look again next time
            log.exception("parked waits could not look at %d keys", len(keys))
            seen.update(dict.fromkeys(keys))
    settled = []
    for park in parks:
        if park.key not in seen:
            try:
                seen[park.key] = park.look()
            except Exception:  # the database is away for a moment: look again next time
                log.exception("a parked wait could not look at %s", park.key)
                seen[park.key] = None
        now = seen[park.key]
        if now is not None and park.settled(*now):
            settled.append((park, now))
    return settled


class WaitingApp:
    """The ASGI application gunicorn serves: the Flask app on ``threads`` threads, and parked waits on the loop."""

    def __init__(self, flask_app: Flask, caps: WaitCaps, *, threads: int = THREADS) -> None:
        self.flask = flask_app
        self.wsgi = WSGIMiddleware(_input_terminated(flask_app), workers=threads)
        self.count = WaitCount(caps)
        flask_app.extensions[EXTENSION] = self.count
        self.watcher = Watcher()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http" or not _may_park(scope):
            await self.wsgi(scope, receive, send)  # type: ignore[arg-type]
            return
        slot: list[Park] = []
        scope = {**scope, PARK_KEY: slot}  # the view sees this dict as environ["asgi.scope"]
        held: list[Message] = []

        async def hold_if_parked(message: Message) -> None:
            if slot:
                held.append(message)
            else:
                await send(message)

        await self.wsgi(scope, receive, hold_if_parked)  # type: ignore[arg-type]
        if not slot:
            return
        park = slot[0]
        over = self.count.enter(park.owner)
        if over is not None:
            await _send_held(send, held, {"retry-after": str(REFUSED_RETRY_AFTER),
                                          "evalserve-wait": f"refused: over the {over} cap of waits held at once"})
            return
        try:
            answer = await self._hold(park, receive)
        finally:
            self.count.leave(park.owner)
        if answer is None:  # the client has gone: nothing to send
            return
        if isinstance(answer, BaseException):
            log.error("a parked wait could not be answered: %r", answer)
            await _send_held(send, held, {})
            return
        await _send_answer(send, held, answer)

    async def _hold(self, park: Park, receive: Receive) -> Answer | BaseException | None:
        """Hold ``park`` until it settles, its bound passes or the client disconnects (None); its answer."""
        loop = asyncio.get_running_loop()
        woken = self.watcher.add(park)
        gone = loop.create_task(_disconnected(receive))
        either: set[asyncio.Future[Any]] = {woken, gone}
        try:
            done, _ = await asyncio.wait(either, timeout=park.seconds,
                                         return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.watcher.remove(park)
            gone.cancel()
            woken.cancel()
        if gone in done:
            return None
        try:
            seen = woken.result() if woken in done else await loop.run_in_executor(self.watcher.executor, park.look)
            return await loop.run_in_executor(self.watcher.executor, park.finish, *seen)
        except Exception as exc:
            return exc

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.watcher.close()
                await send({"type": "lifespan.shutdown.complete"})
                return


def _may_park(scope: Scope) -> bool:
    """A cheap first look: only ``GET /v1/jobs/...?wait=``, ``GET /v1/jobs/.../plot``, ``GET
    /v1/tasks/.../submissions/...?wait=`` and ``GET /v1/tasks/.../report`` may be parked (the view decides)."""
    path = str(scope.get("path", ""))
    if scope.get("method") != "GET":
        return False
    waits = b"wait=" in scope.get("query_string", b"")
    if path.startswith("/v1/tasks/"):
        return (waits and "/submissions/" in path) or path.endswith("/report")
    return path.startswith("/v1/jobs/") and (waits or path.endswith("/plot"))


async def _disconnected(receive: Receive) -> None:
    """Return when the client has gone (the request's body, empty for a GET, is read and dropped)."""
    while (await receive())["type"] != "http.disconnect":
        pass


def _input_terminated(app: Flask) -> Callable[..., Any]:
    """The ASGI server ends every request body itself (chunked ones too): Werkzeug may read to its end."""

    def wsgi(environ: dict[str, Any], start_response: Any) -> Any:
        environ["wsgi.input_terminated"] = True
        return app(environ, start_response)

    return wsgi


def _headers(start: Message, replace: dict[str, str]) -> list[tuple[bytes, bytes]]:
    """The immediate answer's headers, those named in ``replace`` (and the body's) replaced."""
    names = _REPLACED | {name.encode("latin-1") for name in replace}
    kept = [(name, value) for name, value in start.get("headers", []) if name.lower() not in names]
    return kept + [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in replace.items()]


async def _send_held(send: Send, held: list[Message], extra: dict[str, str]) -> None:
    """Send the immediate answer the view gave, with ``extra`` headers."""
    start, body = held[0], b"".join(bytes(m.get("body", b"")) for m in held[1:])
    kept = {name.decode("latin-1"): value.decode("latin-1") for name, value in start.get("headers", [])
            if name.lower() in _REPLACED - {b"content-length"}}
    headers = _headers(start, {**kept, **extra, "content-length": str(len(body))})
    await send({"type": "http.response.start", "status": start["status"], "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _send_answer(send: Send, held: list[Message], answer: Answer) -> None:
    """Send a parked request's answer, with the immediate answer's other headers (rate limits, security)."""
    status, replace, body = answer
    headers = _headers(held[0], {**{k.lower(): v for k, v in replace.items()}, "content-length": str(len(body))})
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
