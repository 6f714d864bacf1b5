"""Validating and storing uploads: the engine's readers check every file before anything is stored, and a file
with errors is refused with all its problems (422); what is accepted is committed before the API answers.
Every file is decoded under the deployment's ``DecodeLimits``: one that decompresses past the cap is a 413,
one with too long or too many lines, or binary (NUL bytes), a 422 -- found while decoding, before memory grows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from evalserve.service.core.errors import ServiceError
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.core.state import ServiceState
from evalserve.service.inputs.inflight import before_store, charging, one_file, progress
from evalserve.service.inputs.streamed_runs import STREAM_FROM_BYTES, parse_streamed
from evalserve.service.store.models import Collection, RunRecord, new_id
from evalserve.service.store.storage import HasStores
from evaluation.formats import Blob, parse_intent_weights, parse_run
from evaluation.formats.run_formats import RunFormat, parse_run_as, resolve_run_format, text_head
from evaluation.formats.source import GZIP_MAGIC, TOO_LARGE_CODES, DecodeLimits
from evaluation.model import Run
from evaluation.pipeline import parse_judgments
from evaluation.problems import InputError, Parsed
from evaluation.side_registry import side_reader


def to_blob(data: bytes, filename: str, limits: DecodeLimits) -> Blob:
    """Upload bytes as an engine input (gzip decompressed under ``limits``): a file too large once decompressed
    is a 413 problem (code ``decompressed-too-large``/``input-too-large``), any other decoding problem (corrupt
    gzip, ``line-too-long``, ``too-many-lines``, ``binary-input``) a 422. The request's upload budget is charged
    with what it inflates to as it inflates, before each piece is kept (``inputs.inflight``; the decoder keeps
    nothing past its in-memory cap: it counts first, then inflates), so one pass both charges and decodes."""
    try:
        with one_file():
            gzip = data.startswith(GZIP_MAGIC)
            if charging() and not gzip:
                progress(len(data))
            return Blob.from_bytes(data, filename, limits, progress if charging() and gzip else None)
    except InputError as exc:
        big = next((p for p in exc.problems if p.code in TOO_LARGE_CODES), None)
        if big is not None:
            raise ServiceError(413, ProblemCode(big.code), f"{filename}: {big.message}; nothing was stored",
                             exc.as_dicts()) from None
        raise _refused(filename, exc.as_dicts(), exc.omitted) from None


def _refused(filename: str, problems: list[dict[str, Any]], omitted: int = 0) -> ServiceError:
    errors = sum(p["severity"] == "error" for p in problems) + omitted
    more = f" ({omitted} more errors not listed)" if omitted else ""
    return ServiceError(422, ProblemCode.INVALID_UPLOAD,
                        f"{filename}: {errors} error(s); nothing was stored{more}", problems)


def _checked(parsed: Parsed[Any], filename: str) -> Any:
    if parsed.value is None or parsed.errors or parsed.omitted_errors:
        raise _refused(filename, [p.as_dict() for p in parsed.problems], parsed.omitted_errors)
    return parsed.value


def create_collection(s: Session, st: HasStores, owner_id: str, form: dict[str, Any], qrels: tuple[str, bytes],
                      intent_weights: tuple[str, bytes] | None,
                      side: dict[str, tuple[str, bytes]] | None = None) -> Collection:
    """Validate the judgments (intent weights, side inputs) and add the collection to the session (the caller
    commits); immutable from then on."""
    limits = st.settings.decode_limits
    qrels_blob = to_blob(qrels[1], qrels[0], limits)
    parsed_judgments = parse_judgments(qrels_blob, form["qrels_format"])
    judged, _ = _checked(parsed_judgments, qrels[0])  # an EvALL gold's own weights are re-read by the worker
    warnings = [p.as_dict() for p in parsed_judgments.warnings]
    weights_sha = None
    if intent_weights is not None:
        parsed = parse_intent_weights(to_blob(intent_weights[1], intent_weights[0], limits))
        _checked(parsed, intent_weights[0])
        warnings += [p.as_dict() for p in parsed.warnings]
    for kind, (filename, data) in (side or {}).items():
        parsed = side_reader(kind)(to_blob(data, filename, limits))
        _checked(parsed, filename)
        warnings += [p.as_dict() for p in parsed.warnings]
    before_store()  # the quota checks deferred while the files were validated
    side_inputs = {kind: {"filename": filename, "sha256": st.blobs.put(s, data)}
                   for kind, (filename, data) in (side or {}).items()}
    qrels_sha = st.blobs.put(s, qrels[1])
    if intent_weights is not None:
        weights_sha = st.blobs.put(s, intent_weights[1])
    row = Collection(
        id=new_id("col"), owner_id=owner_id, name=form["name"], description=form["description"],
        grade_scale=form["grade_scale"], qrels_sha256=qrels_sha, qrels_filename=qrels[0],
        qrels_format=form["qrels_format"], intent_weights_sha256=weights_sha,
        intent_weights_filename=intent_weights[0] if intent_weights else None,
        n_topics=len(judged.topics), n_judgments=len(judged), n_intents=len(judged.intents), warnings=warnings,
        side_inputs=side_inputs, hidden=bool(form.get("hidden", False)),
        catalogue_key=form.get("catalogue_key"), citation=form.get("citation", ""), topics=form.get("topics", {}),
    )
    s.add(row)
    s.flush()  # its defaults are set: the caller answers with it before committing
    return row


def create_run(s: Session, st: ServiceState, owner_id: str, collection_id: str, filename: str, data: bytes, *,
               admin: bool = False, run_format: str = RunFormat.AUTO) -> RunRecord:
    """Validate a run file (in ``run_format``) and store it against a collection."""
    return create_runs(s, st, owner_id, collection_id, [(filename, data)], admin=admin, run_format=run_format)[0]


@dataclass(frozen=True)
class CheckedRun:
    """A run file that passed validation: its bytes, the parsed run, the reader's warnings and the format it was
    read in (never ``auto``)."""

    filename: str
    data: bytes
    run: Run
    warnings: list[dict[str, Any]]
    run_format: str = RunFormat.TREC


def check_runs(files: list[tuple[str, bytes]], limits: DecodeLimits,
               run_format: str = RunFormat.AUTO) -> list[CheckedRun]:
    """Validate every run file, read in ``run_format`` (``auto``: each file's own, detected from its first line):
    all pass, or a 422 with the problems of every refused file (each problem names its file in ``source``); a
    file too large once decompressed is a 413 at once."""
    checked: list[CheckedRun] = []
    problems: list[dict[str, Any]] = []
    refused: list[str] = []
    for filename, data in files:
        with one_file():  # read once streamed and, if that declines, again as a Blob: counted once
            checked_run = _check_run(filename, data, limits, run_format)
        if isinstance(checked_run, ServiceError):
            refused.append(filename)
            problems.extend(checked_run.problems)
        else:
            checked.append(checked_run)
    if refused:
        raise ServiceError(422, ProblemCode.INVALID_UPLOAD, f"{len(refused)} of {len(files)} run file(s) have errors"
                         f" ({', '.join(refused[:5])}); nothing was stored", problems)
    names = [c.run.name for c in checked]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise ServiceError(422, ProblemCode.DUPLICATE_RUN_NAME,
                           f"two runs would both be named {clash[0]}; rename one file")
    return checked


def _check_run(filename: str, data: bytes, limits: DecodeLimits, run_format: str) -> CheckedRun | ServiceError:
    """One run file checked: the run, or the 422 that lists its problems (a 413 is raised at once)."""
    fmt = resolve_run_format(run_format, text_head(data))
    streamed = parse_streamed(data, filename, limits) if fmt == RunFormat.TREC and len(data) >= STREAM_FROM_BYTES \
        else None
    if streamed is not None:  # a large clean run, parsed from a file (no text copy in memory)
        return CheckedRun(filename, data, streamed, [])
    try:
        blob = to_blob(data, filename, limits)
        parsed = parse_run(blob) if fmt == RunFormat.TREC else parse_run_as(blob, fmt)
        run = _checked(parsed, filename)
    except ServiceError as exc:
        if exc.status != 422:
            raise
        return exc
    return CheckedRun(filename, data, run, [p.as_dict() for p in parsed.warnings], fmt)


def store_run(s: Session, st: ServiceState, owner_id: str, collection_id: str, checked: CheckedRun) -> RunRecord:
    """Add a validated run to the session (the caller commits), after the request's deferred quota checks."""
    before_store()
    row = RunRecord(id=new_id("run"), owner_id=owner_id, collection_id=collection_id, name=checked.run.name,
                    filename=checked.filename, sha256=st.blobs.put(s, checked.data), n_topics=len(checked.run.topics),
                    n_rows=len(checked.run), warnings=checked.warnings, run_format=checked.run_format)
    s.add(row)
    return row


def create_runs(s: Session, st: ServiceState, owner_id: str, collection_id: str, files: list[tuple[str, bytes]], *,
                admin: bool = False, run_format: str = RunFormat.AUTO) -> list[RunRecord]:
    """Validate every run file, then add all of them to the session (the caller commits: all or none). Runs for
    a hidden collection (a task's judgments) are refused like a missing collection unless the caller owns it."""
    checked = check_runs(files, st.settings.decode_limits, run_format)
    runs = store_runs(s, st, owner_id, collection_id, checked, admin=admin)
    s.flush()  # their defaults are set: the caller answers with them before committing
    return runs


def store_runs(s: Session, st: ServiceState, owner_id: str, collection_id: str, checked: list[CheckedRun], *,
               admin: bool = False) -> list[RunRecord]:
    """Add validated runs for a collection the caller may use to the session (the caller commits)."""
    collection = s.get(Collection, collection_id)
    if collection is None or (collection.hidden and not admin and collection.owner_id != owner_id):
        raise ServiceError(404, ProblemCode.NOT_FOUND, f"no collection {collection_id}")
    return [store_run(s, st, owner_id, collection_id, c) for c in checked]
