"""Robustness of system rankings to incomplete preference judgments (spec 8.8, CHANDAR13) as a meta-evaluation
method: the curve recomputed by hand from the library's pieces (``simulate_triplets``, the measures on the sampled
judgments, ``robustness_curve``), its generators, the profile sources and the refusals."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.evaluator import evaluate
from evaluation.formats import Blob, parse_qrels, parse_run
from evaluation.meta import ScoreTable, kendall_tau
from evaluation.meta.methods import run_method
from evaluation.meta.robustness import robustness, sampled_measures
from evaluation.model import Qrels, Run
from evaluation.preference import UserProfiles, simulate_triplets
from evaluation.side_inputs import SideInputs
from evaluation.sources import Sources

TOPICS = ("t1", "t2", "t3")


def _qrels() -> Qrels:
    rng = np.random.default_rng(5)
    lines = [f"{t} {i} d{d:02d} {int(rng.random() < 0.3)}" for t in TOPICS for i in ("a", "b", "c") for d in range(20)]
    return parse_qrels(Blob.from_bytes(("\n".join(lines) + "\n").encode(), "qrels")).unwrap()


def _run(name: str, seed: int) -> Run:
    rng = np.random.default_rng(seed)
    lines = [f"{t} Q0 d{d:02d} {r + 1} {20 - r} {name}" for t in TOPICS for r, d in enumerate(rng.permutation(20))]
    return parse_run(Blob.from_bytes(("\n".join(lines) + "\n").encode(), name)).unwrap()


PROFILES = UserProfiles.from_mapping({t: {"u1": ["a", "b"], "u2": ["c"]} for t in TOPICS})


def _sources(side: dict[str, object] | None = None) -> Sources:
    return Sources(_qrels(), tuple(_run(f"r{i}", i) for i in range(5)), side=SideInputs(side or {}))


def _table(sources: Sources, measures: list[str]) -> ScoreTable:
    return ScoreTable.from_run_scores(sources.evaluate(measures))


def test_the_curve_is_the_mean_tau_of_rankings_on_sampled_triplets() -> None:
    sources = _sources({"user_profiles": PROFILES})
    measures = ["nPrf@10", "Prf(stop=rr)"]
    table = _table(sources, measures)
    found = robustness(table, sources, sizes=[3, 30], repetitions=4, seed=2)
    assert found.sampled_from == {m: "user_profiles" for m in measures}
    reference = table.means()
    for i, m in enumerate(measures):
        for n in (3, 30):
            taus = []
            for r in range(4):
                judgments = simulate_triplets(sources.qrels, PROFILES, np.random.default_rng([2, n, r, 1]), n)
                scores = evaluate(sources.qrels, list(sources.runs), [m],
                                  side=SideInputs({"user_profiles": PROFILES, "preference_judgments": judgments}))
                means = np.array([s.values[m].mean() for s in scores])
                taus.append(kendall_tau(means, reference[i], "a"))
            assert found.tau[m][n] == pytest.approx(float(np.mean(taus)), abs=1e-12)
    again = robustness(table, sources, sizes=[30], repetitions=4, seed=2)  # a point does not depend on the others
    assert again.tau[measures[0]][30] == found.tau[measures[0]][30]


def test_trec_profile_measures_sample_the_trec_profile() -> None:
    sources = _sources()
    table = _table(sources, ["nPrf(profile=trec)@10"])
    found = robustness(table, sources, sizes=[40], repetitions=2, seed=0)
    assert found.sampled_from == {"nPrf(profile=trec)@10": "trec"}
    trec = UserProfiles.trec(sources.qrels)
    taus = []
    for r in range(2):
        judgments = simulate_triplets(sources.qrels, trec, np.random.default_rng([0, 40, r, 0]), 40)
        scores = evaluate(sources.qrels, list(sources.runs), ["nPrf@10"],
                          side=SideInputs({"preference_judgments": judgments}))
        taus.append(kendall_tau(np.array([s.values["nPrf@10"].mean() for s in scores]), table.means()[0], "a"))
    assert found.tau["nPrf(profile=trec)@10"][40] == pytest.approx(float(np.mean(taus)), abs=1e-12)


def test_the_document_and_its_refusals() -> None:
    sources = _sources({"user_profiles": PROFILES})
    table = _table(sources, ["nPrf@10", "nPrf(profile=trec)@10"])
    doc = run_method("robustness", table, {"sizes": [5, 5, 20], "repetitions": 2, "tau": "tau_b"}, sources=sources)
    assert doc["meta"] == {"method": "robustness", "measures": list(table.measures), "runs": 5, "topics": 3}
    assert doc["sizes"] == [5, 20] and doc["repetitions"] == 2 and doc["per_triplet"] == 5 and doc["seed"] == 0
    assert doc["tau"] == "tau_b" and doc["runs"] == list(table.runs)
    assert set(doc["robustness"]["nPrf@10"]) == {"5", "20"}
    assert all(v is None or -1 <= v <= 1 for c in doc["robustness"].values() for v in c.values())
    assert doc["sampled_from"] == {"nPrf@10": "user_profiles", "nPrf(profile=trec)@10": "trec"}
    assert doc == run_method("robustness", table, {"sizes": [5, 20], "repetitions": 2, "tau": "tau_b"},
                             sources=sources)
    with pytest.raises(ValueError, match="evaluates perturbed judgments and runs"):
        run_method("robustness", table)  # a results document cannot be perturbed
    with pytest.raises(ValueError, match="takes the preference measures Prf and nPrf, not AP"):
        sampled_measures(["nPrf@10", "AP"])


def test_one_run_gives_null() -> None:
    sources = Sources(_qrels(), (_run("r0", 0),), side=SideInputs({"user_profiles": PROFILES}))
    doc = run_method("robustness", _table(sources, ["nPrf@10"]), {"sizes": [5], "repetitions": 1}, sources=sources)
    assert doc["robustness"] == {"nPrf@10": {"5": None}}
