"""``pdflatex`` for tests of LaTeX reports: find it (or, on a Debian CI box as root, install Debian's
``texlive-latex-base``) and compile a document.

Use the ``pdflatex`` fixture by importing it into a test module (``from tests.latex import pdflatex  # noqa: F401``);
it skips the test, with the reason, when no pdflatex can be had.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.apt import apt_install, can_install

#: seconds one compile may take
COMPILE_TIMEOUT = 120.0
PACKAGE = "texlive-latex-base"


@pytest.fixture(scope="session")
def pdflatex() -> str:
    """The pdflatex executable; installed once per session if missing (root on Debian), else the test is skipped."""
    path = shutil.which("pdflatex")
    if path is not None:
        return path
    if not can_install():
        pytest.skip(f"pdflatex is not installed (Debian: apt-get install {PACKAGE}), and it cannot be installed"
                    " here (needs root on Debian with apt-get)")
    problem = apt_install("--no-install-recommends", PACKAGE, done=lambda: shutil.which("pdflatex") is not None)
    path = shutil.which("pdflatex")
    if path is None:
        pytest.skip(f"pdflatex is not installed and installing {PACKAGE} failed: {problem or 'no executable'}")
    return path


def compile_pdf(pdflatex: str, source: str, directory: Path) -> tuple[bytes, str]:
    """Compile ``source`` in ``directory`` (non-interactive, stopping at the first error): the PDF's bytes and
    the log; AssertionError with the log's tail when pdflatex fails."""
    (directory / "report.tex").write_text(source, encoding="utf-8")
    result = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape",
                             "report.tex"], cwd=directory, capture_output=True, text=True, timeout=COMPILE_TIMEOUT)
    log = (directory / "report.log").read_text(errors="replace") if (directory / "report.log").is_file() else ""
    assert result.returncode == 0, f"pdflatex failed ({result.returncode}):\n{(log or result.stdout)[-4000:]}"
    return (directory / "report.pdf").read_bytes(), log
