"""``Client``: the evalserve HTTP API as Python calls, with the retries, idempotency keys and polling that every
caller would otherwise write itself.

Every POST carries a fresh ``Idempotency-Key`` (a uuid4) and, when it is retried after a dropped connection or a
502/503/504, the very same bytes and key are sent again -- so the server answers the retry with the first
response instead of creating a second collection, run or job.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import re
import time
import urllib.parse
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from types import EllipsisType, TracebackType
from typing import IO, Any, Literal, overload

import httpx

from evalserve_client._version import __version__
from evalserve_client.errors import ApiError, JobFailed, Problem, ServerUnreachable, WaitTimeout, parse_retry_after
from evalserve_client.progress import ProgressOption, reporter

#: how the server splits a ``measures`` form field (``service/web/api/evaluations.py: MEASURE_SEPARATOR``): spaces,
#: and commas except inside parentheses (``RBP(p=0.8,rel=graded)``) and before a number (``ndcg_cut.10,20``)
_MEASURE_SEPARATOR = re.compile(r"\s*,(?![^(]*\))(?![\d.])\s*|\s+")

#: A file to upload: a path, its bytes, ``(file name, bytes)``, or a binary file object.
Upload = str | os.PathLike[str] | bytes | tuple[str, bytes] | IO[bytes]
#: Something naming a server object: its id, or the object (a dict with ``id``) the client returned.
Ref = str | Mapping[str, Any]

FINAL_STATES = ("succeeded", "failed", "cancelled")
#: Answers worth retrying: the request did not reach the application, or it was briefly overloaded.
RETRY_STATUSES = frozenset({429, 502, 503, 504})
#: 429 answers that no retry within one call can cure: a shared task's submission quota.
NOT_RETRIED_CODES = frozenset({"quota-exceeded"})
RUN_ID = re.compile(r"run_[A-Za-z0-9]+")

POLL_START, POLL_FACTOR, POLL_CAP = 0.2, 1.5, 5.0
#: Seconds one long-poll of a job (``GET /v1/jobs/{id}?wait=``) may wait on the server (its bound is 30).
LONG_POLL_SECONDS = 20.0
RETRY_START, RETRY_CAP = 0.5, 5.0
#: How long ``leaderboard`` waits for the server's worker to store a leaderboard newer than the one it has.
LEADERBOARD_WAIT_SECONDS = 30.0
#: how long ``Client.finalise`` waits for the submissions still being evaluated (seconds)
FINALISE_WAIT_SECONDS = 300.0
#: The longest pause a server's ``Retry-After`` can impose on one step (a guard against absurd values).
RETRY_AFTER_MAX = 60.0
#: Renderings of a shared task's leaderboard: the JSON document (a dict), or CSV, LaTeX, HTML text.
LEADERBOARD_FORMATS = ("json", "csv", "latex", "html")
#: the formats of a task's per-topic export (``per_topic_export``)
PER_TOPIC_FORMATS = ("csv", "json", "parquet")
#: an end-of-task report's formats and the suffix of the file ``Client.report`` saves
REPORT_FORMATS = {"html": "html", "latex": "tex", "zip": "zip"}
#: how long ``Client.report`` waits by default for a worker to build a report
REPORT_WAIT_SECONDS = 300.0
#: Page size for listing (the server's maximum).
PAGE_SIZE = 100


class Client:
    """A connection to one evalserve server with one API token; use it as a context manager or ``close()`` it.

    ``timeout`` is httpx's per-request timeout (uploads are validated before the server answers, so it is
    generous); ``transport`` replaces httpx's (tests, proxies, unix sockets); ``retries`` is how many times a
    request that met a transient failure is sent again.
    """

    def __init__(self, url: str, token: str | None, *, timeout: float | httpx.Timeout = 60.0,
                 transport: httpx.BaseTransport | None = None, retries: int = 3) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"the server URL must start with http:// or https://, not {url!r}")
        self.url = url.rstrip("/")
        self.retries = max(0, retries)
        headers = {"User-Agent": f"evalserve-client/{__version__} httpx/{httpx.__version__}"}
        if token:
            headers["Authorization"] = f"Bearer {check_token(token)}"
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout, transport=transport)
        self._sleep: Callable[[float], None] = time.sleep
        self._clock: Callable[[], float] = time.monotonic

    def __enter__(self) -> Client:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Close the underlying connections."""
        self._http.close()

    # -- collections and runs ------------------------------------------------------------------------------------

    def create_collection(self, qrels: Upload, *, name: str, description: str = "", grade_scale: str = "",
                          qrels_format: str = "auto", intent_weights: Upload | None = None,
                          hidden: bool = False) -> dict[str, Any]:
        """Upload judgments (and optional NTCIR intent weights) as a new, immutable collection; returns it.
        ``hidden``: seen and used only by you and admins (a shared task's judgments; a task hides its collection
        anyway). Raises ``ApiError`` (422, every problem listed) when the server's reader finds errors."""
        files = [("qrels", read_upload(qrels, "qrels"))]
        if intent_weights is not None:
            files.append(("intent_weights", read_upload(intent_weights, "intent-weights")))
        data = {"name": name, "description": description, "grade_scale": grade_scale, "qrels_format": qrels_format}
        if hidden:
            data["hidden"] = "true"
        return self._json("POST", "/v1/collections", data=data, files=files)

    def collection(self, collection: Ref) -> dict[str, Any]:
        return self._json("GET", f"/v1/collections/{_segment(collection)}")

    def upload_run(self, collection: Ref, path_or_bytes: Upload, *, name: str | None = None) -> dict[str, Any]:
        """Upload one run for a collection; ``name`` is the file name the server records (default: the path's
        file name, or ``run`` for bytes) -- results name the run after it, without ``.gz``."""
        filename, content = read_upload(path_or_bytes, "run")
        return self._json("POST", "/v1/runs", params={"collection": ref(collection)},
                          files=[("run", (name or filename, content))])

    def run(self, run: Ref) -> dict[str, Any]:
        return self._json("GET", f"/v1/runs/{_segment(run)}")

    # -- evaluations and jobs ------------------------------------------------------------------------------------

    def evaluate(self, collection: Ref, runs: Sequence[Upload | Mapping[str, Any]], measures: Sequence[str], *,
                 ties: str = "trec", topics: str = "common", per_topic: bool = False, wait: bool = True,
                 progress: ProgressOption = None, timeout: float | None = None) -> dict[str, Any]:
        """Queue an evaluation and (``wait=True``) wait for it; returns the job (final when waited for).

        ``runs`` are run ids (or runs this client returned) and/or files: files alone go up in one
        ``/v1/submissions`` call; ids alone, or a mix (files uploaded first), use ``/v1/evaluations``. Results
        keep the order of ``runs``. ``progress``: None (quiet), True (a bar on stderr when it is a terminal) or
        a callable taking the job. Raises ``JobFailed`` if the waited job fails or is cancelled, ``WaitTimeout``
        after ``timeout`` seconds.
        """
        if isinstance(runs, (str, bytes, os.PathLike)):
            runs = [runs]  # one run given on its own, not a sequence of characters
        if not runs:
            raise ValueError("give at least one run (an id or a file)")
        if isinstance(measures, str):
            measures = measures.split()
        collection_id = ref(collection)
        items = [_run_or_file(r) for r in runs]
        options = {"ties": ties, "topics": topics}
        if all(isinstance(item, tuple) for item in items):
            form = {"collection": collection_id, "measures": " ".join(measures), **options,
                    "per_topic": "true" if per_topic else "false"}
            response = self._send("POST", "/v1/submissions", data=form, files=[("run", item) for item in items])
        else:
            if any(not isinstance(item, str) for item in items):  # files go up first: not with a bad measure
                bad = self.check_measures(measures)
                if bad:
                    raise ApiError(422, "invalid-measure", "; ".join(p["message"] for p in bad), bad)
            ids = [item if isinstance(item, str) else self.upload_run(collection_id, item)["id"] for item in items]
            body = {"collection": collection_id, "runs": ids, "measures": list(measures), **options,
                    "per_topic": per_topic}
            response = self._send("POST", "/v1/evaluations", json=body)
        job: dict[str, Any] = response.json()
        if not wait:
            return job
        return self.wait(job, progress=progress, timeout=timeout, first_delay=retry_after(response),
                         etag=response.headers.get("ETag"))

    def wait(self, job: Ref, *, progress: ProgressOption = None, timeout: float | None = None,
             first_delay: float | None = None, etag: str | None = None) -> dict[str, Any]:
        """Wait until the job is final; returns it when it succeeded, raises ``JobFailed`` otherwise.

        Long-polls (``?wait=`` with the job's ``ETag`` as ``If-None-Match``): each answer comes as soon as the
        job changes, so the end is seen at once. A server without long-polls (its answers carry no ``ETag``) is
        polled instead: pauses back off from 0.2 s to at most 5 s and never come sooner than its ``Retry-After``.
        ``etag``: the ETag of the job as given (the 202's).
        """
        return self._poll(f"/v1/jobs/{_segment(job)}", job, "job", progress=progress, timeout=timeout,
                          first_delay=first_delay, long_poll=True, etag=etag)

    def job(self, job: Ref) -> dict[str, Any]:
        """The job as it is now: state, stage, progress (0..1), error, links."""
        return self._json("GET", f"/v1/jobs/{_segment(job)}")

    def cancel(self, job: Ref) -> dict[str, Any]:
        """Cancel the job (at once if queued; a running job stops at its next step); returns it."""
        return self._json("DELETE", f"/v1/jobs/{_segment(job)}")

    @overload
    def results(self, job: Ref, format: Literal["json"] = "json", per_topic: bool | None = None) -> dict[str, Any]:
        ...

    @overload
    def results(self, job: Ref, format: Literal["tsv", "csv", "trec_eval", "html", "latex"],
                per_topic: bool | None = None) -> str:
        ...

    @overload
    def results(self, job: Ref, format: str, per_topic: bool | None = None) -> dict[str, Any] | str:
        ...

    def results(self, job: Ref, format: str = "json", per_topic: bool | None = None) -> dict[str, Any] | str:
        """A succeeded job's results: the offline CLI's JSON document as a dict for ``json``, the text otherwise.
        ``per_topic`` None means what the evaluation asked for."""
        text = self.results_text(job, format, per_topic)
        if format == "json":
            document: dict[str, Any] = json.loads(text)
            return document
        return text

    def results_text(self, job: Ref, format: str = "json", per_topic: bool | None = None) -> str:
        """The results exactly as the server renders them -- for ``json`` the bytes ``evalserve evaluate`` prints."""
        params = {"format": format}
        if per_topic is not None:
            params["per_topic"] = "true" if per_topic else "false"
        return self._send("GET", f"/v1/jobs/{_segment(job)}/result", params=params).text

    def results_frame(self, job: Ref) -> Any:
        """The results as a long pandas DataFrame: columns run, measure, topic, value (topic ``all`` = the mean,
        after the run's per-topic rows, as in the TSV). Needs pandas (``pip install 'evalserve-client[pandas]'``)."""
        try:
            pandas = importlib.import_module("pandas")
        except ImportError as exc:
            raise ImportError("results_frame needs pandas, which is not installed:"
                              " pip install 'evalserve-client[pandas]'") from exc
        document = self.results(job, "json", per_topic=True)
        rows = [(run, measure, topic, value)
                for run, by_measure in document["runs"].items()
                for measure, item in by_measure.items()
                for topic, value in [*item.get("per_topic", {}).items(), ("all", item["mean"])]]
        return pandas.DataFrame(rows, columns=["run", "measure", "topic", "value"])

    # -- users and tokens ----------------------------------------------------------------------------------------

    def tokens(self) -> list[dict[str, Any]]:
        """Your tokens (those of the user the client's token belongs to), revoked and expired ones included; never
        their secrets."""
        found: list[dict[str, Any]] = self._send("GET", "/v1/tokens").json()
        return found

    def create_token(self, name: str, *, scopes: Sequence[str] | None = None,
                     expires_in_days: float | None = None) -> dict[str, Any]:
        """A new token for yourself, with at most the client token's scopes (default: the same); the answer's
        ``token`` is the token itself, shown this once."""
        body = {"name": name, "scopes": list(scopes) if scopes is not None else None,
                "expires_in_days": expires_in_days}
        return self._json("POST", "/v1/tokens", json={k: v for k, v in body.items() if v is not None})

    def revoke_token(self, token: Ref) -> dict[str, Any]:
        """Revoke one of your tokens (an admin: anyone's) by id or as listed; refused from its next request."""
        return self._json("DELETE", f"/v1/tokens/{_segment(token)}")

    def users(self) -> list[dict[str, Any]]:
        """Every user (admin tokens only)."""
        found: list[dict[str, Any]] = self._send("GET", "/v1/users").json()
        return found

    def create_user(self, name: str, *, scopes: Sequence[str] | None = None, token_name: str | None = None,
                    expires_in_days: float | None = None) -> dict[str, Any]:
        """A new user and their first token (an admin token; any token or none where sign-up is open):
        ``{"user": {...}, "token": {..., "token": "es_..."}}``, the token shown this once."""
        body = {"name": name, "scopes": list(scopes) if scopes is not None else None, "token_name": token_name,
                "expires_in_days": expires_in_days}
        return self._json("POST", "/v1/users", json={k: v for k, v in body.items() if v is not None})

    # -- shared tasks --------------------------------------------------------------------------------------------

    def create_invitations(self, task: Ref, *, count: int = 1, uses: int = 1, expires_in_days: float | None = None,
                           team: str | None = None) -> list[dict[str, Any]]:
        """New invitation codes to your task (organisers): each dict's ``code`` is shown this once."""
        body = {"count": count, "uses": uses, "expires_in_days": expires_in_days, "team": team}
        made: list[dict[str, Any]] = self._send("POST", f"/v1/tasks/{_segment(task)}/invitations",
                                                json={k: v for k, v in body.items() if v is not None}).json()
        return made

    def invitations(self, task: Ref) -> list[dict[str, Any]]:
        """Your task's invitations with their ``uses_left`` (organisers), never their codes."""
        found: list[dict[str, Any]] = self._send("GET", f"/v1/tasks/{_segment(task)}/invitations").json()
        return found

    def redeem_invitation(self, code: str, *, team: str | None = None, name: str | None = None) -> dict[str, Any]:
        """Redeem an invitation: ``{"participant", "token"}`` -- the client's token registered as the team, or,
        for a client made without a token, a new user's token (shown this once)."""
        body = {"team": team, "name": name}
        return self._json("POST", f"/v1/invitations/{urllib.parse.quote(code, safe='')}",
                          json={k: v for k, v in body.items() if v is not None})

    def tasks(self) -> list[dict[str, Any]]:
        """Every task the caller may see (public and blinded ones, private ones they organise or take part in;
        without a token: public and blinded ones), newest first -- all pages."""
        return self._all("/v1/tasks")

    def task(self, task: Ref) -> dict[str, Any]:
        """The task: its phases (``open`` now or not, quotas), ``current_phase``, measures, and the caller's
        ``role`` (organiser, participant, public) and ``team``."""
        return self._json("GET", f"/v1/tasks/{_segment(task)}")

    def create_task(self, **body: Any) -> dict[str, Any]:
        """Create a shared task over one of your collections (its judgments become hidden); you organise it.

        ``body`` is the ``POST /v1/tasks`` JSON: ``name``, ``collection`` (an id or the dict), ``measures``,
        ``primary_measure``, ``order``, ``visibility``, ``blinded_until``, ``registration``, ``registration_code``,
        ``significance``, ``phases`` (``[{name, opens_at, closes_at, quota_per_day, quota_total}]``). Datetimes may
        be given as ``datetime`` objects (a naive one is read as UTC by the server)."""
        if isinstance(body.get("collection"), Mapping):
            body["collection"] = ref(body["collection"])
        return self._json("POST", "/v1/tasks", json=_jsonable(body))

    def update_task(self, task: Ref, **changes: Any) -> dict[str, Any]:
        """Change a task's name, description, visibility, blinded_until, registration or significance
        (organisers); returns the task."""
        return self._json("PATCH", f"/v1/tasks/{_segment(task)}", json=_jsonable(changes))

    def add_phase(self, task: Ref, *, name: str, opens_at: datetime | str, closes_at: datetime | str,
                  quota_per_day: int | EllipsisType | None = ..., quota_total: int | None = None) -> dict[str, Any]:
        """Add a phase to a task (organisers); phases of a task do not overlap. Returns the phase.
        ``quota_per_day`` left out: the instance's default daily quota per participant; None: no limit."""
        body: dict[str, Any] = {"name": name, "opens_at": opens_at, "closes_at": closes_at,
                                "quota_total": quota_total}
        if quota_per_day is not ...:
            body["quota_per_day"] = quota_per_day
        return self._json("POST", f"/v1/tasks/{_segment(task)}/phases", json=_jsonable(body))

    def update_phase(self, task: Ref, name: str, **changes: Any) -> dict[str, Any]:
        """Move a phase's window (``opens_at``, ``closes_at``) or change its quotas (organisers)."""
        path = f"/v1/tasks/{_segment(task)}/phases/{urllib.parse.quote(name, safe='')}"
        return self._json("PATCH", path, json=_jsonable(changes))

    def finalise(self, task: Ref, *, per_topic: str = "organisers",
                 timeout: float | None = FINALISE_WAIT_SECONDS) -> dict[str, Any]:
        """Finalise your task (organisers): its final leaderboard is stored with a content hash, and every write on
        the task is refused from then on (409 ``task-final``). Returns the final record (``hash``, ``evalserve``,
        ``judgments_sha256``, ``measures``, ``leaderboard``...); finalising a final task returns the same record.
        While submissions are still being evaluated (409 ``evaluations-pending``) it asks again after Retry-After,
        for at most ``timeout`` seconds (None: asks once). ``per_topic="public"`` lets anyone who can see the task
        download every submission's per-topic scores (``per_topic_export``) once it is final."""
        path = f"/v1/tasks/{_segment(task)}/finalise"
        deadline = None if timeout is None else self._clock() + timeout
        while True:
            try:
                return self._json("POST", path, json={"per_topic": per_topic})
            except ApiError as exc:
                if exc.code != "evaluations-pending" or deadline is None or self._clock() >= deadline:
                    raise
                self._sleep(min(max(exc.retry_after or 1.0, 0.2), 5.0, max(deadline - self._clock(), 0.0)))

    def register(self, task: Ref, team: str, code: str | None = None) -> dict[str, Any]:
        """Register the caller for the task under a team name (``code``: the organisers' registration code, for
        tasks that ask for one); returns the registration. 409 ``already-registered`` / ``team-taken``."""
        body: dict[str, Any] = {"team": team}
        if code is not None:
            body["code"] = code
        return self._json("POST", f"/v1/tasks/{_segment(task)}/participants", json=body)

    def submit_to_task(self, task: Ref, run_path_or_bytes: Upload, *, description: str = "",
                       phase: str | None = None, baseline: bool = False,
                       idempotency_key: str | None = None, callback_url: str | None = None,
                       wait: bool = False, timeout: float | None = None) -> dict[str, Any]:
        """Submit a run (a gzip file goes up as it is) to the task's open phase (``phase``: name one; organisers
        may name any); returns the queued submission -- ``wait_for_submission`` follows it, or ``wait=True``
        waits here (long-polls; ``timeout`` as there) and returns it evaluated. ``callback_url``: the server
        POSTs what you may see of the submission there when its evaluation ends, signed with the
        ``callback_secret`` of the answer (``webhooks.verify_signature``); only the 202 shows it, so with
        ``wait=True`` it is added to the evaluated submission returned.

        The upload carries an ``Idempotency-Key`` (a fresh uuid4 unless ``idempotency_key`` is given), and a
        retry after a lost answer resends the very same bytes, so the server counts it once against the quota.
        Give your own key (say, derived from the run's hash) to make re-running a script safe too: with it the
        multipart boundary is derived from the key, so the same file and form give the same request body.

        Raises ``ApiError``: 403 ``not-registered``, 409 ``phase-closed`` / ``phase-not-open``, 422
        ``invalid-upload`` (every problem in ``problems``; nothing stored, no quota used), 429 ``quota-exceeded``
        (not retried; ``retry_after`` says when the daily quota allows the next one).
        """
        filename, content = read_upload(run_path_or_bytes, "run")
        form = {"description": description, "baseline": "true" if baseline else "false"}
        if phase is not None:
            form["phase"] = phase
        if callback_url is not None:
            form["callback_url"] = callback_url
        headers = {}
        if idempotency_key is not None:
            boundary = hashlib.sha256(b"evalserve-client multipart " + idempotency_key.encode()).hexdigest()[:32]
            headers["Content-Type"] = f"multipart/form-data; boundary={boundary}"
        response = self._send("POST", f"/v1/tasks/{_segment(task)}/submissions", data=form,
                              files=[("run", (filename, content))], headers=headers,
                              idempotency_key=idempotency_key)
        submission: dict[str, Any] = response.json()
        if not wait:
            return submission
        evaluated = self.wait_for_submission(task, submission["id"], timeout=timeout)
        shown: dict[str, Any] = {k: submission[k] for k in ("callback_url", "callback_secret") if k in submission}
        return {**evaluated, **shown}

    def task_submission(self, task: Ref, submission: Ref) -> dict[str, Any]:
        """A submission as it is now: ``state``, ``stage``, ``progress`` (0..1), ``scores`` ({measure: mean}, or
        None until evaluated or while a blinded task hides them), ``error``, ``warnings``, ``evaluations``."""
        return self._json("GET", f"/v1/tasks/{_segment(task)}/submissions/{_segment(submission)}")

    def task_submission_per_topic(self, task: Ref, submission: Ref) -> dict[str, Any]:
        """Your submission's score on every topic: ``per_topic`` ({measure: {topic: score}}, None until
        evaluated), ``topics``, ``measures``, ``scores`` (the means), ``version``, ``state``. Another team's
        submission raises ``ApiError`` 404; a task that gives no per-topic feedback 403 ``per-topic-feedback-off``,
        a blinded one 403 ``scores-hidden`` until its date. Organisers read every submission's."""
        return self._json("GET", f"/v1/tasks/{_segment(task)}/submissions/{_segment(submission)}/per-topic")

    def wait_for_submission(self, task: Ref, submission: Ref, *, timeout: float | None = None,
                            poll: float | None = None, on_progress: ProgressOption = None) -> dict[str, Any]:
        """Wait until the submission's evaluation is final; returns it when it succeeded (with ``scores``),
        raises ``JobFailed`` (``kind="submission"``) when it failed or was cancelled, ``WaitTimeout`` after
        ``timeout`` seconds (the evaluation goes on).

        Long-polls as ``wait`` does for a job (``?wait=`` with the submission's ``ETag`` as ``If-None-Match``: each
        answer comes as soon as the evaluation moves on or ends). ``poll``: poll instead, this many seconds apart
        (and on a server without long-polls: back off from 0.2 s to 5 s); never sooner than the server's
        ``Retry-After``. ``on_progress``: None, True (a bar on stderr when it is a terminal) or a callable taking
        the submission after every answer."""
        path = f"/v1/tasks/{_segment(task)}/submissions/{_segment(submission)}"
        if poll is not None:
            return self._poll(path, submission, "submission", progress=on_progress, timeout=timeout, interval=poll)
        # asked at once (the 202 carries no ETag to long-poll with), then held by the server
        return self._poll(path, submission, "submission", progress=on_progress, timeout=timeout, long_poll=True,
                          ask_at_once=True)

    def per_topic_export(self, task: Ref, *, format: str = "csv", phase: str | None = None,
                         version: int | None = None, selection: str = "latest") -> Any:
        """Every shown submission's per-topic scores (organisers), in long format: the CSV text (``csv``), the
        JSON document as a dict (``json``: ``columns`` and ``rows``) or the Parquet file's bytes (``parquet``; a
        server without pyarrow raises ``ApiError`` 422 ``parquet-unavailable``). ``phase``, ``version`` and
        ``selection`` as for ``leaderboard``. Others get ``ApiError`` 403 ``organisers-only``."""
        if format not in PER_TOPIC_FORMATS:
            raise ValueError(f"unknown export format {format!r}; choose one of {', '.join(PER_TOPIC_FORMATS)}")
        params: dict[str, str | int] = {"format": format, "selection": selection, **_board(phase, version)}
        response = self._send("GET", f"/v1/tasks/{_segment(task)}/per-topic", params=params)
        if format == "json":
            document: dict[str, Any] = response.json()
            return document
        return response.text if format == "csv" else response.content

    def task_submissions(self, task: Ref, *, phase: str | None = None) -> list[dict[str, Any]]:
        """Your submissions to the task (organisers: everyone's), newest first; ``phase`` filters -- all pages."""
        return self._all(f"/v1/tasks/{_segment(task)}/submissions", {"phase": phase} if phase else {})

    def select_submission(self, task: Ref, submission: Ref, selected: bool = True) -> dict[str, Any]:
        """Show this submission on the leaderboard instead of your latest one in its phase (``selected=False``:
        back to the latest); returns the submission."""
        return self._json("PATCH", f"/v1/tasks/{_segment(task)}/submissions/{_segment(submission)}",
                          json={"selected": selected})

    def withdraw_submission(self, task: Ref, submission: Ref, *, reason: str | None = None) -> dict[str, Any]:
        """Withdraw your team's submission while its phase is open: off the leaderboard, still stored
        (``withdrawn_at``); 409 ``phase-closed`` once the phase closed."""
        params = {"reason": reason} if reason else None
        return self._json("DELETE", f"/v1/tasks/{_segment(task)}/submissions/{_segment(submission)}", params=params)

    def disqualify(self, task: Ref, *, submission: Ref | None = None, participant: Ref | None = None,
                   reason: str | None = None, disqualified: bool = True) -> dict[str, Any]:
        """Disqualify a submission or a whole team (organisers) with a public ``reason`` -- its rows stay on the
        leaderboard, unranked -- or reinstate it (``disqualified=False``); returns the submission or participant."""
        if (submission is None) == (participant is None):
            raise ValueError("name a submission or a participant, not both")
        body: dict[str, Any] = {"disqualified": disqualified}
        if reason is not None:
            body["reason"] = reason
        if submission is not None:
            return self._json("PATCH", f"/v1/tasks/{_segment(task)}/submissions/{_segment(submission)}", json=body)
        assert participant is not None
        return self._json("PATCH", f"/v1/tasks/{_segment(task)}/participants/{_segment(participant)}", json=body)

    def remove_participant(self, task: Ref, participant: Ref, *, reason: str | None = None) -> dict[str, Any]:
        """Remove a team from your task (organisers): its members act for it no more and its submissions leave
        the leaderboard; nothing is deleted. Returns the participant with ``removed``."""
        params = {"reason": reason} if reason else None
        return self._json("DELETE", f"/v1/tasks/{_segment(task)}/participants/{_segment(participant)}",
                          params=params)

    def participants(self, task: Ref) -> list[dict[str, Any]]:
        """The task's teams (organisers); a participant gets their own team only."""
        found: list[dict[str, Any]] = self._send("GET", f"/v1/tasks/{_segment(task)}/participants").json()
        return found

    def members(self, task: Ref, participant: Ref) -> list[dict[str, Any]]:
        """The users of a team (its members and the organisers): ``user``, ``name``, ``joined_at``."""
        found: list[dict[str, Any]] = self._send(
            "GET", f"/v1/tasks/{_segment(task)}/participants/{_segment(participant)}/members").json()
        return found

    def audit(self, task: Ref, *, action: str | None = None) -> list[dict[str, Any]]:
        """Your task's audit log, newest first (organisers) -- all pages; ``action`` filters
        (``participant.removed``, ``submission.withdrawn``, ...)."""
        return self._all(f"/v1/tasks/{_segment(task)}/audit", {"action": action} if action else None)

    @overload
    def leaderboard(self, task: Ref, *, format: Literal["json"] = "json", phase: str | None = None,
                    version: int | None = None, selection: str = "latest") -> dict[str, Any]:
        ...

    @overload
    def leaderboard(self, task: Ref, *, format: Literal["csv", "latex", "html"], phase: str | None = None,
                    version: int | None = None, selection: str = "latest") -> str:
        ...

    @overload
    def leaderboard(self, task: Ref, *, format: str, phase: str | None = None, version: int | None = None,
                    selection: str = "latest") -> dict[str, Any] | str:
        ...

    def leaderboard(self, task: Ref, *, format: str = "json", phase: str | None = None, version: int | None = None,
                    selection: str = "latest") -> dict[str, Any] | str:
        """A phase's leaderboard (default: the open phase, else the last one) at a judgments version (default:
        the current one): the JSON document as a dict (``rows`` in rank order), or the CSV, LaTeX or HTML text.
        ``selection``: ``latest`` (each team's chosen or latest evaluated submission) or ``all``. A public task's
        leaderboard needs no token; a blinded one raises ``ApiError`` 403 ``leaderboard-blinded``. The server
        stores leaderboards: while its worker stores a newer one (``Evalserve-Stale``, or 202 before the first),
        this waits for it, at most ``LEADERBOARD_WAIT_SECONDS``."""
        text = self.leaderboard_text(task, format=format, phase=phase, version=version, selection=selection)
        if format == "json":
            document: dict[str, Any] = json.loads(text)
            return document
        return text

    def leaderboard_text(self, task: Ref, *, format: str = "json", phase: str | None = None,
                         version: int | None = None, selection: str = "latest") -> str:
        """The leaderboard exactly as the server renders it (``format``: json, csv, latex or html)."""
        if format not in LEADERBOARD_FORMATS:
            raise ValueError(f"unknown leaderboard format {format!r}; choose one of {', '.join(LEADERBOARD_FORMATS)}")
        params: dict[str, str | int] = {"format": format, "selection": selection, **_board(phase, version)}
        path = f"/v1/tasks/{_segment(task)}/leaderboard"
        deadline = time.monotonic() + LEADERBOARD_WAIT_SECONDS
        while True:  # the server stores leaderboards: while its worker stores a newer one it says so (or 202)
            response = self._send("GET", path, params=params)
            fresh = response.status_code != 202 and response.headers.get("Evalserve-Stale") != "true"
            if fresh or time.monotonic() >= deadline:
                return response.text
            self._sleep(min(max(retry_after(response) or 1.0, 0.2), 5.0))

    @overload
    def measure_advice(self, task: Ref, *, format: Literal["json"] = "json", phase: str | None = None,
                       version: int | None = None, selection: str = "latest",
                       **options: float | str) -> dict[str, Any]:
        ...

    @overload
    def measure_advice(self, task: Ref, *, format: Literal["html", "latex"], phase: str | None = None,
                       version: int | None = None, selection: str = "latest", **options: float | str) -> str:
        ...

    def measure_advice(self, task: Ref, *, format: str = "json", phase: str | None = None,
                       version: int | None = None, selection: str = "latest",
                       **options: float | str) -> dict[str, Any] | str:
        """The task's meta-evaluation with its measure advice (organisers): the JSON document as a dict (the table
        and sentences under ``advice``), or the HTML page or LaTeX document. ``selection``: ``latest`` (what the
        leaderboard shows) or ``all`` (every evaluated submission); ``options``: ``resamples``, ``alpha``, ``seed``,
        ``correlation`` (the server refuses any other with ``ApiError`` 422)."""
        if format not in ("json", "html", "latex"):
            raise ValueError(f"unknown measure advice format {format!r}; choose one of json, html, latex")
        params: dict[str, Any] = {"format": format, "selection": selection, **options, **_board(phase, version)}
        response = self._send("GET", f"/v1/tasks/{_segment(task)}/meta", params=params)
        if format == "json":
            document: dict[str, Any] = response.json()
            return document
        return response.text

    def report(self, task: Ref, *, format: str = "zip", path: str | os.PathLike[str] | None = None,
               phase: str | None = None, version: int | None = None,
               timeout: float | None = REPORT_WAIT_SECONDS) -> Path:
        """Save a task's end-of-task report (organisers) to ``path`` (default: ``{task}-report.{html|tex|zip}``
        in the working directory) and return where: ``format`` html, latex or zip (HTML, LaTeX, CSVs, plots).
        A worker builds it when first asked for; this waits for it (``Retry-After``), at most ``timeout``
        seconds (None: for ever), then raises ``TimeoutError``."""
        if format not in REPORT_FORMATS:
            raise ValueError(f"unknown report format {format!r}; choose one of {', '.join(REPORT_FORMATS)}")
        params: dict[str, str | int] = {"format": format, **_board(phase, version)}
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            response = self._send("GET", f"/v1/tasks/{_segment(task)}/report", params=params)
            if response.status_code != 202:
                break
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"the report of task {task} is still being built after {timeout:g} s")
            self._sleep(min(max(retry_after(response) or 1.0, 0.2), 10.0))
        target = Path(path) if path is not None else Path(f"{_segment(task)}-report.{REPORT_FORMATS[format]}")
        target.write_bytes(response.content)
        return target

    # -- the catalogue and health --------------------------------------------------------------------------------

    def check_measures(self, measures: Sequence[str]) -> list[Problem]:
        """The problems of the measure names the server does not accept (none: every one is good), asked of its
        catalogue (``GET /v1/measures/{name}``), so a bad name is found before anything is stored (a collection
        created, a run uploaded). Names are split as the server splits its ``measures`` field."""
        problems: list[Problem] = []
        for text in measures:
            for name in (piece for piece in _MEASURE_SEPARATOR.split(text) if piece):
                try:
                    self._json("GET", f"/v1/measures/{urllib.parse.quote(name, safe='')}")
                except ApiError as exc:
                    if exc.status != 404:
                        raise
                    problems.append({"field": "measures", "code": "invalid-measure", "message": exc.detail,
                                     "severity": "error"})  # as the server lists a bad measure of a request
        return problems

    def measures(self, name: str | None = None) -> list[dict[str, Any]]:
        """The measure catalogue: every measure (or the one ``name`` or alias) with its parameters, defaults and
        reference."""
        path = "/v1/measures" if name is None else f"/v1/measures/{urllib.parse.quote(name, safe='')}"
        entries: list[dict[str, Any]] = self._json("GET", path)["measures"]
        return entries

    def health(self) -> dict[str, Any]:
        """The server's ``/health`` report (a degraded server answers 503, raised as ``ApiError``)."""
        return self._json("GET", "/health")

    # -- polling and transport -----------------------------------------------------------------------------------

    def _poll(self, path: str, known: Ref, kind: str, *, progress: ProgressOption, timeout: float | None,
              first_delay: float | None = None, interval: float | None = None, long_poll: bool = False,
              etag: str | None = None, ask_at_once: bool = False) -> dict[str, Any]:
        """GET ``path`` until its ``state`` is final; returns it when it succeeded, raises ``JobFailed`` otherwise
        and ``WaitTimeout`` when ``timeout`` runs out. ``long_poll``: ask the server to hold each GET until the
        object changes (``?wait=``, ``If-None-Match``) whenever the last answer carried an ``ETag``; otherwise
        pauses back off from 0.2 s to 5 s (or are ``interval``) and are never shorter than the last
        ``Retry-After``. ``known``: an id, or the object as last seen (it is reported first, and the first request
        waits a pause or long-polls, unless ``ask_at_once``: an object given without its ETag)."""
        callback, done = reporter(progress)
        deadline = None if timeout is None else self._clock() + timeout
        backoff, hint = (POLL_START if interval is None else max(0.0, interval)), first_delay
        current = dict(known) if isinstance(known, Mapping) and "state" in known else None
        try:
            if current is not None and callback is not None:
                callback(current)
            while current is None or current["state"] not in FINAL_STATES:
                remaining = None if deadline is None else deadline - self._clock()
                if current is not None and remaining is not None and remaining <= 0:
                    raise WaitTimeout(current, timeout or 0.0, kind=kind)
                held = self._long_poll_seconds(remaining) if long_poll and etag and current is not None else 0.0
                if ask_at_once:
                    ask_at_once = False
                elif current is not None and held <= 0:  # a known, unfinished object: pause before asking again
                    pause = max(backoff, min(hint or 0.0, RETRY_AFTER_MAX))
                    self._sleep(pause if remaining is None else min(pause, remaining))
                    if interval is None:
                        backoff = min(POLL_CAP, backoff * POLL_FACTOR)
                params = {"wait": f"{held:g}"} if held > 0 else None
                headers = {"If-None-Match": etag} if held > 0 and etag else None
                asked = self._clock()
                response = self._send("GET", path, params=params, headers=headers)
                if response.status_code == 304:  # held to the bound, unchanged
                    if self._clock() - asked < min(1.0, held / 2):  # not held at all: a server without long-polls
                        self._sleep(max(backoff, min(hint or 0.0, RETRY_AFTER_MAX)))
                        backoff = min(POLL_CAP, backoff * POLL_FACTOR)
                    continue
                current = response.json()
                hint = retry_after(response)
                etag = response.headers.get("ETag")  # a server without long-polls sends none
                if callback is not None:
                    callback(current)
        finally:
            done()
        if current["state"] != "succeeded":
            raise JobFailed(current, kind=kind)
        return current

    def _long_poll_seconds(self, remaining: float | None) -> float:
        """How long the server may hold one long-poll: ``LONG_POLL_SECONDS``, within the time left and well
        within the read timeout (so a held request is never taken for a dead server)."""
        read = self._http.timeout.read
        held = LONG_POLL_SECONDS if read is None else min(LONG_POLL_SECONDS, read - 5.0)
        if remaining is not None:
            held = min(held, remaining)
        return max(0.0, round(held, 3))

    def _all(self, path: str, params: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
        """Every item of a paginated list, page after page (the server's ``X-Pagination`` names the next)."""
        items: list[dict[str, Any]] = []
        page: int | None = 1
        while page is not None:
            response = self._send("GET", path, params={**(params or {}), "page": page, "page_size": PAGE_SIZE})
            items.extend(response.json())
            try:
                following = json.loads(response.headers.get("X-Pagination", "{}")).get("next_page")
            except (ValueError, AttributeError):
                following = None
            page = following if isinstance(following, int) and following > page else None
        return items

    def _json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        body: dict[str, Any] = self._send(method, path, **kwargs).json()
        return body

    def _send(self, method: str, path: str, *, headers: Mapping[str, str] | None = None,
              idempotency_key: str | None = None, **kwargs: Any) -> httpx.Response:
        """Send one request, retrying transient failures with backoff; errors become ``ApiError``.

        The request is built and read once so that every retry sends the same bytes (the multipart boundary
        included) with the same idempotency key -- the server compares both to recognise a retry. A POST's key
        is ``idempotency_key`` or a fresh uuid4.
        """
        sent = dict(headers or {})
        if method == "POST":
            sent["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
        request = self._http.build_request(method, path, headers=sent, **kwargs)
        request.read()
        attempt = 0
        while True:
            try:
                response = self._http.send(request)
            except httpx.TransportError as exc:
                if attempt >= self.retries:
                    raise ServerUnreachable(self.url, exc, attempt + 1) from exc
                self._sleep(_retry_delay(attempt, None))
                attempt += 1
                continue
            if response.status_code in RETRY_STATUSES and attempt < self.retries and _worth_retrying(response):
                self._sleep(_retry_delay(attempt, retry_after(response)))
                attempt += 1
                continue
            if response.is_error:
                raise ApiError.from_response(response)
            return response


def check_token(token: str) -> str:
    """The token without surrounding white space (a file's or a paste's newline); ``ValueError`` when what is
    left cannot be one: a mistake to name at once, not a network failure to retry. The secret is not echoed."""
    token = token.strip()
    if any(c in token for c in "\r\n"):
        flaw = "a line break (was a second line captured with it?)"
    elif any(c.isspace() for c in token):
        flaw = "a space in it"
    elif not all(" " < c < "\x7f" for c in token):
        flaw = "a character that is not printable ASCII"
    else:
        return token
    raise ValueError(f"the token given is not a valid API token: it has {flaw}; a token is one word, es_...")


def read_upload(value: Upload, default_name: str) -> tuple[str, bytes]:
    """``(file name, content)`` of an upload; paths are read whole (a retry must resend the same bytes)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return default_name, bytes(value)
    if isinstance(value, tuple):
        name, content = value
        return str(name), bytes(content)
    if isinstance(value, (str, os.PathLike)):
        path = Path(value)
        return path.name, path.read_bytes()
    if hasattr(value, "read"):
        label = getattr(value, "name", None)
        return (Path(label).name if isinstance(label, str) else default_name), bytes(value.read())
    raise TypeError(f"cannot upload {type(value).__name__}: give a path, bytes, (name, bytes) or a binary file")


def ref(value: Ref) -> str:
    """The id of a server object given as its id or as the dict the API returned."""
    if isinstance(value, Mapping):
        return str(value["id"])
    return str(value)



def _board(phase: str | None, version: int | None) -> dict[str, str | int]:
    """The query naming a task's board: its phase and judgments version, when given (the server's defaults else)."""
    chosen: dict[str, str | int] = {}
    if phase is not None:
        chosen["phase"] = phase
    if version is not None:
        chosen["version"] = version
    return chosen

def _segment(value: Ref) -> str:
    """An id as one URL path segment (percent-encoded, so that no id can reach another path)."""
    return urllib.parse.quote(ref(value), safe="")


def _run_or_file(value: Upload | Mapping[str, Any]) -> str | tuple[str, bytes]:
    """A stored run's id (a run dict, or an id-like string that is not an existing file), else the file to upload."""
    if isinstance(value, Mapping):
        return ref(value)
    if isinstance(value, str) and RUN_ID.fullmatch(value) and not os.path.exists(value):
        return value
    return read_upload(value, "run")


def retry_after(response: httpx.Response) -> float | None:
    """The response's ``Retry-After`` in seconds (delta-seconds or an HTTP date), if it has a usable one."""
    return parse_retry_after(response.headers.get("Retry-After"))


def _worth_retrying(response: httpx.Response) -> bool:
    """A transient answer, unless it is a 429 whose problem code says a retry cannot help (a used-up quota)."""
    if response.status_code != 429:
        return True
    try:
        body = response.json()
    except ValueError:
        return True
    return not (isinstance(body, dict) and body.get("code") in NOT_RETRIED_CODES)


def _jsonable(value: Any) -> Any:
    """``value`` with datetimes and dates as ISO 8601 strings, inside dicts, lists and tuples too."""
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _retry_delay(attempt: int, hint: float | None) -> float:
    """Exponential backoff for the ``attempt``-th retry (0.5 s, 1 s, 2 s, ... at most 5 s), or the server's
    ``Retry-After`` when it asks for longer."""
    backoff: float = min(RETRY_CAP, RETRY_START * 2.0**attempt)
    return max(backoff, min(hint or 0.0, RETRY_AFTER_MAX))
