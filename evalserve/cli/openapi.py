"""``evalserve openapi``: write the OpenAPI document the API serves (``openapi.yaml`` in the repository is this
command's output, kept identical by a test)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from evalserve.cli.commands import help_of


def register(sub: Any) -> None:
    p = sub.add_parser("openapi", help=help_of("openapi"))
    p.add_argument("--format", choices=("yaml", "json"), default="yaml")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    p.set_defaults(handler=run)


def document() -> dict[str, Any]:
    """The served document, built without touching any configured database or broker."""
    from evalserve.service.core.config import Settings
    from evalserve.service.web.app import create_app

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.from_env({"EVALSERVE_DATA_DIR": tmp})
        app = create_app(settings)
        with app.test_client() as client:
            spec: dict[str, Any] = client.get("/openapi.json").get_json()
        app.extensions["evalserve"].db.dispose()
    return spec


def render(spec: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(spec, indent=2) + "\n"
    import yaml

    return str(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True))


def run(args: argparse.Namespace) -> int:
    text = render(document(), args.format)
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 0
