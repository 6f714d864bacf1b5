"""Hierarchies for all 50 TREC Web 2012 topics from synthesised fingerprints, and HD#-nDCG@20 of the four real
runs (spec section 4 on real qrels: 187 intents, 59,736 judgments).

The fingerprints are ``synthesise_fingerprints(qrels, default_rng(2012))`` (``evaluation.docsim``: documents
relevant to the same intent are similar); the pinned values are a regression guard for the whole chain
(synthesis, clustering, weights, measures) and change if the synthesis recipe does. The timing is not asserted
here (bench/RESULTS.md reports it: the 50 hierarchies take about 0.1 s)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from evaluation import Evaluator, read_qrels, read_run
from evaluation.docsim import synthesise_fingerprints
from evaluation.hierarchy import HierarchySettings, build_hierarchies, check_layers, from_json, to_json, topic_judgments
from evaluation.hierarchy.prepare import similarity_function
from evaluation.intent_ranking import intent_slots
from evaluation.model import Qrels, Run
from evaluation.side_inputs import SideInputs

RUNS = ("ql-results-cata-filtered.txt", "ql-results-cata.txt.gz", "ql-results-catb-filtered.txt",
        "ql-results-catb.txt.gz")
#: HDsharp_nDCG@20 (h=WI, delta=0.3, gamma=0.5; trec_eval ties), mean over the 50 topics
HDSHARP_NDCG_20 = (0.43083751282043087, 0.28914212597851036, 0.4252442101164023, 0.44022316993103344)


@pytest.fixture(scope="module")
def web2012(shared_file: Callable[..., Path]) -> tuple[Qrels, list[Run]]:
    qrels = read_qrels(shared_file("trec-web-2009-2014", "2012", "qrels-for-ndeval.txt"))
    runs = [read_run(shared_file("trec-web-2012-runs", "runs", name)) for name in RUNS]
    return qrels, runs


def test_hierarchies_for_all_50_topics(web2012: tuple[Qrels, list[Run]]) -> None:
    qrels, _ = web2012
    fp = synthesise_fingerprints(qrels, np.random.default_rng(2012))
    judged = topic_judgments(qrels, intent_slots(qrels))
    for delta in (0.3, 0.5, 0.7):
        for h in ("WI", "WD", "TL-WI"):
            built = build_hierarchies(judged, HierarchySettings(h=h, delta=delta), similarity_function(fp))
            assert len(built) == 50
            for tree in built.topics.values():
                assert not check_layers(tree)
                if h != "TL-WI":
                    intents = [n for n in tree.layers[0] if n.kind == "intent"]
                    assert len(intents) == len(judged[tree.topic].intents)
    deep = build_hierarchies(judged, HierarchySettings(delta=0.7), similarity_function(fp))
    assert max(t.height for t in deep.topics.values()) >= 4  # sub-intents do form below the official intents
    assert from_json(to_json(deep)).topics == deep.topics


def test_hdsharp_ndcg_of_the_four_runs(web2012: tuple[Qrels, list[Run]]) -> None:
    qrels, runs = web2012
    fp = synthesise_fingerprints(qrels, np.random.default_rng(2012))
    names = ["HDsharp_nDCG@20", "HDsharp_nDCG(delta=0)@20", "Dsharp_nDCG@20", "N_rec@20", "HD_nDCG@20"]
    evaluator = Evaluator.from_names(qrels, names, side=SideInputs({"fingerprints": fp}))
    for run, expected in zip(runs, HDSHARP_NDCG_20):
        result = evaluator.evaluate(run)
        assert len(result.topics) == 50
        assert result.mean("HDsharp_nDCG@20") == pytest.approx(expected, abs=1e-9)
        # delta = 0: the hierarchy is the official intents, HD#-nDCG is D#-nDCG (spec 4.9)
        np.testing.assert_allclose(result.values["HDsharp_nDCG(delta=0)@20"], result.values["Dsharp_nDCG@20"],
                                   atol=1e-12)
        for name in names:
            assert ((result.values[name] >= 0) & (result.values[name] <= 1 + 1e-12)).all(), name
