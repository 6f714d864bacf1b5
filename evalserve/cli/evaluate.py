"""``evalserve evaluate``: score runs offline with the same engine the service uses.

Reads every input first and reports all problems of all files before stopping (exit 2), so one pass fixes
everything. Warnings go to standard error and do not change the exit code.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from evalserve.cli.allocator import keep_freed_memory
from evalserve.cli.commands import help_of
from evaluation.evaluator import Evaluator
from evaluation.file_digest import FileDigest
from evaluation.formats import load
from evaluation.formats.source import DecodeLimits
from evaluation.formats.trec_run import RunFile
from evaluation.judged_ranking import TOPIC_POLICIES
from evaluation.measures.registry import default_registry
from evaluation.model import IntentWeights, Qrels
from evaluation.pipeline import QRELS_FORMATS, RUN_FORMATS, Opened, QrelsFormat, RunFormat, load_inputs, run_evaluation
from evaluation.problems import InputError, MeasureError, Problem
from evaluation.ranking import TIE_POLICIES
from evaluation.report import FORMATS, HEADER, TEXT_FORMATS, trec_eval_header
from evaluation.side_registry import SIDE_KINDS
from evaluation.task_pool import usable_cores

#: Measures reported when no -m is given: trec_eval's most used ones.
DEFAULT_MEASURES = ("AP", "P@10", "nDCG@10", "RR", "Rprec", "Bpref")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "evaluate",
        help=help_of("evaluate"),
        description="Evaluate runs (TREC, EvALL or PyEvALL) against qrels. Inputs may be gzip-compressed; '-'"
        " reads a run from stdin.",
        epilog="example: evalserve evaluate --qrels qrels.txt --run bm25.run -m AP -m nDCG@10 --per-topic",
    )
    p.add_argument("--qrels", required=True, metavar="FILE",
                   help="judgments: 'qid intent docno grade' (intent 0 for ad hoc), NTCIR 'qid docno L2',"
                   " or EvALL's 5-column TSV gold standard")
    p.add_argument("--qrels-format", choices=QRELS_FORMATS, default=QrelsFormat.AUTO.value,
                   help="judgment file layout (default: detected from the first line)")
    p.add_argument("--intent-weights", metavar="FILE", help="NTCIR intent probabilities 'topic intent p'")
    for kind in SIDE_KINDS.values():  # inputs some measures need (item scores, hierarchies, ...)
        p.add_argument(kind.flag, metavar="FILE", dest=f"side_{kind.name}", help=kind.description)
    p.add_argument("--run", required=True, action="append", metavar="FILE", dest="runs",
                   help="a run 'qid Q0 docno rank score tag' (or EvALL/PyEvALL, --run-format); repeat for"
                   " several runs")
    p.add_argument("--run-format", choices=RUN_FORMATS, default=RunFormat.AUTO.value,
                   help="run file layout: trec, evall (TSV 'test case, id' in rank order), pyevall-json or"
                   " pyevall-tsv (test_case, id, value = position) (default: each run's, detected from its first"
                   " line)")
    p.add_argument("-m", "--measure", action="extend", nargs="+", metavar="NAME", dest="measures",
                   help="measure name, e.g. P@10, nDCG(gain=exp)@20, RBP(p=0.9), trec_eval names like map;"
                   f" repeatable (default: {' '.join(DEFAULT_MEASURES)})")
    p.add_argument("--per-topic", action="store_true", help="also report each topic's value")
    p.add_argument("--format", choices=FORMATS, default="json",
                   help="output format (default: json); html or latex: a report for people with the scores,"
                   " paired t-tests (Holm), the measures' definitions and axiomatic profiles")
    p.add_argument("--ties", choices=TIE_POLICIES, default="trec",
                   help="ranking: trec = score desc then docno desc (trec_eval); rank = rank column"
                   " (ndeval default); file = file order")
    p.add_argument("--topics", choices=TOPIC_POLICIES, default="common",
                   help="common = topics in run and qrels; complete = every qrels topic (trec_eval -c)")
    p.add_argument("-o", "--output", metavar="FILE", help="write results here instead of standard output")
    p.add_argument("-q", "--quiet", action="store_true", help="do not print warnings")
    p.add_argument("--threads", type=_threads, default=None, metavar="N",
                   help="read and evaluate on up to N threads (default: the usable cores, at most 4; 1: none);"
                   " the results are the same")
    p.set_defaults(handler=run)


def _threads(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def run(args: argparse.Namespace) -> int:
    keep_freed_memory()
    if args.threads is None:
        args.threads = usable_cores()
    try:
        measures = default_registry().parse_all(_expanded(args.measures) or DEFAULT_MEASURES)
        if args.measures and not _expanded(args.measures):  # only runid / num_q
            raise MeasureError("runid and num_q are lines of --format trec_eval; name a measure too")
        bad_measures = None
    except MeasureError as exc:  # reported with the inputs' problems, in one pass
        measures, bad_measures = [], exc
    side = side_files(args)
    warmed: list[Evaluator] = []

    def warm_up(qrels: Qrels, weights: IntentWeights | None) -> None:
        """The evaluator, built and warmed up while the runs are read (judgments alone decide it here)."""
        if measures and not side and not args.intent_weights:
            try:
                evaluator = Evaluator(qrels, measures, args.ties, args.topics, weights)
                evaluator.warm_up()
            except Exception:  # only a head start: the evaluation meets (and reports) the same problem again
                return
            warmed.append(evaluator)

    try:
        inputs = load_inputs(
            partial(open_input, args.qrels),
            [open_run(path, getattr(args, "digests", {}).get(path)) for path in args.runs],
            qrels_format=args.qrels_format,
            run_format=args.run_format,
            intent_weights=open_input(args.intent_weights) if args.intent_weights else None,
            side=side,
            threads=args.threads,
            on_judgments=warm_up,
        )
    except InputError as exc:
        if bad_measures is None:
            raise
        named = [Problem("invalid-measure", m, "error", source="-m") for m in bad_measures.messages]
        raise InputError([*exc.problems, *named], exc.omitted) from None
    if bad_measures is not None:
        raise bad_measures
    report = run_evaluation(inputs, measures, ties=args.ties, topics=args.topics, threads=args.threads,
                            evaluator=warmed[0] if warmed else None, release=True)
    _print_warnings(report.warnings, args.quiet)
    if args.format not in TEXT_FORMATS:  # html, latex: significance and axioms, loaded for reports only
        from evaluation.reports import render_report

        text = render_report(report.as_json(True), args.format)
    else:
        text = report.render(args.format, args.per_topic, header=trec_eval_header(args.measures))
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def _expanded(requested: Sequence[str] | None) -> list[str]:
    """The -m names with trec_eval's nicknames and bare measure families expanded (``all_trec``, ``P``);
    ``runid`` and ``num_q`` are not measures but lines of ``--format trec_eval``
    (``evaluation.report.trec_eval_header``)."""
    from evaluation.drop_in.trec_eval import expand_request

    return [piece for name in requested or () if name.strip() not in HEADER for piece in expand_request(name)]

def side_files(args: argparse.Namespace) -> dict[str, Opened]:
    """The side inputs given on the command line (``--item-scores FILE`` ...), opened."""
    return {kind: open_input(path) for kind in SIDE_KINDS
            if (path := getattr(args, f"side_{kind}", None)) is not None}


def open_input(path: str) -> Opened:
    """The file's bytes, or the error met opening it (reported together with every other input's problems);
    decoded under the limits the service uses (``EVALSERVE_MAX_DECOMPRESSED_MB`` ..., ``DecodeLimits``)."""
    try:
        return load(path, limits=DecodeLimits.from_env())
    except InputError as exc:
        return exc


def open_run(path: str, digest: FileDigest | None = None) -> Opened | RunFile:
    """A run given as a regular file is read from its path as it is parsed (bounded memory, hashed on the way
    unless its ``digest`` was started already: ``early_digests``); standard input and anything else are opened
    whole (``open_input``)."""
    if path != "-" and os.path.isfile(path):
        return RunFile(path, limits=DecodeLimits.from_env(), digest=digest)
    return open_input(path)


def _print_warnings(warnings: Sequence[Problem], quiet: bool) -> None:
    if quiet:
        return
    for w in warnings:
        print(w, file=sys.stderr)
