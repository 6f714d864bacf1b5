"""Prf and nPrf (spec 6.5): expected utility over the stopping distribution, and its ratio to the greedy ideal.

``Prf@K = sum_{k=1}^{min(K,n)} P(k) sum_{i=1}^{k} U(d_i | d_1 .. d_{i-1})`` and ``nPrf@K = Prf@K / I_Prf@K``
(0 when ``I_Prf@K = 0``), ``I_Prf@K`` being Prf@K of the greedy ideal ranking (``evaluation.preference.ideal``;
its length is the number of documents with an estimate, so ``n`` there is that number).

``score_segments`` is the vectorised core (all rankings of all topics at once) that the measures call; ``prf``,
``nprf`` and ``evaluate_profiles`` take rankings as ``{topic: [docno, ...]}`` for use as a library: per-profile
and pooled evaluation of spec 6.6.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.model import FloatArray, IntArray
from evaluation.preference.ideal import greedy_ideal
from evaluation.preference.judgments import PreferenceJudgments
from evaluation.preference.stopping import DEFAULT_THETA, rank_weights
from evaluation.preference.utilities import UtilityTable, estimate_utilities, rank_utilities


def _positions(offsets: IntArray) -> IntArray:
    total = int(offsets[-1]) if offsets.size else 0
    return np.arange(total, dtype=np.int64) - np.repeat(offsets[:-1], np.diff(offsets)) + 1


def score_segments(
    table: UtilityTable,
    table_topic: IntArray,
    offsets: IntArray,
    local: IntArray,
    lengths: IntArray,
    *,
    stop: str = "rbp",
    theta: float = DEFAULT_THETA,
    aggregate: str = "avg",
    cutoff: int | None = None,
) -> FloatArray:
    """Prf of several rankings: segments of ``local`` (each ranking's documents within the cutoff, as topic-local
    table indices, -1 = no estimate), scored against topic ``table_topic[r]`` of the table; ``lengths`` are the
    rankings' full lengths n (N = min(K, n) decides how much stopping mass counts)."""
    utility = rank_utilities(table, table_topic, offsets, local, aggregate)
    seg = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    depth = lengths if cutoff is None else np.minimum(lengths, cutoff)
    weights = rank_weights(stop, _positions(offsets), depth[seg], theta=theta, cutoff=cutoff)
    return np.bincount(seg, weights=utility * weights, minlength=offsets.size - 1).astype(np.float64)


def ideal_scores(
    table: UtilityTable,
    *,
    stop: str = "rbp",
    theta: float = DEFAULT_THETA,
    aggregate: str = "avg",
    cutoff: int | None = None,
) -> FloatArray:
    """I_Prf of every topic of the table (Prf of its greedy ideal ranking, cut at the cutoff)."""
    ideal = greedy_ideal(table, aggregate)
    pools = np.diff(ideal.offsets)
    depth = pools if cutoff is None else np.minimum(pools, cutoff)
    seg = np.repeat(np.arange(pools.size), pools)
    rank = _positions(ideal.offsets)
    weights = rank_weights(stop, rank, depth[seg], theta=theta, cutoff=cutoff)
    return np.bincount(seg, weights=ideal.utility * weights, minlength=pools.size).astype(np.float64)


def _layout(table: UtilityTable, rankings: Mapping[str, Sequence[str]],
            cutoff: int | None) -> tuple[list[str], IntArray, IntArray, IntArray, IntArray]:
    topics = list(rankings)
    table_topic = np.array([table.topic_index.get(t, -1) for t in topics], dtype=np.int64)
    lengths = np.array([len(rankings[t]) for t in topics], dtype=np.int64)
    kept = lengths if cutoff is None else np.minimum(lengths, cutoff)
    offsets = np.concatenate(([0], np.cumsum(kept))).astype(np.int64)
    local = np.full(int(offsets[-1]), -1, dtype=np.int64)
    for r, topic in enumerate(topics):
        t = int(table_topic[r])
        if t >= 0 and kept[r]:
            docs = np.array([d.encode() for d in rankings[topic][: int(kept[r])]], dtype=bytes)
            local[offsets[r] : offsets[r + 1]] = table.locate(t, docs)
    return topics, table_topic, offsets, local, lengths


def prf(table: UtilityTable, rankings: Mapping[str, Sequence[str]], *, stop: str = "rbp",
        theta: float = DEFAULT_THETA, F: str = "avg", cutoff: int | None = None) -> dict[str, float]:
    """Prf (at ``cutoff``) of each topic's ranking ``{topic: [docno, ...]}`` (best first, no repeats)."""
    topics, table_topic, offsets, local, lengths = _layout(table, rankings, cutoff)
    values = score_segments(table, table_topic, offsets, local, lengths, stop=stop, theta=theta, aggregate=F,
                            cutoff=cutoff)
    return dict(zip(topics, values.tolist()))


def nprf(table: UtilityTable, rankings: Mapping[str, Sequence[str]], *, stop: str = "rbp",
         theta: float = DEFAULT_THETA, F: str = "avg", cutoff: int | None = None) -> dict[str, float]:
    """nPrf: Prf over the Prf of the greedy ideal (0 when that is 0; not clamped at 1)."""
    topics, table_topic, offsets, local, lengths = _layout(table, rankings, cutoff)
    values = score_segments(table, table_topic, offsets, local, lengths, stop=stop, theta=theta, aggregate=F,
                            cutoff=cutoff)
    ideal = ideal_scores(table, stop=stop, theta=theta, aggregate=F, cutoff=cutoff)
    below = np.zeros(values.size)
    known = table_topic >= 0
    below[known] = ideal[table_topic[known]]
    out = np.zeros(values.size)
    np.divide(values, below, out=out, where=below != 0)
    return dict(zip(topics, out.tolist()))


@dataclass(frozen=True)
class ProfileScores:
    """Per-topic scores with the pooled estimates and with each profile's own (spec 6.6). ``profiles[i]`` holds
    the scores of profile i + 1 of every topic that has one."""

    pooled: dict[str, float]
    profiles: list[dict[str, float]]

    def profile_means(self) -> list[float]:
        """The mean over topics of each profile's scores (a topic without that profile does not count)."""
        return [float(np.mean(list(p.values()))) if p else 0.0 for p in self.profiles]


def evaluate_profiles(
    judgments: PreferenceJudgments,
    rankings: Mapping[str, Sequence[str]],
    *,
    normalised: bool = True,
    stop: str = "rbp",
    theta: float = DEFAULT_THETA,
    F: str = "avg",
    cutoff: int | None = None,
    min_app: int = 1,
) -> ProfileScores:
    """(n)Prf of the rankings with utilities from every judgment pooled, and from each user's judgments alone.

    The pooled value is *not* the mean of the per-profile values: it counts wins and appearances over everyone's
    judgments (spec 6.6). A user of a topic is a profile of that topic (the simulator names users after
    profiles); profile i of a topic is its i-th user in order of first appearance.
    """
    score = nprf if normalised else prf
    pooled = score(estimate_utilities(judgments, min_app=min_app), rankings, stop=stop, theta=theta, F=F,
                   cutoff=cutoff)
    most = int(judgments.user_rank().max(initial=0))
    profiles: list[dict[str, float]] = []
    for i in range(1, most + 1):
        table = estimate_utilities(judgments, profile=i, min_app=min_app)
        having = {t for t in table.topics if table.sizes[table.topic_index[t]] > 0}
        scores = score(table, {t: r for t, r in rankings.items() if t in having}, stop=stop, theta=theta, F=F,
                       cutoff=cutoff)
        profiles.append(scores)
    return ProfileScores(pooled, profiles)
