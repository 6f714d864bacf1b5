"""The evaluation engine: readers, the canonical model, measures and evaluation (numpy only; no web code).

Typical use (the README's "From Python" section says more)::

    from evaluation import evaluate, iter_calc, to_dataframe
    doc = evaluate("qrels.txt", ["bm25.run"], ["AP", "nDCG@10"], per_topic=True)  # evalserve evaluate's JSON
    doc["runs"]["bm25.run"]["AP"]["mean"]
    for run, topic, measure, value in iter_calc("qrels.txt", ["bm25.run"], ["AP"]): ...

``Evaluator`` (``evaluation.evaluator``) is the lower level: parsed inputs in, per-topic arrays out.

The names below are imported on first use, so ``import evaluation`` (and ``from evaluation.problems import ...``,
which runs this file) stays cheap: the CLI starts without loading the engine it may not need.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evaluation.api import TopicValue, evaluate, iter_calc, to_dataframe
    from evaluation.evaluator import Evaluator, RunScores
    from evaluation.formats import (
        parse_evall,
        parse_intent_weights,
        parse_qrels,
        parse_run,
        read_evall,
        read_intent_weights,
        read_qrels,
        read_run,
    )
    from evaluation.measures.base import Measure
    from evaluation.measures.registry import default_registry, parse_measure
    from evaluation.model import IntentWeights, Qrels, Run
    from evaluation.problems import EvaluationError, InputError, MeasureError, NothingScored, Parsed, Problem
    from evaluation.report import Report

#: each public name -> the module that defines it (imported by ``__getattr__`` when the name is first used)
_HOMES = {
    "evaluation.api": ("TopicValue", "evaluate", "iter_calc", "to_dataframe"),
    "evaluation.evaluator": ("Evaluator", "RunScores"),
    "evaluation.formats": ("parse_evall", "parse_intent_weights", "parse_qrels", "parse_run", "read_evall",
                           "read_intent_weights", "read_qrels", "read_run"),
    "evaluation.measures.base": ("Measure",),
    "evaluation.measures.registry": ("default_registry", "parse_measure"),
    "evaluation.model": ("IntentWeights", "Qrels", "Run"),
    "evaluation.problems": ("EvaluationError", "InputError", "MeasureError", "NothingScored", "Parsed", "Problem"),
    "evaluation.report": ("Report",),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562)."""
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'evaluation' has no attribute {name!r}")
    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME])

__all__ = [
    "EvaluationError",
    "Evaluator",
    "InputError",
    "IntentWeights",
    "Measure",
    "MeasureError",
    "NothingScored",
    "Parsed",
    "Problem",
    "Qrels",
    "Report",
    "Run",
    "RunScores",
    "TopicValue",
    "default_registry",
    "evaluate",
    "iter_calc",
    "parse_evall",
    "parse_intent_weights",
    "parse_measure",
    "parse_qrels",
    "parse_run",
    "read_evall",
    "read_intent_weights",
    "read_qrels",
    "read_run",
    "to_dataframe",
]
