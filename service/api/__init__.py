"""HTTP resources, one blueprint per resource, all under ``/v1`` except health and the OpenAPI document. The
shared tasks' blueprint lives with the rest of that area, in ``service.shared_tasks.views``."""

from service.api import catalogue, collections, evaluations, health, jobs, measures, runs, webhooks
from service.shared_tasks import views as tasks

BLUEPRINTS = (health.blp, measures.blp, catalogue.blp, collections.blp, runs.blp, evaluations.blp, jobs.blp, tasks.blp,
              webhooks.blp)
