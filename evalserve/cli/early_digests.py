"""The run files named on a one-shot command line (``--run FILE``), hashed from the moment the command starts.

``main`` calls ``start`` before the subcommand's module imports NumPy and the engine -- about a tenth of a second
on one core, with the others idle -- so the SHA-256 that ``meta.inputs`` reports is mostly done by the time the
run is read; ``evaluate`` hands each digest to its ``RunFile``, whose reader then does not hash the bytes it
parses (bench/RESULTS.md). A word taken for a path by mistake costs only a wasted hash: digests are looked up by
the exact path the real parser finds. Standard library only: importing this module must not load NumPy.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from evaluation.file_digest import FileDigest, digest_files


def run_paths(argv: Sequence[str]) -> list[str]:
    """The regular files given as ``--run FILE`` or ``--run=FILE`` (standard input and the rest are left out)."""
    found = [argv[i + 1] for i in range(len(argv) - 1) if argv[i] == "--run"]
    found += [word.removeprefix("--run=") for word in argv if word.startswith("--run=")]
    return [path for path in dict.fromkeys(found) if path != "-" and os.path.isfile(path)]


def start(argv: Sequence[str]) -> dict[str, FileDigest]:
    """A digest, being computed, of every run file on the command line, by path."""
    return digest_files(run_paths(argv))
