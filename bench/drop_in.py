"""Drop-in speed against the C trec_eval 10.0 (issue 28's "Done when"): whole processes, side by side, same files.

- (a) one process per run file, as scripts run trec_eval: ``evalserve trec_eval QRELS RUN`` (until that subcommand
  exists: ``evalserve evaluate --format trec_eval -m`` trec_eval's default measures) for each of 10 runs of 50
  topics x 1,000 documents, against ``trec_eval QRELS RUN`` for each; goal: at most 0.6x;
- (b) ``evalserve evaluate`` over the same 10 runs in one process, against trec_eval run once per file; goal 0.4x;
- (c) one run of 20,000 topics x 100 documents (wide run00); goal 0.25x;
- (d) peak RSS on (c); goal at most 1.5x trec_eval's.

Each evalserve figure is given twice: *cold*, ``EVALSERVE_WARM=0`` (the command does all the work in its own
process), and *warm* (docs/warm-engine.md: a server started, and ready, before timing; the figure is the client's
whole process, which waits for the command to finish; the worker's own CPU time and peak RSS, which the client
cannot see, come from the server's ``EVALSERVE_WARM_LOG``). Repetitions alternate which tool goes first; the table
gives the median wall time of each, the ratio of the medians (ours / trec_eval), the spread of the per-repetition
ratios, CPU time (user + system, GNU time) and peak RSS (GNU time's ``%M``). Outputs are compared with
trec_eval's (``identical``: byte for byte) but a difference does not stop the bench.

Usage: ``python3 bench/generate.py --workloads trec,wide --out bench/work`` then
``python3 bench/drop_in.py [--work bench/work] [--repeat 5] [--trec-eval PATH] [--parts a,b,c,d]``. Run it from
the venv evalserve is installed in; trec_eval is built from ``../shared/oracles`` (``tests/oracle_tools.py``)
unless ``--trec-eval`` names one. Prints a Markdown table; the machine's load average is printed with it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EVALSERVE = str(Path(sys.executable).parent / "evalserve")
GNU_TIME = "/usr/bin/time" if os.path.exists("/usr/bin/time") else None
#: trec_eval 10.0's measures when no -m is given (its "official" set), by the names evalserve reads
TREC_EVAL_DEFAULT = (
    "num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank "
    + " ".join(f"iprec_at_recall_{r / 10:.2f}" for r in range(11))
    + " P_5 P_10 P_15 P_20 P_30 P_100 P_200 P_500 P_1000").split()
GOALS = {"a": 0.6, "b": 0.4, "c": 0.25, "d": 1.5}


@dataclass
class Sample:
    """One timed command (or loop of commands): wall seconds, CPU seconds and the largest peak RSS (kB)."""

    wall: float
    cpu: float
    rss_kb: int
    output: bytes = b""


@dataclass
class Series:
    samples: list[Sample] = field(default_factory=list)

    @property
    def wall(self) -> float:
        return statistics.median(s.wall for s in self.samples)

    @property
    def cpu(self) -> float:
        return statistics.median(s.cpu for s in self.samples)

    @property
    def rss_mb(self) -> float:
        return max(s.rss_kb for s in self.samples) / 1024


def has_trec_eval_command() -> bool:
    done = subprocess.run([EVALSERVE, "trec_eval", "-h"], capture_output=True, env=env(warm=False))
    return done.returncode == 0


def ours_one(qrels: Path, run: Path, native: bool) -> list[str]:
    """The evalserve command line for one run, printing what trec_eval prints."""
    if native:
        return [EVALSERVE, "trec_eval", str(qrels), str(run)]
    return [EVALSERVE, "evaluate", "--qrels", str(qrels), "--run", str(run), "--format", "trec_eval", "-m",
            *TREC_EVAL_DEFAULT]


def ours_many(qrels: Path, runs: list[Path]) -> list[str]:
    return [EVALSERVE, "evaluate", "--qrels", str(qrels), *(a for r in runs for a in ("--run", str(r))),
            "--format", "trec_eval", "-m", *TREC_EVAL_DEFAULT]


def env(warm: bool, log: Path | None = None) -> dict[str, str]:
    e = {**os.environ, "EVALSERVE_WARM": "1" if warm else "0"}
    if log is not None:
        e["EVALSERVE_WARM_LOG"] = str(log)
    return e


def timed(argv: list[str], environ: dict[str, str]) -> Sample:
    """Run ``argv`` to completion: its wall time, and (GNU time) CPU time and peak RSS."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        prefix = [GNU_TIME, "-o", report.name, "-f", "%U %S %M"] if GNU_TIME else []
        start = time.perf_counter()
        done = subprocess.run([*prefix, *argv], env=environ, capture_output=True)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv[:3])} ... failed ({done.returncode}): {done.stderr.decode()[-500:]}")
        cpu, rss = 0.0, 0
        if GNU_TIME:
            user, system, peak = Path(report.name).read_text().split()[-3:]
            cpu, rss = float(user) + float(system), int(peak)
    return Sample(wall, cpu, rss, done.stdout)


