"""S_sim and D_sim (spec 5): TV-SIM-1, a literal reference on random inputs, edge cases, the side inputs and the
CLI path (``--fingerprints FILE``)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evalserve.cli.main import main
from evaluation.docsim import DocumentTexts, DocumentVectors, simhash, similarity
from evaluation.evaluator import Evaluator
from evaluation.formats import Blob, parse_qrels, parse_run
from evaluation.measures.registry import default_registry
from evaluation.measures.similarity.s_sim import _all_pairs_weight
from evaluation.model import Qrels, Run
from evaluation.problems import MeasureError
from evaluation.side_inputs import SideInputs

# TV-SIM-1 (spec 5): the fingerprints of TV-HIER-BUILD-1 plus the non-relevant dx, f = 8
FINGERPRINTS = {"d1": 0b00111111, "d2": 0b01110010, "d3": 0b00011111, "d4": 0b11001011, "d5": 0b00011001,
                "d6": 0b01110001, "dx": 0b10101010}
QRELS = "1 0 d1 1\n1 0 d2 2\n1 0 d3 1\n1 0 d4 1\n1 0 d5 2\n1 0 d6 1\n"
RUN = "1 Q0 d1 1 5 t\n1 Q0 dx 2 4 t\n1 Q0 d3 3 3 t\n1 Q0 d2 4 2 t\n1 Q0 d5 5 1 t\n"
TV_SIM_1 = {
    "nDCG@5": 0.684602,
    "S_sim@5": 0.331250,
    "D_sim@5": 0.676676,
    "S_sim(variant=RP)@5": 0.675000,
    "D_sim(variant=RP)@5": 0.504801,
    "S_sim(variant=NA)@5": 0.350000,
    "D_sim(variant=NA)@5": 0.667301,
    "S_sim(variant=NP)@5": 0.541667,
    "D_sim(variant=NP)@5": 0.571468,
}


def _qrels(text: str) -> Qrels:
    return parse_qrels(Blob.from_bytes(text.encode(), "qrels")).unwrap()


def _run(text: str) -> Run:
    return parse_run(Blob.from_bytes(text.encode(), "run")).unwrap()


def _vectors(values: dict[str, int], bits: int = 8) -> DocumentVectors:
    return DocumentVectors.build(list(values), list(values.values()), bits)


def _scores(qrels: Qrels, run: Run, names: list[str], side: dict[str, Any], **kw: Any) -> dict[str, np.ndarray]:
    return Evaluator.from_names(qrels, names, side=SideInputs(side), **kw).evaluate(run).values


def test_tv_sim_1() -> None:
    got = _scores(_qrels(QRELS), _run(RUN), list(TV_SIM_1), {"fingerprints": _vectors(FINGERPRINTS)})
    for name, expected in TV_SIM_1.items():
        assert got[name][0] == pytest.approx(expected, abs=1e-6), name


def test_tv_sim_1_pieces() -> None:
    # rank weights of the unordered pairs of 5 positions sum to 4.0; unweighted there are 10 pairs
    assert _all_pairs_weight(np.array([5.0]), 5.0, True)[0] == pytest.approx(4.0, abs=1e-12)
    assert _all_pairs_weight(np.array([5.0]), 5.0, False)[0] == 10.0
    fp = _vectors(FINGERPRINTS)
    sims = fp.pairwise(fp.lookup(["d1", "d3", "d2", "d5"]))  # relevant ranks 1, 3, 4, 5
    weights = {(1, 3): 0.6, (1, 4): 0.5, (1, 5): 0.4, (3, 4): 0.3, (3, 5): 0.2, (4, 5): 0.1}
    pos = {1: 0, 3: 1, 4: 2, 5: 3}
    assert sum(w * sims[pos[i], pos[j]] for (i, j), w in weights.items()) == pytest.approx(1.325, abs=1e-12)


def _reference(grades: list[int], fps: list[int | None], k: int, variant: str, bits: int) -> float:
    """Spec 5 read literally: ordered pairs i != j of positions 1..min(K, n)."""
    n = min(k, len(grades))
    rel = [g >= 1 for g in grades[:n]]

    def sim(i: int, j: int) -> float:
        a, b = fps[i], fps[j]
        return 0.0 if a is None or b is None else float(similarity(a, b, bits))

    def weight(i: int, j: int) -> float:
        return (k - (i + 1 + j + 1) / 2) / k if variant[0] == "R" else 1.0

    if variant[1] == "A":
        pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
    else:
        ranks = [i for i in range(n) if rel[i]]
        pairs = list(itertools.pairwise(ranks))
    den = sum(weight(i, j) for i, j in pairs)
    num = sum(weight(i, j) * rel[i] * rel[j] * sim(i, j) for i, j in pairs)
    return num / den if den else 0.0


def _random_case(seed: int) -> tuple[str, str, DocumentVectors, dict[str, list[tuple[int, int | None]]]]:
    rng = np.random.default_rng(seed)
    bits = int(rng.choice([8, 16, 64]))
    qrels, run, values = [], [], {}
    per_topic: dict[str, list[tuple[int, int | None]]] = {}
    for t in range(1, 6):
        n = int(rng.integers(0, 30))
        ranked = []
        for d in range(n):
            docno = f"t{t}d{d:02d}"
            grade = int(rng.choice([0, 0, 1, 2, -2]))
            judged = rng.random() < 0.8
            if judged:
                qrels.append(f"{t} 0 {docno} {grade}")
            if rng.random() < 0.85:
                values[docno] = int(rng.integers(0, 2**bits - 1, dtype=np.uint64, endpoint=True))
            run.append(f"{t} Q0 {docno} {d + 1} {100 - d} r")
            ranked.append((grade if judged else 0, values.get(docno)))
        qrels.append(f"{t} 0 t{t}extra 1")  # a relevant document the run misses
        if n:
            per_topic[str(t)] = ranked
    vectors = DocumentVectors.build(list(values), list(values.values()), bits)
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n", vectors, per_topic


@pytest.mark.parametrize("seed", range(8))
def test_matches_the_literal_definition(seed: int) -> None:
    qrels, run, vectors, per_topic = _random_case(seed)
    names = [f"{m}(variant={v})@{k}" for m in ("S_sim", "D_sim") for v in ("RA", "RP", "NA", "NP")
             for k in (1, 2, 5, 20, 40)]
    got = Evaluator.from_names(_qrels(qrels), [*names, "nDCG@1", "nDCG@2", "nDCG@5", "nDCG@20", "nDCG@40"],
                               side=SideInputs({"fingerprints": vectors})).evaluate(_run(run))
    for name in names:
        measure = default_registry().parse(name)
        k, variant = measure.cutoff, measure.params["variant"]
        assert k is not None
        for t, value in got.per_topic(measure.name).items():
            grades = [g for g, _ in per_topic[t]]
            expected = _reference(grades, [f for _, f in per_topic[t]], k, variant, vectors.bits)
            if measure.definition.name == "D_sim":
                expected = (got.per_topic(f"nDCG@{k}")[t] + 1 - expected) / 2
            assert value == pytest.approx(expected, abs=1e-12), (name, t)
            assert 0.0 <= value <= 1.0


def test_edge_cases() -> None:
    qrels = _qrels("1 0 a 1\n1 0 b 0\n2 0 c 0\n3 0 e 1\n3 0 f 1\n")
    vectors = _vectors({"a": 1, "b": 1, "c": 1, "e": 3, "f": 3})
    run = _run("1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n2 Q0 c 1 1 r\n")
    names = ["S_sim@10", "S_sim(variant=NP)@10", "D_sim@10", "D_sim(variant=RP)@10"]
    got = Evaluator.from_names(qrels, names, side=SideInputs({"fingerprints": vectors}),
                               topics="complete").evaluate(run)
    # topic 1: one relevant document -> S = 0, D = (nDCG + 1)/2 = 1; topic 2: no relevant document -> 0;
    # topic 3: not in the run (empty ranking) -> 0
    assert got.per_topic("S_sim@10") == {"1": 0.0, "2": 0.0, "3": 0.0}
    assert got.per_topic("S_sim(variant=NP)@10") == {"1": 0.0, "2": 0.0, "3": 0.0}
    assert got.per_topic("D_sim@10") == {"1": 1.0, "2": 0.0, "3": 0.0}
    assert got.per_topic("D_sim(variant=RP)@10") == {"1": 1.0, "2": 0.0, "3": 0.0}


def test_identical_fingerprints_are_maximally_redundant_and_missing_ones_count_zero() -> None:
    qrels = _qrels("1 0 a 1\n1 0 b 1\n1 0 c 1\n")
    run = _run("1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 c 1 1 r\n")
    same = _scores(qrels, run, ["S_sim(variant=NA)@3", "S_sim(variant=NP)@3", "S_sim@3"],
                   {"fingerprints": _vectors({"a": 7, "b": 7, "c": 7})})
    assert same["S_sim(variant=NA)@3"][0] == 1.0 and same["S_sim(variant=NP)@3"][0] == 1.0
    assert same["S_sim@3"][0] == pytest.approx(1.0)  # every position relevant: the weights cancel
    missing = _scores(qrels, run, ["S_sim(variant=NA)@3"], {"fingerprints": _vectors({"a": 7, "b": 7})})
    assert missing["S_sim(variant=NA)@3"][0] == pytest.approx(1 / 3)  # only (a, b) of three pairs counts


def test_rel_threshold_and_metric_choice() -> None:
    got = _scores(_qrels(QRELS), _run(RUN), ["S_sim(variant=NA,rel=2)@5", "D_sim(M=Q)@5", "Q@5", "ERR@5",
                                             "D_sim(M=ERR,variant=NP)@5"],
                  {"fingerprints": _vectors(FINGERPRINTS)})
    # rel=2: only d2 and d5 (ranks 4, 5) count: sim .375, one of 10 pairs
    assert got["S_sim(variant=NA,rel=2)@5"][0] == pytest.approx(0.0375, abs=1e-12)
    assert got["D_sim(M=Q)@5"][0] == pytest.approx((got["Q@5"][0] + 1 - 0.33125) / 2, abs=1e-12)
    assert got["D_sim(M=ERR,variant=NP)@5"][0] == pytest.approx((got["ERR@5"][0] + 1 - 0.541667) / 2, abs=1e-6)


def test_names() -> None:
    registry = default_registry()
    assert registry.parse("D_sim(M=nDCG,variant=RA)@20").name == "D_sim@20"
    assert registry.parse("D_sim(variant=NP,M=ERR)@10").name == "D_sim(M=ERR,variant=NP)@10"
    assert registry.parse("S_sim(variant=RP)@20").name == "S_sim(variant=RP)@20"
    with pytest.raises(MeasureError, match="needs a cutoff"):
        registry.parse("S_sim")
    with pytest.raises(MeasureError, match="variant"):
        registry.parse("S_sim(variant=XY)@5")
    assert registry.definition("S_sim").family == "similarity"


def test_texts_stand_in_for_fingerprints() -> None:
    qrels = _qrels("1 0 a 1\n1 0 b 1\n1 0 c 1\n")
    run = _run("1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 c 1 1 r\n")
    texts = DocumentTexts.build([("a", "red apples and green pears"), ("b", "red apples and green pears"),
                                 ("c", "a completely different document about trains")])
    from_texts = _scores(qrels, run, ["S_sim(variant=NA)@3"], {"doc_texts": texts})
    fps = simhash(texts.texts)
    direct = _scores(qrels, run, ["S_sim(variant=NA)@3"],
                     {"fingerprints": DocumentVectors.build(["a", "b", "c"], fps, 64)})
    assert from_texts["S_sim(variant=NA)@3"][0] == direct["S_sim(variant=NA)@3"][0]
    expected = (1.0 + 2 * float(similarity(fps[0], fps[2]))) / 3
    assert from_texts["S_sim(variant=NA)@3"][0] == pytest.approx(expected)


def test_missing_side_input_names_the_option() -> None:
    with pytest.raises(MeasureError, match=r"needs fingerprints \(--fingerprints FILE"):
        Evaluator.from_names(_qrels(QRELS), ["S_sim@5"]).evaluate(_run(RUN))


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "r.run").write_text(RUN)
    lines = ["#bits=8", *(f"{d} 0b{v:08b}" for d, v in FINGERPRINTS.items())]
    (tmp_path / "fp.txt").write_text("\n".join(lines) + "\n")
    code = main(["evaluate", "--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.run"),
                 "--fingerprints", str(tmp_path / "fp.txt"), "-m", "S_sim@10", "D_sim(variant=NP)@5", "-q"])
    out, _ = capsys.readouterr()
    assert code == 0
    runs = json.loads(out)["runs"]["r.run"]
    # K = 10 with 5 retrieved: pairs only among the 5 available positions, weights (10 - (i+j)/2)/10
    w = {(1, 3): 0.8, (1, 4): 0.75, (1, 5): 0.7, (3, 4): 0.65, (3, 5): 0.6, (4, 5): 0.55}
    s = {(1, 3): 0.875, (1, 4): 0.5, (1, 5): 0.625, (3, 4): 0.375, (3, 5): 0.75, (4, 5): 0.375}
    all_pairs = sum((10 - (i + j) / 2) / 10 for i in range(1, 6) for j in range(i + 1, 6))
    assert runs["S_sim@10"]["mean"] == pytest.approx(sum(w[p] * s[p] for p in w) / all_pairs, abs=1e-12)
    assert runs["D_sim(variant=NP)@5"]["mean"] == pytest.approx(0.571468, abs=1e-6)
    code = main(["evaluate", "--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.run"),
                 "-m", "S_sim@10"])
    _, err = capsys.readouterr()
    assert code == 2 and "--fingerprints FILE" in err
    (tmp_path / "bad.txt").write_text("d1 xyz\n")
    code = main(["evaluate", "--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.run"),
                 "--fingerprints", str(tmp_path / "bad.txt"), "-m", "S_sim@10"])
    _, err = capsys.readouterr()
    assert code == 2 and "bad.txt:1:4: error:" in err and "[fingerprint-not-hex]" in err
