"""The warm engine's client: a one-shot command (``evalserve evaluate``, ``trec_eval`` ...) handed to a per-user
process that has NumPy and the engine imported already, so a run file costs its evaluation, not ~0.2 s of start-up.

``evalserve`` connects to ``<socket_dir()>/<key>.sock`` before importing anything heavy, sends its command line,
working directory, environment, umask and CPU affinity together with its standard input, output and error (the file
descriptors themselves, ``SCM_RIGHTS``); the server (``warm_server``) forks a copy of itself that takes them on and
runs the same ``main(argv)``, so the bytes written and the exit code are those of the in-process path. Signals the
client gets are passed on to that copy (Ctrl-C is a ``KeyboardInterrupt`` there, as here), and the copy ends if the
client dies. No server, a stale one (its code or NumPy changed on disk), or any hitch before the command starts: the
client does the work itself, exactly as without the warm engine, and starts a server for the next command.
``EVALSERVE_WARM=0`` turns all of it off (docs/warm-engine.md).

Standard library only, and its cheapest modules (``_socket``, ``_signal``: ``socket`` and ``signal`` import ``enum``
and ``selectors``, several milliseconds of a command that should take thirty).
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # (no stubs: the same functions as signal's)
import _socket
import fcntl
import marshal
import os
import stat
import sys
import zlib
from collections.abc import Sequence

#: ``EVALSERVE_WARM``: 0 (or false, no, off) runs every command in its own process and starts no server
SWITCH = "EVALSERVE_WARM"
#: ``EVALSERVE_WARM_IDLE``: seconds the server waits for a command before it exits (default 600)
IDLE = "EVALSERVE_WARM_IDLE"
DEFAULT_IDLE_SECONDS = 600
PROTOCOL = 1
#: environment variables read once, when the interpreter or NumPy starts: a server started with other values
#: than the client's is another server (its own socket)
IMPORT_TIME_ENV = ("PYTHON", "NUMPY_", "OPENBLAS_", "OMP_", "MKL_", "GOTO")
#: ``EVALSERVE_WARM_LOG``: a file the server appends a line to per command (pid, exit status, CPU seconds user and
#: system, peak RSS in kB: the command's process's own ``wait4`` figures, which the client cannot see)
LOG = "EVALSERVE_WARM_LOG"
#: the signals a client passes on to the command it delegated
FORWARDED = (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP, _signal.SIGQUIT, _signal.SIGUSR1, _signal.SIGUSR2)

# messages, server to client: a type byte and a 4-byte signed integer (little-endian)
STARTED = b"P"  # the command is running in process <value>: nothing may run here any more
RETURNED = b"R"  # the command ended with exit code <value>
ENDED = b"X"  # the command's process ended with wait status <value> (killed by a signal: no RETURNED)
REFUSED = b"S"  # nothing was run (stale server, other identity, unusable directory ...): run it here
# client to server: SIGNAL <number>
SIGNAL = b"K"
MESSAGE_SIZE = 5


def enabled(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """Whether the warm engine may be used: ``EVALSERVE_WARM`` is not 0, false, no or off."""
    return environ.get(SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


def socket_dir() -> str:
    """Where the sockets live: ``$XDG_RUNTIME_DIR/evalserve`` (the user's private runtime directory), else
    ``$TMPDIR/evalserve-<uid>`` (``/tmp`` without ``TMPDIR``); created mode 0700 by the first server."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime) and os.path.isdir(runtime):
        return os.path.join(runtime, "evalserve")
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", f"evalserve-{os.getuid()}")


def private_dir(path: str, create: bool = False) -> bool:
    """Whether ``path`` is a real directory (not a link) owned by this user that nobody else may enter; with
    ``create``, made so if it does not exist."""
    if create:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def package_dir() -> str:
    """The directory of the ``evalserve`` package this process runs."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def identity() -> str:
    """What a server must share with a client to run its commands: interpreter, install location, import path
    (but the script's own directory), user and the environment read at start-up. (Code changed on disk under
    the same identity is caught by the server.)"""
    env = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith(IMPORT_TIME_ENV))
    return "\0".join([str(PROTOCOL), sys.executable, sys.version, str(os.getuid()), package_dir(), *sys.path[1:],
                      *env])


def key(ident: str) -> str:
    """A short name for ``ident`` (the server also compares the whole identity, so a clash only costs a
    refusal)."""
    data = ident.encode("utf-8", "surrogateescape")
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


#: the longest socket path bound or connected to as it is (sun_path holds 108 bytes with its terminator)
SUN_PATH_MAX = 100


def unix_call(call: object, path: str) -> None:
    """``call(path)`` (a socket's ``bind`` or ``connect``) -- through ``/proc/self/fd/N/<name>`` when ``path`` is
    too long for an AF_UNIX address (a deep $XDG_RUNTIME_DIR or $TMPDIR), N an open descriptor of its folder."""
    if len(os.fsencode(path)) <= SUN_PATH_MAX:
        call(path)  # type: ignore[operator]
        return
    folder = os.open(os.path.dirname(path) or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        call(f"/proc/self/fd/{folder}/{os.path.basename(path)}")  # type: ignore[operator]
    finally:
        os.close(folder)


def socket_path(ident: str) -> str:
    return os.path.join(socket_dir(), key(ident) + ".sock")


def lock_path(ident: str) -> str:
    """The file a server holds locked while it starts and runs (one server per identity)."""
    return os.path.join(socket_dir(), key(ident) + ".lock")


def spawn(ident: str) -> bool:
    """Start a server for ``ident`` in the background, in its own session with its standard streams on
    ``/dev/null`` (a caller waiting for this command's output never waits for the server), unless one is
    starting or running already. False when none was started."""
    if not enabled() or not private_dir(socket_dir(), create=True):
        return False
    try:
        fd = os.open(lock_path(ident), os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released when closed below: only a test of the lock
    except OSError:
        return False
    finally:
        os.close(fd)
    root = os.path.dirname(package_dir())  # (not the caller's directory: nothing there may shadow a module)
    code = f"import sys; sys.path[0] = {root!r}; from evalserve.cli.warm_server import main; main()"
    null = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
    try:
        os.posix_spawn(sys.executable, [sys.executable, "-c", code, ident.encode("utf-8", "surrogateescape").hex()],
                       os.environ, file_actions=null, setsid=True)
    except OSError:
        return False
    return True


def _stream(stream: object) -> tuple[str, str, bool, bool] | None:
    """How a standard stream encodes text, so the server's copy of it writes the same bytes."""
    try:
        return (stream.encoding, stream.errors, bool(stream.line_buffering),  # type: ignore[attr-defined]
                bool(getattr(stream, "write_through", False)))
    except AttributeError:
        return None


def request(argv: Sequence[str], ident: str) -> bytes:
    """The command line and the process state a command depends on, as the server reads them."""
    try:
        affinity: list[int] | None = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    mask = os.umask(0o22)
    os.umask(mask)
    return marshal.dumps({
        "protocol": PROTOCOL, "identity": ident, "argv": [sys.argv[0], *argv], "cwd": os.getcwd(),
        "env": dict(os.environ), "umask": mask, "affinity": affinity, "nice": os.nice(0),
        "streams": [_stream(s) for s in (sys.stdin, sys.stdout, sys.stderr)],
    })


def _open_fds() -> list[int]:
    """Which of 0, 1, 2 are open (a closed one is sent as absent and stays closed in the server's copy)."""
    found = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            continue
        found.append(fd)
    return found


def message(kind: bytes, value: int) -> bytes:
    return kind + value.to_bytes(4, "little", signed=True)


class Delegation:
    """One command run by the server on behalf of this process."""

    def __init__(self, sock: _socket.socket) -> None:
        self.sock = sock
        self.started = False
        self.interrupted = 0  # the first signal passed on, if any

    def forward(self, signum: int, _frame: object) -> None:
        """A signal handler: pass ``signum`` on to the command's process (it arrives there even if the command
        has not started yet)."""
        self.interrupted = self.interrupted or signum
        try:
            self.sock.sendall(message(SIGNAL, signum))
        except OSError:  # the command's process is gone already
            return

    def receive(self) -> tuple[bytes, int] | None:
        data = b""
        while len(data) < MESSAGE_SIZE:
            try:
                chunk = self.sock.recv(MESSAGE_SIZE - len(data))
            except InterruptedError:  # (PEP 475 retries; kept for clarity)
                continue
            except OSError:
                return None
            if not chunk:
                return None
            data += chunk
        return data[:1], int.from_bytes(data[1:], "little", signed=True)


def delegate(argv: Sequence[str]) -> int | None:
    """Run ``evalserve argv`` in the warm engine: its exit code, or None when nothing was run there (no server,
    a stale one, warm engine off ...) and the caller must run it. Exits this process as the command's process
    ended when that was a signal."""
    if not enabled():
        return None
    ident = identity()
    if not private_dir(socket_dir()):
        return None
    fds = _open_fds()  # before the socket is made: with a standard stream closed, it takes that number
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        unix_call(sock.connect, socket_path(ident))
        data = request(argv, ident)
        header = len(data).to_bytes(4, "little") + bytes(fds)
        sock.sendmsg([header + data], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, bytes(
            b for fd in fds for b in fd.to_bytes(4, sys.byteorder, signed=True)))])
    except (OSError, ValueError):
        sock.close()
        return None
    return _follow(Delegation(sock))


def _follow(job: Delegation) -> int | None:
    previous = {}
    for signum in FORWARDED:
        try:
            previous[signum] = _signal.signal(signum, job.forward)
        except (OSError, ValueError):  # (not the main thread: an embedding program's; signals stay its own)
            continue
    try:
        while True:
            got = job.receive()
            if not job.started and job.interrupted and (got is None or got[0] == REFUSED):
                return _exit_as(0, job.interrupted)  # stopped before it started: as if stopped here
            if got is None:
                if not job.started:
                    return None  # nothing ran: the caller runs the command
                if sys.stderr is not None:
                    print("evalserve: the warm engine ended before the command did (EVALSERVE_WARM=0 runs"
                          " commands in their own process)", file=sys.stderr, flush=True)
                return 1
            kind, value = got
            if kind == STARTED:
                job.started = True
            elif kind == RETURNED:
                return value
            elif kind == ENDED:
                return _exit_as(value)
            elif kind == REFUSED and not job.started:
                return None
    finally:
        job.sock.close()
        for signum, handler in previous.items():
            _signal.signal(signum, handler)


def _exit_as(status: int, signum: int = 0) -> int:
    """The exit code for the command process's wait ``status`` (or for signal ``signum`` met before it started);
    killed by a signal, this process dies of it too (SIGINT: exit 130, as ``main`` returns on Ctrl-C)."""
    if signum == _signal.SIGINT:
        return 130
    if signum or os.WIFSIGNALED(status):
        signum = signum or os.WTERMSIG(status)
        _signal.signal(signum, _signal.SIG_DFL)  # (this process has printed nothing: nothing to flush)
        os.kill(os.getpid(), signum)
        return 128 + signum  # a signal that does not end the process (the default was to ignore it)
    return os.waitstatus_to_exitcode(status)
