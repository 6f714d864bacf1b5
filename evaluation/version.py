"""The evalserve version: the one place it is written (``pyproject.toml`` reads it from here, setuptools'
``attr``), so reporting it costs no scan of the installed distributions (``importlib.metadata``: ~30 ms)."""

from __future__ import annotations

#: the version of the evalserve distribution (engine, service and CLI)
VERSION = "0.1.0"


def engine_version() -> str:
    """The evalserve version, as results (``meta.evalserve_version``), ``/health`` and ``--version`` report it."""
    return VERSION
