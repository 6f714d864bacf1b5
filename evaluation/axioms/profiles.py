"""Constraint profiles of measures: which of the ten constraints a measure satisfies, computed on demand.

The profile of a measure *definition* is that of its parameter-free form under the harness's cutoff regime
(spec 7.3): default parameters (required ones as in the catalogue's example), no cutoff where the measure
allows none, and where a cutoff is required a cutoff beyond every instance ranking ("k = infinity") -- except
``P``, ``P_IA`` and ``StRecall``, which the spec evaluates at k = 10 because their verdicts rely on a small
fixed cutoff.

    constraint_profile(default_registry().definition("RBU"))   # {"measure": "RBU", "constraints": {...}}
    profiles()                                                 # every registered measure

Nothing is cached between calls.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from evaluation.axioms.constraints import NAMES
from evaluation.axioms.forms import harness_registry
from evaluation.axioms.harness import DEFAULT_INSTANCES, DEFAULT_SEED, Outcome, check_all, resolve
from evaluation.measures.base import Measure, MeasureDef
from evaluation.measures.registry import Registry, default_registry

#: a cutoff beyond every ranking the harness builds (DeepTh's longest has 2 x 2000 documents): "k = infinity"
UNBOUNDED = 10_000
#: measures the spec evaluates at a fixed small cutoff (spec 7.3, C-AX-6)
FIXED_CUTOFFS = {"P": 10, "P_IA": 10, "StRecall": 10}


def harness_form(definition: MeasureDef) -> Measure:
    """The parameter-free form of a measure under the harness's cutoff regime."""
    example = harness_registry().parse(definition.example()) if any(p.required for p in definition.params) else None
    values = example.params if example is not None else {}
    cutoff = None if definition.cutoff != "required" else FIXED_CUTOFFS.get(definition.name, UNBOUNDED)
    return definition.instance(values, cutoff)


def constraint_profile(
    definition_or_measure: MeasureDef | Measure | str,
    *,
    instances: int = DEFAULT_INSTANCES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """``{"measure": <canonical form checked>, "constraints": {<constraint>: <status>}}`` with status one of
    satisfied, violated, not_applicable, not_evaluable. A definition is checked in its parameter-free form
    (``harness_form``); a measure or a name as given."""
    measure = _form(definition_or_measure)
    outcomes = check_all([measure], instances=instances, seed=seed)[measure.name]
    return _profile(measure, outcomes)


def profiles(
    definitions: Iterable[MeasureDef] | Registry | None = None,
    *,
    instances: int = DEFAULT_INSTANCES,
    seed: int = DEFAULT_SEED,
) -> dict[str, dict[str, Any]]:
    """The profile of every definition (default: every registered measure), keyed by definition name; the
    instances are drawn once and shared by all of them."""
    chosen = list(default_registry() if definitions is None else definitions)
    forms = [harness_form(d) for d in chosen]
    results = check_all(forms, instances=instances, seed=seed)
    return {d.name: _profile(m, results[m.name]) for d, m in zip(chosen, forms)}


def _form(given: MeasureDef | Measure | str) -> Measure:
    if isinstance(given, MeasureDef):
        return harness_form(given)
    return resolve(given)


def _profile(measure: Measure, outcomes: dict[str, Outcome]) -> dict[str, Any]:
    return {"measure": measure.name, "constraints": {name: outcomes[name].status for name in NAMES}}
