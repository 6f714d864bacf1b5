"""Installing a Debian package a test needs (chromium, pdflatex, podman): ``apt-get update`` then ``install``,
waiting for a concurrent apt's lock, for the suite run as root on Debian (CI); the tests skip with the reason
elsewhere. One install at a time across the test processes (pytest-xdist workers, other checkouts): apt-get update
does not wait for another's lock but fails at once, so the installs queue on a file lock of their own."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

INSTALL_TIMEOUT = 1800.0
#: held for the whole update and install (flock: released when the process dies)
LOCK = Path(tempfile.gettempdir()) / "evalserve-tests-apt.lock"


def can_install() -> bool:
    """Root on Debian with apt-get."""
    return (hasattr(os, "geteuid") and os.geteuid() == 0 and Path("/etc/debian_version").is_file()
            and shutil.which("apt-get") is not None)


def apt_install(*arguments: str, done: Callable[[], bool] | None = None) -> str:
    """``apt-get install -y ARGUMENTS`` after an update; '' when it worked, else the tail of what went wrong.
    ``done`` is asked once this process holds :data:`LOCK`: True (another worker installed it meanwhile) skips
    the install."""
    with LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done is not None and done():
            return ""
        return _update_and_install(arguments)


def _update_and_install(arguments: tuple[str, ...]) -> str:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "-o", "DPkg::Lock::Timeout=600", "update"],
                    ["apt-get", "-o", "DPkg::Lock::Timeout=600", "install", "-y", *arguments]):
        try:
            result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
        except subprocess.TimeoutExpired:
            return f"{' '.join(command)} timed out after {INSTALL_TIMEOUT:.0f} s"
        if result.returncode != 0:
            return f"{' '.join(command)} exited with {result.returncode}: {result.stderr.strip()[-2000:]}"
    return ""