def loop(commands: list[list[str]], environ: dict[str, str]) -> Sample:
    """Commands one after the other, as a script runs them: summed wall and CPU, the largest RSS, outputs joined."""
    parts = [timed(c, environ) for c in commands]
    return Sample(sum(p.wall for p in parts), sum(p.cpu for p in parts), max(p.rss_kb for p in parts),
                  b"".join(p.output for p in parts))


def worker_figures(log: Path, since: int) -> tuple[float, int]:
    """CPU seconds (summed) and largest peak RSS (kB) of the warm engine's command processes logged after line
    ``since``."""
    lines = log.read_text().splitlines()[since:] if log.exists() else []
    cpu = sum(float(f.split()[2]) + float(f.split()[3]) for f in lines)
    return cpu, max((int(f.split()[4]) for f in lines), default=0)


def start_server(qrels: Path, run: Path, log: Path) -> None:
    """One untimed command starts the warm engine; wait until a second one is served by it."""
    for _ in range(40):
        before = len(log.read_text().splitlines()) if log.exists() else 0
        subprocess.run(ours_many(qrels, [run]), env=env(True, log), capture_output=True)
        time.sleep(0.5)
        if log.exists() and len(log.read_text().splitlines()) > before:
            return
    raise SystemExit("the warm engine did not start")


def compare(name: str, theirs: list[str] | list[list[str]], variants: dict[str, tuple[object, dict[str, str]]],
            repeat: int, log: Path) -> list[dict[str, object]]:
    """Time trec_eval and each evalserve variant, alternating; one result row per variant."""
    many = isinstance(theirs[0], list)
    te = Series()
    ours = {v: Series() for v in variants}
    worker: dict[str, list[tuple[float, int]]] = {v: [] for v in variants}
    for i in range(repeat):
        order = ["trec_eval", *variants] if i % 2 == 0 else [*variants, "trec_eval"]
        for tool in order:
            if tool == "trec_eval":
                te.samples.append(loop(theirs, os.environ.copy()) if many  # type: ignore[arg-type]
                                  else timed(theirs, os.environ.copy()))  # type: ignore[arg-type]
                continue
            argv, environ = variants[tool]
            since = len(log.read_text().splitlines()) if log.exists() else 0
            sample = loop(argv, environ) if isinstance(argv[0], list) else timed(argv, environ)  # type: ignore
            ours[tool].samples.append(sample)
            if environ.get("EVALSERVE_WARM") == "1":
                time.sleep(0.2)  # the server logs a command once it has reaped its process
                worker[tool].append(worker_figures(log, since))
    rows = []
    for tool, series in ours.items():
        ratios = sorted(o.wall / t.wall for o, t in zip(series.samples, te.samples))
        identical = all(o.output == t.output for o, t in zip(series.samples, te.samples))
        w_cpu = statistics.median(c for c, _ in worker[tool]) if worker[tool] else None
        w_rss = max(r for _, r in worker[tool]) / 1024 if worker[tool] else None
        rows.append({"part": name, "variant": tool, "theirs": te.wall, "ours": series.wall,
                     "ratio": series.wall / te.wall, "spread": (ratios[0], ratios[-1]),
                     "cpu_theirs": te.cpu, "cpu_ours": series.cpu, "worker_cpu": w_cpu,
                     "rss_theirs": te.rss_mb, "rss_ours": series.rss_mb, "worker_rss": w_rss,
                     "identical": identical})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=HERE / "work")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--trec-eval", default=None, help="the trec_eval binary (default: built from the oracles)")
    parser.add_argument("--parts", default="a,b,c,d")
    args = parser.parse_args()
    if args.trec_eval is None:
        sys.path.insert(0, str(ROOT))
        from tests.oracle_tools import oracle_tools

        args.trec_eval = str(oracle_tools().trec_eval)
    parts = set(args.parts.split(","))
    trec, wide = args.work / "trec", args.work / "wide"
    runs = sorted((trec / "runs").iterdir())[: args.runs]
    native = has_trec_eval_command()
    scratch = Path(tempfile.mkdtemp(prefix="drop-in-"))
    runtime = scratch / "runtime"
    runtime.mkdir(mode=0o700)
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)  # a server of the bench's own, stopped at the end
    os.environ["EVALSERVE_WARM_IDLE"] = "120"
    log = scratch / "warm.log"
    load = os.getloadavg()
    rows: list[dict[str, object]] = []
    try:
        cold, warm = env(False), env(True, log)
        if parts & {"a", "b"}:
            start_server(trec / "qrels.txt", runs[0], log)
        if "a" in parts:
            theirs = [[args.trec_eval, str(trec / "qrels.txt"), str(r)] for r in runs]
            mine = [ours_one(trec / "qrels.txt", r, native) for r in runs]
            rows += compare("(a) one process per run, 10 x 50 x 1,000", theirs,
                            {"cold": (mine, cold), "warm": (mine, warm)}, args.repeat, log)
        if "b" in parts:
            theirs = [[args.trec_eval, str(trec / "qrels.txt"), str(r)] for r in runs]
            mine_many = ours_many(trec / "qrels.txt", runs)
            rows += compare("(b) evaluate over the 10 runs, one process", theirs,
                            {"cold": (mine_many, cold), "warm": (mine_many, warm)}, args.repeat, log)
        if parts & {"c", "d"}:
            run = wide / "runs" / sorted(os.listdir(wide / "runs"))[0]
            start_server(wide / "qrels.txt", run, log)
            mine_one = ours_one(wide / "qrels.txt", run, native)
            rows += compare("(c, d) wide, 20,000 x 100, one run", [args.trec_eval, str(wide / "qrels.txt"),
                                                                     str(run)],
                            {"cold": (mine_one, cold), "warm": (mine_one, warm)}, args.repeat, log)
    finally:
        stop_servers(runtime)
        shutil.rmtree(scratch, ignore_errors=True)
    print(table(rows, native, load, os.getloadavg(), args.repeat))


