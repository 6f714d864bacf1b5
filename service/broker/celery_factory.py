"""The Celery app factory: Redis when ``REDIS_URL`` is set, else an embedded SQLite broker (kombu's SQLAlchemy
transport, ``broker.embedded``) that needs no server. Results never go through Celery: workers write
them to the database. The service builds its publishing app here; ``evalserve.workers.celery_app`` builds the workers'.
"""

from __future__ import annotations

from celery import Celery

from evalserve.service.core.config import Settings


def make_celery(settings: Settings) -> Celery:
    """A Celery app for these settings: late acks (a message is acknowledged after the job is stored), one
    message prefetched per process, redelivery when a worker process dies."""
    app = Celery("evalserve", broker=settings.broker_url, include=["evalserve.workers.tasks"])
    transport_options: dict[str, object] = {}
    if settings.embedded_broker:
        settings.data_dir.mkdir(parents=True, mode=0o700, exist_ok=True)  # store.datadir tightens files
        app.conf.broker_transport = "evalserve.service.broker.embedded:Transport"
        # a fallback: publishers wake idle consumers at once through broker.wakeup
        transport_options = {"polling_interval": 1.0}
    else:
        # a message unacknowledged this long is redelivered; the database lease repairs faster
        # (jobrun.recovery)
        transport_options = {"visibility_timeout": max(3600, int(settings.job_time_limit_seconds) + 600)}
    app.conf.update(
        task_default_queue=settings.queue,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_ignore_result=True,
        worker_prefetch_multiplier=1,
        # prefork pools (a worker started by hand with ``celery worker``) replace a child over the memory setting;
        # evalserve's own single-process workers recycle themselves (``jobrun.memory``)
        worker_max_memory_per_child=int(settings.worker_max_rss_mb * 1024) or None,
        worker_hijack_root_logger=False,
        broker_connection_retry_on_startup=True,
        broker_transport_options=transport_options,
        task_time_limit=int(settings.job_time_limit_seconds) + 60,
        task_soft_time_limit=int(settings.job_time_limit_seconds),
        worker_send_task_events=False,
        task_serializer="json",
        accept_content=["json"],
    )
    app.conf.evalserve_settings = settings
    return app

