"""Whole-process timing: the command a user types, against the script a pytrec_eval or pyndeval user writes.

Each tool runs as its own process (``evalserve evaluate ...`` from this venv; ``bench/reference/*_script.py`` run
by this Python), so interpreter start-up, imports, reading the files, evaluating and writing the output all count.
Repetitions alternate the tools (ours first on even repetitions, theirs first on odd ones); the table gives the
median wall time, the ratio of medians (ours / theirs: below 1 is faster) with its spread over the repetitions'
pairs, and the largest peak RSS (GNU time's ``%M``). Every run's mean of every measure
is checked against the reference's (|difference| <= 1e-9, or a note when trec_eval's float scores tie where ours do
not: see RESULTS.md).

Workloads (``python3 bench/generate.py`` writes them into ``bench/work/``; this script derives the shuffled runs):

- ``startup``: ``evalserve --version`` beside ``python3 -c pass`` and ``python3 -c 'import numpy'`` (the floor);
- ``adhoc``: 50 topics x 1,000 docs x 10 runs (trec run00-run09) with their lines shuffled (seeded): scores not
  in rank order; P@10 AP nDCG@10 RR Rprec vs pytrec_eval;
- ``wide``: 20,000 topics x 100 docs x 1 run (wide run00), same measures vs pytrec_eval;
- ``diversity``: the ``intents`` workload, 50 topics x 5 intents x 1,000 docs x 10 runs, ndeval's 21 default
  columns vs pyndeval;
- ``msmarco``: 7,000 topics x 1,000 docs (7 M lines), P@10 AP nDCG@10, plain and gzip, vs pytrec_eval (plain).

Usage: ``python3 bench/whole_process.py [--repeat 5] [--workloads startup,adhoc,wide,diversity,msmarco]
[--json FILE]``; prints a Markdown table (and writes JSON with every figure when asked).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

os.environ.setdefault("EVALSERVE_WARM", "0")  # every command cold, as these figures always were (drop_in.py: warm)
HERE = Path(__file__).resolve().parent
WORK = HERE / "work"
BIN = Path(sys.executable).parent
EVALSERVE = str(BIN / "evalserve")
PYTREC_SCRIPT = str(HERE / "reference" / "pytrec_eval_script.py")
PYNDEVAL_SCRIPT = str(HERE / "reference" / "pyndeval_script.py")
ADHOC_MEASURES = ("P@10", "AP", "nDCG@10", "RR", "Rprec")
MSMARCO_MEASURES = ("P@10", "AP", "nDCG@10")
#: ndeval's default columns (pyndeval.DEFAULT_MEASURES) -> evalserve's names (alpha = beta = 0.5 by default)
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
TOLERANCE = 1e-9
SHUFFLE_SEED = 15
TIME = "/usr/bin/time" if os.path.exists("/usr/bin/time") else None  # GNU time, for the children's peak RSS
PACKAGES = ("evaluation", "evalserve", "service", "workers", "clients/python/evalserve_client")


@dataclass(frozen=True)
class Command:
    """One tool's process for a workload; ``output`` is the file its JSON lands in (None: not checked)."""

    tool: str
    argv: list[str]
    output: str | None = None


@dataclass
class Timing:
    tool: str
    seconds: list[float] = field(default_factory=list)
    peak_rss_mb: float = 0.0

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


@dataclass
class Row:
    workload: str
    shape: str
    timings: list[Timing]
    ratio: float | None  # median(ours) / median(reference)
    ratio_spread: tuple[float, float] | None  # min, max over the repetitions' pairs
    check: str


