"""``evalserve measures``: the measure catalogue (names, parameters, defaults, inputs, references)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from evalserve.cli.commands import help_of
from evaluation.measures.registry import default_registry


def register(sub: Any) -> None:
    p = sub.add_parser("measures", help=help_of("measures"))
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("name", nargs="?", help="show one measure (name, alias, or any accepted spelling: ndcg_cut.10)")
    p.add_argument("--axioms", action="store_true", help="add each measure's constraint profile (spec 7.5; the"
                   " parameter-free form; a few seconds for the whole catalogue -- see evalserve axioms)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    registry = default_registry()
    entries = registry.catalogue()
    if args.name:
        wanted = registry.resolve(args.name).name
        entries = [e for e in entries if e["name"] == wanted]
    if args.axioms:
        from evaluation.axioms.profiles import profiles

        found = profiles([registry.definition(e["name"]) for e in entries])
        for e in entries:
            e["axioms"] = found[e["name"]]["constraints"]
    if args.format == "json":
        sys.stdout.write(json.dumps({"measures": entries}, indent=2) + "\n")
        return 0
    for e in entries:
        cutoff = {"required": "@k", "optional": "[@k]", "none": ""}[e["cutoff"]]
        params = ",".join(f"{p['name']}={p['default'] if p['default'] is not None else '?'}"
                          for p in e["parameters"])
        head = e["name"] + (f"({params})" if params else "") + cutoff
        print(f"{head}\n    {e['summary']}")
        if e["formula"]:
            print(f"    {e['formula']}")
        for p in e["parameters"]:
            extra = f" [{'|'.join(p['choices'])}]" if "choices" in p else ""
            when = "".join(f" (only with {k}={'|'.join(v)})" for k, v in p.get("applies_when", {}).items())
            print(f"    - {p['name']}{extra}: {p['description']}" + (" (required)" if p["required"] else "") + when)
        if e["aliases"]:
            print(f"    aliases: {', '.join(e['aliases'])}")
        if "axioms" in e:
            print("    axioms: " + ", ".join(f"{c} {'yes' if v == 'satisfied' else v}" for c, v in e["axioms"].items()))
        if e["default_follows"]:
            print(f"    without parameters: the numbers of {e['default_follows']}")
        print(f"    reference: {e['reference']}\n")
    return 0
