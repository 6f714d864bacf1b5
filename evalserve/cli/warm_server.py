"""The warm engine's server: one per user and identity (``warm.identity``), started in the background by the first
one-shot command that found none, with NumPy, the engine and every one-shot command's parser loaded.

For each client it forks a copy of itself (copy-on-write: the loaded modules cost no time and almost no memory)
that takes on the client's standard streams, directory, environment, umask and CPU affinity and runs
``main(argv)`` as the client would have. The server itself runs no command and never has a second thread, so
each copy starts from the same clean state. It exits after ``EVALSERVE_WARM_IDLE`` seconds (default 600) without
a command, when its socket is removed or replaced, and -- telling the client to do the work itself -- as soon as
a module it has loaded changed on disk (an upgrade or an edit), so a stale engine never answers.
Only the user who started it may connect (``SO_PEERCRED``; its directory is 0700). docs/warm-engine.md.
"""

from __future__ import annotations

import atexit
import fcntl
import gc
import io
import marshal
import os
import select
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout, suppress
from pathlib import Path
from typing import Any, NoReturn

from evalserve.cli import warm

_UCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid
LOCK_ATTEMPTS = 10  # a server just told to stop may still hold the lock for a moment


def module_files() -> dict[str, int]:
    """Every loaded module's file and its modification time (nanoseconds), to tell when the code changed."""
    found = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path:
            try:
                found[path] = os.stat(path).st_mtime_ns
            except OSError:
                continue
    return found


def unchanged(files: dict[str, int]) -> bool:
    """Whether every file in ``files`` still has its modification time."""
    for path, mtime in files.items():
        try:
            if os.stat(path).st_mtime_ns != mtime:
                return False
        except OSError:
            return False
    return True


_IDENTITY = [""]  # the server's identity (a copy compares its client's with it)


#: a tiny ad hoc collection the warm-up evaluates, so lazily imported parts of the engine load before any fork
_QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n2 0 d1 0\n2 0 d4 1\n"
_RUN = "1 Q0 d1 1 2.5 r\n1 Q0 d3 2 1.5 r\n1 Q0 d9 3 0.5 r\n2 Q0 d4 1 0.25 r\n2 Q0 d2 2 1e-3 r\n"


def warm_up() -> None:
    """Load NumPy, the engine and each one-shot command's parser, and run each once on a tiny input (output
    discarded), one thread, so that the forked copies import nothing they can share."""
    from evalserve.cli import main as cli
    from evalserve.cli.commands import COMMANDS
    from evalserve.cli.numpy_env import prepare_one_shot

    prepare_one_shot()
    with tempfile.TemporaryDirectory(prefix="evalserve-warm-") as tmp:
        qrels, run = Path(tmp, "qrels"), Path(tmp, "run")
        qrels.write_text(_QRELS)
        run.write_text(_RUN)
        for command in COMMANDS:
            if not command.one_shot:
                continue
            for argv in WARM_UPS.get(command.name, _imported_only)(str(qrels), str(run)):
                sink = io.StringIO()
                # only a warm-up: the command reports its own problems
                with redirect_stdout(sink), redirect_stderr(sink), suppress(Exception, SystemExit):
                    cli.main(argv)
            cli.PREBUILT[command.name] = cli.build_parser((command.name,))
    for thread in threading.enumerate():  # (file digests): a fork copies no thread but may copy a held lock
        if thread is not threading.main_thread():
            thread.join(10)


def _imported_only(qrels: str, run: str) -> list[list[str]]:
    return []


_TREC_EVAL_DEFAULT = (
    "num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank "
    + " ".join(f"iprec_at_recall_{r / 10:.2f}" for r in range(11))
    + " P_5 P_10 P_15 P_20 P_30 P_100 P_200 P_500 P_1000").split()

