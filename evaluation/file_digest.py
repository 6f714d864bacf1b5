"""The SHA-256 of a file's bytes as stored, computed on a thread of its own (``hashlib`` and file reads release
the GIL), so that it can start before anything else is ready.

``evalserve evaluate`` starts one per run file before Python has imported NumPy and the engine (a tenth of a
second on one core, the other idle), and the run reader then takes the digest instead of hashing the bytes it
parses (``RunFile.digest``). Standard library only: importing this module must not load NumPy.
"""

from __future__ import annotations

import hashlib
import threading

_BLOCK = 1 << 20


class FileDigest:
    """SHA-256 of the file at ``path``, hashed on a daemon thread started here; ``result()`` waits for it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._digest: str | None = None
        self._thread = threading.Thread(target=self._hash, name="file-digest", daemon=True)
        self._thread.start()

    def _hash(self) -> None:
        hasher = hashlib.sha256()
        buffer = bytearray(_BLOCK)
        view = memoryview(buffer)
        try:
            with open(self.path, "rb", buffering=0) as handle:
                while got := handle.readinto(buffer):
                    hasher.update(view[:got])
        except OSError:
            return  # unreadable now: result() says so, and the reader hashes what it reads itself
        self._digest = hasher.hexdigest()

    def result(self) -> str | None:
        """The hex digest, or None when the file could not be read to its end."""
        self._thread.join()
        return self._digest
