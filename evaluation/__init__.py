"""The evaluation engine: readers, the canonical model, measures and evaluation (numpy only; no web code).

Typical use (the README's "From Python" section says more)::

    from evaluation import evaluate, iter_calc, to_dataframe
    doc = evaluate("qrels.txt", ["bm25.run"], ["AP", "nDCG@10"], per_topic=True)  # evalserve evaluate's JSON
    doc["runs"]["bm25.run"]["AP"]["mean"]
    for run, topic, measure, value in iter_calc("qrels.txt", ["bm25.run"], ["AP"]): ...

``Evaluator`` (``evaluation.evaluator``) is the lower level: parsed inputs in, per-topic arrays out.
"""

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
from evaluation.measures.base import Measure, MeasureError
from evaluation.measures.registry import default_registry, parse_measure
from evaluation.model import IntentWeights, Qrels, Run
from evaluation.pipeline import NothingScored
from evaluation.problems import InputError, Parsed, Problem
from evaluation.report import Report

__all__ = [
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
