"""Start-up of the commands a user types, timed as whole processes (fork, interpreter, imports, work, exit).

Each command runs ``--runs`` times, the commands interleaved (so a busy moment of a shared machine hurts them
alike); the table gives the median, min and max wall time. Baselines: ``python -c pass`` (the interpreter) and
``python -c "import numpy"`` (the floor of anything that evaluates). The evaluation is the bundled sample (two runs,
five topics) or, with ``--data DIR``, trec_eval's test files (``DIR/qrels.test``, ``DIR/results.test``).

Bytecode caches change these figures: with ``PYTHONDONTWRITEBYTECODE=1`` and no ``__pycache__`` beside an
editable install's sources, every start compiles the engine's modules again. The header says which case ran;
``python -m compileall -q evaluation evalserve service workers`` (or a regular ``pip install .``) gives the
cached case, what an installed package has.

Usage: ``python bench/startup.py [--runs 11] [--data /work/shared/data/trec_eval-test] [--markdown]``
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
ROOT = Path(__file__).resolve().parents[1]
MEASURES = ("P@10", "AP", "nDCG@10", "RR", "Rprec")


def tool(name: str, module: str) -> list[str]:
    """The console script ``name`` as installed beside this interpreter, else ``python -m module``."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    return [found] if found else [sys.executable, "-m", module]


def commands(data: Path | None) -> dict[str, list[str]]:
    """label -> argv of every timed command."""
    evalserve, client = tool("evalserve", "evalserve.cli.main"), tool("evalserve-client", "evalserve_client.cli")
    if data is None:
        samples = ROOT / "evalserve" / "samples"
        qrels, runs = samples / "sample.qrels", [samples / "bm25.run", samples / "neural.run"]
    else:
        qrels, runs = data / "qrels.test", [data / "results.test"]
    evaluate = [*evalserve, "evaluate", "--qrels", str(qrels), *(a for r in runs for a in ("--run", str(r))),
                "-m", *MEASURES]
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import numpy'": [sys.executable, "-c", "import numpy"],
        "evalserve --version": [*evalserve, "--version"],
        "evalserve --help": [*evalserve, "--help"],
        "evalserve measures": [*evalserve, "measures"],
        f"evalserve evaluate ({qrels.parent.name}, -m {' '.join(MEASURES)})": evaluate,
        "evalserve-client --version": [*client, "--version"],
    }


def time_all(cmds: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    """Wall times of ``runs`` interleaved rounds; a command that fails stops the benchmark."""
    times: dict[str, list[float]] = {label: [] for label in cmds}
    for _ in range(runs):
        for label, argv in cmds.items():
            start = time.perf_counter()
            done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
            times[label].append(time.perf_counter() - start)
            if done.returncode != 0:
                raise SystemExit(f"{label} failed ({done.returncode}): {done.stderr.decode(errors='replace')}")
    return times


def render(times: dict[str, list[float]], markdown: bool) -> str:
    cached = not os.environ.get("PYTHONDONTWRITEBYTECODE") or (ROOT / "evaluation" / "__pycache__").is_dir()
    head = (f"whole process, {len(next(iter(times.values())))} interleaved runs each; bytecode cache:"
            f" {'yes' if cached else 'no (PYTHONDONTWRITEBYTECODE=1, no __pycache__)'}; {os.cpu_count()} CPUs")
    if markdown:
        rows = [f"| {label} | {statistics.median(t):.3f} | {min(t):.3f} | {max(t):.3f} |" for label, t in times.items()]
        return "\n".join([head, "", "| command | median s | min s | max s |", "|---|---|---|---|", *rows]) + "\n"
    width = max(len(label) for label in times)
    rows = [f"{label:<{width}}  median {statistics.median(t):.3f} s  min {min(t):.3f} s  max {max(t):.3f} s"
            for label, t in times.items()]
    return "\n".join([head, *rows]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=11, help="runs of each command (default 11)")
    parser.add_argument("--data", type=Path, default=None, help="trec_eval's test folder (qrels.test, results.test)")
    parser.add_argument("--markdown", action="store_true", help="a markdown table")
    args = parser.parse_args()
    sys.stdout.write(render(time_all(commands(args.data), args.runs), args.markdown))


if __name__ == "__main__":
    main()
