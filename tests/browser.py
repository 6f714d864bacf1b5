"""Headless Chromium for tests of server-rendered pages: find (or, on a Debian CI box as root, install) the
browser, take screenshots, dump the DOM the browser built, and parse that DOM without third-party packages.

Use the ``chromium`` fixture by importing it into a test module (``from tests.browser import chromium  # noqa: F401``);
it skips the test, with the reason, when no browser can be had.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.apt import apt_install, can_install

#: what ensure_chromium calls (names tests replace to simulate a machine that cannot install)
_can_install = can_install


def _install_chromium() -> str:
    return apt_install("chromium", done=lambda: chromium_path() is not None)


DEBIAN_CHROMIUM = Path("/usr/bin/chromium")
#: seconds one chromium run (screenshot or DOM dump) may take
BROWSER_TIMEOUT = 90.0
HEADLESS_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-dev-shm-usage",
    "--mute-audio",
)


class BrowserError(RuntimeError):
    """Chromium failed (non-zero exit, timeout or no output); the message carries its stderr."""


def chromium_path() -> str | None:
    """The Chromium executable: Debian's ``/usr/bin/chromium``, else ``chromium``/``chromium-browser`` on PATH."""
    if DEBIAN_CHROMIUM.is_file() and os.access(DEBIAN_CHROMIUM, os.X_OK):
        return str(DEBIAN_CHROMIUM)
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def chromium() -> str:
    """The Chromium executable; installed once per session if missing (root on Debian), else the test is skipped."""
    return ensure_chromium()


def ensure_chromium() -> str:
    """The Chromium executable, installing it with apt-get when missing and allowed; ``pytest.skip`` otherwise."""
    path = chromium_path()
    if path is not None:
        return path
    if not _can_install():
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium; or put chromium on PATH), "
                    "and it cannot be installed here (needs root on Debian with apt-get)")
    problem = _install_chromium()
    path = chromium_path()
    if path is None:
        pytest.skip(f"Chromium is not installed and installing it with apt-get failed: {problem or 'no executable'}")
    return path


def _run(chromium: str, args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """One headless chromium run with a throwaway profile; raises BrowserError on failure or timeout.

    Chromium runs in its own process group so that a timeout kills its helper processes too.
    """
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        command = [chromium, *HEADLESS_FLAGS, f"--user-data-dir={profile}", *args]
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True) as process:
            try:
                stdout, stderr = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                _, stderr = process.communicate()
                raise BrowserError(f"chromium timed out after {timeout:.0f} s: {' '.join(command)}\n{stderr}") from None
    if process.returncode != 0:
        raise BrowserError(f"chromium exited with {process.returncode}: {' '.join(command)}\n{stderr}")
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def screenshot(chromium: str, url: str, png_path: str | os.PathLike[str], *, width: int = 1280, height: int = 900,
               timeout: float = BROWSER_TIMEOUT) -> None:
    """Render ``url`` headless in a ``width`` x ``height`` window and save a PNG screenshot at ``png_path``."""
    target = Path(png_path).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    result = _run(chromium, [f"--screenshot={target}", f"--window-size={width},{height}", url], timeout)
    if not target.is_file() or target.stat().st_size == 0:
        raise BrowserError(f"chromium wrote no screenshot to {target}:\n{result.stderr}")


def dump_dom(chromium: str, url: str, *, timeout: float = BROWSER_TIMEOUT, flags: tuple[str, ...] = ()) -> str:
    """The DOM chromium built for ``url`` (after parsing, styles and any scripts), serialised as HTML; ``flags``
    are more chromium switches (e.g. ``--virtual-time-budget`` to let scripts fetch before the dump)."""
    result = _run(chromium, [*flags, "--dump-dom", url], timeout)
    if not result.stdout.strip():
        raise BrowserError(f"chromium dumped no DOM for {url}:\n{result.stderr}")
    return result.stdout


# ---- a small DOM for assertions (html.parser only) -------------------------------------------------------------

VOID_ELEMENTS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
                           "track", "wbr"})


@dataclass
class Element:
    """One parsed element: tag, attributes, children (elements and text) in document order."""

    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Element | str] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        """The element's classes."""
        return set(self.attrs.get("class", "").split())

    def iter(self) -> Iterator[Element]:
        """This element and every descendant element, in document order."""
        yield self
        for child in self.children:
            if isinstance(child, Element):
                yield from child.iter()

    def find_all(self, tag: str | None = None, *, class_: str | None = None, **attrs: str) -> list[Element]:
        """Descendants (and self) with the tag, the class and the attribute values given (``data_key`` = data-key)."""
        wanted = {name.replace("_", "-"): value for name, value in attrs.items()}
        return [e for e in self.iter()
                if (tag is None or e.tag == tag) and (class_ is None or class_ in e.classes)
                and all(e.attrs.get(name) == value for name, value in wanted.items())]

    def find(self, tag: str | None = None, *, class_: str | None = None, **attrs: str) -> Element:
        """The first match of :meth:`find_all`; AssertionError if there is none."""
        found = self.find_all(tag, class_=class_, **attrs)
        assert found, f"no <{tag or '*'}> with class={class_!r} {attrs} in <{self.tag}>"
        return found[0]

    def text(self) -> str:
        """The text content (as the DOM's textContent), whitespace collapsed."""
        return " ".join(self._raw_text().split())

    def _raw_text(self) -> str:
        return "".join(child if isinstance(child, str) else child._raw_text() for child in self.children)


class _TreeBuilder(HTMLParser):
    """Builds :class:`Element` trees; end tags close the nearest open element of that tag."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document")
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {name: value or "" for name, value in attrs})
        self.stack[-1].children.append(element)
        if tag not in VOID_ELEMENTS:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Element(tag, {name: value or "" for name, value in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse_html(markup: str) -> Element:
    """Parse an HTML document (e.g. a :func:`dump_dom` result) into an :class:`Element` tree rooted at #document."""
    builder = _TreeBuilder()
    builder.feed(markup)
    builder.close()
    return builder.root
