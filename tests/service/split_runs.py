"""Seeded runs for the split-job tests: many small, different runs for one set of judgments (some with an
unjudged topic or a missing judged one, so that warnings are merged too), written as files for the offline CLI."""

from __future__ import annotations

import random
from pathlib import Path


def judged_docs(qrels: bytes) -> dict[str, list[str]]:
    """Each topic's judged documents, in file order."""
    docs: dict[str, list[str]] = {}
    for line in qrels.decode().splitlines():
        fields = line.split()
        if len(fields) >= 4:
            docs.setdefault(fields[0], []).append(fields[2])
    return docs


def make_run(qrels: bytes, seed: int, depth: int = 60) -> bytes:
    """A run of ``depth`` documents per topic, scores not in rank order, ties now and then; seed 3 mod 7 adds an
    unjudged topic and seed 5 mod 7 leaves a judged topic out (each gives the run a warning)."""
    rng = random.Random(seed)
    topics = judged_docs(qrels)
    lines = []
    names = sorted(topics)
    if seed % 7 == 5:
        names = names[1:]
    if seed % 7 == 3:
        topics["999"] = [f"X-{i}" for i in range(depth)]
        names.append("999")
    for topic in names:
        pool = topics[topic] + [f"NOISE-{topic}-{i}" for i in range(depth)]
        for rank, doc in enumerate(rng.sample(pool, min(depth, len(pool))), start=1):
            score = round(rng.random(), 2) if rng.random() < 0.2 else rng.random()
            lines.append(f"{topic} Q0 {doc} {rank} {score:.6f} tag{seed % 3}")
    rng.shuffle(lines)
    return ("\n".join(lines) + "\n").encode()


def write_runs(qrels: bytes, directory: Path, n: int) -> list[Path]:
    """``n`` run files ``run-00.txt`` ... in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        path = directory / f"run-{i:02d}.txt"
        path.write_bytes(make_run(qrels, i))
        paths.append(path)
    return paths
