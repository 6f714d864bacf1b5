"""The data directory and the SQLite files in it are private to the service's user: the database holds hidden
judgments and webhook secrets. Created 0700 / 0600; a looser mode found at start is tightened, with a log line."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from sqlalchemy.engine import make_url

from evalserve.service.core.config import Settings

log = logging.getLogger(__name__)
DIR_MODE = 0o700
FILE_MODE = 0o600


def sqlite_path(url: str) -> Path | None:
    """The file of a ``sqlite:///`` URL (database or embedded broker), or None (in memory, another backend)."""
    if not url.startswith("sqlite"):
        return None
    database = make_url(url).database
    return Path(database) if database and database != ":memory:" else None


def _tighten(path: Path, mode: int) -> None:
    current = stat.S_IMODE(path.stat().st_mode)
    if current & ~mode:
        path.chmod(current & mode)
        log.warning("tightened the mode of %s from %o to %o (private to the service's user)", path, current,
                    current & mode)


def secure_data_dir(settings: Settings) -> None:
    """Create the data directory (0700) and the SQLite database and broker files (0600; SQLite gives its -wal and
    -shm files the database's mode) before anything opens them; tighten looser modes left by older versions."""
    directory = settings.data_dir
    if not directory.exists():
        directory.mkdir(parents=True, mode=DIR_MODE, exist_ok=True)
    _tighten(directory, DIR_MODE)
    for url in (settings.database_url, settings.broker_url):
        path = sqlite_path(url)
        if path is None:
            continue
        try:
            path.parent.mkdir(parents=True, mode=DIR_MODE, exist_ok=True)
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE))  # an empty file is an empty database
        except OSError as exc:
            if url == settings.database_url:
                raise
            # an unreachable embedded broker stops nothing: the API accepts jobs into the database and /health
            # (and ``serve``) say the broker is down until it is back
            log.warning("the embedded broker %s cannot be opened (%s); jobs wait in the database until it can", path,
                        exc.strerror or exc)
            continue
        for companion in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            if companion.exists():
                _tighten(companion, FILE_MODE)
