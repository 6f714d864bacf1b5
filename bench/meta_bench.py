"""Speed of the meta-evaluation engine (``evaluation.meta``) on a seeded synthetic score table.

The headline figure is the discriminative power experiment of spec 8.3 at its defaults: the two-sided paired
bootstrap test with B = 1000 shared resamples over every pair of 100 runs (4,950 pairs) x 50 topics, for 20
measures, ASLs and Delta included. Also timed: Metric Unanimity of every measure against the others (8.1) and the
Kendall tau-b matrix of the measures' system rankings (8.5). Single-threaded: the BLAS/OpenMP pools are limited to
one thread before numpy is imported, and the process is pinned to one CPU where the OS allows it.

Usage: ``python3 bench/meta_bench.py [--repeat 5] [--runs 100] [--topics 50] [--measures 20] [--resamples 1000]``
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluation.meta import ScoreTable, correlation_matrix, discriminative_power, metric_unanimity  # noqa: E402


def synthetic_table(measures: int, runs: int, topics: int, seed: int) -> ScoreTable:
    """Scores in [0, 1] with run quality, topic difficulty and noise; every other measure is rounded to tenths
    (P@10-like, with many ties), so that both continuous and discrete score distributions are exercised."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(0.0, 0.08, runs)[:, None]
    difficulty = rng.normal(0.4, 0.15, topics)[None, :]
    values = np.empty((measures, runs, topics))
    for m in range(measures):
        v = np.clip(difficulty + quality * rng.uniform(0.5, 1.5) + rng.normal(0, 0.15, (runs, topics)), 0, 1)
        values[m] = np.round(v, 1) if m % 2 else v
    return ScoreTable(
        tuple(f"m{i}" for i in range(measures)),
        tuple(f"run{i:03d}" for i in range(runs)),
        tuple(str(400 + i) for i in range(topics)),
        values,
    )


def timed(task: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """Median wall-clock and CPU seconds over ``repeat`` calls (after one untimed warm-up call), last result."""
    result = task()
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = task()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu), result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--measures", type=int, default=20)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    table = synthetic_table(args.measures, args.runs, args.topics, args.seed)
    pairs = args.runs * (args.runs - 1) // 2

    def bootstrap() -> Any:
        return discriminative_power(table, resamples=args.resamples, rng=np.random.default_rng(args.seed))

    boot_s, boot_cpu, boot = timed(bootstrap, args.repeat)
    mu_s, mu_cpu, _ = timed(lambda: metric_unanimity(table), args.repeat)
    tau_s, tau_cpu, _ = timed(lambda: correlation_matrix(table, "tau_b"), args.repeat)
    report = {
        "table": {"measures": args.measures, "runs": args.runs, "topics": args.topics, "pairs": pairs},
        "resamples": args.resamples,
        "seconds": {
            "discriminative_power": round(boot_s, 3),
            "metric_unanimity": round(mu_s, 3),
            "kendall_tau_b_matrix": round(tau_s, 3),
        },
        "cpu_seconds": {
            "discriminative_power": round(boot_cpu, 3),
            "metric_unanimity": round(mu_cpu, 3),
            "kendall_tau_b_matrix": round(tau_cpu, 3),
        },
        "bootstrap_tests_per_second": round(args.measures * pairs / boot_s),
        "significant_pairs_first_measures": boot.counts[:4].tolist(),
        "threads": 1,
        "cpus_allowed": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "python": platform.python_version(),
        "numpy": np.__version__,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
