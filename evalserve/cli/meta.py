"""``evalserve meta METHOD``: meta-evaluation of measures and runs (spec section 8) from a results document of
``evalserve evaluate --per-topic`` or from qrels + runs + measures, printed as JSON keyed by method then measure,
or as a readable table; ``--plot FILE`` draws ASL curves or score distributions (PNG or SVG)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from evalserve.cli.commands import help_of
from evalserve.cli.evaluate import open_input, side_files
from evaluation.formats import load
from evaluation.formats.preferences import parse_preferences
from evaluation.formats.source import DecodeLimits
from evaluation.judged_ranking import TOPIC_POLICIES
from evaluation.meta.methods import METHODS, run_method
from evaluation.meta.render import render_text
from evaluation.meta.table import ScoreTable
from evaluation.pipeline import QRELS_FORMATS, RUN_FORMATS, QrelsFormat, RunFormat, load_inputs, run_evaluation
from evaluation.problems import EvaluationError, InputError
from evaluation.ranking import TIE_POLICIES
from evaluation.result_formats import META_FORMATS, ResultFormat
from evaluation.side_registry import SIDE_KINDS
from evaluation.sources import Sources

#: how argparse reads a meta option of each kind (``bool`` is a flag, lists are read by name above)
ARG_TYPES: dict[str, type] = {"int": int, "float": float, "choice": str}


def register(sub: Any) -> None:
    p = sub.add_parser("meta", help=help_of("meta"),
                       description="Meta-evaluate measures and runs. Input: a results JSON of 'evalserve evaluate"
                       " --per-topic' (--results), or judgments and runs to evaluate first (--qrels, --run, -m).")
    methods = p.add_subparsers(dest="meta_method", metavar="METHOD", required=True)
    for method in METHODS.values():
        m = methods.add_parser(method.name, help=method.summary, description=method.summary)
        _inputs(m)
        for option in method.options:
            flag = "--" + option.name.replace("_", "-")
            if option.name == "preferences":
                m.add_argument(flag, metavar="FILE", help="user preference labels: 'topic left_run right_run label"
                               " [user]' per line (label >, <, =)")
            elif option.kind == "list":  # measures, scenarios, sizes: items of the default's type
                item = type(option.default[0]) if option.default else str
                m.add_argument(flag, nargs="+", type=item, choices=option.choices or None,
                               metavar=None if option.choices else "MEASURE" if option.name == "against"
                               else option.name.rstrip("s").upper(),
                               help=option.description + (f" (default: {' '.join(map(str, option.default))})"
                                                          if option.default else ""))
            elif option.kind == "bool":
                m.add_argument(flag, action="store_true", help=option.description)
            else:
                m.add_argument(flag, type=ARG_TYPES[option.kind], choices=option.choices or None,
                               default=option.default, help=f"{option.description} (default: {option.default})")
        if method.name in ("discriminative-power", "significance"):
            what = "ASL curves" if method.name == "discriminative-power" else "per-topic score distributions"
            m.add_argument("--plot", metavar="FILE", help=f"also draw the {what} (.png or .svg)")
        m.set_defaults(handler=run)


def _inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--results", metavar="FILE", help="results JSON of 'evalserve evaluate --per-topic'")
    p.add_argument("--qrels", metavar="FILE", help="judgments (instead of --results)")
    p.add_argument("--qrels-format", choices=QRELS_FORMATS, default=QrelsFormat.AUTO.value)
    p.add_argument("--intent-weights", metavar="FILE")
    for kind in SIDE_KINDS.values():
        p.add_argument(kind.flag, metavar="FILE", dest=f"side_{kind.name}", help=kind.description)
    p.add_argument("--run", action="append", metavar="FILE", dest="runs", help="a run; repeat for several runs")
    p.add_argument("--run-format", choices=RUN_FORMATS, default=RunFormat.AUTO.value,
                   help="run file layout (default: each run's, detected from its first line)")
    p.add_argument("-m", "--measure", action="extend", nargs="+", metavar="NAME", dest="measures",
                   help="measures (default: every measure of --results; required with --qrels)")
    p.add_argument("--ties", choices=TIE_POLICIES, default="trec")
    p.add_argument("--topics", choices=TOPIC_POLICIES, default="common")
    p.add_argument("--format", choices=[f.value for f in META_FORMATS], default=ResultFormat.JSON.value,
                   help="json (default), table (text), or a report for people: html or latex")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")


def score_table(args: argparse.Namespace) -> tuple[ScoreTable, Sources | None]:
    """The table to meta-evaluate, from a results document or by evaluating qrels and runs (then also what it
    was evaluated from, which the methods that evaluate perturbed inputs need)."""
    if args.results:
        if args.qrels or args.runs:
            raise InputError.single("conflicting-inputs", "give either --results or --qrels with --run, not both")
        try:
            doc = json.loads(load(args.results, limits=DecodeLimits.from_env()).data)
        except json.JSONDecodeError as exc:
            raise InputError.single("not-json", f"not a results JSON document: {exc}", args.results) from None
        return ScoreTable.from_document(doc, args.measures), None
    if not (args.qrels and args.runs and args.measures):
        raise InputError.single("missing-inputs", "give --results FILE, or --qrels FILE with --run FILE and -m")
    inputs = load_inputs(open_input(args.qrels), [open_input(r) for r in args.runs],
                         qrels_format=args.qrels_format, run_format=args.run_format,
                         intent_weights=open_input(args.intent_weights) if args.intent_weights else None,
                         side=side_files(args))
    report = run_evaluation(inputs, args.measures, ties=args.ties, topics=args.topics)
    return ScoreTable.from_run_scores(report.scores), Sources.of(inputs, ties=args.ties, topics=args.topics)


def run(args: argparse.Namespace) -> int:
    method = METHODS[args.meta_method]
    options: dict[str, Any] = {}
    for option in method.options:
        value = getattr(args, option.name, None)
        if option.name == "preferences":
            value = parse_preferences(value).unwrap() if value else ()
        elif option.kind == "list":
            value = option.default if value is None else tuple(value)
        options[option.name] = value
    table, sources = score_table(args)
    try:
        doc = run_method(method.name, table, options, sources=sources)
    except EvaluationError as exc:  # the engine refusing the request; any other exception is a bug (a traceback)
        raise InputError.single("invalid-meta-request", str(exc).strip("'\"")) from None
    if getattr(args, "plot", None):
        from evaluation.meta.plots import plot_document

        plot_document(doc, table, Path(args.plot))
    text = _render(doc, args.format)
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def _render(doc: dict[str, Any], fmt: str) -> str:
    """The meta-evaluation document in ``fmt``: json, table, or an html/latex report."""
    if fmt == ResultFormat.JSON:
        return json.dumps(doc, indent=2) + "\n"
    if fmt == ResultFormat.TABLE:
        return render_text(doc)
    from evaluation.reports import render_report  # axioms and the registry's texts: loaded for reports only

    return render_report(doc, fmt)
