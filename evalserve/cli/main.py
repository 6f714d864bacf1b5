"""The ``evalserve`` command: subcommands are registered here; each lives in its own module.

Exit codes: 0 success, 2 bad input or bad usage (problems printed one per line, never a traceback),
1 a run none of whose topics is judged (``no-topics-scored``: nothing could be scored) or an unexpected internal
error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from evalserve.cli import axioms, demo, evaluate, hierarchy, measures, meta, migrate, openapi, serve, tokens
from evaluation.measures.base import MeasureError
from evaluation.pipeline import NothingScored
from evaluation.problems import InputError, Problem
from evaluation.report import engine_version

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT = 0, 1, 2
EXIT_NOTHING_SCORED = 1  # well-formed inputs that do not fit: no result, as after a failure

COMMANDS = (evaluate, measures, meta, axioms, hierarchy, demo, serve, tokens, openapi, migrate)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evalserve",
        description="Evaluate search and ranking runs exactly as trec_eval, gdeval and ndeval do -- and more.",
    )
    parser.add_argument("--version", action="version", version=f"evalserve {engine_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return EXIT_INPUT
    try:
        return int(args.handler(args))
    except NothingScored as exc:  # the inputs are well formed but do not fit: no silent mean of 0
        _print_problems(exc.problems, exc.omitted)
        return EXIT_NOTHING_SCORED
    except InputError as exc:
        _print_problems(exc.problems, exc.omitted)
        return EXIT_INPUT
    except MeasureError as exc:
        for message in exc.messages:  # every bad measure name, one per line
            print(f"evalserve: {message}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        return 130


def _print_problems(problems: Sequence[Problem], omitted: int) -> None:
    for problem in problems:
        print(problem, file=sys.stderr)
    if omitted:
        print(f"... and {omitted} more errors", file=sys.stderr)


def run() -> None:
    sys.exit(main())


if __name__ == "__main__":
    run()
