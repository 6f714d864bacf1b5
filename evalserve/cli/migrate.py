"""``evalserve migrate``: bring the configured database (``DATABASE_URL``, default the embedded SQLite file) to the
newest schema. ``evalserve serve`` does this itself; a deployment that starts the API with gunicorn directly (the
Docker image, docker-compose's ``migrate`` service) runs this once before the API and the workers start."""

from __future__ import annotations

import argparse
from typing import Any

from evalserve.cli.commands import help_of
from evalserve.service.core.config import Settings


def register(sub: Any) -> None:
    p = sub.add_parser("migrate", help=help_of("migrate"))
    p.add_argument("--revision", default="head", help="Alembic revision to upgrade to (default: head)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from alembic.runtime.migration import MigrationContext
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    from evalserve.service.store.datadir import secure_data_dir
    from evalserve.service.store.migrate import upgrade

    settings = Settings.from_env()
    secure_data_dir(settings)
    upgrade(settings.database_url, args.revision)
    engine = create_engine(settings.database_url)
    try:
        with engine.connect() as connection:
            revision = MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()
    shown = make_url(settings.database_url).render_as_string(hide_password=True)
    print(f"database {shown} is at schema revision {revision}", flush=True)
    return 0
