"""The preference simulator (spec 6.7): TV-PRF-SIM's rules, seeded coins, the complete design listed and counted
(identical for one seed), the sampled-triplet design and its pairwise copies, and per-topic generators."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.evaluator import Evaluator
from evaluation.formats import Blob, parse_qrels, parse_run
from evaluation.model import Qrels
from evaluation.preference import (
    PreferenceJudgments,
    UserProfiles,
    counts_table,
    estimate_utilities,
    nprf,
    simulate_counts,
    simulate_preferences,
    simulate_topic_counts,
    simulate_triplets,
    topic_pool,
    topic_rng,
)
from evaluation.preference.simulate import context_gains
from evaluation.side_inputs import SideInputs

# TV-PRF-SIM: S(p) = {a, b}, S(q) = {a}, S(r) = {c}, S(s) = {}
SIM_QRELS = "1 a p 1\n1 b p 1\n1 a q 1\n1 c r 1\n1 a s 0\n"
TREC = UserProfiles.from_mapping({"1": {"TREC": ["a", "b", "c"]}})
ONLY_A = UserProfiles.from_mapping({"1": {"A": ["a"]}})


def _qrels(text: str) -> Qrels:
    return parse_qrels(Blob.from_bytes(text.encode(), "qrels")).unwrap()


def _outcomes(judgments: PreferenceJudgments) -> dict[tuple[str | None, frozenset[str]], str]:
    """(top, {left, right}) -> winner for a single user's judgments."""
    out: dict[tuple[str | None, frozenset[str]], str] = {}
    for _, _, top, left, right, winner in judgments.records():
        out[top, frozenset((left, right))] = winner
    return out


def _winners(profiles: UserProfiles, top: str | None, a: str, b: str, seeds: range) -> set[str]:
    qrels = _qrels(SIM_QRELS)
    return {_outcomes(simulate_preferences(qrels, profiles, np.random.default_rng(s)))[top, frozenset((a, b))]
            for s in seeds}


def test_tv_prf_sim_trec_profile() -> None:
    seeds = range(40)
    assert _winners(TREC, None, "p", "q", seeds) == {"p"}  # 2 intents against 1
    assert _winners(TREC, None, "r", "s", seeds) == {"r"}
    assert _winners(TREC, None, "q", "r", seeds) == {"q", "r"}  # 1 against 1: a coin
    assert _winners(TREC, "p", "q", "r", seeds) == {"r"}  # after p, q adds nothing new and r adds c


def test_tv_prf_sim_profile_a() -> None:
    seeds = range(40)
    assert _winners(ONLY_A, None, "p", "q", seeds) == {"p", "q"}  # both have a: a coin
    assert _winners(ONLY_A, "p", "q", "r", seeds) == {"q", "r"}  # neither adds a profile intent after p: a coin
    assert _winners(ONLY_A, None, "q", "r", seeds) == {"q"}  # r has no profile intent


def test_gains_follow_the_profile_and_the_top_document() -> None:
    pool = topic_pool(_qrels(SIM_QRELS), "1")
    assert [d.decode() for d in pool.docnos] == ["p", "q", "r", "s"]
    gains = context_gains(pool, TREC.for_topic("1")[0])
    assert gains[0].tolist() == [2, 1, 1, 0]  # |S(d) & T_u|
    assert gains[1].tolist() == [-1, 0, 1, 0]  # after p: |(S(d) & T_u) - S(p)|; p itself is not a candidate
    assert gains[4].tolist() == [2, 1, 1, -1]  # after s (no intent) the pairwise gains


def test_complete_design_sizes_and_the_coins_are_seeded() -> None:
    qrels = _qrels(SIM_QRELS)
    judgments = simulate_preferences(qrels, TREC, np.random.default_rng(3))
    m = 4
    assert int((~judgments.conditional).sum()) == m * (m - 1) // 2
    assert int(judgments.conditional.sum()) == m * (m - 1) * (m - 2) // 2
    again = simulate_preferences(qrels, TREC, np.random.default_rng(3))
    assert judgments.records() == again.records()
    differ = [simulate_preferences(qrels, TREC, np.random.default_rng(s)).records() for s in range(10)]
    assert len({tuple(r) for r in differ}) > 1


def _random_qrels(seed: int, topics: int = 3) -> tuple[Qrels, UserProfiles]:
    rng = np.random.default_rng(seed)
    lines = []
    for t in range(topics):
        for d in range(int(rng.integers(3, 22))):
            for i in range(4):
                lines.append(f"t{t} s{i} d{d:02d} {int(rng.random() < 0.3)}")
    profiles = UserProfiles.from_mapping({f"t{t}": {"u1": ["s0", "s1"], "u2": ["s2"], "u3": ["s3", "s0"]}
                                          for t in range(topics)})
    return _qrels("\n".join(lines) + "\n"), profiles


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_listing_and_counting_the_complete_design_agree(seed: int) -> None:
    qrels, profiles = _random_qrels(seed)
    listed = simulate_preferences(qrels, profiles, np.random.default_rng(seed))
    counted = simulate_counts(qrels, profiles, np.random.default_rng(seed))
    for profile in ("all", 1, 2, 3):
        a, b = counted.table(profile), estimate_utilities(listed, profile=profile)
        assert np.array_equal(a.docnos, b.docnos) and np.array_equal(a.doc_offsets, b.doc_offsets)
        assert np.array_equal(a.unconditional, b.unconditional)
        assert np.array_equal(a.conditional, b.conditional, equal_nan=True)


