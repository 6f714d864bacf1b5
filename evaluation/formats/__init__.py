"""Input formats: readers that turn files into the canonical model or a list of problems."""

from evaluation.formats.evall import parse_evall, read_evall
from evaluation.formats.intent_weights import parse_intent_weights, read_intent_weights
from evaluation.formats.qrels import parse_qrels, read_qrels
from evaluation.formats.source import Blob, load
from evaluation.formats.trec_run import parse_run, read_run

__all__ = [
    "Blob",
    "load",
    "parse_evall",
    "parse_intent_weights",
    "parse_qrels",
    "parse_run",
    "read_evall",
    "read_intent_weights",
    "read_qrels",
    "read_run",
]
