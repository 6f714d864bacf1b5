"""A participant's own ``callback_url`` (issue 30): given when submitting a run, it is POSTed to when the
submission's evaluation ends, through the jobs' callback machinery (``jobs.callbacks``: the evaluation job carries
the URL and a secret shown once in the 202; a delivery row stored before anything is sent; the same target checks,
HMAC signature, retries and sweeper). What it carries is what that participant may see and nothing more: its own
submission as its ``GET`` shows it (state, its own means unless the task hides scores; never the organiser's job
or another team's), and its per-topic scores only when the task gives per-topic feedback. Its deliveries count
against the budget of the team member who submitted (``webhooks.fairness``), not the organiser's. Flask-free."""

from __future__ import annotations

import dataclasses
import json
import secrets
from typing import Any

from sqlalchemy.orm import Session

from evalserve.service.core.config import Settings
from evalserve.service.core.errors import ServiceError
from evalserve.service.jobs.callbacks import SUBMISSION_CALLBACK_EVENT, Callback, submission_of
from evalserve.service.shared_tasks.access import TaskAccess
from evalserve.service.shared_tasks.outputs import ABSENT, submission_outs
from evalserve.service.store.blobs import BlobStore
from evalserve.service.store.models import Job, JobState, Participant, RunRecord, Submission, Task
from evalserve.service.webhooks import targets as webhook_targets
from evalserve.service.webhooks.fairness import owner_key


def submission_callback(session: Session, blobs: BlobStore | None, job: Job) -> Callback | None:
    """The callback of a submission's evaluation job as its participant may see it; None for any other job."""
    sub_id = submission_of(job)
    sub = session.get(Submission, sub_id) if sub_id else None
    if sub is None:
        return None
    task = session.get(Task, sub.task_id)
    participant = session.get(Participant, sub.participant_id)
    assert task is not None and participant is not None
    access = TaskAccess(task, "participant", participant)  # the participant's view, also of an organiser's baseline
    shown = submission_outs(session, blobs, [sub], access)[0] if blobs is not None else None
    payload: dict[str, Any] = _plain(shown) if shown is not None else {"id": sub.id, "task": task.id}
    payload["state"] = job.state  # of this job (a re-evaluation's may differ from the current version's)
    if task.per_topic_feedback and access.scores_visible() and job.state == JobState.SUCCEEDED \
            and job.result_sha256 and blobs is not None:
        by_measure = next(iter(json.loads(blobs.get(session, job.result_sha256))["runs"].values()))
        payload["per_topic"] = {m: dict(by_measure[m]["per_topic"]) for m in task.measures}
    run = session.get(RunRecord, sub.run_id)  # uploaded by the member who submitted: whose budget it spends
    return Callback(SUBMISSION_CALLBACK_EVENT, payload,
                    owner_key(session, run.owner_id if run is not None else participant.token_id))


def _plain(out: Any) -> dict[str, Any]:
    """A submission output as JSON-able data, the fields it leaves out left out."""
    values = {f.name: getattr(out, f.name) for f in dataclasses.fields(out)}
    return {k: [dataclasses.asdict(v) for v in value] if k == "evaluations" else value
            for k, value in values.items() if value is not ABSENT}


def callback_columns(settings: Settings, url: str | None) -> dict[str, Any]:
    """The evaluation job's callback columns for a participant's ``callback_url`` (none without one): checked as
    a job's or a webhook's URL (422 ``webhook-target-refused`` or ``-unresolvable`` for a host that is not
    public), with a new secret shown once in the 202."""
    if not url:
        return {}
    try:
        webhook_targets.check(url, settings.webhook_allow_networks)  # as jobs.callbacks.check_url
    except webhook_targets.TargetError as exc:
        raise ServiceError(422, exc.code, f"callback URL refused: {exc.reason}") from exc
    return {"callback_url": url, "callback_secret": secrets.token_urlsafe(32)}  # as jobs.callbacks.new_secret
