"""What a pytrec_eval user writes: read the qrels and each run with a plain Python loop, evaluate, print means.

Usage: ``python3 pytrec_eval_script.py QRELS MEASURES RUN [RUN ...]`` with MEASURES comma-separated evalserve names
among P@10, AP, nDCG@10, RR, Rprec. Prints ``{run file name: {measure: mean over the run's judged topics}}`` as JSON,
the same numbers ``evalserve evaluate`` reports (topics in both run and qrels, as pytrec_eval evaluates).
The reference side of ``bench/whole_process.py``.
"""

from __future__ import annotations

import json
import os
import sys

import pytrec_eval

PYTREC = {"P@10": "P_10", "AP": "map", "nDCG@10": "ndcg_cut_10", "RR": "recip_rank", "Rprec": "Rprec"}


def main(argv: list[str]) -> None:
    qrels_path, measures, runs = argv[0], argv[1].split(","), argv[2:]
    qrels: dict[str, dict[str, int]] = {}
    with open(qrels_path) as f:
        for line in f:
            q, _, d, r = line.split()
            qrels.setdefault(q, {})[d] = int(r)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {PYTREC[m] for m in measures})
    out: dict[str, dict[str, float]] = {}
    for path in runs:
        run: dict[str, dict[str, float]] = {}
        with open(path) as f:
            for line in f:
                q, _, d, _, s, _ = line.split()
                run.setdefault(q, {})[d] = float(s)
        result = evaluator.evaluate(run)
        out[os.path.basename(path)] = {
            m: sum(per_topic[PYTREC[m]] for per_topic in result.values()) / len(result) for m in measures
        }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
