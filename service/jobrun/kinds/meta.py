"""Running a meta-evaluation job on a worker: the scores (an evaluation job's stored results, or runs evaluated
now), then its method."""

from __future__ import annotations

import json
from typing import Any

from evalserve.service.jobrun.context import WorkerContext
from evalserve.service.jobrun.kinds.evaluation import evaluate_runs
from evalserve.service.jobrun.lease import Lease
from evalserve.service.jobs import lifecycle as jobs
from evalserve.service.jobs.kinds import MetaRequest
from evalserve.service.store.models import Job
from evaluation.meta.methods import run_method
from evaluation.meta.table import ScoreTable
from evaluation.sources import Sources


def run(ctx: WorkerContext, claim: jobs.Claim, lease: Lease) -> dict[str, Any]:
    """A meta-evaluation job's result document: its method's output on the scores."""
    request = MetaRequest.from_json(claim.request)
    table, sources = _score_table(ctx, claim, lease, request)
    lease.progress(f"meta-evaluating: {request.method}", 0.0)
    return run_method(request.method, table, dict(request.options), progress=lease.progress, sources=sources)


def _score_table(ctx: WorkerContext, claim: jobs.Claim, lease: Lease,
                 request: MetaRequest) -> tuple[ScoreTable, Sources | None]:
    """Per-topic scores to meta-evaluate: an evaluation job's stored results, or the runs evaluated now (with the
    inputs they were evaluated from, which the methods that evaluate perturbed inputs read)."""
    if request.evaluation:
        with ctx.db.session() as s:
            source = s.get(Job, request.evaluation)
            assert source is not None and source.result_sha256 is not None
            document = json.loads(ctx.blobs.get(s, source.result_sha256))
        return ScoreTable.from_document(document, list(request.measures) or None), None
    inputs, report = evaluate_runs(ctx, claim, lease, request)
    return ScoreTable.from_run_scores(report.scores), Sources.of(inputs, ties=request.ties, topics=request.topics)
