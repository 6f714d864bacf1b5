"""evalserve: evaluation as a service for search and ranking systems (command-line front end)."""

from evaluation.report import engine_version

__version__ = engine_version()
