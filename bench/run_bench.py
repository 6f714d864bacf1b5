"""End-to-end timing of evalserve's engine against pytrec_eval (and ranx), and against pyndeval for diversity.

For each workload (see ``bench/generate.py``), in one process:

- setup: read and parse the qrels, build the evaluator (once per workload; timed and reported separately);
- runs: for every run file, read it from disk, parse it and compute P@10, AP, nDCG@10, RR and Rprec per topic
  (``trec``, ``wide``), or ndeval's 21 default columns (``diversity``: alpha-DCG/alpha-nDCG, ERR-IA/nERR-IA,
  P-IA and strec at 5, 10, 20, NRBP, nNRBP, MAP-IA; alpha = beta = 0.5).

pytrec_eval is used the usual way: qrels and runs are parsed into dicts by a plain Python loop
(``q, _, d, _, s, _ = line.split(); run.setdefault(q, {})[d] = float(s)``), then
``RelevanceEvaluator(qrels, measures).evaluate(run)``. ranx (when installed) reads with its own
``Qrels.from_file``/``Run.from_file`` and evaluates with ``ranx.evaluate(..., return_mean=False)``; its numba
JIT is compiled by an untimed call on a tiny input first, and it is timed once (it is slow).

The diversity workload is compared with pyndeval (ndeval's C code): qrels read by a plain Python loop into its
``(qid, subtopic, docno, grade)`` rows and ``RelevanceEvaluator(rows, DEFAULT_MEASURES)`` built (setup), then each
run read into ``(qid, docno, score)`` rows and evaluated. pyndeval orders a topic by score, ties by docno
ascending; the generated runs have distinct scores (also as float32) written in ranked order, so its order, ours
(``ties=trec``) and the rank column all agree. Topics: those in both run and qrels on both sides.

Each tool first evaluates a couple of run files untimed (imports, allocator and cache warm-up), then the whole
workload is timed ``--repeat`` times, tools interleaved; the median repetition is reported. Per-topic values of
evalserve are checked against the reference's (pytrec_eval, pyndeval; |difference| <= 1e-9) on every run.

Usage: ``python3 bench/run_bench.py [--repeat N] [--workloads trec,wide,diversity] [--no-ranx]
[--out bench/work/results.md]``
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import importlib
import importlib.util
import os
import platform
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from evaluation.evaluator import Evaluator  # noqa: E402
from evaluation.formats import read_qrels, read_run  # noqa: E402

OURS = ("P@10", "AP", "nDCG@10", "RR", "Rprec")
PYTREC = {"P@10": "P_10", "AP": "map", "nDCG@10": "ndcg_cut_10", "RR": "recip_rank", "Rprec": "Rprec"}
RANX = ["precision@10", "map", "ndcg@10", "mrr", "r-precision"]
#: ndeval's default columns (pyndeval.DEFAULT_MEASURES) -> our canonical names (alpha = beta = 0.5 on both sides)
NDEVAL = {
    **{f"ERR-IA@{k}": f"ERR_IA@{k}" for k in (5, 10, 20)},
    **{f"nERR-IA@{k}": f"nERR_IA@{k}" for k in (5, 10, 20)},
    **{f"alpha-DCG@{k}": f"alpha_DCG@{k}" for k in (5, 10, 20)},
    **{f"alpha-nDCG@{k}": f"alpha_nDCG@{k}" for k in (5, 10, 20)},
    "NRBP": "NRBP",
    "nNRBP": "nNRBP",
    "MAP-IA": "AP_IA",
    **{f"P-IA@{k}": f"P_IA@{k}" for k in (5, 10, 20)},
    **{f"strec@{k}": f"StRecall@{k}" for k in (5, 10, 20)},
}
DIVERSITY = "diversity"
TOLERANCE = 1e-9
WARM_UP_RUNS = 2

Tool = Callable[[Path, list[Path]], tuple[float, float, list[Any]]]



@dataclass
class Side:
    """Timings of one tool on one workload: (setup, runs) seconds per repetition."""

    name: str
    setup: list[float] = field(default_factory=list)
    runs: list[float] = field(default_factory=list)

    def _median_rep(self) -> int:
        totals = [s + r for s, r in zip(self.setup, self.runs)]
        return sorted(range(len(totals)), key=totals.__getitem__)[(len(totals) - 1) // 2]

    @property
    def setup_s(self) -> float:
        return statistics.median(self.setup)

    @property
    def runs_s(self) -> float:
        return statistics.median(self.runs)

    @property
    def total_s(self) -> float:
        i = self._median_rep()
        return self.setup[i] + self.runs[i]


# ---------------------------------------------------------------------------------------------- evalserve


def ours(qrels_path: Path, run_paths: list[Path]) -> tuple[float, float, list[Any]]:
    start = time.perf_counter()
    evaluator = Evaluator.from_names(read_qrels(str(qrels_path)), OURS)
    mid = time.perf_counter()
    results = [evaluator.evaluate(read_run(str(p))) for p in run_paths]
    return mid - start, time.perf_counter() - mid, results


def ours_diversity(qrels_path: Path, run_paths: list[Path]) -> tuple[float, float, list[Any]]:
    start = time.perf_counter()
    evaluator = Evaluator.from_names(read_qrels(str(qrels_path)), NDEVAL.values(), ties="trec", topics="common")
    mid = time.perf_counter()
    results = [evaluator.evaluate(read_run(str(p))) for p in run_paths]
    return mid - start, time.perf_counter() - mid, results


# -------------------------------------------------------------------------------------------- pytrec_eval


def pytrec_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(path) as f:
        for line in f:
            q, _, d, r = line.split()
            qrels.setdefault(q, {})[d] = int(r)
    return qrels


def pytrec_run(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    with open(path) as f:
        for line in f:
            q, _, d, _, s, _ = line.split()
            run.setdefault(q, {})[d] = float(s)
    return run


def pytrec(qrels_path: Path, run_paths: list[Path]) -> tuple[float, float, list[Any]]:
    import pytrec_eval

    start = time.perf_counter()
    evaluator = pytrec_eval.RelevanceEvaluator(pytrec_qrels(qrels_path), set(PYTREC.values()))
    mid = time.perf_counter()
    results = [evaluator.evaluate(pytrec_run(p)) for p in run_paths]
    return mid - start, time.perf_counter() - mid, results


# ----------------------------------------------------------------------------------------------- pyndeval


def pyndeval_qrels(path: Path) -> list[tuple[str, str, str, int]]:
    rows: list[tuple[str, str, str, int]] = []
    with open(path) as f:
        for line in f:
            q, s, d, r = line.split()
            rows.append((q, s, d, int(r)))
    return rows


def pyndeval_run(path: Path) -> list[tuple[str, str, float]]:
    rows: list[tuple[str, str, float]] = []
    with open(path) as f:
        for line in f:
            q, _, d, _, s, _ = line.split()
            rows.append((q, d, float(s)))
    return rows


def pyndeval(qrels_path: Path, run_paths: list[Path]) -> tuple[float, float, list[Any]]:
    import pyndeval as nd

    start = time.perf_counter()
    evaluator = nd.RelevanceEvaluator(pyndeval_qrels(qrels_path), list(NDEVAL), alpha=0.5, beta=0.5)
    mid = time.perf_counter()
    results = [evaluator.evaluate(pyndeval_run(p)) for p in run_paths]
    return mid - start, time.perf_counter() - mid, results


# --------------------------------------------------------------------------------------------------- ranx


def _ranx() -> Any:
    return importlib.import_module("ranx")


def ranx_version() -> str | None:
    try:
        _ranx()
    except Exception:  # any import failure means "not available"
        return None
    return metadata.version("ranx")


def ranx_warm_up() -> None:
    rx = _ranx()
    rx.evaluate(rx.Qrels({"q": {"a": 1, "b": 2}}), rx.Run({"q": {"a": 0.5, "b": 0.7, "c": 0.1}}), RANX,
                return_mean=False)


def ranx(qrels_path: Path, run_paths: list[Path]) -> tuple[float, float, list[Any]]:
    rx = _ranx()
    start = time.perf_counter()
    qrels = rx.Qrels.from_file(str(qrels_path), kind="trec")
    mid = time.perf_counter()
    results = [
        rx.evaluate(qrels, rx.Run.from_file(str(p), kind="trec"), RANX, return_mean=False) for p in run_paths
    ]
    return mid - start, time.perf_counter() - mid, results


# -------------------------------------------------------------------------------------------------- check


@dataclass
class Check:
    values: int = 0
    max_diff: float = 0.0
    runs: int = 0
    runs_differing: int = 0
    values_differing: int = 0
    float32_max_diff: float = 0.0  # largest difference once scores are rounded to float32 (see RESULTS.md)

    @property
    def equal(self) -> bool:
        return self.max_diff <= TOLERANCE


def compare(qrels_path: Path, run_paths: list[Path], mine: list[Any], theirs: list[Any]) -> Check:
    """Per-topic comparison; runs that differ are re-evaluated with scores rounded to float32 (trec_eval
    keeps scores as C floats, so scores that differ only beyond float precision tie there)."""
    check = Check()
    evaluator: Evaluator | None = None
    for path, ours_scores, expected in zip(run_paths, mine, theirs):
        diff = _differences(ours_scores, expected)
        check.runs += 1
        check.values += diff.size
        worst = float(diff.max()) if diff.size else 0.0
        check.max_diff = max(check.max_diff, worst)
        if worst > TOLERANCE:
            check.runs_differing += 1
            check.values_differing += int((diff > TOLERANCE).sum())
            if evaluator is None:
                evaluator = Evaluator.from_names(read_qrels(str(qrels_path)), OURS)
            run = read_run(str(path))
            single = dataclasses.replace(run, score=run.score.astype(np.float32).astype(np.float64))
            again = _differences(evaluator.evaluate(single), expected)
            check.float32_max_diff = max(check.float32_max_diff, float(again.max()) if again.size else 0.0)
    return check


def _differences(scores: Any, expected: dict[str, dict[str, float]]) -> np.ndarray:
    if set(scores.topics) != set(expected):
        return np.array([np.inf])
    out = []
    for name, key in PYTREC.items():
        want = np.array([expected[t][key] for t in scores.topics])
        out.append(np.abs(scores.values[name] - want))
    return np.concatenate(out) if out else np.zeros(0)


def compare_diversity(mine: list[Any], theirs: list[Any]) -> Check:
    """Per-topic comparison with pyndeval; its NaN (0/0 for a topic without relevant documents) must be our 0.
    No float32 re-check: the generated runs have no scores that tie in single precision."""
    check = Check()
    for ours_scores, expected in zip(mine, theirs):
        check.runs += 1
        if set(ours_scores.topics) != set(expected):
            diff = np.array([np.inf])
        else:
            parts = []
            for key, name in NDEVAL.items():
                want = np.array([expected[t][key] for t in ours_scores.topics], dtype=np.float64)
                got = ours_scores.values[name]
                parts.append(np.where(np.isnan(want), np.where(got == 0.0, 0.0, np.inf), np.abs(got - want)))
            diff = np.concatenate(parts)
        check.values += diff.size
        worst = float(diff.max()) if diff.size else 0.0
        check.max_diff = max(check.max_diff, worst)
        if worst > TOLERANCE:
            check.runs_differing += 1
            check.values_differing += int((diff > TOLERANCE).sum())
            check.float32_max_diff = float("nan")
    return check


# --------------------------------------------------------------------------------------------------- main


@dataclass
class Outcome:
    workload: str
    shape: str
    sides: dict[str, Side]
    check: Check
    reference: str = "pytrec_eval"
    measures: str = "5 measures"


def bench_workload(folder: Path, repeat: int, with_ranx: bool) -> Outcome:
    qrels_path = folder / "qrels.txt"
    run_paths = sorted((folder / "runs").glob("*.txt"))
    diversity = folder.name == DIVERSITY
    reference = "pyndeval" if diversity else "pytrec_eval"
    tools: list[tuple[str, Tool]] = [("evalserve", ours_diversity if diversity else ours)]
    tools.append(("pyndeval", pyndeval) if diversity else ("pytrec_eval", pytrec))
    with_ranx = with_ranx and not diversity  # ranx has no diversity measures
    for _name, fn in tools:
        fn(qrels_path, run_paths[:WARM_UP_RUNS])  # untimed warm-up
    sides = {name: Side(name) for name, _ in tools}
    last: dict[str, list[Any]] = {}

    def timed(name: str, fn: Tool, label: str) -> None:
        gc.collect()
        setup, runs, results = fn(qrels_path, run_paths)
        sides[name].setup.append(setup)
        sides[name].runs.append(runs)
        last[name] = results
        print(f"  {folder.name} {label} {name:12s} setup {setup:7.3f} s  runs {runs:7.3f} s", flush=True)

    for rep in range(repeat):
        for name, fn in tools:
            timed(name, fn, f"rep {rep + 1}/{repeat}")
    if with_ranx:  # slow; timed once, after the others so that its memory use does not disturb them
        sides["ranx"] = Side("ranx")
        timed("ranx", ranx, "once   ")
    if diversity:
        check = compare_diversity(last["evalserve"], last["pyndeval"])
    else:
        check = compare(qrels_path, run_paths, last["evalserve"], last["pytrec_eval"])
    first = last["evalserve"][0]
    n_lines = 0
    for path in run_paths:
        with open(path, "rb") as handle:
            n_lines += sum(1 for _ in handle)
    n_topics = len(first.topics)
    per_topic = n_lines // max(1, n_topics * len(run_paths))
    shape = f"{n_topics:,} topics x {'~' if diversity else ''}{per_topic:,} docs x {len(run_paths)} runs"
    measures = f"{len(NDEVAL)} ndeval columns" if diversity else "5 measures"
    return Outcome(folder.name, shape, sides, check, reference, measures)


def machine() -> dict[str, str]:
    cpu = "unknown"
    mem = "unknown"
    try:
        cpu = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
        kib = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                   if line.startswith("MemTotal"))
        mem = f"{kib / 1024 / 1024:.1f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    return {
        "cpus": str(os.cpu_count()),
        "cpu": cpu,
        "ram": mem,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pytrec_eval": metadata.version("pytrec_eval-terrier"),
        "pyndeval": _version("pyndeval"),
        "ranx": ranx_version() or "not installed",
        "os": platform.platform(),
    }


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def spread(o: Outcome) -> str:
    """How the ratio moves: reference / evalserve for every pair of repetitions (the two ran back to back), as
    min / median / max, and the ratio of the two fastest totals (the repetitions least disturbed by other jobs)."""
    ref, ours_side = o.sides[o.reference], o.sides["evalserve"]
    n = min(len(ref.runs), len(ours_side.runs))
    ours_total = [ours_side.setup[i] + ours_side.runs[i] for i in range(n)]
    ref_total = [ref.setup[i] + ref.runs[i] for i in range(n)]
    parts = []
    for label, mine, theirs in (("total", ours_total, ref_total), ("runs", ours_side.runs[:n], ref.runs[:n])):
        ratios = sorted(t / m for t, m in zip(theirs, mine))
        parts.append(f"{label} {ratios[0]:.2f}x / {statistics.median(ratios):.2f}x / {ratios[-1]:.2f}x")
    best = min(ref_total) / min(ours_total)
    return (
        f"{o.reference} / evalserve per pair of repetitions (min / median / max of {n}): " + "; ".join(parts)
        + f"; fastest total / fastest total: {best:.2f}x ({min(ref_total):.3f} s / {min(ours_total):.3f} s)."
    )


def table(outcomes: list[Outcome], repeat: int) -> str:
    lines = [
        "| workload | tool | setup (s) | runs (s) | total (s) | runs: reference / tool | total: reference / tool |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for o in outcomes:
        ref = o.sides[o.reference]
        for name, s in o.sides.items():
            note = " (1 rep.)" if len(s.runs) < repeat else ""
            lines.append(
                f"| {o.workload} ({o.shape}) | {name}{note} | {s.setup_s:.3f} | {s.runs_s:.3f} | {s.total_s:.3f} "
                f"| {ref.runs_s / s.runs_s:.2f}x | {ref.total_s / s.total_s:.2f}x |"
            )
    lines.append("")
    for o in outcomes:
        lines.append(f"- {o.workload}: {spread(o)}")
    for o in outcomes:
        c = o.check
        text = (
            f"- {o.workload}: {c.values:,} per-topic values ({o.measures}, {c.runs} runs) compared with "
            f"{o.reference}: largest |difference| {c.max_diff:.3g}"
        )
        if c.equal:
            text += f" -> equal within {TOLERANCE:g}."
        elif o.reference == "pyndeval":
            text += f" -> {c.values_differing} values in {c.runs_differing} runs differ by more than {TOLERANCE:g}."
        else:
            text += (
                f" -> {c.values_differing} values in {c.runs_differing} runs differ by more than {TOLERANCE:g}; "
                f"with the run's scores rounded to float32 (trec_eval's storage) the largest difference in those "
                f"runs is {c.float32_max_diff:.3g}."
            )
        lines.append(text)
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=HERE / "work")
    ap.add_argument("--workloads", default="trec,wide,diversity")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-ranx", action="store_true")
    ap.add_argument("--out", type=Path, default=HERE / "work" / "results.md")
    args = ap.parse_args()

    started = time.perf_counter()
    with_ranx = not args.no_ranx and ranx_version() is not None
    if with_ranx:
        warnings.filterwarnings("ignore")  # numba type-safety chatter
        start = time.perf_counter()
        ranx_warm_up()
        print(f"ranx JIT warm-up (not counted): {time.perf_counter() - start:.1f} s", flush=True)
    outcomes = []
    for name in args.workloads.split(","):
        folder = args.work / name
        if not (folder / "qrels.txt").exists():
            print(f"missing {folder}; run bench/generate.py first", file=sys.stderr)
            return 2
        if name == DIVERSITY and importlib.util.find_spec("pyndeval") is None:
            print("the diversity workload needs pyndeval (pip install pyndeval)", file=sys.stderr)
            return 2
        outcomes.append(bench_workload(folder, args.repeat, with_ranx))
    info = machine()
    text = "\n".join(
        [
            f"Machine: {info['cpus']} CPUs ({info['cpu']}), {info['ram']} RAM, {info['os']}; Python {info['python']}, "
            f"numpy {info['numpy']}, pytrec_eval-terrier {info['pytrec_eval']}, pyndeval {info['pyndeval']}, "
            f"ranx {info['ranx']}.",
            f"Command: python3 bench/run_bench.py {' '.join(sys.argv[1:])}".rstrip()
            + f" (whole benchmark: {time.perf_counter() - started:.0f} s)",
            f"Median of {args.repeat} repetitions (ranx: one), seconds. runs = read + parse + evaluate every run "
            "file; setup = read + parse the qrels and build the evaluator, once per workload; total = both.",
            "",
            table(outcomes, args.repeat),
            "",
        ]
    )
    print()
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
