"""Schema migrations (Alembic): ``upgrade`` brings a database to the newest schema; ``evalserve serve`` and
``evalserve migrate`` call it, so a fresh SQLite file or PostgreSQL database needs no manual step."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    """Apply every migration up to ``revision`` (idempotent; safe to run from several processes in turn)."""
    command.upgrade(alembic_config(database_url), revision)
