"""``evalserve demo``: evaluate the bundled sample (two runs, five topics) to show what a result looks like."""

from __future__ import annotations

import argparse
from importlib import resources
from typing import Any

from evalserve.cli import evaluate


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help="evaluate the bundled sample runs (no files needed)")
    p.add_argument("--format", choices=("json", "tsv", "trec_eval"), default="trec_eval")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    folder = resources.files("evalserve") / "samples"
    with resources.as_file(folder) as path:
        argv = [
            "--qrels", str(path / "sample.qrels"),
            "--run", str(path / "bm25.run"),
            "--run", str(path / "neural.run"),
            "-m", "AP", "P@10", "nDCG@10", "RR", "ERR@20", "Q",
            "--format", args.format,
        ]
        print(f"# evalserve evaluate {' '.join(argv)}")
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        evaluate.register(sub)
        return evaluate.run(parser.parse_args(["evaluate", *argv]))
