"""``evalserve tokens create|list|revoke``: API tokens, managed directly in the configured database. Each token
belongs to a user, whose rate limits and quotas all their tokens share: ``create`` makes a new user per token unless
``--user`` gives an existing one. stdout carries only what a script captures
(``TOKEN=$(evalserve tokens create --name ci)``); notices and errors go to stderr."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from evalserve.cli.commands import help_of
from evalserve.service.core.config import Settings


def register(sub: Any) -> None:
    p = sub.add_parser("tokens", help=help_of("tokens"))
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="create a token and print it (shown once)")
    create.add_argument("--name", required=True, help="who or what the token is for")
    create.add_argument("--scopes", default="read,submit", help="comma-separated: read, submit, admin"
                        " (default read,submit)")
    owner = create.add_mutually_exclusive_group()
    owner.add_argument("--user", metavar="USER_ID", help="give the token to this existing user (`tokens list`"
                       " shows each token's user): it shares their rate limits and quotas")
    owner.add_argument("--user-name", help="name the new user the token gets (default: the token's name)")
    create.set_defaults(handler=_create)
    listing = actions.add_parser("list", help="list tokens (ids, scopes, state, names, users; never secrets)")
    listing.set_defaults(handler=_list)
    revoke = actions.add_parser("revoke", help="revoke a token by id")
    revoke.add_argument("id")
    revoke.set_defaults(handler=_revoke)


def _open() -> tuple[Any, str, bool]:
    """The configured database brought to the newest schema, where it is (a SQLite file or a URL without its
    password) and whether it is new: no evalserve schema there before this command."""
    from sqlalchemy import inspect
    from sqlalchemy.engine import make_url

    from evalserve.service.store.datadir import secure_data_dir
    from evalserve.service.store.db import Database
    from evalserve.service.store.migrate import upgrade

    settings = Settings.from_env()
    secure_data_dir(settings)
    url = make_url(settings.database_url)
    where = url.database or "" if url.get_backend_name() == "sqlite" else url.render_as_string(hide_password=True)
    db = Database(settings.database_url)
    new = "alembic_version" not in inspect(db.engine).get_table_names()
    upgrade(settings.database_url)
    return db, where, new


def _db() -> Any:
    return _open()[0]


def _create(args: argparse.Namespace) -> int:
    from evalserve.service.access.tokens import create_token

    scopes = tuple(s.strip() for s in args.scopes.split(",") if s.strip())
    db, where, new = _open()
    try:
        row, text = create_token(db, args.name, scopes, user_id=args.user, user_name=args.user_name)
    except ValueError as exc:
        print(f"evalserve: {exc}", file=sys.stderr)
        return 2
    print(text, flush=True)
    print(f"token id {row.id}, scopes {row.scopes}, user {row.user_id}: store it now, it cannot be shown again\n"
          f"written to the database {where}", file=sys.stderr)
    if new:
        print(f"evalserve: warning: there was no evalserve database at {where}: this created a new, empty one. The"
              " token works only with a server using this database: set EVALSERVE_DATA_DIR (or DATABASE_URL) as"
              " for `evalserve serve`", file=sys.stderr)
    return 0


def _list(args: argparse.Namespace) -> int:
    from sqlalchemy import select

    from evalserve.service.store.models import Token

    with _db().session() as s:
        for t in s.execute(select(Token).order_by(Token.created_at)).scalars():
            print(f"{t.id}\t{t.scopes}\t{'revoked' if t.revoked_at else 'active'}\t{t.name}\t{t.user_id}")
    return 0


def _revoke(args: argparse.Namespace) -> int:
    from evalserve.service.access.tokens import revoke

    if not revoke(_db(), args.id):
        print(f"evalserve: no token {args.id}", file=sys.stderr)
        return 2
    print(f"revoked {args.id}")
    return 0