def run_process(argv: list[str], stdout: str | None) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one process, its output to ``stdout`` (a path) or discarded.

    The peak RSS is GNU time's (``%M``): the kernel's high-water mark survives fork, so ``os.wait4`` of a child of
    this (numpy-sized) process would report at least this process's size.
    """
    with tempfile.NamedTemporaryFile(prefix="rss-", suffix=".txt") as rss:
        wrapped = [TIME, "-f", "%M", "-o", rss.name, *argv] if TIME else argv
        with open(stdout or os.devnull, "wb") as out:
            start = time.perf_counter()
            proc = subprocess.run(wrapped, stdout=out, stderr=subprocess.PIPE, check=False)
            seconds = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(argv[:3])} ... exited {proc.returncode}: {proc.stderr.decode()[-2000:]}")
        text = Path(rss.name).read_text().split()
    return seconds, (int(text[-1]) / 1024 if TIME and text else float("nan"))


def bytecode() -> None:
    """Compile the packages' bytecode as ``pip install`` does for a user: an editable checkout on a machine with
    ``PYTHONDONTWRITEBYTECODE`` set would otherwise recompile every module on every start."""
    root = HERE.parent
    subprocess.run([sys.executable, "-m", "compileall", "-q", *(str(root / p) for p in PACKAGES)], check=True)


def measure(commands: list[Command], repeat: int) -> list[Timing]:
    """Time each command ``repeat`` times, alternating which goes first; one untimed warm-up each."""
    for c in commands:
        run_process(c.argv, c.output)
    timings = [Timing(c.tool) for c in commands]
    for i in range(repeat):
        order = list(range(len(commands))) if i % 2 == 0 else list(reversed(range(len(commands))))
        for j in order:
            seconds, rss = run_process(commands[j].argv, commands[j].output)
            timings[j].seconds.append(seconds)
            timings[j].peak_rss_mb = max(timings[j].peak_rss_mb, rss)
    return timings


def ratios(ours: Timing, theirs: Timing) -> tuple[float, tuple[float, float]]:
    pairs = [a / b for a, b in zip(ours.seconds, theirs.seconds)]
    return ours.median / theirs.median, (min(pairs), max(pairs))


def our_means(path: str, names: dict[str, str]) -> dict[str, dict[str, float]]:
    """``{run: {reference name: mean}}`` from ``evalserve evaluate``'s JSON (``names``: reference -> ours)."""
    with open(path) as f:
        doc = json.load(f)
    return {run: {ref: values[ours]["mean"] for ref, ours in names.items()} for run, values in doc["runs"].items()}


def compare(ours: dict[str, dict[str, float]], theirs_path: str) -> str:
    with open(theirs_path) as f:
        theirs = json.load(f)
    if set(ours) != set(theirs):
        return f"different runs: {sorted(set(ours) ^ set(theirs))}"
    worst = max(abs(ours[r][m] - theirs[r][m]) for r in theirs for m in theirs[r])
    values = sum(len(v) for v in theirs.values())
    verdict = "equal" if worst <= TOLERANCE else "DIFFERENT"
    return f"{verdict}: {values} means, max |diff| {worst:.1e}"


def shuffled_runs(sources: list[Path], into: Path) -> list[Path]:
    """Copies of ``sources`` with their lines in a seeded random order (the scores no longer in rank order)."""
    into.mkdir(parents=True, exist_ok=True)
    out = []
    for src in sources:
        dst = into / src.name
        if not dst.exists() or dst.stat().st_mtime < src.stat().st_mtime:
            lines = src.read_bytes().splitlines(keepends=True)
            random.Random(f"{SHUFFLE_SEED}:{src.name}").shuffle(lines)
            dst.write_bytes(b"".join(lines))
        out.append(dst)
    return out


def need(path: Path) -> Path:
    if not path.exists():
        raise SystemExit(f"{path} is missing: run python3 bench/generate.py first")
    return path


def runs_args(runs: list[Path]) -> list[str]:
    return [a for p in runs for a in ("--run", str(p))]


def adhoc_row(name: str, shape: str, qrels: Path, runs: list[Path], measures: tuple[str, ...], repeat: int,
              tmp: str, gz_runs: list[Path] | None = None) -> Row:
    ours_out, theirs_out = f"{tmp}/{name}-ours.json", f"{tmp}/{name}-theirs.json"
    ours = Command("evalserve evaluate", [EVALSERVE, "evaluate", "--qrels", str(qrels), *runs_args(runs),
                                          "-m", *measures, "-o", ours_out])
    theirs = Command("pytrec_eval script", [sys.executable, PYTREC_SCRIPT, str(qrels), ",".join(measures),
                                            *map(str, runs)], theirs_out)
    commands = [ours, theirs]
    if gz_runs:
        commands.append(Command("evalserve evaluate (.gz)", [EVALSERVE, "evaluate", "--qrels", str(qrels),
                                                             *runs_args(gz_runs), "-m", *measures, "-o", os.devnull]))
    timings = measure(commands, repeat)
    ratio, spread = ratios(timings[0], timings[1])
    check = compare(our_means(ours_out, {m: m for m in measures}), theirs_out)
    if not check.startswith("equal"):
        check = float32_check(qrels, runs, measures, theirs_out, tmp, check)
    return Row(name, shape, timings, ratio, spread, check)


def float32_check(qrels: Path, runs: list[Path], measures: tuple[str, ...], theirs_out: str, tmp: str,
                  first: str) -> str:
    """trec_eval (so pytrec_eval) keeps scores as C floats: scores that differ only beyond float precision tie
    there and are ordered by docno. Evaluate copies of the runs with scores rounded to float32 (untimed) and
    compare again."""
    rounded = []
    for path in runs:
        dst = Path(tmp) / f"f32-{path.name}"
        with open(path) as src, open(dst, "w") as out:
            for line in src:
                q, q0, d, k, score, tag = line.split()
                out.write(f"{q} {q0} {d} {k} {float(np.float32(score))!r} {tag}\n")
        rounded.append(dst)
    ours_out = f"{tmp}/f32-ours.json"
    run_process([EVALSERVE, "evaluate", "--qrels", str(qrels), *runs_args(rounded), "-m", *measures,
                 "-o", ours_out], None)
    names = {f"f32-{p.name}": p.name for p in runs}
    ours = {names[r]: v for r, v in our_means(ours_out, {m: m for m in measures}).items()}
    again = compare(ours, theirs_out)
    return f"{first}; with scores rounded to float32 as trec_eval keeps them: {again}"


