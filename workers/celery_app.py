"""The Celery application: Redis when ``REDIS_URL`` is set, else an embedded SQLite broker (kombu's SQLAlchemy
transport, ``workers.embedded_broker``) that needs no server. Results never go through Celery: workers write
them to the database.

Start a worker with ``evalserve worker`` (or ``celery -A workers.celery_app worker``).
"""

from __future__ import annotations

from celery import Celery

from service.config import Settings

#: the task names the API publishes; the API does not import the task code
EVALUATE_TASK = "evalserve.evaluate"
EVALUATE_PART_TASK = "evalserve.evaluate_part"  # one part of a split job (workers.split)
DELIVER_WEBHOOK_TASK = "evalserve.deliver_webhook"


def make_celery(settings: Settings) -> Celery:
    """A Celery app for these settings: late acks (a message is acknowledged after the job is stored), one
    message prefetched per process, redelivery when a worker process dies."""
    app = Celery("evalserve", broker=settings.broker_url, include=["workers.tasks"])
    transport_options: dict[str, object] = {}
    if settings.embedded_broker:
        settings.data_dir.mkdir(parents=True, mode=0o700, exist_ok=True)  # service.datadir tightens files
        app.conf.broker_transport = "workers.embedded_broker:Transport"
        # a fallback: publishers wake idle consumers at once through workers.wakeup
        transport_options = {"polling_interval": 1.0}
    else:
        # a message unacknowledged this long is redelivered; the database lease repairs faster (workers.recovery)
        transport_options = {"visibility_timeout": max(3600, int(settings.job_time_limit_seconds) + 600)}
    app.conf.update(
        task_default_queue=settings.queue,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_ignore_result=True,
        worker_prefetch_multiplier=1,
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


#: the app for ``celery -A workers.celery_app`` and for the task decorators; settings from the environment
app = make_celery(Settings.from_env())
