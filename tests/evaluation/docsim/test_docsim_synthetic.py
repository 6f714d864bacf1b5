"""synthesise_fingerprints: seeded, covers every judged document, same-intent documents are similar."""

from __future__ import annotations

import numpy as np

from evaluation.docsim import synthesise_fingerprints
from evaluation.formats import Blob, parse_qrels


def _qrels() -> object:
    lines = []
    for topic in ("1", "2"):
        for intent in ("1", "2"):
            for d in range(12):
                lines.append(f"{topic} {intent} {topic}-{intent}-{d:02d} 1")
        lines.append(f"{topic} 1 {topic}-both 1")
        lines.append(f"{topic} 2 {topic}-both 2")
        lines.append(f"{topic} 1 {topic}-junk 0")
        lines.append(f"{topic} 2 {topic}-junk 0")
    return parse_qrels(Blob.from_bytes("\n".join(lines).encode() + b"\n", "q")).unwrap()


def test_seeded_and_complete() -> None:
    q = _qrels()
    a = synthesise_fingerprints(q, np.random.default_rng(7), docnos=["unjudged"])  # type: ignore[arg-type]
    b = synthesise_fingerprints(q, np.random.default_rng(7), docnos=["unjudged"])  # type: ignore[arg-type]
    c = synthesise_fingerprints(q, np.random.default_rng(8), docnos=["unjudged"])  # type: ignore[arg-type]
    assert a.fingerprints.tolist() == b.fingerprints.tolist()
    assert a.fingerprints.tolist() != c.fingerprints.tolist()
    assert len(a) == 2 * (2 * 12 + 2) + 1
    assert (a.lookup(["1-junk", "2-both", "unjudged"]) >= 0).all()


def test_same_intent_documents_are_more_similar() -> None:
    q = _qrels()
    v = synthesise_fingerprints(q, np.random.default_rng(1), subintents=2)  # type: ignore[arg-type]
    groups = [[f"{t}-{i}-{d:02d}" for d in range(12)] for t in ("1", "2") for i in ("1", "2")]
    within = []
    for g in groups:
        m = v.pairwise(v.lookup(g))
        within.append(m[np.triu_indices(len(g), 1)].mean())
    across = v.pairwise(v.lookup(groups[0] + groups[1]))[:12, 12:].mean()
    assert min(within) > 0.65 and abs(across - 0.5) < 0.1
    # a document relevant to both intents is between the two groups
    both = v.pairwise(v.lookup(["1-both", *groups[0], *groups[1]]))[0]
    assert both[1:13].mean() > across and both[13:].mean() > across
    junk = v.pairwise(v.lookup(["1-junk", *groups[0]]))[0, 1:].mean()
    assert abs(junk - 0.5) < 0.1


def test_noise_free_and_small_widths() -> None:
    q = _qrels()
    v = synthesise_fingerprints(q, np.random.default_rng(3), bits=16, subintents=1, intent_noise=0.0,
                                doc_noise=0.0)  # type: ignore[arg-type]
    assert v.bits == 16 and int(v.fingerprints.max()) < 2**16
    same = v.pairwise(v.lookup([f"1-1-{d:02d}" for d in range(12)]))
    assert (same == 1.0).all()