def stop_servers(runtime: Path) -> None:
    """Stop the servers the bench started (each one's pid is in its lock file)."""
    for lock in (runtime / "evalserve").glob("*.lock") if (runtime / "evalserve").exists() else []:
        try:
            os.kill(int(lock.read_text()), 15)
        except (OSError, ValueError):
            continue


def table(rows: list[dict[str, object]], native: bool, load: tuple[float, ...], after: tuple[float, ...],
          repeat: int) -> str:
    command = ("`evalserve trec_eval`" if native
               else "`evalserve evaluate --format trec_eval -m <trec_eval's defaults>`")
    out = [f"Ours: {command}; trec_eval 10.0 (C). Median of {repeat}, alternating. Load average before"
           f" {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, after {after[0]:.2f} {after[1]:.2f} {after[2]:.2f}"
           f" ({os.cpu_count()} CPUs).", "",
           "| part | evalserve | trec_eval s | evalserve s | ratio (goal) | ratio spread | CPU s trec_eval / ours"
           " (+ warm worker) | peak RSS MB trec_eval / ours (warm worker) | identical |",
           "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        part = str(r["part"])
        goal = GOALS[part[1]]
        lo, hi = r["spread"]  # type: ignore[misc]
        worker_cpu = f" + {r['worker_cpu']:.3f}" if r["worker_cpu"] is not None else ""
        worker_rss = f" ({r['worker_rss']:.0f})" if r["worker_rss"] is not None else ""
        out.append(f"| {part} | {r['variant']} | {r['theirs']:.3f} | {r['ours']:.3f} | {r['ratio']:.2f}x ({goal}x)"
                   f" | {lo:.2f}-{hi:.2f} | {r['cpu_theirs']:.3f} / {r['cpu_ours']:.3f}{worker_cpu}"
                   f" | {r['rss_theirs']:.0f} / {r['rss_ours']:.0f}{worker_rss}"
                   f" | {'yes' if r['identical'] else 'no'} |")
        if part.startswith("(c"):
            rss_ratio = (r["worker_rss"] or r["rss_ours"]) / r["rss_theirs"]  # type: ignore[operator]
            out.append(f"| (d) peak RSS, wide | {r['variant']} | | | {rss_ratio:.2f}x ({GOALS['d']}x) | | | | |")
    return "\n".join(out)


if __name__ == "__main__":
    main()
