"""The evaluation engine: readers, the canonical model, measures and evaluation (numpy only; no web code).

Typical use::

    from evaluation import read_qrels, read_run, evaluate
    scores = evaluate(read_qrels("qrels.txt"), [read_run("bm25.run")], ["AP", "nDCG@10"])
    scores[0].mean("AP"), scores[0].per_topic("nDCG@10")
"""

from evaluation.evaluator import Evaluator, RunScores, evaluate
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
from evaluation.problems import InputError, Parsed, Problem
from evaluation.report import Report

__all__ = [
    "Evaluator",
    "InputError",
    "IntentWeights",
    "Measure",
    "MeasureError",
    "Parsed",
    "Problem",
    "Qrels",
    "Report",
    "Run",
    "RunScores",
    "default_registry",
    "evaluate",
    "parse_evall",
    "parse_intent_weights",
    "parse_measure",
    "parse_qrels",
    "parse_run",
    "read_evall",
    "read_intent_weights",
    "read_qrels",
    "read_run",
]
