"""How big and how slow an evaluation report is for a large result: a synthetic 100-run x 200-measure x 50-topic
document (seeded random scores), its ``build()`` time and its HTML and LaTeX sizes (issue 27).

Usage: ``python3 bench/report_size.py [--runs 100] [--measures 200] [--topics 50] [--no-axioms] [--out FILE]``
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

#: measure families with a cutoff: 4 x 50 = 200 names the registry knows
FAMILIES = ("P@{}", "recall@{}", "nDCG@{}", "ERR@{}")


def document(runs: int, measures: int, topics: int, seed: int = 27) -> dict[str, Any]:
    """A result document as ``evalserve evaluate --per-topic`` writes it, with random per-topic scores."""
    rng = np.random.default_rng(seed)
    names = [f.format(k) for k in range(1, 1 + -(-measures // len(FAMILIES))) for f in FAMILIES][:measures]
    qids = [f"q{t:03d}" for t in range(topics)]
    quality = rng.uniform(0.2, 0.6, runs)
    out: dict[str, Any] = {}
    for r in range(runs):
        by_measure = {}
        for m in names:
            values = np.clip(quality[r] + rng.normal(0, 0.15, topics), 0, 1)
            by_measure[m] = {"mean": float(values.mean()), "per_topic": dict(zip(qids, map(float, values)))}
        out[f"run{r:03d}"] = by_measure
    meta = {"ties": "trec", "topics": "common", "evalserve_version": "bench", "inputs": {}, "warnings": [],
            "measures": {m: m for m in names}, "tags": {}}
    return {"meta": meta, "runs": out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--measures", type=int, default=200)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--no-axioms", action="store_true")
    parser.add_argument("--out", type=Path, help="also write the HTML here")
    args = parser.parse_args()
    doc = json.loads(json.dumps(document(args.runs, args.measures, args.topics)))
    from evaluation.reports.content import build
    from evaluation.reports.html import render_html
    from evaluation.reports.latex import render_latex

    start = time.perf_counter()
    content = build(doc, axioms=not args.no_axioms)
    built = time.perf_counter() - start
    start = time.perf_counter()
    html = render_html(content)
    rendered = time.perf_counter() - start
    latex = render_latex(content)
    print(f"build {built:.2f} s, render_html {rendered:.2f} s, html {len(html.encode()):,} bytes,"
          f" latex {len(latex.encode()):,} bytes")
    if args.out:
        args.out.write_text(html)


if __name__ == "__main__":
    main()
