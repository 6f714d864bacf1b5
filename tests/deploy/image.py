"""The project's Dockerfile built and entered without a Docker engine or Docker Hub: podman (vfs storage, chroot
isolation) builds it on a Debian base made locally with mmdebstrap, and the image's commands run in a chroot into
a container made from it, as the image's USER with its ENV and WORKDIR (``podman run`` cannot start containers on
this machine: crun may not set RLIMIT_NOFILE).

Everything slow is cached in :func:`cache_dir` (``$EVALSERVE_TEST_CACHE``, default ``~/.cache/evalserve-tests``):
the base tarball, and podman's storage (the base, the stand-in for ``python:3.11-slim`` and build layers). Delete
that directory to start from scratch.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.apt import apt_install, can_install

ROOT = Path(__file__).resolve().parents[2]
CACHE_ENV = "EVALSERVE_TEST_CACHE"
BASE_IMAGE = "localhost/evalserve-test-base:bookworm"
#: what the stand-in must replace in the Dockerfile's FROM
UPSTREAM_BASE = "python:3.11-slim"
DEBIAN_SUITE = "bookworm"
BASE_PACKAGES = "python3,python3-venv,python3-pip,ca-certificates"
INSTALL_TIMEOUT = 1800.0  # the podman build's bound too
BUILD_TIMEOUT = 1800.0
ENTER_SCRIPT = Path(__file__).with_name("enter_image.py")
#: the stand-in for python:3.11-slim: Debian's Python 3.11 as a venv on PATH (as /usr/local/bin is there) and the
#: machine's CA bundle, so pip reaches the package index from inside the build even behind a TLS-intercepting proxy
STANDIN_CONTAINERFILE = f"""\
FROM {BASE_IMAGE}
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY pip.conf /etc/pip.conf
RUN python3 -m venv /opt/py \\
    && for tool in python python3 pip pip3; do ln -s /opt/py/bin/$tool /usr/local/bin/$tool; done
ENV PATH=/opt/py/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8
CMD ["python3"]
"""
#: tagged by what makes it, so a changed recipe is rebuilt rather than taken from the cache
STANDIN_IMAGE = ("localhost/evalserve-test-python:3.11-slim-"
                 + hashlib.sha256(f"{BASE_PACKAGES}\n{STANDIN_CONTAINERFILE}".encode()).hexdigest()[:12])


def cache_dir() -> Path:
    """Where the base tarball and podman's storage stay between runs."""
    override = os.environ.get(CACHE_ENV)
    path = Path(override).expanduser() if override else Path.home() / ".cache" / "evalserve-tests"
    path.mkdir(parents=True, exist_ok=True)
    return path