#: how each one-shot command is warmed up (qrels and run paths in, command lines out); others are only imported
WARM_UPS: dict[str, Callable[[str, str], list[list[str]]]] = {
    "evaluate": lambda q, r: [
        ["evaluate", "--qrels", q, "--run", r, "--threads", "1", "-q"],
        ["evaluate", "--qrels", q, "--run", r, "--threads", "1", "-q", "--format", "trec_eval", "-m",
         *_TREC_EVAL_DEFAULT, "--per-topic"],
    ],
    "trec_eval": lambda q, r: [["trec_eval", q, r], ["trec_eval", "-q", "-m", "all_trec", q, r]],
}


class Server:
    """The accept loop: one forked copy per command, reaped on SIGCHLD; the client is told how it ended."""

    def __init__(self, ident: str, path: str, idle: float) -> None:
        self.ident = ident
        self.path = path
        self.idle = idle
        self.running: dict[int, socket.socket] = {}  # command process -> its client's connection
        self.spare: tuple[int, socket.socket] | None = None  # a copy forked and ready, and how to hand it a client
        self.files: dict[str, int] = {}
        self.listener: socket.socket | None = None
        self.inode: tuple[int, int] | None = None
        self.wake_r, self.wake_w = os.pipe()
        self.log = os.environ.get(warm.LOG)
        self.lock_fd = -1  # the lock file, held while this server runs: its copies close theirs (else a command
        # still running would keep a fresh server from starting after this one stops)

    def bind(self) -> None:
        """Listen on a fresh socket, then move it into place (a client never meets a half-started server)."""
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        staging = f"{self.path}.{os.getpid()}"
        with suppress(FileNotFoundError):
            os.unlink(staging)
        warm.unix_call(listener.bind, staging)
        listener.listen(64)
        os.rename(staging, self.path)
        st = os.stat(self.path)
        self.listener, self.inode = listener, (st.st_dev, st.st_ino)

    def ours(self) -> bool:
        """Whether the socket file is still this server's."""
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self.inode

    def serve(self) -> None:
        for fd in (self.wake_r, self.wake_w):
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, lambda *_: self._stop())
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        assert self.listener is not None
        last = time.monotonic()
        self._fork_spare()
        try:
            while True:
                wait = None if self.running else max(0.0, last + self.idle - time.monotonic())
                watched: list[socket.socket | int] = [self.listener, self.wake_r]
                ready, _, _ = select.select(watched, [], [], 60.0 if wait is None else min(wait, 60.0))
                if self.wake_r in ready:
                    self._drain()
                self._reap()
                if self.listener in ready:
                    if not self._accept():
                        return
                    last = time.monotonic()
                elif not self.ours():
                    return
                if self.running:
                    last = time.monotonic()
                elif time.monotonic() - last >= self.idle:
                    return
        finally:
            self._close()

    def _stop(self) -> NoReturn:
        self._close()
        os._exit(0)

    def _close(self) -> None:
        if self.spare is not None:
            self.spare[1].close()  # the spare sees the end of its hand-off socket and exits
            self.spare = None
        if self.listener is not None:
            if self.ours():
                with suppress(OSError):
                    os.unlink(self.path)
            self.listener.close()
            self.listener = None

    def _drain(self) -> None:
        try:
            while os.read(self.wake_r, 512):
                pass
        except BlockingIOError:
            pass

    def _reap(self) -> None:
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if self.spare is not None and self.spare[0] == pid:  # died waiting (killed?): fork another
                self.spare[1].close()
                self.spare = None
                continue
            self._log(f"{pid} {status} {usage.ru_utime:.6f} {usage.ru_stime:.6f} {usage.ru_maxrss}\n")
            conn = self.running.pop(pid, None)
            if conn is not None:
                with suppress(OSError):
                    conn.sendall(warm.message(warm.ENDED, status))
                conn.close()

    def _log(self, line: str) -> None:
        if self.log:
            try:
                with open(self.log, "a") as f:
                    f.write(line)
            except OSError:
                pass

    def _accept(self) -> bool:
        """Take one client; False when this server must stop (its code changed on disk)."""
        assert self.listener is not None
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return True
        _, uid, _ = _UCRED.unpack(conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size))
        if uid != os.getuid():
            conn.close()
            return True
        if not unchanged(self.files) or threading.active_count() != 1:
            _send(conn, warm.REFUSED, 0)
            conn.close()
            return False
        spare, self.spare = self.spare, None
        try:
            if spare is None:
                raise OSError("no spare")
            pid, handoff = spare
            handoff.sendmsg([b"C"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", conn.fileno()))])
            handoff.close()
        except OSError:  # no spare (or it died): a copy made now
            pid = os.fork()
            if pid == 0:
                _command(conn, self)
        self.running[pid] = conn
        self._fork_spare()
        return True

    def _fork_spare(self) -> None:
        """Fork the copy that takes the next client while nobody waits (a fork of the ~50 MB server is not free).
        (Faulting in heap memory ahead in it, or rehearsing a command there, saved under 15% of a 50-topic
        command's CPU time in a trial: the spare does nothing but wait.)"""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:
            ours.close()
            self._forget()
            try:
                _, ancillary, _, _ = theirs.recvmsg(1, socket.CMSG_SPACE(4))
            except OSError:
                os._exit(0)
            fds = [struct.unpack("i", data[:4])[0] for level, kind, data in ancillary
                   if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS and len(data) >= 4]
            if not fds:  # the server has gone
                os._exit(0)
            theirs.close()
            _command(socket.socket(fileno=fds[0]), None)
        theirs.close()
        self.spare = (pid, ours)

    def _forget(self) -> None:
        """In a copy: let go of everything of the server's (its socket, other clients, signal set-up)."""
        if self.listener is not None:
            self.listener.close()
        for fd in (self.wake_r, self.wake_w):
            os.close(fd)
        for other in self.running.values():
            other.close()
        if self.spare is not None:
            self.spare[1].close()
        if self.lock_fd >= 0:
            os.close(self.lock_fd)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _send(conn: socket.socket, kind: bytes, value: int) -> None:
    with suppress(OSError):
        conn.sendall(warm.message(kind, value))


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[tuple[int, int]]]:
    """The client's request and the file descriptors sent with it (its 0, 1, 2 that are open)."""
    fd_size = 4
    data, ancillary, _, _ = conn.recvmsg(1 << 16, socket.CMSG_SPACE(3 * fd_size))
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % fd_size
            fds += [int.from_bytes(payload[i:i + fd_size], sys.byteorder, signed=True)
                    for i in range(0, usable, fd_size)]
    if len(data) < 4:
        raise ValueError("short request")
    size = int.from_bytes(data[:4], "little")
    numbers = list(data[4:4 + len(fds)])
    body = data[4 + len(fds):]
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ValueError("short request")
        body += chunk
    found = marshal.loads(body)
    if not isinstance(found, dict):
        raise ValueError("bad request")
    return found, list(zip(numbers, fds))


def _command(conn: socket.socket, server: Server | None) -> NoReturn:
    """In a forked copy (``server``: just forked; None: a spare, ready): become the client's process, run its
    command, report the exit code."""
    code = 1
    try:
        if server is not None:
            server._forget()
        request, fds = _receive(conn)
        if request.get("protocol") != warm.PROTOCOL or request.get("identity") != _IDENTITY[0]:
            _send(conn, warm.REFUSED, 0)
            os._exit(0)
        _become(request, fds)
    except BaseException:  # nothing has run: the client runs the command itself
        _send(conn, warm.REFUSED, 0)
        os._exit(0)
    try:
        threading.Thread(target=_watch, args=(conn,), daemon=True).start()
        _send(conn, warm.STARTED, os.getpid())
        code = _run(request["argv"])
    except KeyboardInterrupt:
        code = 130
    except BaseException:  # as the interpreter would: the traceback, exit 1
        traceback.print_exc()
        code = 1
    code = _finish(code)
    _RETURNING.set()
    _send(conn, warm.RETURNED, code)
    os._exit(code)


def _become(request: dict[str, Any], fds: list[tuple[int, int]]) -> None:
    """Take on the client's standard streams, directory, environment, umask, affinity and niceness."""
    given = dict(fds)
    for number in (0, 1, 2):
        if number in given:
            os.dup2(given[number], number)
        else:
            with suppress(OSError):
                os.close(number)
    for _, fd in fds:
        if fd > 2:
            os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.umask(request["umask"])
    if request.get("affinity"):
        with suppress(OSError):
            os.sched_setaffinity(0, request["affinity"])
    lower = request.get("nice", 0) - os.nice(0)
    if lower > 0:
        os.nice(lower)
    streams = request["streams"]
    stdin, stdout, stderr = (_text(n, "r" if n == 0 else "w", streams[n]) if n in given else None for n in (0, 1, 2))
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    vars(sys).update(__stdin__=stdin, __stdout__=stdout, __stderr__=stderr)  # (the client's: what it started with)
    sys.argv = list(request["argv"])


def _text(fd: int, mode: str, how: tuple[str, str, bool, bool] | None) -> io.TextIOWrapper:
    """A standard stream on ``fd`` as the client's interpreter made it (encoding, errors, buffering)."""
    encoding, errors, line_buffering, write_through = how or ("utf-8", "strict", False, False)
    raw = io.FileIO(fd, mode, closefd=False)
    buffered: io.BufferedReader | io.BufferedWriter = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
    return io.TextIOWrapper(buffered, encoding=encoding, errors=errors, newline="\n",
                            line_buffering=line_buffering, write_through=write_through)


_RETURNING = threading.Event()  # the exit code is being sent: the client may leave


def _watch(conn: socket.socket) -> None:
    """Deliver the signals the client passes on; if the client goes away, so does the command."""
    while True:
        try:
            data = conn.recv(warm.MESSAGE_SIZE)
        except OSError:
            data = b""
        if len(data) < warm.MESSAGE_SIZE or data[:1] != warm.SIGNAL:
            if not _RETURNING.is_set():
                os.kill(os.getpid(), signal.SIGKILL)
            return
        os.kill(os.getpid(), int.from_bytes(data[1:], "little", signed=True))


def _run(argv: list[str]) -> int:
    """``evalserve argv[1:]`` as ``main`` runs it in the client's own process."""
    from evalserve.cli.main import main

    try:
        return int(main(argv[1:]))
    except SystemExit as exc:  # argparse: usage errors (2), --help (0)
        return _exit_code(exc.code)


def _exit_code(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    print(value, file=sys.stderr)
    return 1


def _finish(code: int) -> int:
    """What the interpreter does at exit and a user can see: other threads waited for, the ``atexit`` handlers,
    the streams flushed (exit 120 if they cannot be, as the interpreter's)."""
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    try:
        atexit._run_exitfuncs()
    except BaseException:
        traceback.print_exc()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            return 120
    return code


def idle_seconds() -> float:
    try:
        return max(1.0, float(os.environ.get(warm.IDLE, warm.DEFAULT_IDLE_SECONDS)))
    except ValueError:
        return float(warm.DEFAULT_IDLE_SECONDS)


def main() -> None:
    """Start a server for the client identity given (hexadecimal) as the one argument (``warm.spawn`` runs this
    detached); exits at once if another one holds the lock."""
    os.chdir("/")
    ident = bytes.fromhex(sys.argv[1]).decode("utf-8", "surrogateescape")
    if not warm.private_dir(warm.socket_dir(), create=True):
        return
    path = warm.socket_path(ident)
    with open(warm.lock_path(ident), "a+") as lock:  # (not "w": a running server's pid is in it)
        for _ in range(LOCK_ATTEMPTS):
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                time.sleep(0.2)
        else:
            return
        lock.seek(0)
        lock.truncate()
        lock.write(f"{os.getpid()}\n")  # who to stop (docs/warm-engine.md)
        lock.flush()
        warm_up()
        gc.collect()
        gc.freeze()  # the copies' collections leave the warm objects (and their pages) alone
        _IDENTITY[0] = ident
        server = Server(ident, path, idle_seconds())
        server.lock_fd = lock.fileno()
        server.files = module_files()
        server.bind()
        server.serve()


if __name__ == "__main__":
    main()
