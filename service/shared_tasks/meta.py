"""Measure advice for a task's organisers: Metric Unanimity, discriminative power and rank correlations of the
official measures (spec 8.1, 8.3-8.5) over the submissions the leaderboard shows -- each team's chosen or latest
evaluated one, and the latest baseline; ``selection=all``: every evaluated submission -- computed from their
stored per-topic results with the same ``run_method`` as ``evalserve meta``, so the numbers equal the offline ones
for the same runs and seed; and the advice read from them (``evaluation.meta.advice``: a table and sentences, with
each measure's axiomatic profile, checked once per process: about 0.6 s for four measures the first time).
Computed on an organiser's first request for its options and stored under them with the fingerprint of its inputs
(``shared_tasks.stored``): a repeated request is served as stored until a submission or a setting changes. Over the
TREC Web 2012 runs of three teams (50 topics, four measures, 1000 resamples) the computation takes about 15 ms;
the methods alone take about 0.4 s for 30 runs and 1.7 s for 60."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from sqlalchemy.orm import Session

from evalserve.service.core.errors import ServiceError
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.shared_tasks.leaderboard import Candidate, candidates, judgments_version, phase_named, shown
from evalserve.service.shared_tasks.stored import inputs_of, meta_key, store_meta, stored_meta
from evalserve.service.store.blobs import BlobStore
from evalserve.service.store.models import Task, as_utc, utcnow
from evaluation.meta.table import ScoreTable
from evaluation.problems import InputError

#: the options and their defaults, as ``evalserve meta``'s
DEFAULT_OPTIONS: dict[str, Any] = {"resamples": 1000, "alpha": 0.05, "seed": 0, "correlation": "tau_b"}
#: the submissions meta-evaluated: ``latest`` as the leaderboard shows them, ``all`` every evaluated one
SELECTIONS = ("latest", "all")
#: the stored document's layout, part of its key (2: with the measure advice)
LAYOUT = 2


def served_meta(s: Session, blobs: BlobStore, task: Task, *, phase_name: str | None = None,
                version: int | None = None, options: Mapping[str, Any] | None = None,
                selection: str = "latest") -> dict[str, Any]:
    """The meta-evaluation of ``task_meta`` as stored for these options and the current inputs, else computed now
    and stored (organisers only reach this: it is never computed for an anonymous reader)."""
    at = utcnow()
    chosen = {**DEFAULT_OPTIONS, **(options or {})}
    resolved = judgments_version(task, version)
    phase = phase_named(s, task, phase_name, at)
    picked = shown(candidates(s, task, phase, resolved), selection) if phase is not None else []
    key = meta_key(task.id, phase, resolved, {**chosen, "selection": selection, "layout": LAYOUT})
    inputs = inputs_of(task, phase, resolved, picked)
    document = stored_meta(s, blobs, key, inputs)
    if document is None:
        document = task_meta(s, blobs, task, phase_name=phase_name, version=version, options=options, at=at,
                             selection=selection)
        store_meta(s, blobs, task.id, key, inputs, document)
    return document


def task_meta(s: Session, blobs: BlobStore, task: Task, *, phase_name: str | None = None,
              version: int | None = None, options: Mapping[str, Any] | None = None,
              at: datetime | None = None, selection: str = "latest") -> dict[str, Any]:
    """The meta-evaluation document of a task's phase (default: the open or last one) at a judgments version
    (default: the current one): the runs meta-evaluated (``selection``: as the leaderboard shows them, or every
    evaluated submission), one ``run_method`` document per method and the measure advice built from them."""
    from evaluation.meta.advice import advise, figures_from
    from evaluation.meta.methods import axiom_profiles, run_method  # every method and NumPy: on the first request

    if selection not in SELECTIONS:
        raise ServiceError(422, ProblemCode.INVALID_REQUEST, f"selection must be one of {', '.join(SELECTIONS)},"
                           f" not {selection!r}")
    at = at or utcnow()
    chosen = {**DEFAULT_OPTIONS, **(options or {})}
    version = judgments_version(task, version)
    phase = phase_named(s, task, phase_name, at)
    picked = shown(candidates(s, task, phase, version), selection) if phase is not None else []
    if len(picked) < 2:
        raise ServiceError(409, ProblemCode.TOO_FEW_SUBMISSIONS, f"meta-evaluation compares systems: task {task.id} has"
                           f" {len(picked)} evaluated submission(s) to show at judgments version {version}; it"
                           " needs two or more")
    labels = _labels(picked)
    runs = {}
    for label, c in zip(labels, picked):
        assert c.job.result_sha256 is not None
        document = json.loads(blobs.get(s, c.job.result_sha256))
        runs[label] = next(iter(document["runs"].values()))
    try:
        table = ScoreTable.from_document({"runs": runs}, list(task.measures))
    except InputError as exc:
        raise ServiceError(409, ProblemCode.META_UNAVAILABLE,
                           f"the stored results cannot be meta-evaluated: {exc}") from None
    methods = {
        "unanimity": run_method("unanimity", table),
        "discriminative-power": run_method("discriminative-power", table, {
            k: chosen[k] for k in ("resamples", "alpha", "seed")}),
        "correlation": run_method("correlation", table, {"method": chosen["correlation"]}),
    }
    primary = task.primary_measure if task.primary_measure in table.measures else table.measures[0]
    advice = advise(figures_from(methods["unanimity"], methods["discriminative-power"], methods["correlation"],
                                 primary, axiom_profiles(table.measures)),
                    primary=primary, alpha=float(chosen["alpha"]), resamples=int(chosen["resamples"]),
                    runs=len(table.runs), topics=len(table.topics), correlation=str(chosen["correlation"]))
    return {
        "task": {"id": task.id, "name": task.name},
        "phase": None if phase is None else {"name": phase.name, "opens_at": as_utc(phase.opens_at).isoformat(),
                                             "closes_at": as_utc(phase.closes_at).isoformat()},
        "version": version,
        "selection": selection,
        "measures": list(task.measures),
        "runs": [{"label": label, "submission": c.submission.id, "team": c.participant.team, "run": c.run.name,
                  "baseline": c.submission.baseline} for label, c in zip(labels, picked)],
        "topics": len(table.topics),
        "options": chosen,
        "methods": methods,
        "advice": advice.to_json(),
        "links": {"leaderboard": f"/v1/tasks/{task.id}/leaderboard?"
                  + urlencode({"version": version, **({"phase": phase.name} if phase is not None else {})})},
        "generated_at": at.isoformat(),
    }


def _labels(picked: list[Candidate]) -> list[str]:
    """Each run's name in the tables: its team, as on the leaderboard; the run's name too where a team shows two
    (a baseline beside the organisers' own submission)."""
    teams = [c.participant.team for c in picked]
    labels = [t if teams.count(t) == 1 else f"{t} ({c.run.name})" for t, c in zip(teams, picked)]
    return [label if labels.count(label) == 1 else f"{label} [{c.submission.id}]" for label, c in zip(labels, picked)]


def render_meta(document: Mapping[str, Any], fmt: str) -> str:
    """A stored meta-evaluation document as an HTML page or a LaTeX document (``evaluation.reports``): the advice's
    sentences and table, the methods' tables, the measures and their axiomatic profiles. Computes nothing."""
    from evaluation.reports import render
    from evaluation.reports.advice import advice_content

    phase = document.get("phase") or {}
    options = document["options"]
    settings = [("task", f"{document['task']['name']} ({document['task']['id']})"),
                ("phase", str(phase.get("name", "-"))), ("judgments version", str(document["version"])),
                ("submissions", f"{document['selection']}: " + ", ".join(r["label"] for r in document["runs"])),
                ("topics", str(document["topics"])),
                ("options", ", ".join(f"{k} = {v}" for k, v in options.items())),
                ("generated", str(document["generated_at"]))]
    content = advice_content(f"Measure advice: {document['task']['name']}", settings, document["advice"],
                             document["methods"])
    return render(content, fmt)
