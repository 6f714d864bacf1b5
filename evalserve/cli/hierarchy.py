"""``evalserve hierarchy build|fingerprints``: build intent hierarchies from qrels and document fingerprints or
texts (spec section 4) and write them as JSON, reusable with ``--hierarchy FILE`` or as a collection's
``hierarchy`` file; or write seeded synthetic fingerprints for experiments without document texts."""

from __future__ import annotations

from typing import Any

from evalserve.cli.commands import help_of
from evaluation.hierarchy.__main__ import configure, run


def register(sub: Any) -> None:
    p = sub.add_parser("hierarchy", help=help_of("hierarchy"),
                       description=__doc__)
    configure(p.add_subparsers(dest="hierarchy_command", metavar="ACTION", required=True))
    p.set_defaults(handler=run)
