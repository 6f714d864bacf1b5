"""The installed evalserve version, in a module light enough for ``evalserve --version`` to import."""

from __future__ import annotations

from importlib import metadata


def engine_version() -> str:
    """The version of the installed ``evalserve`` distribution, or ``0+unknown`` in an uninstalled source tree."""
    try:
        return metadata.version("evalserve")
    except metadata.PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"
