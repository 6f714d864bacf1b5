"""What a pyndeval user writes: read the diversity qrels and each run with a plain Python loop, evaluate ndeval's
21 default columns (alpha = beta = 0.5), print means.

Usage: ``python3 pyndeval_script.py QRELS RUN [RUN ...]``. Prints ``{run file name: {ndeval column: mean}}`` as
JSON; a topic pyndeval scores NaN (0/0: no relevant document) counts as 0, as evalserve and ndeval's amean do.
The reference side of ``bench/whole_process.py``.
"""

from __future__ import annotations

import json
import math
import os
import sys

import pyndeval


def main(argv: list[str]) -> None:
    qrels_path, runs = argv[0], argv[1:]
    rows: list[tuple[str, str, str, int]] = []
    with open(qrels_path) as f:
        for line in f:
            q, s, d, r = line.split()
            rows.append((q, s, d, int(r)))
    measures = list(pyndeval.DEFAULT_MEASURES)
    evaluator = pyndeval.RelevanceEvaluator(rows, measures, alpha=0.5, beta=0.5)
    out: dict[str, dict[str, float]] = {}
    for path in runs:
        run: list[tuple[str, str, float]] = []
        with open(path) as f:
            for line in f:
                q, _, d, _, s, _ = line.split()
                run.append((q, d, float(s)))
        result = evaluator.evaluate(run)
        out[os.path.basename(path)] = {
            m: sum(0.0 if math.isnan(t[m]) else t[m] for t in result.values()) / len(result) for m in measures
        }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
