"""``GroupedHashIndex`` finds every stored (group, key) and nothing else, whatever the keys' collisions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation import judged_ranking
from evaluation.formats.keys import GroupedHashIndex
from evaluation.formats.qrels import read_qrels
from evaluation.formats.source import Blob
from evaluation.formats.trec_run import read_run

# (group, value) pairs; a value's key is its low bits only, so distinct values share keys and 32-bit tags
PAIRS = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 200)), max_size=120, unique=True)


@settings(max_examples=200, deadline=None)
@given(PAIRS, st.lists(st.tuples(st.integers(-1, 6), st.integers(0, 220)), max_size=120), st.sampled_from([3, 1 << 40]))
def test_find_matches_a_dict(stored: list[tuple[int, int]], probes: list[tuple[int, int]], spread: int) -> None:
    n_groups = 7
    group = np.array([g for g, _ in stored], dtype=np.int64)
    value = np.array([v for _, v in stored], dtype=np.int64)
    index = GroupedHashIndex(group, (value % 16 * spread).astype(np.uint64), n_groups)
    probe_group = np.array([g for g, _ in probes], dtype=np.int64)
    probe_value = np.array([v for _, v in probes], dtype=np.int64)

    def verify(rows: np.ndarray, entries: np.ndarray) -> np.ndarray:
        return np.asarray(value[entries] == probe_value[rows])

    found = index.find(probe_group, (probe_value % 16 * spread).astype(np.uint64), verify)
    where = {pair: i for i, pair in enumerate(stored)}
    assert found.tolist() == [where.get(p, -1) if p[0] >= 0 else -1 for p in probes]


@pytest.mark.parametrize("block", [1, 3, 1 << 16])
def test_join_is_the_same_in_any_block_size(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    qrels = read_qrels(Blob.from_bytes(b"1 0 a 1\n1 0 b 2\n2 0 a 0\n2 0 c 3\n3 0 zz -1\n"))
    run = read_run(Blob.from_bytes(b"".join(
        f"{t} Q0 {d} {r} {10 - r} x\n".encode() for t, docs in (("1", "abc"), ("2", "cab"), ("4", "a"))
        for r, d in enumerate(docs, 1)
    )))
    monkeypatch.setattr(judged_ranking, "_JOIN_BLOCK", block)
    found = judged_ranking._judgments_of(qrels, run)
    adhoc = qrels.adhoc
    entries = {(qrels.topics[int(t)], qrels.docnos[int(k - t * qrels.docnos.size)].decode()): i
               for i, (t, k) in enumerate(zip(adhoc.topic.tolist(), adhoc.key.tolist(), strict=True))}
    rows = zip(run.topic.tolist(), run.docno.tolist(), strict=True)
    want = [entries.get((run.topics[int(t)], d.decode()), -1) for t, d in rows]
    assert found.tolist() == want