def startup_row(repeat: int) -> Row:
    commands = [
        Command("evalserve --version", [EVALSERVE, "--version"]),
        Command("python3 -c pass", [sys.executable, "-c", "pass"]),
        Command("python3 -c 'import numpy'", [sys.executable, "-c", "import numpy"]),
    ]
    timings = measure(commands, max(repeat, 11))
    return Row("startup", "start-up only", timings, None, None, "-")


def diversity_row(repeat: int, tmp: str) -> Row:
    base = WORK / "intents"
    qrels = need(base / "qrels.txt")
    runs = [need(base / "runs" / f"run{i:02d}.txt") for i in range(10)]
    ours_out, theirs_out = f"{tmp}/diversity-ours.json", f"{tmp}/diversity-theirs.json"
    ours = Command("evalserve evaluate", [EVALSERVE, "evaluate", "--qrels", str(qrels), *runs_args(runs),
                                          "-m", *NDEVAL.values(), "-o", ours_out])
    theirs = Command("pyndeval script", [sys.executable, PYNDEVAL_SCRIPT, str(qrels), *map(str, runs)], theirs_out)
    timings = measure([ours, theirs], repeat)
    ratio, spread = ratios(timings[0], timings[1])
    check = compare(our_means(ours_out, NDEVAL), theirs_out)
    return Row("diversity", "50 topics x 5 intents x 1,000 docs x 10 runs, 21 ndeval columns", timings, ratio, spread,
               check)


def rows_for(workloads: list[str], repeat: int, tmp: str) -> list[Row]:
    rows = []
    for name in workloads:
        if name == "startup":
            rows.append(startup_row(repeat))
        elif name == "adhoc":
            trec = WORK / "trec"
            sources = [need(trec / "runs" / f"run{i:02d}.txt") for i in range(10)]
            runs = shuffled_runs(sources, WORK / "whole_process" / "adhoc-shuffled")
            rows.append(adhoc_row("adhoc", "50 topics x 1,000 docs x 10 runs, lines shuffled", need(trec / "qrels.txt"),
                                  runs, ADHOC_MEASURES, repeat, tmp))
        elif name == "wide":
            wide = WORK / "wide"
            rows.append(adhoc_row("wide", "20,000 topics x 100 docs x 1 run", need(wide / "qrels.txt"),
                                  [need(wide / "runs" / "run00.txt")], ADHOC_MEASURES, repeat, tmp))
        elif name == "diversity":
            rows.append(diversity_row(repeat, tmp))
        elif name == "msmarco":
            ms = WORK / "msmarco"
            run = need(ms / "runs" / "run00.txt")
            gz = ms / "runs" / "run00.txt.gz"
            rows.append(adhoc_row("msmarco", "7,000 topics x 1,000 docs x 1 run (7 M lines)",
                                  need(ms / "qrels.txt"), [run], MSMARCO_MEASURES, max(1, min(repeat, 3)), tmp,
                                  [gz] if gz.exists() else None))
        else:
            raise SystemExit(f"unknown workload {name!r}")
        print_rows(rows[-1:], header=len(rows) == 1)
    return rows


def print_rows(rows: list[Row], header: bool) -> None:
    if header:
        print("| workload | tool | median (s) | peak RSS (MB) | ours / reference (spread) | check |")
        print("|---|---|---:|---:|---:|---|")
    for row in rows:
        for i, t in enumerate(row.timings):
            ratio = ""
            if i == 0 and row.ratio is not None and row.ratio_spread is not None:
                ratio = f"**{row.ratio:.2f}** ({row.ratio_spread[0]:.2f}-{row.ratio_spread[1]:.2f})"
            label = f"{row.workload}: {row.shape}" if i == 0 else ""
            check = row.check if i == 0 else ""
            print(f"| {label} | {t.tool} | {t.median:.3f} | {t.peak_rss_mb:,.0f} | {ratio} | {check} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workloads", default="startup,adhoc,wide,diversity,msmarco")
    ap.add_argument("--json", type=Path, help="also write every figure here")
    o = ap.parse_args()
    bytecode()
    with tempfile.TemporaryDirectory(prefix="whole-process-") as tmp:
        rows = rows_for(o.workloads.split(","), o.repeat, tmp)
    if o.json:
        o.json.write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n")


if __name__ == "__main__":
    main()
