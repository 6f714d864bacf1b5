"""Opening an input: a path, ``-`` for standard input, or bytes already in memory; gzip detected by content."""

from __future__ import annotations

import gzip
import hashlib
import os
import sys
import zlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Union

from evaluation.problems import InputError

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"

#: What a reader accepts: a filesystem path, "-" (stdin), or an already-loaded Blob.
SourceLike = Union[str, os.PathLike[str], "Blob"]


@dataclass(frozen=True)
class Blob:
    """Raw (already decompressed) bytes of one input with the name used in messages and results."""

    name: str
    data: bytes
    raw: bytes  # as given (possibly gzip), for the content hash

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "<bytes>") -> Blob:
        """Wrap bytes as an input, decompressing gzip content and dropping a UTF-8 byte-order mark."""
        text = _gunzip(data, name)
        if text.startswith(UTF8_BOM):
            text = text[len(UTF8_BOM) :]
        return cls(name, text, data)

    @cached_property
    def sha256(self) -> str:
        """SHA-256 of the bytes as given (computed on first use: hashing is not free on large runs)."""
        return hashlib.sha256(self.raw).hexdigest()


def _gunzip(data: bytes, name: str) -> bytes:
    if not data.startswith(GZIP_MAGIC):
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError.single("gzip-corrupt", f"cannot decompress gzip input: {exc}", name) from None


def display_name(path: str | os.PathLike[str]) -> str:
    """A run's name as results show it: the file name without directories and without ``.gz``."""
    base = Path(path).name
    return base[:-3] if base.endswith(".gz") else base


def load(source: SourceLike, name: str | None = None) -> Blob:
    """Read an input fully into memory; problems opening it become an InputError (never a traceback)."""
    if isinstance(source, Blob):
        return source
    text = os.fspath(source)
    if text == "-":
        return Blob.from_bytes(sys.stdin.buffer.read(), name or "<stdin>")
    label = name or text
    try:
        data = Path(text).read_bytes()
    except FileNotFoundError:
        raise InputError.single("file-not-found", f"no such file: {text}", label) from None
    except IsADirectoryError:
        raise InputError.single("file-not-readable", f"is a directory, not a file: {text}", label) from None
    except OSError as exc:
        raise InputError.single("file-not-readable", f"cannot read {text}: {exc.strerror}", label) from None
    return Blob.from_bytes(data, label)
