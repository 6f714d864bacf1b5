"""Showing a job's progress while waiting for it: a one-line bar on a terminal, or the caller's own callback."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

#: ``progress(job)``: called with the job (``state``, ``stage``, ``progress`` 0..1, ...) after every poll.
ProgressCallback = Callable[[dict[str, Any]], None]
ProgressOption = bool | ProgressCallback | None

_WIDTH = 24


class TerminalProgress:
    """Redraws ``[#####-----]  42% running: evaluating run 1 of 2`` in place on ``stream``; silent unless the
    stream is a terminal, so logs and pipes never receive carriage-return noise."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _is_tty(self.stream)
        self._last = ""

    def __call__(self, job: dict[str, Any]) -> None:
        if not self.enabled:
            return
        fraction = min(1.0, max(0.0, float(job.get("progress") or 0.0)))
        done = round(fraction * _WIDTH)
        stage = str(job.get("stage") or "")
        state = str(job.get("state") or "")
        label = state if not stage or stage == state else f"{state}: {stage}"
        line = f"[{'#' * done}{'-' * (_WIDTH - done)}] {fraction:4.0%} {label}"[:118]
        self.stream.write("\r" + line.ljust(len(self._last)))
        self.stream.flush()
        self._last = line

    def close(self) -> None:
        """End the progress line so that what follows starts on a fresh line."""
        if self.enabled and self._last:
            self.stream.write("\n")
            self.stream.flush()
            self._last = ""


def reporter(option: ProgressOption) -> tuple[ProgressCallback | None, Callable[[], None]]:
    """The callback for a ``progress=`` option (None: nothing, True: terminal bar on stderr, or the caller's
    callable) and what to call when waiting ends."""
    if option is None or option is False:
        return None, _nothing
    if option is True:
        bar = TerminalProgress()
        return (bar, bar.close) if bar.enabled else (None, _nothing)
    return option, _nothing


def _nothing() -> None:
    return None


def _is_tty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or replaced streams
        return False
