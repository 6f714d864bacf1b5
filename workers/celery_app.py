"""The workers' Celery app, with settings from the environment: what ``celery -A evalserve.workers.tasks worker`` (and
``evalserve worker``) runs. The service never imports this module; it builds its own publishing app with
``broker.celery_factory.make_celery``."""

from __future__ import annotations

from evalserve.service.broker.celery_factory import make_celery
from evalserve.service.core.config import Settings
from evalserve.service.jobs.events import JobListener
from evalserve.service.shared_tasks.callbacks import submission_callback
from evalserve.service.shared_tasks.events import on_job_finished

#: what a worker tells when a job ends (``service.jobs.events``): the shared tasks announce submissions' outcomes
JOB_LISTENERS: tuple[JobListener, ...] = (on_job_finished,)

app = make_celery(Settings.from_env())
app.conf.evalserve_job_listeners = JOB_LISTENERS
#: what a job's callback carries where not its document: a task submission's, what its participant may see
app.conf.evalserve_callback_viewer = submission_callback
