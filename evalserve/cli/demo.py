"""``evalserve demo``: evaluate the bundled sample (two runs, five topics) to show what a result looks like."""

from __future__ import annotations

import argparse
import gzip
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from evalserve.cli import evaluate
from evalserve.cli.commands import help_of
from evaluation.result_formats import ResultFormat


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help=help_of("demo"))
    p.add_argument("--format", choices=[f.value for f in (ResultFormat.JSON, ResultFormat.TSV, ResultFormat.TREC_EVAL)],
                   default=ResultFormat.TREC_EVAL.value)
    p.add_argument("--files", metavar="DIR", type=Path, default=None,
                   help="instead, write the sample as files to try the walkthroughs with: DIR/qrels.txt,"
                   " DIR/bm25.run and DIR/dense.run.gz")
    p.set_defaults(handler=run)


#: the sample's files under the names the README's walkthroughs use (``.gz``: gzip-compressed)
SAMPLE_FILES = {"qrels.txt": "sample.qrels", "bm25.run": "bm25.run", "dense.run.gz": "neural.run"}


def write_files(folder: Path) -> list[Path]:
    """Copy the sample into ``folder`` (created if needed) under the README's names."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, sample in SAMPLE_FILES.items():
        data = (resources.files("evalserve") / "samples" / sample).read_bytes()
        target = folder / name
        target.write_bytes(gzip.compress(data, mtime=0) if name.endswith(".gz") else data)
        written.append(target)
    return written


def run(args: argparse.Namespace) -> int:
    if args.files is not None:
        for path in write_files(args.files):
            print(f"wrote {path}", file=sys.stderr)
        return 0
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
