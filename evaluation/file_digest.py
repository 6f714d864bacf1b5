"""SHA-256 digests of files' bytes as stored, computed on a thread of their own (``hashlib`` and file reads release
the GIL), so that they can start before anything else is ready.

``evalserve evaluate`` starts them for its run files before Python has imported NumPy and the engine (a tenth of
a second on one core, the others idle), and the run reader then takes a file's digest instead of hashing the
bytes it parses (``RunFile.digest``). Standard library only: importing this module must not load NumPy.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence

_BLOCK = 1 << 20


class FileDigest:
    """The SHA-256 of the file at ``path``, once ``digest_files`` has hashed it; ``result()`` waits for it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._digest: str | None = None
        self._done = threading.Event()

    def compute(self) -> None:
        """Hash the file (on the calling thread) and release whoever waits in ``result``."""
        hasher = hashlib.sha256()
        buffer = bytearray(_BLOCK)
        view = memoryview(buffer)
        try:
            with open(self.path, "rb", buffering=0) as handle:
                while got := handle.readinto(buffer):
                    hasher.update(view[:got])
            self._digest = hasher.hexdigest()
        except OSError:
            pass  # unreadable now: result() says so, and the reader hashes what it reads itself
        finally:
            self._done.set()

    def result(self) -> str | None:
        """The hex digest, or None when the file could not be read to its end."""
        self._done.wait()
        return self._digest


def digest_files(paths: Sequence[str]) -> dict[str, FileDigest]:
    """A digest of each file, by path, computed in the order given on one daemon thread started here (one
    thread, not one per file: they would only take turns for the disk and the GIL)."""
    digests = {path: FileDigest(path) for path in dict.fromkeys(paths)}
    if digests:
        threading.Thread(target=_compute_all, args=(list(digests.values()),), name="file-digests", daemon=True).start()
    return digests


def _compute_all(digests: list[FileDigest]) -> None:
    for digest in digests:
        digest.compute()


class NoDigest(FileDigest):
    """For a reader whose caller prints no digest (``evalserve trec_eval``): the file is not hashed at all."""

    def __init__(self, path: str = "") -> None:
        super().__init__(path)
        self._done.set()

    def result(self) -> str:
        return ""
