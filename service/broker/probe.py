"""Does the broker answer? A real round trip, for ``GET /health``: Redis is pinged through kombu; the embedded
broker's SQLite file is read (kombu's SQLAlchemy transport connects lazily, so its ``ensure_connection`` succeeds
even when the file cannot be opened and every publish fails)."""

from __future__ import annotations

from celery import Celery
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool


def check_broker(celery: Celery, timeout: float = 2.0) -> None:
    """Return when the broker answers within about ``timeout`` seconds; raise the transport's error otherwise."""
    settings = celery.conf.evalserve_settings
    if settings.embedded_broker:  # a fresh connection each time: a pooled one would outlive a vanished file
        engine = create_engine(settings.broker_url, connect_args={"timeout": timeout}, poolclass=NullPool)
        try:
            with engine.connect() as conn:
                conn.execute(text("SELECT count(*) FROM sqlite_master"))
        finally:
            engine.dispose()
        return
    with celery.connection_for_write() as conn:
        # one quick retry: a refused connection answers at once, and /health must not wait out kombu's 2 s interval
        conn.ensure_connection(max_retries=1, interval_start=0.2, interval_step=0.2, timeout=timeout)
