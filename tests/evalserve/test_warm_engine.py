"""The warm engine (``evalserve.cli.warm``, ``warm_server``): a one-shot command handed to it writes the same bytes
to the same places, with the same exit code, as the command run in its own process; a missing or stale server
means the command runs in its own process; signals reach the command; ``EVALSERVE_WARM=0`` turns it off.

Each test has its own socket directory (``XDG_RUNTIME_DIR``) and stops the servers it started. docs/warm-engine.md.
"""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalserve.cli import warm
from evalserve.cli.warm_server import module_files, unchanged

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "evalserve" / "samples"
QRELS, RUN, RUN2 = (str(SAMPLES / name) for name in ("sample.qrels", "bm25.run", "neural.run"))
#: the console script's entry, run by this interpreter (the installed ``evalserve`` script does the same)
ENTRY = "import sys; sys.argv[0] = 'evalserve'; from evalserve.cli.entry import run; run()"


class Warm:
    """Commands run as the console script runs them, with a private socket directory and log."""

    def __init__(self, tmp: Path) -> None:
        self.runtime = tmp / "runtime"
        self.runtime.mkdir(mode=0o700)
        self.log = tmp / "warm.log"
        self.env = {**os.environ, "EVALSERVE_WARM": "1", "XDG_RUNTIME_DIR": str(self.runtime),
                    "EVALSERVE_WARM_LOG": str(self.log), "EVALSERVE_WARM_IDLE": "120", "PYTHONPATH": str(ROOT)}
        self.cwd = tmp

    def run(self, *argv: str, warm_engine: bool = True, stdin: bytes | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
        environ = {**self.env, **(env or {}), "EVALSERVE_WARM": "1" if warm_engine else "0"}
        return subprocess.run([sys.executable, "-c", ENTRY, *argv], cwd=self.cwd, env=environ, input=stdin,
                              capture_output=True, timeout=120)

    def sockets(self) -> list[Path]:
        return sorted((self.runtime / "evalserve").glob("*.sock")) if (self.runtime / "evalserve").exists() else []

    def wait_ready(self, timeout: float = 180.0) -> Path:
        """The server's socket, once it listens (the first command started it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.sockets()
            if found:
                return found[0]
            time.sleep(0.05)
        raise AssertionError("no warm engine started")

    def served(self) -> int:
        """How many commands the server has run (its log: one line each)."""
        return len(self.log.read_text().splitlines()) if self.log.exists() else 0

    def served_by_now(self, count: int, timeout: float = 10.0) -> bool:
        """Whether the log reaches ``count`` lines within ``timeout`` (the server writes a command's line when it
        has reaped its process: after the client left)."""
        deadline = time.monotonic() + timeout
        while self.served() < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.served() >= count

    def stop(self) -> None:
        """Stop every server started here, also one still starting (its lock is held before its pid is written)."""
        directory = self.runtime / "evalserve"
        for lock in sorted(directory.glob("*.lock")) if directory.exists() else []:
            deadline = time.monotonic() + 60
            while held(lock) and time.monotonic() < deadline:
                pid = server_pid(lock.with_suffix(".sock"))
                if pid and _alive(pid):
                    os.kill(pid, signal.SIGTERM)
                time.sleep(0.1)


def held(lock: Path) -> bool:
    """Whether a server holds ``lock`` (starting or running)."""
    with open(lock, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(f, fcntl.LOCK_UN)
        return False


def server_pid(path: Path) -> int | None:
    """The pid of the server listening on ``path``: written in its lock file (connecting would hand a client
    over)."""
    try:
        pid = int(path.with_suffix(".lock").read_text())
    except (OSError, ValueError):
        return None
    return pid


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Warm]:
    w = Warm(tmp_path)
    yield w
    w.stop()


def started(engine: Warm) -> None:
    """Start the server (a first command, run in its own process) and wait until it listens."""
    first = engine.run("evaluate", "--qrels", QRELS, "--run", RUN, "-m", "AP")
    assert first.returncode == 0, first.stderr
    engine.wait_ready()


CASES = {
    "json per topic": ["evaluate", "--qrels", QRELS, "--run", RUN, "--run", RUN2, "--per-topic"],
    "trec_eval": ["evaluate", "--qrels", QRELS, "--run", RUN, "--format", "trec_eval", "-m", "map", "P_10",
                  "ndcg_cut_10", "--per-topic"],
    "tsv": ["evaluate", "--qrels", QRELS, "--run", RUN, "--format", "tsv", "-m", "AP", "RR"],
    "bad measure": ["evaluate", "--qrels", QRELS, "--run", RUN, "-m", "ncdg@10"],
    "missing file": ["evaluate", "--qrels", "no-such-qrels", "--run", RUN],
    "usage error": ["evaluate", "--qrels", QRELS],
    "help": ["evaluate", "--help"],
    "demo": ["demo", "--format", "trec_eval"],
}


@pytest.mark.parametrize("case", CASES)
def test_a_warm_command_writes_the_same_bytes_and_exit_code(engine: Warm, case: str) -> None:
    started(engine)
    before = engine.served()
    warm_done = engine.run(*CASES[case])
    assert engine.served_by_now(before + 1)  # the server ran it
    alone = engine.run(*CASES[case], warm_engine=False)
    assert (warm_done.returncode, warm_done.stdout, warm_done.stderr) == (alone.returncode, alone.stdout,
                                                                         alone.stderr)


def test_output_files_standard_input_and_the_working_directory_are_the_clients(engine: Warm,
                                                                               tmp_path: Path) -> None:
    started(engine)
    (tmp_path / "here.run").write_bytes(Path(RUN).read_bytes())
    argv = ["evaluate", "--qrels", QRELS, "--run", "here.run", "--run", "-", "-m", "AP", "-o", "out.json"]
    warm_done = engine.run(*argv, stdin=Path(RUN2).read_bytes())
    assert warm_done.returncode == 0, warm_done.stderr
    warm_out = (tmp_path / "out.json").read_bytes()
    os.unlink(tmp_path / "out.json")
    alone = engine.run(*argv, stdin=Path(RUN2).read_bytes(), warm_engine=False)
    assert alone.returncode == 0
    assert warm_out == (tmp_path / "out.json").read_bytes()
    assert engine.served_by_now(1)
    assert oct((tmp_path / "out.json").stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_closed_standard_output_stays_closed(engine: Warm) -> None:
    started(engine)
    argv = [sys.executable, "-c", ENTRY, "evaluate", "--qrels", QRELS, "--run", RUN, "-m", "AP"]
    done = {}
    for flag in ("1", "0"):
        done[flag] = subprocess.run(argv, cwd=engine.cwd, env={**engine.env, "EVALSERVE_WARM": flag},
                                    stdin=subprocess.DEVNULL, stdout=None, stderr=subprocess.PIPE, timeout=120,
                                    pass_fds=(), preexec_fn=lambda: os.close(1))
    assert done["1"].returncode == done["0"].returncode == 1  # no standard output: as the interpreter fails
    assert b"AttributeError" in done["1"].stderr and b"AttributeError" in done["0"].stderr


def test_the_environment_is_the_clients(engine: Warm) -> None:
    started(engine)
    before = engine.served()
    small = engine.run("evaluate", "--qrels", QRELS, "--run", RUN, env={"EVALSERVE_MAX_LINES": "3"})
    alone = engine.run("evaluate", "--qrels", QRELS, "--run", RUN, env={"EVALSERVE_MAX_LINES": "3"},
                       warm_engine=False)
    assert engine.served_by_now(before + 1)
    assert (small.returncode, small.stdout, small.stderr) == (alone.returncode, alone.stdout, alone.stderr)


def test_a_stale_server_refuses_and_the_command_runs_in_its_own_process(engine: Warm, tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("")  # a module every process loads: the server's 'code'
    engine.env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{site}"
    started(engine)
    path = engine.sockets()[0]
    pid = server_pid(path)
    served = engine.served()
    later = time.time() + 5
    os.utime(site / "sitecustomize.py", (later, later))  # "upgraded"
    done = engine.run("evaluate", "--qrels", QRELS, "--run", RUN, "-m", "AP")
    assert done.returncode == 0, done.stderr
    assert not engine.served_by_now(served + 1, timeout=1.0)  # not by the server
    assert done.stdout == engine.run("evaluate", "--qrels", QRELS, "--run", RUN, "-m", "AP",
                                     warm_engine=False).stdout
    deadline = time.monotonic() + 10
    while pid is not None and _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pid is not None and not _alive(pid)  # the stale server is gone


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (our child? never: the server runs in its own session) counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_no_server_no_socket_directory_when_turned_off(engine: Warm) -> None:
    done = engine.run("evaluate", "--qrels", QRELS, "--run", RUN, warm_engine=False)
    assert done.returncode == 0
    time.sleep(0.5)
    assert not (engine.runtime / "evalserve").exists()


def test_a_socket_nobody_listens_on_means_the_command_runs_here(engine: Warm) -> None:
    directory = engine.runtime / "evalserve"
    directory.mkdir(mode=0o700)
    ident = warm.identity()  # (this interpreter's identity is the client's: same executable and path)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    warm.unix_call(dead.bind, str(directory / f"{warm.key(ident)}.sock"))  # bound, never listening: refused
    dead.close()
    done = engine.run("evaluate", "--qrels", QRELS, "--run", RUN, "-m", "AP")
    assert done.returncode == 0, done.stderr
    assert b'"AP"' in done.stdout


def handed_over(engine: Warm, timeout: float = 60.0) -> None:
    """Wait until the server has handed a client over: it has two children, the command's process and the next
    spare (then a moment for the client to set its signal handlers)."""
    pid = server_pid(engine.sockets()[0])
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if len(children) >= 2:
            time.sleep(0.5)
            return
        time.sleep(0.05)
    raise AssertionError("the command was not handed over")


def test_ctrl_c_reaches_the_command(engine: Warm) -> None:
    started(engine)
    environ = {**engine.env, "EVALSERVE_WARM": "1"}
    client = subprocess.Popen([sys.executable, "-c", ENTRY, "evaluate", "--qrels", QRELS, "--run", "-"],
                              cwd=engine.cwd, env=environ, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    served = engine.served()
    handed_over(engine)  # the command waits for its run on standard input
    client.send_signal(signal.SIGINT)
    client.wait(timeout=60)  # standard input still open: the Ctrl-C, not an end of input, stops the command
    _, err = client.communicate(timeout=10)  # (communicate closes stdin first: a loaded CI saw [empty-run])
    assert client.returncode == 130, err
    assert engine.served_by_now(served + 1)  # the command's process ended too
    assert client.stdin is not None


def test_a_client_that_dies_takes_its_command_with_it(engine: Warm) -> None:
    started(engine)
    environ = {**engine.env, "EVALSERVE_WARM": "1"}
    client = subprocess.Popen([sys.executable, "-c", ENTRY, "evaluate", "--qrels", QRELS, "--run", "-"],
                              cwd=engine.cwd, env=environ, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    served = engine.served()
    handed_over(engine)
    client.kill()
    client.communicate(timeout=60)
    assert engine.served_by_now(served + 1)
    last = engine.log.read_text().splitlines()[-1].split()
    assert os.WIFSIGNALED(int(last[1]))


def test_the_client_imports_nothing_heavy(engine: Warm, tmp_path: Path) -> None:
    started(engine)
    listing = tmp_path / "modules.txt"
    probe = ("import os, sys\n"
             "leave = os._exit\n"
             "def noted(code):\n"
             f"    open({str(listing)!r}, 'w').write('\\n'.join(sorted(sys.modules)))\n"
             "    leave(code)\n"
             "os._exit = noted\n" + ENTRY.replace("; ", "\n"))
    done = subprocess.run([sys.executable, "-c", probe, "evaluate", "--qrels", QRELS, "--run", RUN],
                          cwd=engine.cwd, env=engine.env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    imported = set(listing.read_text().split())
    assert "evalserve.cli.warm" in imported
    assert not imported & {"numpy", "argparse", "evaluation.problems", "evalserve.cli.main", "typing"}


def test_module_files_notice_a_changed_file(tmp_path: Path) -> None:
    files = module_files()
    assert files and unchanged(files)
    f = tmp_path / "m.py"
    f.write_text("")
    watched = {str(f): f.stat().st_mtime_ns}
    assert unchanged(watched)
    os.utime(f, ns=(0, 12345))
    assert not unchanged(watched)


def test_the_socket_directory_must_be_private(tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    os.chmod(loose, 0o755)
    assert not warm.private_dir(str(loose))
    tight = tmp_path / "tight"
    assert warm.private_dir(str(tight), create=True)
    link = tmp_path / "link"
    link.symlink_to(tight)
    assert not warm.private_dir(str(link))
