"""The workers' Celery app, with settings from the environment: what ``celery -A workers.tasks worker`` (and
``evalserve worker``) runs. The service never imports this module; it builds its own publishing app with
``service.broker.celery_factory.make_celery``."""

from __future__ import annotations

from service.broker.celery_factory import make_celery
from service.config import Settings

app = make_celery(Settings.from_env())
