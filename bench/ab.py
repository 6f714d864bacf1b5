"""Interleaved A/B of two versions of ``evalserve evaluate``, whole process, against the same reference script.

Each repetition runs the reference script (pytrec_eval) before every evalserve process and shuffles the order of
the versions, so a drift of the machine's speed hits both alike. Per version: median wall time, the ratio of
medians to the reference, quartiles, and the median CPU seconds (user + system) and page faults of the process
(``os.wait4``) -- on a 2-core machine the wall time moves with the whole process's CPU time.

A version is a commit (checked out into a temporary git worktree, bytecode compiled first) or ``work`` (this
checkout as it is). Both run with this venv's interpreter and packages; the checkout is put first on
``sys.path`` in place of the editable install.

Usage: ``python3 bench/ab.py [--before COMMIT] [--after work|COMMIT] [--workload wide|adhoc|diversity]
[--repeat 10]`` (data: ``python3 bench/generate.py --workloads trec,wide,intents``; ``diversity`` runs ndeval's
21 default columns against the pyndeval script; ``adhoc`` also needs ``bench/whole_process.py`` to
have derived its shuffled runs once).
"""

from __future__ import annotations

import argparse
import compileall
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / "work"
MEASURES = ("P@10", "AP", "nDCG@10", "RR", "Rprec")
#: runs ``evalserve`` from the checkout given first (the editable install's finder would pick this checkout)
LAUNCHER = """
import sys
root = sys.argv.pop(1)
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
sys.path.insert(0, root)
from evalserve.cli.main import run
os.environ.setdefault("EVALSERVE_WARM", "0")  # every command cold, as these figures always were (drop_in.py: warm)
run()
"""


def workload(name: str) -> tuple[Path, list[Path]]:
    if name == "wide":
        return WORK / "wide" / "qrels.txt", [WORK / "wide" / "runs" / "run00.txt"]
    if name == "diversity":
        return WORK / "intents" / "qrels.txt", [WORK / "intents" / "runs" / f"run{i:02d}.txt" for i in range(10)]
    shuffled = WORK / "whole_process" / "adhoc-shuffled"
    return WORK / "trec" / "qrels.txt", [shuffled / f"run{i:02d}.txt" for i in range(10)]


def checkout(version: str, into: Path) -> Path:
    """The source tree of ``version``: this checkout, or a worktree of the commit, bytecode compiled."""
    if version == "work":
        root = ROOT
    else:
        root = into / version
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(root), version], check=True)
    for package in ("evaluation", "evalserve"):
        compileall.compile_dir(str(root / package), quiet=1)
    return root


def timed(command: list[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system) and minor page faults of one process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"failed ({status}): {' '.join(command)}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_minflt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="HEAD")
    ap.add_argument("--after", default="work")
    ap.add_argument("--workload", choices=("wide", "adhoc", "diversity"), default="wide")
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    qrels, runs = workload(args.workload)
    if args.workload == "diversity":  # pyndeval's default columns, as bench/whole_process.py compares them
        from whole_process import NDEVAL

        measures: tuple[str, ...] = tuple(NDEVAL.values())
        reference = [sys.executable, str(HERE / "reference" / "pyndeval_script.py"), str(qrels), *map(str, runs)]
    else:
        measures = MEASURES
        reference = [sys.executable, str(HERE / "reference" / "pytrec_eval_script.py"), str(qrels),
                     ",".join(MEASURES), *map(str, runs)]
    with tempfile.TemporaryDirectory() as tmp:
        roots = {label: checkout(version, Path(tmp)) for label, version in
                 (("before", args.before), ("after", args.after))}
        try:
            out = Path(tmp) / "out.json"
            commands = {label: [sys.executable, "-c", LAUNCHER, str(root), "evaluate", "--qrels", str(qrels),
                                *[a for r in runs for a in ("--run", str(r))], "-m", *measures, "-o", str(out)]
                        for label, root in roots.items()}
            theirs: list[float] = []
            ours: dict[str, list[tuple[float, float, int]]] = {label: [] for label in commands}
            for _ in range(args.repeat):
                for label in random.sample(list(commands), len(commands)):
                    theirs.append(timed(reference)[0])
                    ours[label].append(timed(commands[label]))
        finally:
            for root in roots.values():
                if root != ROOT:
                    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(root)], check=False)
    reference_median = statistics.median(theirs)
    tool = "pyndeval" if args.workload == "diversity" else "pytrec_eval"
    print(f"{args.workload}: {tool} script median {reference_median:.3f} s ({len(theirs)} runs)")
    for label, version in (("before", args.before), ("after", args.after)):
        walls = [w for w, _, _ in ours[label]]
        q1, _, q3 = statistics.quantiles(walls, n=4)
        print(f"{label:6} {version:>12}: median {statistics.median(walls):.3f} s, ratio "
              f"{statistics.median(walls) / reference_median:.3f} (quartiles {q1:.3f}-{q3:.3f} s), CPU "
              f"{statistics.median(c for _, c, _ in ours[label]):.3f} s, page faults "
              f"{statistics.median(f for _, _, f in ours[label]):.0f}")


if __name__ == "__main__":
    main()
