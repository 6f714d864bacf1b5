"""Checking a measure against the ten constraints: ``check("RBU(p=0.99,e=0.05)")`` -> one Outcome per constraint.

Every instance of a constraint is scored with the measure as given (its parameters and cutoff); a violated
constraint comes with the smallest counterexample found (fewest ranked documents, then smallest pool), whose
scores can be reproduced by evaluating the counterexample alone.

Outcomes other than satisfied/violated are reported, never raised: ad hoc measures are *not applicable* to
the diversity constraints (spec 7.1), and a measure that cannot be scored on the instances (it needs inputs
the harness does not generate, its cutoff leaves no room for an instance, or it refuses the judgments) is
*not evaluable*, with the reason.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from evaluation.axioms.batch import Batch
from evaluation.axioms.constraints import CONSTRAINTS, NAMES, Constraint, constraint
from evaluation.axioms.forms import harness_registry
from evaluation.axioms.instances import LONGEST, Comparison, Settings
from evaluation.measures.base import Measure
from evaluation.problems import EvaluationError, InputError

Status = Literal["satisfied", "violated", "not_applicable", "not_evaluable"]
#: the inputs the harness can build for a measure
SUPPORTED_INPUTS = frozenset({"adhoc", "intents"})
DEFAULT_INSTANCES = 300
DEFAULT_SEED = 2018


@dataclass(frozen=True)
class Counterexample:
    """Two rankings on one pool of judgments whose scores break (or, for CloseTh, never meet) a requirement."""

    constraint: str
    description: str
    intents: dict[str, float]  # intent -> weight
    judgments: dict[str, dict[str, int]]  # docno -> intent -> grade (every pool document, every intent)
    higher: tuple[str, ...]  # the ranking the constraint expects to score higher
    lower: tuple[str, ...]
    higher_score: float
    lower_score: float
    relation: str  # ">" or ">=": the requirement is Q(higher) <relation> Q(lower)

    def to_dict(self) -> dict[str, Any]:
        return {
            "description": self.description,
            "requirement": f"Q(higher) {self.relation} Q(lower)",
            "higher": {"ranking": list(self.higher), "score": _number(self.higher_score)},
            "lower": {"ranking": list(self.lower), "score": _number(self.lower_score)},
            "intents": self.intents,
            "judgments": self.judgments,
        }


@dataclass(frozen=True)
class Outcome:
    """The verdict of one constraint for one measure."""

    constraint: str
    status: Status
    counterexample: Counterexample | None = None
    instances: int = 0  # comparisons evaluated
    note: str = ""

    @property
    def satisfied(self) -> bool:
        return self.status == "satisfied"

    @property
    def applicable(self) -> bool:
        return self.status in ("satisfied", "violated")

    def to_dict(self) -> dict[str, Any]:
        return {
            "satisfied": self.satisfied,
            "status": self.status,
            "counterexample": None if self.counterexample is None else self.counterexample.to_dict(),
            "instances": self.instances,
            "note": self.note or None,
        }


def resolve(measure: str | Measure) -> Measure:
    """A measure by name (registered measures and the harness-only forms), or the measure itself."""
    return measure if isinstance(measure, Measure) else harness_registry().parse(measure)


class InstanceCache:
    """The instances of one harness run, drawn once per (constraint, settings) and shared by every measure
    checked in that run (measures with the same cutoff see the same instances). Nothing outlives the object."""

    def __init__(self, count: int = DEFAULT_INSTANCES, seed: int = DEFAULT_SEED) -> None:
        self.count = count
        self.seed = seed
        self._drawn: dict[tuple[str, int | None, bool], tuple[list[Comparison], Batch | None]] = {}

    def of(self, c: Constraint, depth: int | None, multi_aspect: bool) -> tuple[list[Comparison], Batch | None]:
        """The comparisons of a constraint for a measure with this cutoff, and their batch (None if empty)."""
        # only Conf reads multi_aspect, and the fixed generators read no settings at all
        if depth is not None and depth >= LONGEST:
            depth = None  # a cutoff no random instance reaches draws the same instances as no cutoff
        key = (c.name, None, False) if c.fixed else (c.name, depth, multi_aspect and c.name == "Conf")
        found = self._drawn.get(key)
        if found is None:
            rng = random.Random(self.seed * 100 + NAMES.index(c.name))
            comparisons = c.generate(rng, Settings(self.count, depth, multi_aspect))
            found = self._drawn[key] = (comparisons, Batch(comparisons) if comparisons else None)
        return found


def check(
    measure: str | Measure,
    constraints: Iterable[str] | None = None,
    *,
    instances: int = DEFAULT_INSTANCES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Outcome]:
    """The outcome of every constraint (or of the named ones) for a measure with its parameters and cutoff.

    Raises MeasureError for a name the registry does not know; never for a measure that cannot be checked.
    """
    return check_all([measure], constraints, instances=instances, seed=seed)[resolve(measure).name]


def check_all(
    measures: Iterable[str | Measure],
    constraints: Iterable[str] | None = None,
    *,
    instances: int = DEFAULT_INSTANCES,
    seed: int = DEFAULT_SEED,
) -> dict[str, dict[str, Outcome]]:
    """``check`` for several measures (keyed by canonical name, in the given order), sharing the instances."""
    resolved = [resolve(m) for m in measures]  # every name is checked before any work starts
    wanted = NAMES if constraints is None else tuple(constraint(n).name for n in constraints)
    drawn = InstanceCache(instances, seed)
    return {
        m.name: {c.name: check_constraint(m, c, drawn) for c in CONSTRAINTS if c.name in wanted} for m in resolved
    }


#: profiles (every constraint, default instances and seed) already checked in this process, by canonical name
_PROFILES: dict[str, dict[str, Outcome]] = {}
_PROFILES_KEPT = 1024


def profiles(measures: Iterable[str | Measure]) -> dict[str, dict[str, Outcome]]:
    """``check_all(measures)`` at the defaults, each measure's outcomes remembered for the rest of the process:
    a profile is a property of the measure, not of any data (each constraint's instances are drawn from a seed of
    its own, so a measure's outcomes are the same whichever others are checked with it). A worker that reports on
    every job checks each measure once, not once per job (0.7 s for eight measures)."""
    resolved = [resolve(m) for m in measures]
    missing = list({m.name: m for m in resolved if m.name not in _PROFILES}.values())
    if missing:
        if len(_PROFILES) + len(missing) > _PROFILES_KEPT:
            _PROFILES.clear()
        _PROFILES.update(check_all(missing))
    return {m.name: dict(_PROFILES[m.name]) for m in resolved}


def check_constraint(m: Measure, c: Constraint, drawn: InstanceCache) -> Outcome:
    """The outcome of one constraint for one measure, on instances drawn by ``drawn``."""
    inputs = set(m.definition.inputs)
    if not inputs <= SUPPORTED_INPUTS:
        missing = ", ".join(sorted(inputs - SUPPORTED_INPUTS))
        return Outcome(c.name, "not_evaluable", note=f"{m.name} needs inputs the harness does not generate"
                       f" ({missing})")
    ad_hoc = "intents" not in inputs
    if ad_hoc and c.group == "diversity":
        return Outcome(c.name, "not_applicable", note=f"{m.name} is an ad hoc (single-aspect) measure")
    comparisons, batch = drawn.of(c, m.cutoff, not ad_hoc)
    if batch is None:
        return Outcome(c.name, "not_evaluable", note=f"the cutoff {m.cutoff} leaves no room for {c.name}'s"
                       " instances (a modified or appended position would fall beyond it)")
    try:
        higher, lower = batch.score(m)
    except Exception as exc:  # a measure refusing the instances is a verdict, not a crash
        return Outcome(c.name, "not_evaluable", instances=len(comparisons),
                       note=f"{m.name} cannot be scored on {c.name}'s instances: {_reason(exc)}")
    strict = np.array([comp.strict for comp in comparisons], dtype=bool)
    ok = c.holds(higher, lower, strict)
    if c.existential:
        if ok.any():
            return Outcome(c.name, "satisfied", instances=len(comparisons),
                           note=f"witness: {comparisons[int(np.argmax(ok))].label}")
        bad = list(range(len(comparisons)))
        note = "no instance in the search range satisfies the requirement"
    else:
        bad = np.flatnonzero(~ok).tolist()
        if not bad:
            return Outcome(c.name, "satisfied", instances=len(comparisons))
        note = f"{len(bad)} of {len(comparisons)} instances violate the requirement"
    smallest = min(bad, key=lambda k: (comparisons[k].size, k))
    example = _counterexample(m, c, comparisons[smallest], float(higher[smallest]), float(lower[smallest]))
    return Outcome(c.name, "violated", example, instances=len(comparisons), note=note)


def _counterexample(m: Measure, c: Constraint, comp: Comparison, higher: float, lower: float) -> Counterexample:
    """The comparison as a self-contained counterexample. Its scores are those of the batch, which equal the
    scores of the counterexample evaluated alone: every instance pins its own grade scale (anchors at the top
    grade), so no value depends on the other instances of the batch."""
    pool = comp.pool
    return Counterexample(
        constraint=c.name,
        description=comp.label,
        intents=dict(zip(pool.intents, pool.weights)),
        judgments={doc: dict(zip(pool.intents, grades)) for doc, grades in sorted(pool.grades.items())},
        higher=comp.higher,
        lower=comp.lower,
        higher_score=higher,
        lower_score=lower,
        relation=">" if comp.strict else ">=",
    )


def _reason(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    known = isinstance(exc, (EvaluationError, InputError))  # the engine's own refusals: their text says it all
    return text if known else f"{type(exc).__name__}: {text}"


def _number(value: float) -> float | str:
    """A score for JSON: NaN and infinities as text."""
    return value if np.isfinite(value) else str(value)
