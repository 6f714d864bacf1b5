"""The reference tools themselves, built from ``../shared/oracles`` (read-only: copied, then built).

``oracle_tools()`` builds trec_eval 10.0 and ndeval once per test process into a cache folder keyed by the
sources' digest (so xdist workers and repeated sessions reuse one build) and returns their paths; gdeval.pl runs
with the system ``perl``. Tests take the ``oracles`` fixture (tests/conftest.py), which skips, saying why, when
the sources, a C compiler or perl are missing. Never edit the sources (shared/oracles/README.md).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ENV_VAR = "EVALSERVE_ORACLES"


class OracleUnavailable(RuntimeError):
    """The reference tools cannot be built here (the message says why)."""


@dataclass(frozen=True)
class Oracles:
    """Paths of the built reference tools; ``gdeval`` is a command prefix (``perl gdeval.pl``)."""

    trec_eval: Path
    ndeval: Path
    gdeval: tuple[str, ...]


def oracle_sources() -> Path:
    """``$EVALSERVE_ORACLES`` or ``<repo>/../shared/oracles``."""
    override = os.environ.get(ENV_VAR)
    return Path(override).expanduser() if override else REPO.parent / "shared" / "oracles"


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(folder)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


@cache
def oracle_tools() -> Oracles:
    """Build (or reuse) trec_eval and ndeval; raise OracleUnavailable with the reason when impossible."""
    sources = oracle_sources()
    te_src, web_src = sources / "trec_eval-10.0", sources / "trec-web-2014-eval"
    if not te_src.is_dir() or not web_src.is_dir():
        raise OracleUnavailable(f"reference tool sources not found at {sources} (set {ENV_VAR})")
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None or shutil.which("make") is None:
        raise OracleUnavailable("no C compiler or make to build trec_eval and ndeval")
    perl = shutil.which("perl")
    if perl is None:
        raise OracleUnavailable("no perl to run gdeval.pl")
    home = Path(tempfile.gettempdir()) / f"evalserve-oracles-{_digest(sources)}"
    te_bin, nd_bin = home / "trec_eval" / "trec_eval", home / "ndeval"
    if not (te_bin.exists() and nd_bin.exists()):
        build = Path(tempfile.mkdtemp(prefix="evalserve-oracles-build-"))
        try:
            shutil.copytree(te_src, build / "trec_eval")
            subprocess.run(["make", "-s", "-C", str(build / "trec_eval")], check=True, capture_output=True)
            subprocess.run([cc, "-O2", "-o", str(build / "ndeval"), str(web_src / "ndeval.c"), "-lm"],
                           check=True, capture_output=True)
            shutil.copy2(web_src / "gdeval.pl", build / "gdeval.pl")
            try:
                build.rename(home)  # atomic: a concurrent builder's rename fails and its build is dropped
            except OSError:
                shutil.rmtree(build, ignore_errors=True)
        except subprocess.CalledProcessError as exc:
            shutil.rmtree(build, ignore_errors=True)
            reason = exc.stderr.decode(errors="replace")
            raise OracleUnavailable(f"building the reference tools failed: {reason}") from exc
    return Oracles(trec_eval=te_bin, ndeval=nd_bin, gdeval=(perl, str(home / "gdeval.pl")))
