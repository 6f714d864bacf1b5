"""``evalserve axioms``: check measures against the ten formal constraints of Amigo et al. (SIGIR 2018).

JSON: ``{"<canonical measure>": {"<constraint>": {"satisfied": bool, "counterexample": {...} or null, ...}}}``;
text: one table row per measure, then each violated constraint's smallest counterexample in one line.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from evalserve.cli.commands import help_of
from evaluation.axioms.constraints import NAMES
from evaluation.axioms.harness import DEFAULT_INSTANCES, DEFAULT_SEED, Outcome, check_all

SYMBOL = {"satisfied": "Y", "violated": ".", "not_applicable": "-", "not_evaluable": "?"}
LEGEND = "Y satisfied, . violated, - not applicable (ad hoc measure), ? not evaluable (see notes)"


def register(sub: Any) -> None:
    p = sub.add_parser(
        "axioms",
        help=help_of("axioms"),
        description="Check measures against the formal constraints of Amigo et al. (SIGIR 2018): Pri, Deep,"
        " DeepTh, CloseTh, Conf (relevance) and AspDiv, Red, MRed, Sat, AspRel (diversity). Each violated"
        " constraint comes with the smallest counterexample found.",
        epilog="example: evalserve axioms -m 'RBU(p=0.99,e=0.05)' -m 'alpha_nDCG(gain=graded)@20' --format text",
    )
    p.add_argument("-m", "--measure", action="extend", nargs="+", required=True, metavar="NAME", dest="measures",
                   help="measure name with its parameters and cutoff, e.g. RBU(p=0.99,e=0.05); repeatable;"
                   " CT_amigo and NRBP_amigo (the papers' analysis forms) are accepted too")
    p.add_argument("--format", choices=("json", "text"), default="json", help="output format (default: json)")
    p.add_argument("--instances", type=_positive, default=DEFAULT_INSTANCES, metavar="N",
                   help=f"random instances per constraint (default: {DEFAULT_INSTANCES})")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"random seed (default: {DEFAULT_SEED})")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    results = check_all(args.measures, instances=args.instances, seed=args.seed)
    if args.format == "json":
        payload = {m: {c: o.to_dict() for c, o in outcomes.items()} for m, outcomes in results.items()}
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(results))
    return 0


def render_text(results: dict[str, dict[str, Outcome]]) -> str:
    """A table of verdicts (one row per measure), then notes and counterexamples."""
    width = max([len("measure"), *(len(m) for m in results)])
    cols = [max(len(n), 1) for n in NAMES]
    lines = ["  ".join(["measure".ljust(width), *(n.ljust(w) for n, w in zip(NAMES, cols))]).rstrip()]
    for measure, outcomes in results.items():
        cells = [SYMBOL[outcomes[n].status].ljust(w) if n in outcomes else "".ljust(w) for n, w in zip(NAMES, cols)]
        lines.append("  ".join([measure.ljust(width), *cells]).rstrip())
    lines += ["", LEGEND]
    for measure, outcomes in results.items():
        details = [_detail(o) for o in outcomes.values() if o.status in ("violated", "not_evaluable")]
        if details:
            lines += ["", f"{measure}:", *details]
    return "\n".join(lines) + "\n"


def _detail(o: Outcome) -> str:
    if o.counterexample is None:
        return f"  {o.constraint}: {o.note}"
    ce = o.counterexample
    return (f"  {o.constraint}: {ce.description}; Q(higher) = {ce.higher_score:.6g}, Q(lower) = {ce.lower_score:.6g}"
            f" (requires Q(higher) {ce.relation} Q(lower); {o.note})")


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return value
