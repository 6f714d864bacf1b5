"""A task submission's GET as a long-poll (issue 30): ``?wait=SECONDS`` and ``If-None-Match`` as for jobs
(``web.api.jobs``), so a participant waits for its scores without polling. The request is parked on the event loop
(``web.waiting``) watching the submission's evaluation (``shared_tasks.watching``: every parked submission in one
query per look); once that changes, ends or the wait passes, the submission is read again as its caller sees it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import marshmallow as ma
from flask import Flask, Response, current_app
from marshmallow import validate as V

from evalserve.service.access.principal import budget_owner
from evalserve.service.core.errors import ServiceError
from evalserve.service.core.etags import etag_of, matches
from evalserve.service.core.longpoll import MAX_WAIT_SECONDS, wait_for_change
from evalserve.service.core.state import ServiceState
from evalserve.service.shared_tasks import services
from evalserve.service.shared_tasks.watching import ended, evaluations_now
from evalserve.service.store.models import FINAL_STATES, Token
from evalserve.service.web.api.conditional import if_none_match, not_modified
from evalserve.service.web.auth import caller_or_none
from evalserve.service.web.context import session, state, unit_of_work
from evalserve.service.web.problems import PROBLEM_JSON, problem_body
from evalserve.service.web.task_schemas import SubmissionSchema
from evalserve.service.web.waiting import Answer, Park, evented, offer_park

#: the family of parked submission waits: one query looks at all of them
FAMILY = "submission"
ETAG_HEADER = {"ETag": {"description": "strong; send it as If-None-Match", "schema": {"type": "string"}}}


class SubmissionWaitQuerySchema(ma.Schema):
    wait = ma.fields.Float(load_default=0.0, validate=V.Range(min=0, max=MAX_WAIT_SECONDS), metadata={
        "description": "long-poll: answer as soon as the submission differs from what you have (your If-None-Match,"
                       " else the submission as it is when the request arrives) -- its evaluation moved on or"
                       " ended -- or after this many seconds (at most 30; 0: at once)"})


def tagged_submission(s: Any, st: ServiceState, token: Token | None, task_id: str,
                      submission_id: str) -> tuple[str, dict[str, Any]]:
    """The submission as the caller sees it (its JSON), with its ETag."""
    document: dict[str, Any] = SubmissionSchema().dump(services.get_submission(s, st, token, task_id, submission_id))
    return etag_of(document), document


def headers_of(tag: str, document: dict[str, Any]) -> dict[str, str]:
    """A submission answer's headers: its ETag, and ``Retry-After: 1`` while its evaluation may still change."""
    headers = {"ETag": tag}
    if document.get("state") not in FINAL_STATES:
        headers["Retry-After"] = "1"
    return headers


def answer(task_id: str, submission_id: str, wait: float) -> Any:
    """``GET /v1/tasks/{task_id}/submissions/{submission_id}[?wait=]``: at once, parked, or (Flask's test client,
    a plain WSGI server) waited for here."""
    st = state()
    token = caller_or_none()
    tag, document = tagged_submission(session(), st, token, task_id, submission_id)
    known = if_none_match()
    if wait > 0 and (not known or matches(tag, known)) and document.get("state") not in FINAL_STATES:
        unit_of_work().end_reads()  # each look reads as committed now, in a short session of its own
        first_tag, _ = evaluations_now(st, [submission_id])[submission_id]
        token_id = token.id if token is not None else None
        park = Park(budget_owner(token) if token is not None else "anonymous", submission_id,
                    min(wait, MAX_WAIT_SECONDS),
                    look=lambda: evaluations_now(st, [submission_id])[submission_id],
                    settled=lambda t, seen: t != first_tag or ended(seen),
                    finish=_answer_later(current_app._get_current_object(), st, token_id,  # type: ignore[attr-defined]
                                         task_id, submission_id, known),
                    family=FAMILY, look_many=lambda ids: evaluations_now(st, ids))
        if not offer_park(park) and not evented():
            wait_for_change(lambda: evaluations_now(st, [submission_id])[submission_id], {first_tag}, wait,
                            done=ended)
            tag, document = tagged_submission(session(), st, token, task_id, submission_id)
        # parked: answered from the event loop; not parkable there (HEAD): as it is, never a held thread
    headers = headers_of(tag, document)
    if matches(tag, known):
        return not_modified(tag, headers)
    return Response(current_app.json.dumps(document) + "\n", status=200, mimetype="application/json",
                    headers=headers)


def _answer_later(app: Flask, st: ServiceState, token_id: str | None, task_id: str, submission_id: str,
                  known: set[str]) -> Callable[[str, Any], Answer]:
    """How a parked submission wait is answered once it ends, as ``answer`` would (on the watcher thread, outside
    any request: the submission is read again in a session of its own, with the caller's token)."""

    def finish(_tag: str, _seen: Any) -> Answer:
        with app.app_context(), st.db.session() as s:
            token = s.get(Token, token_id) if token_id is not None else None
            try:
                tag, document = tagged_submission(s, st, token, task_id, submission_id)
            except ServiceError as exc:  # it went away meanwhile (a removed participant)
                body = problem_body(exc.status or 404, exc.problem_code, exc.detail, exc.problems)
                return exc.status or 404, {"Content-Type": PROBLEM_JSON}, body.encode()
            headers = headers_of(tag, document)
            if matches(tag, known):
                return 304, headers, b""
            text = app.json.dumps(document) + "\n"
        return 200, {**headers, "Content-Type": "application/json"}, text.encode()

    return finish
