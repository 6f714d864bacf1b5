"""``evalserve ndeval [options] qrels run``: ndeval 4.5's command line and CSV, byte for byte
(``evaluation.drop_in.ndeval`` says what it reproduces and where it refuses instead).

Exit codes: 0 success; 2 bad usage or an input ndeval would refuse (problems on standard error, one per line);
1 a run none of whose topics is judged (ndeval would print ``-nan`` means).
"""

from __future__ import annotations

import argparse
from typing import Any

from evalserve.cli._drop_in import ToolVersion, add_files, alpha, beta, positive_int, read_inputs, write_output
from evalserve.cli.commands import help_of
from evaluation.drop_in.ndeval import DEFAULT_ALPHA, DEFAULT_BETA, VERSION, Options, ndeval


def register(sub: Any) -> None:
    p = sub.add_parser(
        "ndeval",
        help=help_of("ndeval"),
        add_help=False,
        allow_abbrev=False,
        description="Diversity evaluation exactly as the TREC Web Track's ndeval 4.5 does it, with its options:"
        " one CSV row per run topic (ERR-IA, nERR-IA, alpha-DCG, alpha-nDCG at 5, 10 and 20, NRBP, nNRBP,"
        " MAP-IA, P-IA and subtopic recall at 5, 10 and 20) and an amean row. Qrels: 'topic subtopic docno"
        " judgment'; run: 'topic Q0 docno rank score tag'.",
        epilog="example: evalserve ndeval -c -traditional qrels-for-ndeval.txt my.run > my.ndeval.csv; exit 0"
        " when scored, 2 for bad usage or input (every problem listed), 1 when no run topic is judged",
    )
    p.add_argument("-h", "-help", "--help", action="help", help="show this help and exit")
    p.add_argument("-version", action=ToolVersion, line=f"ndeval: {VERSION}",
                   help="print the ndeval version reproduced and exit")
    p.add_argument("-alpha", type=alpha, default=DEFAULT_ALPHA, metavar="VALUE",
                   help="redundancy penalty of alpha-DCG, ERR-IA and NRBP, 0 <= VALUE < 1 (default 0.5)")
    p.add_argument("-beta", type=beta, default=DEFAULT_BETA, metavar="VALUE",
                   help="patience of NRBP, 0 < VALUE <= 1 (default 0.5)")
    p.add_argument("-traditional", action="store_true",
                   help="order each topic by score, then docno, both descending (trec_eval's order) instead of"
                   " by the rank column")
    p.add_argument("-c", action="store_true", dest="complete",
                   help="average over every qrels topic (missing ones count 0) instead of the judged run topics")
    p.add_argument("-a", action="store_true", dest="all", help="accepted as ndeval accepts it; changes nothing")
    p.add_argument("-M", type=positive_int, default=0, dest="depth", metavar="DEPTH",
                   help="keep only the first DEPTH documents of each topic")
    add_files(p, "judgments 'topic subtopic docno judgment'")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    options = Options(alpha=args.alpha, beta=args.beta, traditional=args.traditional, complete=args.complete,
                      depth=args.depth, risk_alpha=float(args.risk_alpha), risk_alpha_text=args.risk_alpha)
    qrels, run_data, baseline = read_inputs(args)
    report = ndeval(qrels, run_data, options, qrels_name=args.qrels, run_name=args.run, baseline=baseline)
    write_output(report.render(), report.warnings)
    return 0
