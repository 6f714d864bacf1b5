"""The worker's side of the job kinds (``jobs.kinds``): for each kind, the function that runs it and the builder
of the outputs its result views serve (``KindRun`` in ``RUNS``). One module per kind with a run function
(``evaluation``, ``meta``); the outputs of both are the standard ones (``outputs.standard_outputs``: the report
content if the kind offers reports, its plots if it declares one)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evalserve.service.jobrun.context import WorkerContext
from evalserve.service.jobrun.kinds import evaluation, meta
from evalserve.service.jobrun.lease import Lease
from evalserve.service.jobrun.outputs import OutputBuilder, standard_outputs
from evalserve.service.jobs import lifecycle as jobs
from evalserve.service.jobs.kinds import EVALUATION, META


@dataclass(frozen=True)
class KindRun:
    """How a worker carries out one kind: ``run(ctx, claim, lease) -> result document``, then
    ``outputs(kind, document, request) -> {name: bytes}``, stored before the job is marked succeeded."""

    run: Callable[[WorkerContext, jobs.Claim, Lease], dict[str, Any]]
    outputs: OutputBuilder = standard_outputs


#: how each job kind (``jobs.kinds.KINDS``) is run and what is built from its result
RUNS: dict[str, KindRun] = {
    EVALUATION: KindRun(evaluation.run),
    META: KindRun(meta.run),
}
