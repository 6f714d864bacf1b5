"""Whole-process `evalserve evaluate` on the wide workload with two threads, one thread, and two threads pinned to one
CPU, beside the pytrec_eval script: how much the second core gives on this machine right now (bench/RESULTS.md).

Usage: ``python3 bench/threads.py [--repeat 9]`` after ``python3 bench/generate.py --workloads wide``; prints a
Markdown table of median wall, user and system seconds and the ratio to the pytrec_eval script. Variants alternate.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("EVALSERVE_WARM", "0")  # every command cold, as these figures always were (drop_in.py: warm)
HERE = Path(__file__).resolve().parent
WIDE = HERE / "work" / "wide"
MEASURES = ("P@10", "AP", "nDCG@10", "RR", "Rprec")


def variants() -> dict[str, list[str]]:
    evaluate = [str(Path(sys.executable).parent / "evalserve"), "evaluate", "--qrels", str(WIDE / "qrels.txt"),
                "--run", str(WIDE / "runs" / "run00.txt"), "-m", *MEASURES, "-o", os.devnull]
    found = {"default (2 threads)": evaluate, "`--threads 1`": [*evaluate, "--threads", "1"]}
    if shutil.which("taskset"):
        found["2 threads pinned to one CPU (`taskset -c 0`)"] = ["taskset", "-c", "0", *evaluate]
    found["pytrec_eval script"] = [sys.executable, str(HERE / "reference" / "pytrec_eval_script.py"),
                                   str(WIDE / "qrels.txt"), ",".join(MEASURES), str(WIDE / "runs" / "run00.txt")]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    repeat = parser.parse_args().repeat
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as a user's installed package: bytecode cached
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(HERE.parent / "evaluation"),
                    str(HERE.parent / "evalserve")], check=True, stdout=subprocess.DEVNULL)
    runs = variants()
    found: dict[str, list[tuple[float, float, float]]] = {name: [] for name in runs}
    for i in range(repeat):
        for name in (list(runs) if i % 2 == 0 else list(reversed(runs))):
            start = time.perf_counter()
            child = subprocess.Popen(runs[name], env=env, stdout=subprocess.DEVNULL)
            _, status, usage = os.wait4(child.pid, 0)
            if status:
                raise SystemExit(f"{name} failed ({status})")
            found[name].append((time.perf_counter() - start, usage.ru_utime, usage.ru_stime))
    reference = statistics.median(t[0] for t in found["pytrec_eval script"])
    print("| `evalserve evaluate` on the wide workload | wall (s) | user (s) | sys (s) | ratio |")
    print("|---|---:|---:|---:|---:|")
    for name, times in found.items():
        wall, user, system = (statistics.median(t[k] for t in times) for k in range(3))
        print(f"| {name} | {wall:.3f} | {user:.2f} | {system:.2f} | {wall / reference:.2f} |")


if __name__ == "__main__":
    main()
