"""Parity with gdeval.pl (TREC Web Track 2010-2014): ``nDCG(gain=exp)@k`` and ``ERR@k`` (gmax = 4).

1. The per-topic outputs of ``gdeval.pl -c qrels.adhoc.txt <run>`` (version 1.3) on the four TREC Web 2012 runs,
   printed with 5 decimals: |ours - printed| <= 5e-6 (+1e-12), per topic and for the ``amean`` row; ``-c`` is
   topics="complete".
2. gdeval.pl itself (the copy shipped inside ir_measures, ``gdeval.pl qrels run k``, no ``-c``, no mean row;
   prints only topics that are in the run and have a judgment > 0) on seeded random inputs with grades -2..4,
   tied scores and docnos that sort trickily byte-wise.
"""

from __future__ import annotations

import csv
import random
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest

from evaluation.evaluator import RunScores, evaluate
from evaluation.formats import read_qrels, read_run
from evaluation.formats.source import Blob

TOLERANCE = 5e-6 + 1e-12
NDCG, ERR = "nDCG(gain=exp)@{k}", "ERR@{k}"

RUNS = (
    "ql-results-cata-filtered.txt",
    "ql-results-cata.txt.gz",
    "ql-results-catb-filtered.txt",
    "ql-results-catb.txt.gz",
)


def reference_name(run: str) -> str:
    return run.removesuffix(".gz").removesuffix(".txt") + ".csv"


@cache
def web2012_scores(root: Path, run: str) -> RunScores:
    qrels = read_qrels(root / "trec-web-2009-2014" / "2012" / "qrels.adhoc.txt")
    names = [NDCG.format(k=20), ERR.format(k=20)]
    return evaluate(qrels, [read_run(root / "trec-web-2012-runs" / "runs" / run)], names, topics="complete")[0]


@pytest.mark.parametrize("run", RUNS)
def test_web2012_gdeval_c(shared_data: Path, shared_file, run: str) -> None:
    reference = shared_file("trec-web-2012-runs", "reference", "gdeval-c", reference_name(run))
    shared_file("trec-web-2012-runs", "runs", run)
    with reference.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    scores = web2012_scores(shared_data, run)
    per_topic = {"ndcg@20": scores.per_topic(NDCG.format(k=20)), "err@20": scores.per_topic(ERR.format(k=20))}
    means = {"ndcg@20": scores.mean(NDCG.format(k=20)), "err@20": scores.mean(ERR.format(k=20))}
    printed_topics = [r["topic"] for r in rows if r["topic"] != "amean"]
    assert set(printed_topics) == set(scores.topics), "gdeval -c evaluates every qrels topic"
    assert len(rows) == len(scores.topics) + 1
    failures = []
    for r in rows:
        for column in ("ndcg@20", "err@20"):
            got = means[column] if r["topic"] == "amean" else per_topic[column][r["topic"]]
            if abs(got - float(r[column])) > TOLERANCE:
                failures.append(f"{run} {column} topic {r['topic']}: evalserve {got:.7f}, gdeval {r[column]}")
    assert not failures, "\n".join(failures)


# -- gdeval.pl on random inputs -------------------------------------------------------------------------------


def gdeval_script() -> Path:
    ir_measures = pytest.importorskip("ir_measures")
    script = Path(ir_measures.__file__).parent / "bin" / "gdeval.pl"
    if not script.is_file():
        pytest.skip(f"gdeval.pl not found at {script}")
    if shutil.which("perl") is None:
        pytest.skip("perl is not installed (needed to run gdeval.pl)")
    return script


def tricky_docnos(rng: random.Random, n: int) -> list[str]:
    """Distinct docnos with shared prefixes and digit runs of different lengths (d9 vs d10 vs d100)."""
    pool = set()
    stems = ["d", "d1", "doc", "doc-", "D", "clueweb09-en0000-", "x"]
    while len(pool) < n:
        pool.add(rng.choice(stems) + str(rng.choice([rng.randrange(0, 12), rng.randrange(0, 200)])))
    return sorted(pool)


def random_case(seed: int) -> tuple[str, str, int]:
    """(qrels text, run text, k): a few numeric topics, some only in the qrels, some only in the run."""
    rng = random.Random(seed)
    qrels, run = [], []
    for i, topic in enumerate(rng.sample(range(1, 60), rng.randint(1, 6))):
        docs = tricky_docnos(rng, rng.randint(1, 40))
        in_qrels, in_run = i == 0 or rng.random() < 0.85, i == 0 or rng.random() < 0.85
        if in_qrels:
            judged = rng.sample(docs, rng.randint(1, len(docs)))
            weights = [1, 4, 2, 1, 1, 1, 1] if rng.random() < 0.8 else [0, 1, 3, 0, 0, 0, 0]
            for d in judged:
                grade = rng.choices([-2, 0, 1, 2, 3, 4, -1], weights=weights)[0]
                qrels.append(f"{topic} 0 {d} {grade}")
        if in_run:
            shown = rng.sample(docs, rng.randint(1, len(docs)))
            levels = rng.randint(1, 6)  # few distinct scores -> many ties
            for rank, d in enumerate(shown, start=1):
                score = rng.randrange(levels) / 2 - 1.0
                run.append(f"{topic} Q0 {d} {rank} {score:.2f} rnd{seed}")
    rng.shuffle(run)
    return "".join(q + "\n" for q in qrels), "".join(r + "\n" for r in run), rng.choice([1, 3, 5, 10, 20])


def run_gdeval(script: Path, qrels: str, run: str, k: int, tmp: Path) -> dict[str, tuple[float, float]]:
    (tmp / "qrels").write_text(qrels)
    (tmp / "run").write_text(run)
    done = subprocess.run(
        ["perl", str(script), str(tmp / "qrels"), str(tmp / "run"), str(k)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = list(csv.reader(done.stdout.splitlines()))
    assert rows[0] == ["runid", "topic", f"ndcg@{k}", f"err@{k}"]
    return {topic: (float(ndcg), float(err)) for _runid, topic, ndcg, err in rows[1:]}


@pytest.mark.parametrize("seed", range(40))
def test_gdeval_random(seed: int, tmp_path: Path) -> None:
    script = gdeval_script()
    qrels_text, run_text, k = random_case(seed)
    expected = run_gdeval(script, qrels_text, run_text, k, tmp_path)
    qrels = read_qrels(Blob.from_bytes(qrels_text.encode(), name="qrels"))
    run = read_run(Blob.from_bytes(run_text.encode(), name="run"))
    scores = evaluate(qrels, [run], [NDCG.format(k=k), ERR.format(k=k)], topics="common")[0]
    ndcg, err = scores.per_topic(NDCG.format(k=k)), scores.per_topic(ERR.format(k=k))
    # gdeval prints the common topics that have a relevant document; the others score 0 for us
    with_relevant = {line.split()[0] for line in qrels_text.splitlines() if line and int(line.split()[3]) > 0}
    assert set(expected) == set(scores.topics) & with_relevant
    for topic in scores.topics:
        want_ndcg, want_err = expected.get(topic, (0.0, 0.0))
        assert abs(ndcg[topic] - want_ndcg) <= TOLERANCE, f"seed {seed} topic {topic} nDCG@{k}: {ndcg[topic]}"
        assert abs(err[topic] - want_err) <= TOLERANCE, f"seed {seed} topic {topic} ERR@{k}: {err[topic]}"
