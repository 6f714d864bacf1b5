"""``evalserve collections list|import``: the benchmark catalogue (``service.inputs.catalogue``) -- which
published judgment sets there are, and loading them from the operator's data directory as public collections of the
configured database. stdout carries one line per set; notices and errors go to stderr."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from evalserve.cli.commands import help_of

#: the token that owns loaded collections (never shown; public collections are read with any token)
OWNER_NAME = "evalserve-catalogue"


def register(sub: Any) -> None:
    p = sub.add_parser("collections", help=help_of("collections"))
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="the published judgment sets the catalogue knows")
    listing.set_defaults(handler=_list)
    load = actions.add_parser("import", help="load published judgment sets as public collections (idempotent)")
    load.add_argument("keys", nargs="*", metavar="KEY", help="sets to load (default: every one found)")
    load.add_argument("--from", dest="root", metavar="DIR", default=os.environ.get("EVALSERVE_CATALOGUE_DIR"),
                      help="the data directory holding them, laid out as ../shared/data (default:"
                      " $EVALSERVE_CATALOGUE_DIR)")
    load.set_defaults(handler=_import)


def _list(args: argparse.Namespace) -> int:
    from evalserve.service.inputs.catalogue.published import PUBLISHED

    for published in PUBLISHED.values():
        print(f"{published.key}\t{published.name}\t{published.qrels}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from evalserve.cli.tokens import _open
    from evalserve.service.core.config import Settings
    from evalserve.service.core.errors import ServiceError
    from evalserve.service.inputs.catalogue.loader import load_published
    from evalserve.service.store.blobs import BlobStore
    from evalserve.service.store.storage import Stores

    if not args.root:
        print("evalserve: give --from DIR (or set EVALSERVE_CATALOGUE_DIR): where the published files are",
              file=sys.stderr)
        return 2
    root = Path(args.root).expanduser()
    if not root.is_dir():
        print(f"evalserve: {root} is not a directory", file=sys.stderr)
        return 2
    db, _, _ = _open()
    settings = Settings.from_env()
    try:
        with db.session() as s:
            loaded = load_published(s, Stores(settings, db, BlobStore(settings.blob_dir)), _owner(db), root, args.keys)
    except ServiceError as exc:
        print(f"evalserve: {exc.detail}", file=sys.stderr)
        return 2
    finally:
        db.dispose()
    for item in loaded:
        print("\t".join(x for x in (item.key, item.status, item.collection or "-", item.detail) if x))
    missing = [item.key for item in loaded if item.status == "missing"]
    if missing and args.keys:
        return 1  # a set asked for by name was not found
    return 0


def _owner(db: Any) -> str:
    """The catalogue's own token id (created once, its secret never kept)."""
    from sqlalchemy import select

    from evalserve.service.access.tokens import create_token
    from evalserve.service.store.models import Token

    with db.session() as s:
        found = s.scalars(select(Token.id).where(Token.name == OWNER_NAME, Token.revoked_at.is_(None))).first()
    if found is not None:
        return str(found)
    row, _ = create_token(db, OWNER_NAME, ("read",))
    return str(row.id)
