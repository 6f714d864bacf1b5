"""``evalserve evaluate``: score runs offline with the same engine the service uses.

Reads every input first and reports all problems of all files before stopping (exit 2), so one pass fixes
everything. Warnings go to standard error and do not change the exit code.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from evaluation.evaluator import Evaluator
from evaluation.formats import load, parse_evall, parse_intent_weights, parse_qrels, parse_run
from evaluation.formats.source import Blob
from evaluation.judged_ranking import TOPIC_POLICIES
from evaluation.measures.registry import default_registry
from evaluation.model import IntentWeights, Qrels
from evaluation.problems import InputError, Parsed, Problem
from evaluation.ranking import TIE_POLICIES
from evaluation.report import FORMATS, Report

#: Measures reported when no -m is given: trec_eval's most used ones.
DEFAULT_MEASURES = ("AP", "P@10", "nDCG@10", "RR", "Rprec", "Bpref")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "evaluate",
        help="evaluate runs against relevance judgments",
        description="Evaluate TREC runs against qrels. Inputs may be gzip-compressed; '-' reads a run from stdin.",
        epilog="example: evalserve evaluate --qrels qrels.txt --run bm25.run -m AP -m nDCG@10 --per-topic",
    )
    p.add_argument("--qrels", required=True, metavar="FILE",
                   help="judgments: 'qid intent docno grade' (intent 0 for ad hoc), NTCIR 'qid docno L2',"
                   " or EvALL's 5-column TSV gold standard")
    p.add_argument("--qrels-format", choices=("auto", "trec", "evall"), default="auto",
                   help="judgment file layout (default: detected from the first line)")
    p.add_argument("--intent-weights", metavar="FILE", help="NTCIR intent probabilities 'topic intent p'")
    p.add_argument("--run", required=True, action="append", metavar="FILE", dest="runs",
                   help="a run 'qid Q0 docno rank score tag'; repeat for several runs")
    p.add_argument("-m", "--measure", action="extend", nargs="+", metavar="NAME", dest="measures",
                   help="measure name, e.g. P@10, nDCG(gain=exp)@20, RBP(p=0.9), trec_eval names like map;"
                   f" repeatable (default: {' '.join(DEFAULT_MEASURES)})")
    p.add_argument("--per-topic", action="store_true", help="also report each topic's value")
    p.add_argument("--format", choices=FORMATS, default="json", help="output format (default: json)")
    p.add_argument("--ties", choices=TIE_POLICIES, default="trec",
                   help="ranking: trec = score desc then docno desc (trec_eval); rank = rank column"
                   " (ndeval default); file = file order")
    p.add_argument("--topics", choices=TOPIC_POLICIES, default="common",
                   help="common = topics in run and qrels; complete = every qrels topic (trec_eval -c)")
    p.add_argument("-o", "--output", metavar="FILE", help="write results here instead of standard output")
    p.add_argument("-q", "--quiet", action="store_true", help="do not print warnings")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    measures = default_registry().parse_all(args.measures or DEFAULT_MEASURES)
    inputs: dict[str, str] = {}
    problems: list[Problem] = []
    omitted = 0

    def take(parsed: Parsed[Any]) -> Any:
        nonlocal omitted
        problems.extend(parsed.problems)
        omitted += parsed.omitted_errors
        return parsed.value

    qrels, weights = take(_read_qrels(args.qrels, args.qrels_format, inputs)) or (None, None)
    if args.intent_weights:
        weights = take(_with_blob(args.intent_weights, inputs, parse_intent_weights))
    runs = [take(_with_blob(path, inputs, parse_run)) for path in args.runs]
    errors = [p for p in problems if p.severity == "error"]
    if errors or omitted:
        _print_warnings([p for p in problems if p.severity == "warning"], args.quiet)
        raise InputError(errors, omitted)
    assert qrels is not None  # no errors were reported, so every reader produced its value
    names = [r.name for r in runs]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise InputError.single("duplicate-run-name", f"two runs would both be named {clash[0]}; rename one file")

    evaluator = Evaluator(qrels, measures, ties=args.ties, topics=args.topics, intent_weights=weights)
    scores = [evaluator.evaluate(r) for r in runs]
    warnings = [p for p in problems if p.severity == "warning"] + [w for s in scores for w in s.warnings]
    _print_warnings(warnings, args.quiet)
    report = Report(scores, [m.name for m in measures], args.ties, args.topics, inputs, warnings)
    text = report.render(args.format, args.per_topic)
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def _with_blob(path: str, inputs: dict[str, str], reader: Any) -> Parsed[Any]:
    try:
        blob = load(path)
    except InputError as exc:
        return Parsed(None, tuple(exc.problems))
    inputs[Path(path).name if path != "-" else "<stdin>"] = blob.sha256
    result: Parsed[Any] = reader(blob)
    return result


def _read_qrels(path: str, fmt: str, inputs: dict[str, str]) -> Parsed[tuple[Qrels, IntentWeights | None]]:
    """Judgments, and the intent weights an EvALL gold standard carries (None for other formats)."""
    try:
        blob = load(path)
    except InputError as exc:
        return Parsed(None, tuple(exc.problems))
    inputs[Path(path).name if path != "-" else "<stdin>"] = blob.sha256
    if fmt == "evall" or (fmt == "auto" and _looks_like_evall(blob)):
        return parse_evall(blob)  # type: ignore[return-value]
    parsed = parse_qrels(blob)
    value = (parsed.value, None) if parsed.value is not None else None
    return Parsed(value, parsed.problems, parsed.omitted_errors, parsed.omitted_warnings)


def _looks_like_evall(blob: Blob) -> bool:
    first = next((line for line in blob.data[:4096].splitlines() if line.strip()), b"")
    return first.count(b"\t") == 4


def _print_warnings(warnings: list[Problem], quiet: bool) -> None:
    if quiet:
        return
    for w in warnings:
        print(w, file=sys.stderr)
