"""Installing a Debian package a test needs (chromium, pdflatex, podman): ``apt-get update`` then ``install``,
waiting for a concurrent apt's lock, for the suite run as root on Debian (CI); the tests skip with the reason
elsewhere."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

INSTALL_TIMEOUT = 1800.0


def can_install() -> bool:
    """Root on Debian with apt-get."""
    return (hasattr(os, "geteuid") and os.geteuid() == 0 and Path("/etc/debian_version").is_file()
            and shutil.which("apt-get") is not None)


def apt_install(*arguments: str) -> str:
    """``apt-get install -y ARGUMENTS`` after an update; '' when it worked, else the tail of what went wrong."""
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
