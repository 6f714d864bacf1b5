"""Reading and evaluating on several threads (``evalserve evaluate --threads``) gives byte-identical reports
and the same problems, in the same order, as one thread -- on the TREC Web 2012 diversity runs, on a run large
enough to be read in several blocks of several chunks, and on bad input."""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import overload

import numpy as np
import pytest

from evalserve.cli.main import main
from evaluation.formats import Blob, load
from evaluation.formats.trec_run import RunFile, parse_run_file
from evaluation.pipeline import load_inputs, run_evaluation
from evaluation.problems import InputError
from evaluation.task_pool import task_pool

DIVERSITY = ["alpha_nDCG@20", "ERR_IA@20", "nNRBP", "AP_IA", "P_IA@10", "StRecall@20", "AP", "nDCG@10", "P@10"]
ADHOC = ["AP", "P@10", "nDCG@10", "RR", "Rprec", "Bpref", "ERR@20"]
BAD = Path(__file__).resolve().parents[1] / "data" / "bad"


def _report(qrels: Path, runs: list[Path], measures: list[str], threads: int) -> str:
    inputs = load_inputs(load(qrels), [RunFile(str(r)) for r in runs], threads=threads)
    report = run_evaluation(inputs, measures, threads=threads)
    return json.dumps(report.as_json(per_topic=True), sort_keys=True)


@pytest.fixture(scope="module")
def web2012(shared_data: Path) -> tuple[Path, list[Path]]:
    runs = shared_data / "trec-web-2012-runs" / "runs"
    paths = sorted(runs.glob("ql-results-*"))
    if not paths:
        pytest.skip("TREC Web 2012 runs missing")
    return shared_data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt", paths


@pytest.mark.parametrize("threads", [2, 4])
def test_trec_web_2012_reports_are_byte_identical_on_several_threads(
    web2012: tuple[Path, list[Path]], threads: int
) -> None:
    qrels, runs = web2012
    assert _report(qrels, runs, DIVERSITY, threads) == _report(qrels, runs, DIVERSITY, 1)


@pytest.fixture(scope="module")
def big_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A 20 MB run (600 topics x 1,000 docs, lines shuffled: two 16 MB blocks of 1-2 MB chunks)
    and its qrels; the gzip copy of the run is read block by block too."""
    rng = np.random.default_rng(15)
    folder = tmp_path_factory.mktemp("big")
    topics, depth = 600, 1000
    lines, judged = [], []
    for t in range(topics):
        docs = rng.choice(50_000, size=depth, replace=False)
        scores = np.round(rng.normal(size=depth), 3)  # ties on purpose
        for rank, (d, s) in enumerate(zip(docs.tolist(), scores.tolist()), 1):
            lines.append(f"{1000 + t} Q0 doc-{d:06d} {rank} {s} big\n")
        for d in rng.choice(50_000, size=60, replace=False).tolist():
            judged.append(f"{1000 + t} 0 doc-{d:06d} {int(rng.integers(0, 3))}\n")
    rng.shuffle(lines)
    run, qrels = folder / "big.run", folder / "qrels.txt"
    run.write_text("".join(lines))
    qrels.write_text("".join(judged))
    with open(run, "rb") as src, gzip.open(folder / "big.run.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    return qrels, run


def test_a_run_read_in_several_blocks_is_the_same_run_on_several_threads(big_run: tuple[Path, Path]) -> None:
    _, run = big_run
    assert run.stat().st_size > 16 << 20  # more than one 16 MB read buffer: several blocks
    for path in (run, run.with_suffix(".run.gz")):
        alone, sha_alone = parse_run_file(RunFile(str(path)))
        with task_pool(3) as pool:
            shared, sha_shared = parse_run_file(RunFile(str(path)), pool)
        assert sha_alone == sha_shared is not None
        a, b = alone.unwrap(), shared.unwrap()
        assert a.topics == b.topics and a.tags == b.tags
        for column in ("topic", "docno", "score", "rank"):
            assert np.array_equal(getattr(a, column), getattr(b, column)), column


def test_a_large_run_evaluates_to_the_same_report_on_several_threads(big_run: tuple[Path, Path]) -> None:
    qrels, run = big_run
    assert _report(qrels, [run], ADHOC, 3) == _report(qrels, [run], ADHOC, 1)


def test_the_command_gives_the_same_output_whatever_the_threads(
    web2012: tuple[Path, list[Path]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels, runs = web2012
    outputs = []
    for threads in ("1", "3"):
        out = tmp_path / f"out-{threads}.json"
        argv = ["evaluate", "--qrels", str(qrels), *[a for r in runs for a in ("--run", str(r))],
                "-m", *DIVERSITY, "--per-topic", "--threads", threads, "-o", str(out)]
        assert main(argv) == 0
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]


def test_bad_inputs_give_the_same_problems_in_the_same_order_on_several_threads(shared_data: Path) -> None:
    qrels = load(BAD / "qrels-many-problems.qrels")
    runs = [BAD / "run-many-problems.run", BAD / "run-score-not-numeric.run", BAD / "truncated.gz"]
    seen = []
    for threads in (1, 3):
        with pytest.raises(InputError) as caught:
            load_inputs(qrels, [RunFile(str(r)) for r in runs], threads=threads)
        seen.append([(p.source, p.line, p.column, p.code, p.severity) for p in caught.value.problems])
    assert seen[0] == seen[1]
    assert len(seen[0]) > 3


def test_threads_must_be_one_or_more(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["evaluate", "--qrels", "q", "--run", "r", "--threads", "0"])
    assert exited.value.code == 2
    assert "must be 1 or more" in capsys.readouterr().err


class _FetchedRuns(Sequence[Blob]):
    """Runs fetched as they are asked for, as a worker's stored runs are (``evalserve.service.jobrun.stored_runs``)."""

    def __init__(self, blobs: list[Blob], events: list[tuple[str, int]]) -> None:
        self.blobs, self.events = blobs, events

    def __len__(self) -> int:
        return len(self.blobs)

    @overload
    def __getitem__(self, index: int) -> Blob: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Blob]: ...
    def __getitem__(self, index: int | slice) -> Blob | Sequence[Blob]:
        if isinstance(index, slice):
            raise TypeError("not sliced here")
        self.events.append(("fetch", index))
        return self.blobs[index]

    def __iter__(self) -> Iterator[Blob]:
        return (self[i] for i in range(len(self)))


