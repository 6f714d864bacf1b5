"""HTTP resources, one blueprint per resource, all under ``/v1`` except health and the OpenAPI document."""

from evalserve.service.web.api import (
    accounts,
    catalogue,
    collections,
    evaluations,
    health,
    invitations,
    jobs,
    measures,
    reports,
    runs,
    task_exports,
    tasks,
    teams,
    webhooks,
)

BLUEPRINTS = (health.blp, measures.blp, catalogue.blp, collections.blp, runs.blp, evaluations.blp, jobs.blp, tasks.blp,
              webhooks.blp, accounts.blp, invitations.blp, task_exports.blp, reports.blp, teams.blp)
