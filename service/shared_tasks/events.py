"""What a finished submission evaluation changes and announces: its phase's stored leaderboards are computed
here, on the worker (``shared_tasks.stored``), and it announces ``submission.evaluated`` (its state and scores)
and, when it changed the current leaderboard, ``leaderboard.changed`` (the new top rows). Deliveries are recorded
in the same transaction that reads the outcome, so they are durable before anything is sent
(``webhooks.delivery``)."""

from __future__ import annotations

import json
from typing import Any

from evalserve.service.jobs.events import JobFinished
from evalserve.service.jobs.kinds import KINDS, EvaluationRequest
from evalserve.service.shared_tasks.stored import StoredBoard, refresh_board, refresh_task
from evalserve.service.store.blobs import BlobStore
from evalserve.service.store.db import Database
from evalserve.service.store.models import Job, JobState, Participant, Phase, Submission, Task, WebhookEvent, as_utc
from evalserve.service.webhooks.delivery import record_event

#: rows of the leaderboard carried by a ``leaderboard.changed`` event (the whole board is one GET away)
TOP_ROWS = 10


def announce_job(db: Database, blobs: BlobStore, job_id: str) -> list[str]:
    """Store the new leaderboards of a finished job that evaluated a task submission, then record its events;
    returns the deliveries to send."""
    _refresh_boards(db, blobs, job_id)
    with db.session() as s:
        job = s.get(Job, job_id)
        request = None if job is None else KINDS[job.kind].parse(job.request)
        if job is None or not isinstance(request, EvaluationRequest) or request.submission is None \
                or job.state not in (JobState.SUCCEEDED, JobState.FAILED):
            return []
        task = s.get(Task, request.task)
        sub = s.get(Submission, request.submission)
        if task is None or sub is None:
            return []
        participant = s.get(Participant, sub.participant_id)
        phase = s.get(Phase, sub.phase_id)
        assert participant is not None and phase is not None
        scores = None
        if job.state == JobState.SUCCEEDED and job.result_sha256:
            document = json.loads(blobs.get(s, job.result_sha256))
            scores = {m: item["mean"] for m, item in next(iter(document["runs"].values())).items()}
        version = int(task.version if request.version is None else request.version)
        payload: dict[str, Any] = {
            "submission": sub.id, "team": participant.team, "phase": phase.name, "version": version,
            "state": job.state, "scores": scores, "error": job.error,
            "links": {"submission": f"/v1/tasks/{task.id}/submissions/{sub.id}",
                      "leaderboard": f"/v1/tasks/{task.id}/leaderboard"},
        }
        ids = record_event(s, task.id, WebhookEvent.SUBMISSION_EVALUATED, payload)
        if job.state == JobState.SUCCEEDED and version == task.version:
            row = refresh_board(s, blobs, task, phase, version, "latest")  # stored just before: read, not computed
            stored = StoredBoard(row.blob_sha256, 0, as_utc(row.computed_at))
            board = stored.document(stored.payload(s, blobs))
            if any(row["key"] == sub.id for row in board["rows"]):
                top = [{"rank": r["rank"], "team": r["extra"]["team"], "submission": r["key"],
                        "score": r["scores"][board["primary"]], "baseline": r["baseline"]}
                       for r in board["rows"][:TOP_ROWS]]
                ids += record_event(s, task.id, WebhookEvent.LEADERBOARD_CHANGED, {
                    "phase": phase.name, "version": version, "primary": board["primary"], "order": board["order"],
                    "entries": len(board["rows"]), "top": top, "cause": sub.id,
                    "generated_at": board["generated_at"], "closes_at": as_utc(phase.closes_at).isoformat(),
                    "links": {"leaderboard": f"/v1/tasks/{task.id}/leaderboard?phase={phase.name}"}})
        return ids


def _refresh_boards(db: Database, blobs: BlobStore, job_id: str) -> None:
    """The stored leaderboards of a succeeded submission evaluation's phase and version, computed here, on the
    worker, each committed as soon as it is stored (no write lock held while the next one is computed)."""
    with db.session() as s:
        job = s.get(Job, job_id)
        request = None if job is None else KINDS[job.kind].parse(job.request)
        if job is None or job.state != JobState.SUCCEEDED or not isinstance(request, EvaluationRequest) \
                or request.submission is None or request.task is None:
            return
        sub = s.get(Submission, request.submission)
        task_id, version = request.task, request.version
        phase_id = None if sub is None else sub.phase_id
    if phase_id is not None:
        refresh_task(db, blobs, task_id, version=version, phase_id=phase_id)


def on_job_finished(db: Database, blobs: BlobStore, event: JobFinished) -> list[str]:
    """The shared tasks' listener (``jobs.events``): a finished submission evaluation's events."""
    return announce_job(db, blobs, event.job_id)