@pytest.mark.parametrize("threads", [1, 3])
def test_runs_fetched_on_demand_are_fetched_once_each_and_one_at_a_time_on_one_thread(
    web2012: tuple[Path, list[Path]], threads: int
) -> None:
    """A worker's runs are fetched from the blob store when ``load_inputs`` asks: each once; on one thread (the
    service's workers) run i + 1 is fetched only after run i is read, so one run's bytes are held at a time."""
    qrels, paths = web2012
    events: list[tuple[str, int]] = []
    runs = _FetchedRuns([load(p) for p in paths], events)

    def progress(stage: str, fraction: float) -> None:
        if stage.startswith("reading run"):
            events.append(("read", int(stage.split()[2]) - 1))

    inputs = load_inputs(load(qrels), runs, progress=progress, threads=threads)
    assert len(inputs.runs) == len(paths)
    fetched = [i for kind, i in events if kind == "fetch"]
    assert fetched == list(range(len(paths)))
    if threads == 1:
        assert events == [(kind, i) for i in range(len(paths)) for kind in ("fetch", "read")]


class _RecordingPool:
    """A pool that only records what is submitted (pieces run when their result is asked for)."""

    def __init__(self) -> None:
        self.submitted = 0

    def submit(self, work, *, leaf=False):  # type: ignore[no-untyped-def]
        from evaluation.task_pool import Pending

        self.submitted += 1
        return Pending(work)


def test_the_join_is_handed_to_the_pool_before_the_run_is_ranked(web2012: tuple[Path, list[Path]]) -> None:
    """``Evaluator.evaluate`` starts the join (``start_join``) before ranking the run, so the pool's threads
    join while the caller ranks; what the join gives does not depend on when it ran."""
    from evaluation.formats import parse_qrels, read_run
    from evaluation.judged_ranking import _judgments_of, start_join

    qrels_path, runs = web2012
    qrels = parse_qrels(qrels_path).unwrap()
    run = read_run(str(runs[0]))
    big = type(run)(run.name, run.topics, np.tile(run.topic, 9), np.tile(run.docno, 9), np.tile(run.score, 9),
                    np.tile(run.rank, 9))  # more rows than one join block
    pool = _RecordingPool()
    wait = start_join(qrels, big, pool)  # type: ignore[arg-type]
    assert pool.submitted == -(-len(big) // (1 << 16)) > 1  # every block submitted before anyone waits
    assert np.array_equal(wait(), _judgments_of(qrels, big))
    with task_pool(2) as real:
        assert np.array_equal(start_join(qrels, big, real)(), _judgments_of(qrels, big))