def ensure_tools() -> None:
    """podman and mmdebstrap, installed with apt-get when missing (root on Debian); ``pytest.skip`` otherwise.
    Entering the image needs root too (chroot, mounts)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("building and entering the image needs root (podman with vfs storage, chroot, mount)")
    missing = [tool for tool in ("podman", "mmdebstrap", "unshare") if shutil.which(tool) is None]
    if not missing:
        return
    if not can_install():
        pytest.skip(f"{', '.join(missing)} not installed (Debian: apt-get install podman mmdebstrap) and cannot be"
                    " installed here (needs root on Debian with apt-get)")
    problem = apt_install("podman", "mmdebstrap", done=lambda: all(shutil.which(tool) for tool in missing))
    still = [tool for tool in missing if shutil.which(tool) is None]
    if still:
        pytest.skip(f"{', '.join(still)} not installed and installing with apt-get failed: {problem or 'no tool'}")


class Podman:
    """podman with the test's own storage (vfs, under the cache dir) and cgroupfs: no daemon, no systemd."""

    def __init__(self, cache: Path) -> None:
        self.cache = cache
        self.base = ["podman", "--root", str(cache / "storage"), "--runroot", str(cache / "run"),
                     "--storage-driver", "vfs", "--cgroup-manager", "cgroupfs", "--events-backend", "file"]

    def run(self, *args: str, timeout: float = 600.0, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([*self.base, *args], capture_output=True, text=True, timeout=timeout)
        if check and result.returncode != 0:
            raise RuntimeError(f"podman {' '.join(args)} exited with {result.returncode}:\n"
                               f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
        return result

    def remove(self, image: str) -> None:
        """Remove ``image`` and every dangling image (earlier builds): the cache keeps only the base and stand-in."""
        self.run("rmi", "--force", image, check=False)
        self.run("image", "prune", "--force", check=False)

    def exists(self, image: str) -> bool:
        return self.run("image", "exists", image, check=False).returncode == 0

    def inspect(self, image: str) -> dict[str, Any]:
        loaded = json.loads(self.run("image", "inspect", image).stdout)
        inspected: dict[str, Any] = loaded[0] if isinstance(loaded, list) else loaded
        return inspected

    def build(self, context: Path, tag: str, *, containerfile: Path | None = None, from_image: str | None = None,
              timeout: float = BUILD_TIMEOUT) -> subprocess.CompletedProcess[str]:
        """``podman build`` as the issue did it: chroot isolation, docker format (OCI drops HEALTHCHECK); no
        intermediate images (vfs stores each as a full copy: gigabytes a run)."""
        args = ["build", "--isolation", "chroot", "--format", "docker", "--layers=false", "-t", tag]
        if from_image:
            args += ["--from", from_image]
        if containerfile:
            args += ["-f", str(containerfile)]
        return self.run(*args, str(context), timeout=timeout)


def ensure_base(podman: Podman) -> float:
    """The Debian base (mmdebstrap tarball, cached) imported, and the python:3.11-slim stand-in built on it;
    returns the seconds it took (0 when both were cached)."""
    started = time.monotonic()
    tarball = podman.cache / f"debian-{DEBIAN_SUITE}-minbase.tar"
    if not podman.exists(STANDIN_IMAGE):
        if not tarball.exists():
            partial = tarball.with_name(f"partial-{uuid.uuid4().hex[:8]}.tar")  # mmdebstrap goes by the suffix
            try:
                subprocess.run(["mmdebstrap", "--quiet", "--variant=minbase", f"--include={BASE_PACKAGES}",
                                DEBIAN_SUITE, str(partial)], check=True, capture_output=True, text=True,
                               timeout=INSTALL_TIMEOUT)
            except subprocess.CalledProcessError as e:
                partial.unlink(missing_ok=True)
                raise RuntimeError(f"mmdebstrap failed:\n{e.stderr[-3000:]}") from None
            partial.rename(tarball)
        if not podman.exists(BASE_IMAGE):
            podman.run("import", str(tarball), BASE_IMAGE)
        context = podman.cache / "standin-context"
        shutil.rmtree(context, ignore_errors=True)
        context.mkdir()
        bundle = Path(os.environ.get("SSL_CERT_FILE") or "/etc/ssl/certs/ca-certificates.crt")
        shutil.copyfile(bundle, context / "ca-certificates.crt")
        (context / "pip.conf").write_text("[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n")
        (context / "Containerfile").write_text(STANDIN_CONTAINERFILE)
        podman.build(context, STANDIN_IMAGE, containerfile=context / "Containerfile")
    return time.monotonic() - started


def build_project_image(podman: Podman, tag: str) -> float:
    """Build the repository's Dockerfile, unchanged, with the stand-in as its FROM; returns the seconds it took."""
    froms = [line.split()[1] for line in (ROOT / "Dockerfile").read_text().splitlines()
             if line.upper().startswith("FROM ")]
    assert froms == [UPSTREAM_BASE], f"the stand-in replaces {UPSTREAM_BASE}; the Dockerfile has FROM {froms}"
    started = time.monotonic()
    podman.build(ROOT, tag, from_image=STANDIN_IMAGE)
    return time.monotonic() - started


@dataclass
class Container:
    """A container made from the image (not started: its root filesystem is mounted), and the image's config."""

    podman: Podman
    name: str
    root: Path
    config: dict[str, Any]

    @property
    def env(self) -> dict[str, str]:
        return dict(item.split("=", 1) for item in self.config.get("Env") or [])

    @property
    def user(self) -> tuple[int, int]:
        """The image's USER as (uid, gid), looked up in the image's /etc/passwd."""
        user = self.config.get("User") or "root"
        name, _, group = user.partition(":")
        for line in (self.root / "etc" / "passwd").read_text().splitlines():
            fields = line.split(":")
            if fields[0] == name or fields[2] == name:
                uid, gid = int(fields[2]), int(fields[3])
                break
        else:
            raise AssertionError(f"USER {user} is not in the image's /etc/passwd")
        if group:
            for line in (self.root / "etc" / "group").read_text().splitlines():
                fields = line.split(":")
                if group in (fields[0], fields[2]):
                    gid = int(fields[2])
        return uid, gid

    def command(self, argv: list[str], *, env: dict[str, str] | None = None, volume: Path | None = None,
                user: tuple[int, int] | None = None, workdir: str | None = None) -> list[str]:
        """The host command line that runs ``argv`` in the container: a private mount namespace (so its mounts
        vanish with it) with /proc, /dev and (``volume``) a host directory on /data, then chroot, the image's USER,
        WORKDIR and ENV (``env`` added). The process keeps its pid through the execs: signal it as the main
        process."""
        uid, gid = user or self.user
        spec = {"root": str(self.root), "uid": uid, "gid": gid,
                "workdir": workdir or self.config.get("WorkingDir") or "/",
                "env": {**self.env, "HOME": self._home(uid), **(env or {})}, "argv": argv,
                "volume": str(volume) if volume else None}
        return ["unshare", "--mount", "--propagation", "private", sys.executable, str(ENTER_SCRIPT),
                json.dumps(spec)]

    def _home(self, uid: int) -> str:
        for line in (self.root / "etc" / "passwd").read_text().splitlines():
            fields = line.split(":")
            if fields[2] == str(uid):
                return fields[5]
        return "/"

    def run(self, argv: list[str], *, timeout: float = 300.0, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` inside to completion."""
        return subprocess.run(self.command(argv, **kwargs), capture_output=True, text=True, timeout=timeout)


@contextmanager
def container(podman: Podman, image: str) -> Iterator[Container]:
    """A fresh container from ``image``, its root filesystem mounted; removed afterwards."""
    name = f"evalserve-test-{uuid.uuid4().hex[:8]}"
    podman.run("create", "--name", name, image)
    try:
        root = Path(podman.run("mount", name).stdout.strip())
        yield Container(podman, name, root, podman.inspect(image)["Config"])
    finally:
        podman.run("umount", name, check=False)
        podman.run("rm", "--force", name, check=False)
