"""The ``evalserve`` command: subcommands are listed in ``commands``; each lives in its own module, imported only
when that subcommand runs (``evalserve --version`` and ``--help`` load neither the engine nor the service).

Exit codes: 0 success, 2 bad input or bad usage (problems printed one per line, never a traceback),
1 a run none of whose topics is judged (``no-topics-scored``: nothing could be scored) or an unexpected internal
error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection, Sequence
from importlib import import_module

from evalserve.cli.commands import COMMANDS, ends_without_teardown, is_one_shot, reads_own_argv, requested
from evalserve.cli.numpy_env import prepare_one_shot
from evaluation.problems import EvaluationError, InputError, NothingScored, Problem

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT = 0, 1, 2
#: parsers the warm engine's server builds before it forks (``warm_server``), one per one-shot command, so its
#: copies skip argparse's set-up (~3 ms of gettext look-ups); empty in any other process
PREBUILT: dict[str, argparse.ArgumentParser] = {}
EXIT_NOTHING_SCORED = 1  # well-formed inputs that do not fit: no result, as after a failure


class VersionAction(argparse.Action):
    """``--version``: print the version and exit (argparse's own action would need the version string before
    parsing; this imports ``evaluation.version`` only when asked)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS) -> None:
        super().__init__(option_strings, dest, default=argparse.SUPPRESS, nargs=0,
                         help="show program's version number and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        from evaluation.version import engine_version

        print(f"{parser.prog} {engine_version()}")
        parser.exit()


def build_parser(full: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The ``evalserve`` parser. Subcommands named in ``full`` (default: all) get their whole parser, which
    imports their module; the others only their name and help line, enough for ``evalserve --help``."""
    parser = argparse.ArgumentParser(
        prog="evalserve",
        description="Evaluate search and ranking runs exactly as trec_eval, gdeval and ndeval do -- and more.",
    )
    parser.add_argument("--version", action=VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    loaded = {c.module for c in COMMANDS if full is None or c.name in full}
    registered: set[str] = set()
    for command in COMMANDS:
        if command.module not in loaded:
            sub.add_parser(command.name, help=command.help)
        elif command.module not in registered:  # one module may register several commands (serve, worker)
            import_module(f"evalserve.cli.{command.module}").register(sub)
            registered.add(command.module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    command = requested(words)
    digests = {}
    if reads_own_argv(command):  # another tool's command line (evalserve trec_eval): its module parses it
        prepare_one_shot()
        module = next(c.module for c in COMMANDS if c.name == command)
        own_main = import_module(f"evalserve.cli.{module}").main
        return int(own_main(words[words.index(str(command)) + 1 :]))
    if is_one_shot(command):  # before the subcommand's module imports NumPy
        from evalserve.cli.early_digests import start  # (hashlib and threads: not for --version)

        prepare_one_shot()
        digests = start(words)  # the run files, hashed on their own threads while the engine is imported
    parser = (command is not None and PREBUILT.get(command)) or build_parser(() if command is None else (command,))
    args = parser.parse_args(words, namespace=argparse.Namespace(digests=digests))
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
    except EvaluationError as exc:
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
    """The ``evalserve`` console script: ``main``, then exit -- a one-shot command or a supervisor without the
    interpreter's teardown (``fast_exit.finish``: the output, exit code and ``atexit`` handlers kept)."""
    code = main()
    if ends_without_teardown(requested(sys.argv[1:])):
        from evalserve.cli.fast_exit import finish  # (threading: not for --version)

        finish(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
