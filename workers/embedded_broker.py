"""The embedded broker: kombu's SQLAlchemy transport on a SQLite file, with the settings a shared SQLite file
needs (WAL, waiting for locks) and a short polling interval. kombu hands every transport option to
``create_engine``; this transport keeps the options meant for kombu itself away from it."""

from __future__ import annotations

from typing import Any

from kombu.transport import sqlalchemy as sqla
from sqlalchemy import create_engine, event

from service.db import sqlite_pragmas

KOMBU_OPTIONS = ("queue_tablename", "message_tablename", "callback", "errback", "max_retries", "interval_start",
                 "interval_step", "interval_max", "retry_errors", "polling_interval")


class Channel(sqla.Channel):
    def _engine_from_config(self) -> Any:
        conninfo = self.connection.client
        options = {k: v for k, v in conninfo.transport_options.items() if k not in KOMBU_OPTIONS}
        url = conninfo.hostname
        if url.startswith("sqlite"):
            options.setdefault("connect_args", {"timeout": 30, "check_same_thread": False})
            engine = create_engine(url, **options)
            event.listen(engine, "connect", sqlite_pragmas)
            return engine
        return create_engine(url, **options)


class Transport(sqla.Transport):
    Channel = Channel
