"""The ``evalserve`` subcommands as data: name, the module that registers it, and its one-line help.

``main`` gives the full parser (and imports the module) only to the subcommand being run; every other one gets
just its name and this help line, so ``evalserve --version`` and ``evalserve --help`` import no subcommand and
no engine. A module's ``register(sub)`` adds the parsers of every command listed here with that module.
"""

from __future__ import annotations


class Command:
    """One subcommand: ``evalserve <name>``, registered by ``evalserve.cli.<module>``; ``one_shot``: it runs one
    evaluation and exits, so NumPy is loaded with ``numpy_env.ONE_SHOT_ENV`` (no BLAS threads, small pages) and
    the console script may hand it to the warm engine (``warm``). (A plain class: the console script imports
    this module before it knows whether it needs anything else, and ``typing`` costs a few milliseconds.)"""

    __slots__ = ("help", "module", "name", "one_shot", "own_argv")

    def __init__(self, name: str, module: str, help: str, one_shot: bool = False, own_argv: bool = False) -> None:
        self.name = name
        self.module = module
        self.help = help
        self.one_shot = one_shot
        #: the module's ``main(argv)`` reads the words after the command itself (another tool's command line)
        self.own_argv = own_argv

    def __repr__(self) -> str:
        return (f"Command({self.name!r}, {self.module!r}, {self.help!r}, one_shot={self.one_shot},"
                f" own_argv={self.own_argv})")


#: every subcommand, in the order ``evalserve --help`` lists them
COMMANDS: tuple[Command, ...] = (
    Command("evaluate", "evaluate", "evaluate runs against relevance judgments", one_shot=True),
    Command("trec_eval", "trec_eval", "trec_eval 10.0's command line and output, byte for byte (evalserve trec_eval"
            " -q -m all_trec QRELS RUN)", one_shot=True, own_argv=True),
    Command("ndeval", "ndeval", "ndeval's command line and CSV output, byte for byte (TREC Web diversity:"
            " ERR-IA, alpha-nDCG, NRBP, MAP-IA, P-IA, subtopic recall)", one_shot=True),
    Command("gdeval", "gdeval", "gdeval.pl's command line and CSV output, byte for byte (TREC Web ad hoc:"
            " nDCG@k, ERR@k)", one_shot=True),
    Command("measures", "measures", "list every measure with its parameters and reference"),
    Command("meta", "meta", "meta-evaluation: unanimity, discriminative power, significance, correlation,"
            " preference agreement"),
    Command("axioms", "axioms", "check measures against the ten axiomatic constraints (Pri ... AspRel)"),
    Command("hierarchy", "hierarchy", "build intent hierarchies (JSON) or synthesise document fingerprints"),
    Command("demo", "demo", "evaluate the bundled sample runs (no files needed)", one_shot=True),
    Command("serve", "serve", "start the HTTP API and workers (embedded SQLite database and broker by default;"
            " DATABASE_URL / REDIS_URL to use PostgreSQL / Redis); restarts any that dies"),
    Command("worker", "serve", "start evaluation workers and a webhook worker, restarted if they die (same"
            " DATABASE_URL and REDIS_URL as the API)"),
    Command("tokens", "tokens", "create, list or revoke API tokens"),
    Command("collections", "collections", "list the benchmark catalogue, or import published judgment sets (TREC"
            " Web 2009-2014, NTCIR WWW) as public collections"),
    Command("openapi", "openapi", "print the API's OpenAPI document"),
    Command("migrate", "migrate", "upgrade the database schema (DATABASE_URL, default the embedded SQLite file) to"
            " the newest version; safe to repeat"),
)


def help_of(name: str) -> str:
    """The one-line help of subcommand ``name`` (what its module passes to ``add_parser``)."""
    return next(c.help for c in COMMANDS if c.name == name)


def is_one_shot(name: str | None) -> bool:
    """Whether subcommand ``name`` is a ``Command.one_shot`` one."""
    return any(c.name == name and c.one_shot for c in COMMANDS)


def reads_own_argv(name: str | None) -> bool:
    """Whether subcommand ``name`` parses its own command line (``Command.own_argv``)."""
    return any(c.name == name and c.own_argv for c in COMMANDS)


#: the supervisors: asked to stop, they must be gone at once (issue 28: ``serve`` within 3 s), not after tearing
#: down the service's modules (about a second on a loaded machine)
SUPERVISORS = ("serve", "worker")


def ends_without_teardown(name: str | None) -> bool:
    """Whether ``evalserve <name>`` ends with ``fast_exit.finish``: the one-shot commands and the supervisors."""
    return is_one_shot(name) or name in SUPERVISORS


def requested(argv: list[str]) -> str | None:
    """The subcommand an ``evalserve`` command line runs: its first word that is not an option (the top-level
    parser has only ``-h`` and ``--version``, which take no value), or None."""
    return next((word for word in argv if not word.startswith("-")), None)
