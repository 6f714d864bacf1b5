"""Running an evaluation job on a worker: its stored inputs read, evaluated, the report per topic."""

from __future__ import annotations

import logging
import time
from typing import Any

from evalserve.service.inputs.collection_files import collection_files
from evalserve.service.jobrun.context import WorkerContext
from evalserve.service.jobrun.lease import Lease
from evalserve.service.jobrun.stored_runs import StoredRuns, input_files
from evalserve.service.jobs import lifecycle as jobs
from evalserve.service.jobs.kinds import EvaluationRequest, MetaRequest
from evalserve.service.store.models import Collection
from evaluation.formats import Blob
from evaluation.model import IntentWeights, Qrels
from evaluation.pipeline import load_inputs, run_evaluation
from evaluation.report import Report
from evaluation.sources import Inputs

log = logging.getLogger(__name__)


def run(ctx: WorkerContext, claim: jobs.Claim, lease: Lease) -> dict[str, Any]:
    """An evaluation job's result document: the report of its runs, per topic."""
    request = EvaluationRequest.from_json(claim.request)
    return evaluate_runs(ctx, claim, lease, request)[1].as_json(per_topic=True)


def evaluate_runs(ctx: WorkerContext, claim: jobs.Claim, lease: Lease,
                  request: EvaluationRequest | MetaRequest) -> tuple[Inputs, Report]:
    """The stored inputs, read, and their evaluation."""
    with ctx.db.session() as s:
        collection = s.get(Collection, claim.collection_id)
        assert collection is not None
        files = collection_files(s, ctx.blobs, collection, ctx.settings.decode_limits)
    runs = StoredRuns(ctx, list(request.runs))  # read one at a time, as load_inputs reaches each
    started = time.monotonic()
    judged = ctx.judgments.parsed(files.qrels, files.qrels_format)  # kept from an earlier job of this process
    qrels: Blob | Qrels = files.qrels if judged is None else judged.qrels
    weights: Blob | IntentWeights | None = files.intent_weights  # a file of its own wins, as in load_inputs
    if weights is None and judged is not None:
        weights = judged.weights  # an EvALL gold standard's own
    # reading the runs is the first half of the work, evaluating them the second
    inputs = load_inputs(qrels, runs, qrels_format=files.qrels_format, intent_weights=weights,
                         side=files.side, progress=lambda stage, f: lease.progress(stage, 0.5 * f))
    if judged is not None:  # the judgments' warnings first, as load_inputs reports them
        inputs.warnings[:0] = judged.warnings
    inputs.files = input_files(files, runs)  # runs parsed from a file are not hashed by load_inputs
    report = run_evaluation(inputs, list(request.measures), ties=request.ties, topics=request.topics,
                            progress=lambda stage, f: lease.progress(stage, 0.5 + 0.5 * f))
    log.info("job %s: %d runs in %.2fs", claim.job_id, len(runs), time.monotonic() - started)
    return inputs, report
