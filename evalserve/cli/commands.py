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

    __slots__ = ("help", "module", "name", "one_shot")

    def __init__(self, name: str, module: str, help: str, one_shot: bool = False) -> None:
        self.name = name
        self.module = module
        self.help = help
        self.one_shot = one_shot

    def __repr__(self) -> str:
        return f"Command({self.name!r}, {self.module!r}, {self.help!r}, one_shot={self.one_shot})"


#: every subcommand, in the order ``evalserve --help`` lists them
COMMANDS: tuple[Command, ...] = (
    Command("evaluate", "evaluate", "evaluate runs against relevance judgments", one_shot=True),
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


def requested(argv: list[str]) -> str | None:
    """The subcommand an ``evalserve`` command line runs: its first word that is not an option (the top-level
    parser has only ``-h`` and ``--version``, which take no value), or None."""
    return next((word for word in argv if not word.startswith("-")), None)