def test_every_comparison_has_one_winner() -> None:
    """Wins of a context add up to its number of pairs (a coin gives exactly one of two tied documents a win)."""
    qrels, profiles = _random_qrels(7, topics=1)
    counts = simulate_counts(qrels, profiles, np.random.default_rng(0)).topics[0]
    m = counts.pool.size
    assert (counts.pair_wins.sum(axis=1) == m * (m - 1) // 2).all()
    assert (counts.cond_wins.sum(axis=2) == (m - 1) * (m - 2) // 2).all()
    assert (np.diagonal(counts.cond_wins, axis1=1, axis2=2) == 0).all()


def test_coins_are_fair() -> None:
    """Documents relevant to nothing tie with each other everywhere: each wins half its coins on average."""
    lines = [f"1 x n{d:03d} 0" for d in range(60)]
    qrels = _qrels("\n".join(lines) + "\n")
    counts = simulate_topic_counts(topic_pool(qrels, "1"), TREC.for_topic("1"), np.random.default_rng(11))
    share = counts.cond_wins.sum() / (60 * 59 * 58 / 2 * 2)
    assert share == pytest.approx(0.5, abs=1e-12)  # by construction, every tie is won by one side
    pair = counts.pair_wins[0] / 59
    assert abs(pair.mean() - 0.5) < 1e-12 and 0.2 < pair.min() <= pair.max() < 0.8
    per_top = counts.cond_wins[0] / 58  # after each top: win ratios spread around 1/2
    off_diagonal = per_top[~np.eye(60, dtype=bool)]
    assert abs(off_diagonal.mean() - 0.5) < 1e-12 and off_diagonal.std() > 0.03


def test_sampled_triplets_design() -> None:
    qrels, profiles = _random_qrels(5)
    n = 200
    judgments = simulate_triplets(qrels, profiles, np.random.default_rng(2), n)
    records = judgments.records()
    conditional = [r for r in records if r[2] is not None]
    pairwise = [r for r in records if r[2] is None]
    assert len(conditional) == 5 * n * 3  # 5 profiles per triplet, 3 topics
    pool = {t: topic_pool(qrels, t) for t in qrels.topics}
    intents = {p.name: set(p.intents) for t in qrels.topics for p in profiles.for_topic(t)}

    def relevant(topic: str, doc: str) -> set[str]:
        tp = pool[topic]
        row = [d.decode() for d in tp.docnos].index(doc)
        return {tp.intents[i] for i in np.flatnonzero(tp.relevant[row]).tolist()}

    copies = 0
    for topic, user, top, left, right, winner in conditional:
        assert len({top, left, right}) == 3
        assert top is not None
        mine = intents[user]
        gain = {d: len((relevant(topic, d) & mine) - relevant(topic, top)) for d in (left, right)}
        if gain[left] != gain[right]:
            assert winner == max(gain, key=lambda d: gain[d])
        copies += not (relevant(topic, top) & mine)  # C-PRF-6: also counted as a pairwise judgment
    assert len(pairwise) == copies > 0
    again = simulate_triplets(qrels, profiles, np.random.default_rng(2), n)
    assert again.records() == records


def test_simulated_measure_values_do_not_depend_on_other_topics() -> None:
    qrels, profiles = _random_qrels(9)
    run_text = "".join(f"{t} Q0 d{d:02d} {d} {30 - d} r\n" for t in ("t0", "t1", "t2") for d in range(0, 20, 2))
    run = parse_run(Blob.from_bytes(run_text.encode(), "run")).unwrap()
    names = ["nPrf@5", "Prf(stop=rr)", "nPrf(F=min,profile=trec)@10"]
    side = SideInputs({"user_profiles": profiles})
    full = Evaluator.from_names(qrels, names, side=side).evaluate(run)
    one = parse_run(Blob.from_bytes("".join(line + "\n" for line in run_text.splitlines()
                                            if line.startswith("t1 ")).encode(), "run")).unwrap()
    alone = Evaluator.from_names(qrels, names, side=side).evaluate(one)
    for name in names:
        assert alone.per_topic(name)["t1"] == full.per_topic(name)["t1"]
    # the measures' simulation is the library's, topic by topic with topic_rng(seed, topic)
    counts = [simulate_topic_counts(topic_pool(qrels, t), profiles.for_topic(t), topic_rng(0, t))
              for t in qrels.topics]
    table = counts_table(counts)
    ranking = {t: [f"d{d:02d}" for d in range(0, 20, 2)] for t in qrels.topics}
    assert nprf(table, ranking, cutoff=5) == pytest.approx(full.per_topic("nPrf@5"), abs=1e-15)


def test_pools_of_fewer_than_three_documents() -> None:
    qrels = _qrels("1 a x 1\n1 a y 0\n2 a z 1\n")
    profiles = UserProfiles.trec(qrels)
    listed = simulate_preferences(qrels, profiles, np.random.default_rng(0))
    assert [r[3:] for r in listed.records()] == [("x", "y", "x")]  # one pair, no conditional judgment
    table = simulate_counts(qrels, profiles, np.random.default_rng(0)).table()
    assert table.utility("1", "x") == 1.0 and table.utility("1", "y") == 0.0 and table.utility("2", "z") == 0.0
    assert simulate_triplets(qrels, profiles, np.random.default_rng(0), 10).records() == []
