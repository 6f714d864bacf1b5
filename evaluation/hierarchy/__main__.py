"""Build intent hierarchies and export them as JSON (reusable with ``--hierarchy FILE``), or write seeded synthetic
fingerprints for experiments without document texts.

    python -m evaluation.hierarchy build --qrels qrels.txt --fingerprints fp.txt [--h WI] [--delta 0.3]
        [--top uniform] [--super super.json] [--intent-weights w.txt] [-o hierarchies.json]
    python -m evaluation.hierarchy fingerprints --qrels qrels.txt [--seed 2012] [-o fp.txt]

Problems with the inputs are printed one per line (``file:line:column: severity: message [code]``), exit status 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.docsim import format_fingerprints, read_doc_texts, read_fingerprints, synthesise_fingerprints
from evaluation.docsim.vectors import DocumentSimilarity
from evaluation.formats import read_intent_weights, read_qrels
from evaluation.hierarchy.build import build_hierarchies, topic_judgments
from evaluation.hierarchy.jsonio import read_hierarchies, to_json
from evaluation.hierarchy.model import SIMS, TOPS, VARIANTS, WD_GAINS, WI_COUNTS, HierarchySettings
from evaluation.hierarchy.prepare import similarity_function
from evaluation.intent_ranking import intent_slots
from evaluation.problems import InputError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m evaluation.hierarchy", description=__doc__.split("\n\n")[0])
    configure(p.add_subparsers(dest="command", required=True))
    return p


def configure(sub: Any) -> None:
    """Add the ``build`` and ``fingerprints`` actions to an argparse subparsers object (also used by
    ``evalserve hierarchy``)."""
    b = sub.add_parser("build", help="build hierarchies for every topic of the qrels and write them as JSON")
    b.add_argument("--qrels", required=True, metavar="FILE")
    b.add_argument("--fingerprints", metavar="FILE", help="SimHash fingerprints (sim=simhash)")
    b.add_argument("--doc-texts", metavar="FILE", help="document texts (sim=tfidf, or SimHash without fingerprints)")
    b.add_argument("--super", metavar="FILE", help="hierarchy file with super-intents (h=SUP, SUP+WI, SUP+WD)")
    b.add_argument("--intent-weights", metavar="FILE", help="intent probabilities P(t|q) (default uniform)")
    defaults = HierarchySettings()
    b.add_argument("--h", choices=[v for v in VARIANTS if v != "given"], default=defaults.h)
    b.add_argument("--delta", type=float, default=defaults.delta)
    b.add_argument("--top", choices=TOPS, default=defaults.top)
    b.add_argument("--sim", choices=SIMS, default=defaults.sim)
    b.add_argument("--wi", choices=WI_COUNTS, default=defaults.wi)
    b.add_argument("--wd-gain", choices=WD_GAINS, default=defaults.wd_gain)
    b.add_argument("--indent", type=int, default=None, help="indent the JSON (default: compact)")
    b.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    b.set_defaults(hierarchy_action=_build)
    f = sub.add_parser("fingerprints", help="seeded synthetic fingerprints of every judged document")
    f.add_argument("--qrels", required=True, metavar="FILE")
    f.add_argument("--seed", type=int, default=2012)
    f.add_argument("--bits", type=int, default=64)
    f.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    f.set_defaults(hierarchy_action=_fingerprints)


def _write(data: bytes, output: str | None) -> None:
    if output:
        Path(output).write_bytes(data)
    else:
        sys.stdout.buffer.write(data)


def _similarity(args: argparse.Namespace) -> DocumentSimilarity | None:
    if args.sim == "tfidf":
        if not args.doc_texts:
            raise InputError.single("missing-inputs", "sim=tfidf needs --doc-texts")
        return read_doc_texts(args.doc_texts).tfidf()
    if args.fingerprints:
        return read_fingerprints(args.fingerprints)
    if args.doc_texts:
        return read_doc_texts(args.doc_texts).fingerprints()
    return None


def _build(args: argparse.Namespace) -> int:
    settings = HierarchySettings(args.h, args.delta, args.top, args.sim, args.wi, args.wd_gain)
    qrels = read_qrels(args.qrels)
    weights = read_intent_weights(args.intent_weights) if args.intent_weights else None
    vectors = _similarity(args) if settings.clustered else None
    if settings.clustered and vectors is None:
        raise InputError.single("missing-inputs", f"h={settings.h} needs --fingerprints or --doc-texts")
    groups = read_hierarchies(args.super).super_intents if args.super else None
    start = time.perf_counter()
    built = build_hierarchies(topic_judgments(qrels, intent_slots(qrels, 1, weights)), settings,
                              similarity_function(vectors) if vectors is not None else None, groups,
                              name=f"built({qrels.name})")
    took = time.perf_counter() - start
    _write((to_json(built, indent=args.indent) + "\n").encode("utf-8"), args.output)
    nodes = sum(len(h) for h in built.topics.values())
    print(f"built {len(built)} topic hierarchies ({nodes} nodes) in {took:.2f} s", file=sys.stderr)
    return 0


def _fingerprints(args: argparse.Namespace) -> int:
    qrels = read_qrels(args.qrels)
    _write(format_fingerprints(synthesise_fingerprints(qrels, np.random.default_rng(args.seed), bits=args.bits)),
           args.output)
    return 0


def run(args: argparse.Namespace) -> int:
    """Run the chosen action; input problems raise InputError (the caller prints them, exit 2)."""
    action: Any = args.hierarchy_action
    return int(action(args))


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return run(args)
    except InputError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
