"""``evalserve gdeval [options] qrels run``: gdeval.pl 1.3's command line and CSV, byte for byte
(``evaluation.drop_in.gdeval`` says what it reproduces and where it refuses instead).

Exit codes: 0 success; 2 bad usage or an input gdeval would refuse or silently miscount (problems on standard
error, one per line).
"""

from __future__ import annotations

import argparse
from typing import Any

from evalserve.cli._drop_in import ToolVersion, add_files, positive_int, read_inputs, write_output
from evalserve.cli.commands import help_of
from evaluation.drop_in.gdeval import DEFAULT_K, VERSION, Options, gdeval


def register(sub: Any) -> None:
    p = sub.add_parser(
        "gdeval",
        help=help_of("gdeval"),
        add_help=False,
        allow_abbrev=False,
        description="Ad hoc evaluation exactly as the TREC Web Track's gdeval.pl 1.3 does it, with its options:"
        " nDCG@k (gain 2^grade - 1) and ERR@k (grades up to 4) per run topic with a relevant document, and their"
        " amean over those topics. Qrels: 'topic 0 docno grade'; run: 'topic Q0 docno rank score tag'.",
        epilog="example: evalserve gdeval -c -k 10 qrels.adhoc.txt my.run > my.gdeval.csv; exit 0 when scored,"
        " 2 for bad usage or input (every problem listed)",
    )
    p.add_argument("-h", "-help", "--help", action="help", help="show this help and exit")
    p.add_argument("-v", "-version", action=ToolVersion, line=f"gdeval: {VERSION}",
                   help="print the gdeval version reproduced and exit")
    p.add_argument("-c", action="store_true", dest="complete",
                   help="average over every qrels topic with a relevant document (missing ones count 0)")
    p.add_argument("-k", type=positive_int, default=DEFAULT_K, metavar="K",
                   help=f"evaluation depth (default {DEFAULT_K})")
    add_files(p, "judgments 'topic 0 docno grade' (grades up to 4)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    options = Options(complete=args.complete, k=args.k, risk_alpha=float(args.risk_alpha),
                      risk_alpha_text=args.risk_alpha)
    qrels, run_data, baseline = read_inputs(args)
    report = gdeval(qrels, run_data, options, qrels_name=args.qrels, run_name=args.run, baseline=baseline)
    write_output(report.render(), report.warnings)
    return 0
