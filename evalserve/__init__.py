"""evalserve: evaluation as a service for search and ranking systems (command-line front end)."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    """``__version__`` (``evaluation.version.VERSION``), imported on first use."""
    if name == "__version__":
        from evaluation.version import engine_version

        return engine_version()
    raise AttributeError(f"module 'evalserve' has no attribute {name!r}")
