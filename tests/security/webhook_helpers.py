"""What the webhook attack tests share: a participant-level token (read and submit, as any public participant
holds) and a task of its own over its own collection, so that it organises the task and may add webhooks."""

from __future__ import annotations

import httpx

from tests.service.live import LiveService

#: a tiny judgments file: two topics, two judged documents each
QRELS = b"1 0 d1 1\n1 0 d2 0\n2 0 d3 1\n2 0 d4 1\n"


def participant_token(live: LiveService, name: str) -> str:
    """A fresh ``read submit`` token in the deployment's database (what a shared task hands to participants)."""
    return live.user_token(name)


def own_task(http: httpx.Client, name: str = "attacker's task") -> str:
    """A task the caller creates over a collection it uploads: the caller organises it."""
    created = http.post("/v1/collections", data={"name": f"{name} judgments"}, files={"qrels": ("qrels", QRELS)})
    assert created.status_code == 201, created.text
    task = http.post("/v1/tasks", json={"name": name, "collection": created.json()["id"], "measures": ["AP"]})
    assert task.status_code == 201, task.text
    return str(task.json()["id"])


def webhook_count(live: LiveService, task_id: str) -> int:
    """The task's webhook rows in the database, deleted ones included: what registration stored."""
    from sqlalchemy import func, select

    from evalserve.service.core.config import Settings
    from evalserve.service.store.db import Database
    from evalserve.service.store.models import Webhook

    db = Database(Settings.from_env(live.env).database_url)
    try:
        with db.session() as s:
            return int(s.execute(select(func.count()).select_from(Webhook).where(Webhook.task_id == task_id))
                       .scalar_one())
    finally:
        db.dispose()
