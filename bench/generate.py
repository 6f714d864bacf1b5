"""Write the benchmark workloads (seeded, deterministic) into ``bench/work/``.

Three workloads, each a qrels file and TREC run files (``qid Q0 docno rank score tag``):

- ``trec``: 50 topics x 1,000 documents x 30 runs, 300-700 judged documents per topic (TREC ad hoc size);
- ``wide``: 20,000 topics x 100 documents x 3 runs, 10-40 judged documents per topic;
- ``diversity``: the real TREC Web 2012 diversity qrels (``qrels-for-ndeval.txt``, copied verbatim) and 30 runs
  synthesised from the four real Indri runs on those topics (see ``generate_diversity``);
- ``msmarco`` (only when named): one run of MS MARCO passage size, 7,000 topics x 1,000 passages = 7 M lines, plain
  and gzip (see ``generate_msmarco``). Not in the default set: it takes about a minute and 400 MB.

Every topic has a pool of candidate documents with a hidden quality; judgments are drawn mostly from the
best candidates (as pooling does) with grades 0-4, and each run retrieves the candidates it scores best, so
runs and qrels overlap as they do in real collections. Scores are printed the way real tools print them:
``%.6f`` (Anserini-like BM25), Indri-like negative log-probabilities with six significant digits (``%g``),
and coarse ``%.3f`` scores that produce many ties (broken by docno, as trec_eval does).

Usage: ``python3 bench/generate.py [--seed N] [--out DIR] [--workloads trec,wide,diversity,msmarco] [--data DIR]``
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "work"
DEFAULT_DATA = Path("/work/shared/data")
SEED = 20240611

# Grade distribution among judged documents, by quality quantile (most judged documents are not relevant).
_GRADE_CUTS = np.array([0.62, 0.80, 0.90, 0.96])  # quantiles of judged quality -> grades 1, 2, 3, 4


@dataclass(frozen=True)
class Workload:
    name: str
    n_topics: int
    depth: int  # documents retrieved per topic
    n_runs: int
    pool: int  # candidate documents per topic
    judged: tuple[int, int]  # judged documents per topic (uniform range)
    topic_ids: str  # "trec" (201, 202, ...) or "wide" (random 6-7 digit ids)


WORKLOADS = (
    Workload("trec", 50, 1000, 30, 4000, (300, 700), "trec"),
    Workload("wide", 20_000, 100, 3, 400, (10, 40), "wide"),
)


def docno_text(ids: np.ndarray) -> list[str]:
    """ClueWeb09-style ids from integers: ``clueweb09-en0000-00-03430``."""
    seg, rest = np.divmod(ids, 10_000_000)
    sub, num = np.divmod(rest, 100_000)
    return [f"clueweb09-en{a:04d}-{b:02d}-{c:05d}" for a, b, c in zip(seg.tolist(), sub.tolist(), num.tolist())]


def topic_labels(rng: np.random.Generator, w: Workload) -> list[str]:
    if w.topic_ids == "trec":
        return [str(201 + i) for i in range(w.n_topics)]
    ids = np.sort(rng.choice(9_000_000, size=w.n_topics, replace=False) + 100_000)
    return [str(i) for i in ids.tolist()]


def candidates(rng: np.random.Generator, w: Workload) -> tuple[np.ndarray, np.ndarray]:
    """Per topic ``pool`` distinct document ids (topics x pool) and their hidden quality."""
    universe = 2_000 * 10_000_000  # segments en0000-en1999, 100 files each, 100,000 records each
    docs = rng.integers(0, universe, size=(w.n_topics, w.pool), dtype=np.int64)
    # make ids distinct within each topic (collisions are rare; nudge them)
    docs.sort(axis=1)
    dup = np.zeros_like(docs, dtype=bool)
    dup[:, 1:] = docs[:, 1:] == docs[:, :-1]
    while dup.any():
        docs[dup] = rng.integers(0, universe, size=int(dup.sum()), dtype=np.int64)
        docs.sort(axis=1)
        dup[:, 1:] = docs[:, 1:] == docs[:, :-1]
    for row in docs:  # shuffle within topic so quality is unrelated to id order
        rng.shuffle(row)
    quality = rng.standard_normal((w.n_topics, w.pool))
    return docs, quality


def write_qrels(path: Path, rng: np.random.Generator, w: Workload, topics: list[str],
                docs: np.ndarray, quality: np.ndarray) -> int:
    lines: list[str] = []
    lo, hi = w.judged
    for t, label in enumerate(topics):
        n = int(rng.integers(lo, hi + 1))
        # pooling: judged documents are mostly the best candidates, plus some from deeper in the pool
        noisy = quality[t] + 0.8 * rng.standard_normal(w.pool)
        chosen = np.argsort(-noisy, kind="stable")[:n]
        q = quality[t][chosen]
        cuts = np.quantile(q, _GRADE_CUTS)
        grade = np.searchsorted(cuts, q)
        # a few judged documents no run retrieved (judged from systems not in this set)
        extra = int(rng.integers(0, max(2, n // 20)))
        extra_ids = rng.integers(0, 2_000 * 10_000_000, size=extra, dtype=np.int64)
        extra_grade = rng.integers(0, 3, size=extra)
        ids = np.concatenate((docs[t][chosen], extra_ids))
        grades = np.concatenate((grade, extra_grade))
        _, first = np.unique(ids, return_index=True)
        keep = np.sort(first)
        names = docno_text(ids[keep])
        lines.extend(f"{label} 0 {d} {g}\n" for d, g in zip(names, grades[keep].tolist()))
    path.write_text("".join(lines))
    return len(lines)


def write_run(path: Path, rng: np.random.Generator, w: Workload, topics: list[str],
              docs: np.ndarray, quality: np.ndarray, r: int) -> int:
    style = ("bm25", "indri", "coarse")[r % 3]
    tag = f"{w.name}{style}{r:02d}"
    skill = 0.3 + 0.6 * rng.random()
    noise = quality * skill + rng.standard_normal(quality.shape)
    top = np.argsort(-noise, axis=1, kind="stable")[:, : w.depth]  # best first
    sig = np.take_along_axis(noise, top, axis=1)
    if style == "bm25":
        scores = 12.0 + 3.0 * sig
        text = [f"{s:.6f}" for s in scores.ravel().tolist()]
    elif style == "indri":
        scores = -6.0 + 0.7 * sig
        text = [f"{s:g}" for s in scores.ravel().tolist()]
    else:
        scores = 1.0 / (1.0 + np.exp(-sig))
        text = [f"{s:.3f}" for s in scores.ravel().tolist()]
    ids = np.take_along_axis(docs, top, axis=1).ravel()
    names = docno_text(ids)
    ranks = np.tile(np.arange(1, w.depth + 1), w.n_topics).tolist()
    qids = np.repeat(np.asarray(topics, dtype=object), w.depth).tolist()
    path.write_text("".join(
        f"{q} Q0 {d} {k} {s} {tag}\n" for q, d, k, s in zip(qids, names, ranks, text)
    ))
    return len(names)


def fresh_folder(out: Path, name: str) -> Path:
    """``out/name``, with an empty ``runs/`` folder (the runs of an earlier generation removed)."""
    folder = out / name
    (folder / "runs").mkdir(parents=True, exist_ok=True)
    for old in (folder / "runs").glob("*.txt"):
        old.unlink()
    return folder


def generate(out: Path, seed: int, names: set[str]) -> None:
    for i, w in enumerate(WORKLOADS):
        if w.name not in names:
            continue
        start = time.perf_counter()
        rng = np.random.default_rng([seed, i])
        folder = fresh_folder(out, w.name)
        topics = topic_labels(rng, w)
        docs, quality = candidates(rng, w)
        n_qrels = write_qrels(folder / "qrels.txt", rng, w, topics, docs, quality)
        lines = 0
        for r in range(w.n_runs):
            lines += write_run(folder / "runs" / f"run{r:02d}.txt", rng, w, topics, docs, quality, r)
        took = time.perf_counter() - start
        print(f"{w.name}: {w.n_topics} topics, {n_qrels} judgments, {w.n_runs} runs, {lines} run lines "
              f"-> {folder} ({took:.1f} s)")


# ------------------------------------------------------------------------------------------------ diversity

DIVERSITY_RUNS = 30
DIVERSITY_QRELS = Path("trec-web-2009-2014") / "2012" / "qrels-for-ndeval.txt"
REAL_RUNS = ("ql-results-cata", "ql-results-catb", "ql-results-cata-filtered", "ql-results-catb-filtered")

#: output styles of the synthesised runs: (name, decimals of the score unit, how the score is printed)
_DIV_STYLES = (("indri", 4, "g"), ("bm25", 4, "f"), ("prob", 6, "f"))


def read_real_run(path: Path) -> dict[str, tuple[list[str], np.ndarray]]:
    """A real run file (plain or .gz) as {topic: (docnos in file order, scores)}."""
    opener = gzip.open if path.suffix == ".gz" else open
    per_topic: dict[str, tuple[list[str], list[float]]] = {}
    with opener(path, "rt") as handle:
        for line in handle:
            q, _, d, _, s, _ = line.split()
            docs, scores = per_topic.setdefault(q, ([], []))
            docs.append(d)
            scores.append(float(s))
    return {q: (d, np.asarray(s)) for q, (d, s) in per_topic.items()}


def _real_run_path(data: Path, name: str) -> Path:
    plain = data / "trec-web-2012-runs" / "runs" / f"{name}.txt"
    return plain if plain.exists() else plain.with_suffix(".txt.gz")


def _strictly_decreasing(units: np.ndarray) -> np.ndarray:
    """The largest integer sequence <= ``units`` (already sorted descending) that strictly decreases."""
    step = np.arange(units.size, dtype=np.int64)
    return np.minimum.accumulate(units + step) - step


def _mix_topic(rng: np.random.Generator, sources: list[tuple[list[str], np.ndarray]], noise: float,
               shuffle_top: int) -> tuple[list[str], np.ndarray]:
    """One topic of a synthesised run: the union of the sources' documents, scored by the mean of each source's
    min-max normalised score (a document a source did not retrieve gets that source's minimum minus 0.1), plus
    Gaussian noise; optionally the best ``shuffle_top`` are reshuffled. Returns docnos best first and their
    (noisy) scores, descending."""
    index: dict[str, int] = {}
    for docs, _ in sources:
        for d in docs:
            index.setdefault(d, len(index))
    names = list(index)
    total = np.zeros(len(names))
    for docs, scores in sources:
        lo, hi = float(scores.min()), float(scores.max())
        norm = (scores - lo) / (hi - lo) if hi > lo else np.ones_like(scores)
        column = np.full(len(names), -0.1)
        column[[index[d] for d in docs]] = norm
        total += column
    value = total / len(sources) + noise * rng.standard_normal(len(names))
    order = np.argsort(-value, kind="stable")
    if shuffle_top > 1:
        head = order[:shuffle_top].copy()
        rng.shuffle(head)
        order[: head.size] = head
        value[order] = np.sort(value)[::-1]  # keep the scores descending along the new order
    return [names[i] for i in order.tolist()], value[order]


def write_diversity_run(path: Path, rng: np.random.Generator, real: list[dict[str, tuple[list[str], np.ndarray]]],
                        topics: list[str], r: int) -> int:
    """One synthesised run, written in ranked order with distinct scores (distinct even as float32)."""
    style, decimals, kind = _DIV_STYLES[r % len(_DIV_STYLES)]
    tag = f"div{style}{r:02d}"
    picked = rng.choice(len(real), size=int(rng.integers(1, 3)), replace=False).tolist()
    noise = float(rng.uniform(0.01, 0.25))
    cut = int(rng.choice([100, 200, 500, 1000, 0]))  # 0: a random depth per topic
    lines: list[str] = []
    for q in topics:
        sources = [real[i][q] for i in picked if q in real[i]]
        if not sources:
            continue
        shuffle_top = int(rng.integers(2, 21)) if rng.random() < 0.3 else 0
        docs, value = _mix_topic(rng, sources, noise, shuffle_top)
        most = min(len(docs), 1000)  # tools stop at 1,000 per topic
        depth = min(cut, most) if cut else int(rng.integers(min(most, 20), most + 1))
        docs, value = docs[:depth], value[:depth]
        if style == "indri":
            score = -12.0 + 10.0 * value
        elif style == "bm25":
            score = 8.0 + 25.0 * value
        else:
            score = 1.0 / (1.0 + np.exp(-3.0 * (value - 0.5)))
        unit = 10.0**decimals
        units = _strictly_decreasing(np.floor(score * unit).astype(np.int64))
        text = [f"{u / unit:g}" if kind == "g" else f"{u / unit:.{decimals}f}" for u in units.tolist()]
        parsed = np.array([float(t) for t in text])
        assert (np.diff(parsed) < 0).all() and (np.diff(parsed.astype(np.float32)) < 0).all(), (path, q)
        lines.extend(f"{q} Q0 {d} {k} {s} {tag}\n" for k, (d, s) in enumerate(zip(docs, text), start=1))
    path.write_text("".join(lines))
    return len(lines)


def generate_diversity(out: Path, seed: int, data: Path) -> None:
    """The diversity workload: TREC Web 2012 diversity qrels and 30 runs mixed from the four real runs.

    Each run takes one or two of the real runs; per topic it scores the union of their documents by the mean
    normalised score plus run-level Gaussian noise, sometimes reshuffles the top 2-20, and truncates at a
    run-level depth (100, 200, 500, 1000 or a random depth per topic). Scores are distinct within a topic (also
    as float32) and written in ranked order, so every tie policy, ndeval's and pyndeval's give the same order.
    """
    start = time.perf_counter()
    rng = np.random.default_rng([seed, len(WORKLOADS)])
    folder = fresh_folder(out, "diversity")
    shutil.copyfile(data / DIVERSITY_QRELS, folder / "qrels.txt")
    real = [read_real_run(_real_run_path(data, name)) for name in REAL_RUNS]
    topics = sorted(set().union(*real), key=int)
    lines = 0
    for r in range(DIVERSITY_RUNS):
        lines += write_diversity_run(folder / "runs" / f"run{r:02d}.txt", rng, real, topics, r)
    took = time.perf_counter() - start
    print(f"diversity: {len(topics)} topics ({DIVERSITY_QRELS}), {DIVERSITY_RUNS} runs, {lines} run lines "
          f"-> {folder} ({took:.1f} s)")


# -------------------------------------------------------------------------------------------------- intents

INTENTS = Workload("intents", 50, 1000, 10, 4000, (300, 700), "trec")
N_INTENTS = 5


def write_intent_qrels(path: Path, rng: np.random.Generator, w: Workload, topics: list[str],
                       docs: np.ndarray, quality: np.ndarray) -> int:
    """ndeval-style qrels (``qid intent docno 0/1``): each judged document is listed under every intent of its
    topic, relevant to an intent with a probability that grows with its hidden quality."""
    lines: list[str] = []
    lo, hi = w.judged
    for t, label in enumerate(topics):
        n = int(rng.integers(lo, hi + 1))
        noisy = quality[t] + 0.8 * rng.standard_normal(w.pool)
        chosen = np.sort(np.argsort(-noisy, kind="stable")[:n])
        affinity = rng.random((N_INTENTS, 1)) * 0.8 + 0.2  # how often an intent is met at all
        p = affinity / (1.0 + np.exp(-(quality[t][chosen] - 1.0)))
        relevant = (rng.random((N_INTENTS, n)) < p).astype(int)
        names = docno_text(docs[t][chosen])
        for i in range(N_INTENTS):
            lines.extend(f"{label} {i + 1} {d} {g}\n" for d, g in zip(names, relevant[i].tolist()))
    path.write_text("".join(lines))
    return len(lines)


def write_intent_run(path: Path, rng: np.random.Generator, w: Workload, topics: list[str],
                     docs: np.ndarray, quality: np.ndarray, r: int) -> int:
    """A run in ranked order with scores distinct within a topic, also as float32 (steps of at least 1e-4), so
    ties never arise and every tool's order is the same (pyndeval breaks ties by docno ascending, trec_eval
    descending)."""
    skill = 0.3 + 0.6 * rng.random()
    noise = quality * skill + rng.standard_normal(quality.shape)
    top = np.argsort(-noise, axis=1, kind="stable")[:, : w.depth]
    scores = 12.0 + 3.0 * np.take_along_axis(noise, top, axis=1) - 1e-4 * np.arange(w.depth)
    text = [f"{s:.6f}" for s in scores.ravel().tolist()]
    names = docno_text(np.take_along_axis(docs, top, axis=1).ravel())
    ranks = np.tile(np.arange(1, w.depth + 1), w.n_topics).tolist()
    qids = np.repeat(np.asarray(topics, dtype=object), w.depth).tolist()
    tag = f"intents{r:02d}"
    path.write_text("".join(f"{q} Q0 {d} {k} {s} {tag}\n" for q, d, k, s in zip(qids, names, ranks, text)))
    return len(names)


def generate_intents(out: Path, seed: int) -> None:
    """The ``intents`` workload: 50 topics x 1,000 documents x 10 runs with 5 intents per topic (ndeval
    qrels), the diversity counterpart of ``trec`` for the whole-process benchmark."""
    start = time.perf_counter()
    w = INTENTS
    rng = np.random.default_rng([seed, 100])
    folder = fresh_folder(out, w.name)
    topics = topic_labels(rng, w)
    docs, quality = candidates(rng, w)
    n_qrels = write_intent_qrels(folder / "qrels.txt", rng, w, topics, docs, quality)
    lines = sum(write_intent_run(folder / "runs" / f"run{r:02d}.txt", rng, w, topics, docs, quality, r)
                for r in range(w.n_runs))
    print(f"intents: {w.n_topics} topics x {N_INTENTS} intents, {n_qrels} judgments, {w.n_runs} runs, {lines} run"
          f" lines -> {folder} ({time.perf_counter() - start:.1f} s)")

# ------------------------------------------------------------------------------------------------ MS MARCO size

MSMARCO_TOPICS = 7_000
MSMARCO_DEPTH = 1_000
MSMARCO_PASSAGES = 8_841_823  # passages in the MS MARCO v1 collection: ids 0 .. 8,841,822
_MSMARCO_BLOCK = 250  # topics formatted at a time (bounds the generator's memory)


def generate_msmarco(out: Path, seed: int) -> None:
    """The ``msmarco`` workload: ``qrels.txt`` and ``runs/run00.txt`` (+ ``.gz``; the names bench/whole_process.py
    reads), shaped like MS MARCO passage ranking: 7,000 integer query ids (drawn from 1 .. 1,102,000), 1,000
    distinct integer passage ids per query (up to 8.8 M), about 1.1 judgments per query (all grade 1), and a
    BM25-like run written in ranked order with ``%.6f`` scores that finds a query's relevant passage about 80% of
    the time (near the top more often than not)."""
    start = time.perf_counter()
    rng = np.random.default_rng([seed, len(WORKLOADS) + 1])
    folder = out / "msmarco"
    (folder / "runs").mkdir(parents=True, exist_ok=True)
    qids = np.sort(rng.choice(1_102_000, size=MSMARCO_TOPICS, replace=False) + 1)
    n_rel = 1 + (rng.random(MSMARCO_TOPICS) < 0.1).astype(np.int64)  # ~1.1 relevant passages per query
    qrels_lines: list[str] = []
    run_path = folder / "runs" / "run00.txt"
    lines = 0
    with run_path.open("w") as run_file:
        for lo in range(0, MSMARCO_TOPICS, _MSMARCO_BLOCK):
            hi = min(lo + _MSMARCO_BLOCK, MSMARCO_TOPICS)
            docs = _distinct_rows(rng, hi - lo, MSMARCO_DEPTH + 2, MSMARCO_PASSAGES)
            retrieved, relevant = docs[:, :MSMARCO_DEPTH], docs[:, MSMARCO_DEPTH:]
            for t in range(hi - lo):
                q = int(qids[lo + t])
                for k in range(int(n_rel[lo + t])):
                    passage = int(relevant[t, k])
                    qrels_lines.append(f"{q} 0 {passage} 1\n")
                    if rng.random() < 0.8:  # the run finds it, usually near the top
                        retrieved[t, min(int(rng.geometric(0.05)) - 1, MSMARCO_DEPTH - 1)] = passage
            scores = 25.0 - np.cumsum(rng.exponential(0.012, size=retrieved.shape), axis=1)
            text = [f"{s:.6f}" for s in scores.ravel().tolist()]
            ranks = np.tile(np.arange(1, MSMARCO_DEPTH + 1), hi - lo).tolist()
            topics = np.repeat(qids[lo:hi], MSMARCO_DEPTH).tolist()
            run_file.write("".join(f"{q} Q0 {d} {k} {s} msmarco-bm25\n"
                                   for q, d, k, s in zip(topics, retrieved.ravel().tolist(), ranks, text)))
            lines += retrieved.size
    (folder / "qrels.txt").write_text("".join(qrels_lines))
    with run_path.open("rb") as src, gzip.open(run_path.with_suffix(".txt.gz"), "wb", compresslevel=6) as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    took = time.perf_counter() - start
    print(f"msmarco: {MSMARCO_TOPICS} topics, {len(qrels_lines)} judgments, 1 run, {lines} run lines (+ gzip) "
          f"-> {folder} ({took:.1f} s)")


def _distinct_rows(rng: np.random.Generator, rows: int, width: int, universe: int) -> np.ndarray:
    """``rows`` x ``width`` integers below ``universe``, distinct within each row, in random order."""
    ids = rng.integers(0, universe, size=(rows, width), dtype=np.int64)
    while True:
        ordered = np.sort(ids, axis=1)
        dup = np.zeros(ids.shape, dtype=bool)
        dup[:, 1:] = ordered[:, 1:] == ordered[:, :-1]
        if not dup.any():
            return ids
        ordered[dup] = rng.integers(0, universe, size=int(dup.sum()), dtype=np.int64)
        ids = rng.permuted(ordered, axis=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--workloads", default="trec,wide,diversity,intents")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared real data (diversity workload)")
    args = ap.parse_args()
    names = set(args.workloads.split(","))
    generate(args.out, args.seed, names)
    if "diversity" in names:
        generate_diversity(args.out, args.seed, args.data)
    if "intents" in names:
        generate_intents(args.out, args.seed)
    if "msmarco" in names:
        generate_msmarco(args.out, args.seed)


if __name__ == "__main__":
    main()
