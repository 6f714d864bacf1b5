"""What the drop-in subcommands (``evalserve ndeval``, ``evalserve gdeval``) share: their argument types, their
version action and writing the tool's output bytes (run ids are printed byte for byte, whatever their encoding).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from evaluation.drop_in._common import read_files
from evaluation.problems import Problem


class ToolVersion(argparse.Action):
    """``-version``: print the reproduced tool's version line (``tool: version ...``) and exit 0, as it does."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, line: str = "",
                 help: str | None = None) -> None:
        super().__init__(option_strings, dest, default=argparse.SUPPRESS, nargs=0, help=help)
        self.line = line

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        print(self.line)
        parser.exit()


def alpha(text: str) -> float:
    """``-alpha``: 0 <= alpha < 1 (the registry's alpha measures; ndeval would also take 1)."""
    value = number(text)
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} is not from 0 up to (not including) 1, the range evalserve's"
                                          " alpha measures take")
    return value


def beta(text: str) -> float:
    """``-beta``: 0 < beta <= 1 (the registry's NRBP; ndeval would also take 0)."""
    value = number(text)
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} is not above 0 and at most 1, the range evalserve's NRBP"
                                          " takes")
    return value


def number(text: str) -> float:
    """A finite number."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def risk_alpha(text: str) -> str:
    """``-riskAlpha``: a number of 0 or more, kept as written (the tools print it so in the run label)."""
    if number(text) < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative; the risk weight of a loss is 1 + this value")
    return text


def positive_int(text: str) -> int:
    """A whole number of 1 or more (``-M``, ``-k``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is below 1")
    return value


def write_output(text: str, warnings: Sequence[Problem]) -> None:
    """Warnings to standard error, then ``text`` to standard output as the bytes it came from."""
    for warning in warnings:
        print(warning, file=sys.stderr)
    data = text.encode("utf-8", "surrogateescape")
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(data.decode("utf-8", "replace"))
        return
    sys.stdout.flush()
    buffer.write(data)
    buffer.flush()


def add_files(p: argparse.ArgumentParser, qrels_help: str) -> None:
    """The arguments ndeval and gdeval share: ``-baseline FILE``, ``-riskAlpha VALUE``, then ``qrels run``."""
    p.add_argument("-baseline", metavar="FILE",
                   help="a baseline run: print each value minus the baseline's (risk-sensitive evaluation)")
    p.add_argument("-riskAlpha", type=risk_alpha, default="0", dest="risk_alpha", metavar="VALUE",
                   help="with -baseline: losses against the baseline weigh 1 + VALUE (default 0)")
    p.add_argument("qrels", help=qrels_help)
    p.add_argument("run", help="run 'topic Q0 docno rank score tag'")


def read_inputs(args: argparse.Namespace) -> tuple[bytes, bytes, tuple[bytes, str] | None]:
    """The qrels' and run's bytes and the baseline's (bytes, path), read together: every file's problem at once."""
    paths = [args.qrels, args.run, *([args.baseline] if args.baseline else [])]
    data = read_files(paths)
    return data[0], data[1], (data[2], args.baseline) if args.baseline else None
