"""The ``preferences`` prepared input of Prf and nPrf: the run's judged ranking, each retrieved document's docno,
and access to the utility estimates the measure's parameters select.

Utilities come from (first that applies):

1. ``profile=trec``: preferences simulated with the TREC profile (every intent of the topic) from the per-intent
   qrels -- no side input needed;
2. the ``preference_judgments`` side input (all users pooled, or the i-th user of each topic with ``profile=i``);
3. the ``user_profiles`` side input: preferences simulated from the per-intent qrels and the profiles (complete
   design of spec 6.7; pooled over the profiles, or profile i alone).

Estimates, simulations and greedy ideals do not depend on the run: they are kept in the evaluator's cache and
shared by every run (simulations per topic, with a generator derived from the seed and the topic).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.model import IntArray, Qrels
from evaluation.preference.judgments import PreferenceJudgments, UserProfiles
from evaluation.preference.simulate import TopicCounts, counts_table, simulate_topic_counts, topic_pool, topic_rng
from evaluation.preference.utilities import ProfileSelector, UtilityTable, estimate_utilities
from evaluation.problems import MeasureError

if TYPE_CHECKING:  # the side-input machinery imports the measures; only its types are needed here
    from evaluation.side_inputs import PrepareContext, SideInputs

NAME = "preferences"
JUDGMENTS = "preference_judgments"
PROFILES = "user_profiles"
_MISSING = (
    "Prf and nPrf need preference judgments (--preference-judgments FILE, or the collection's"
    " 'preference_judgments' file), or user profiles (--user-profiles FILE) to simulate preferences from the"
    " per-intent qrels, or profile=trec to simulate them with the TREC profile"
)


@dataclass(eq=False)
class PreferenceInputs:
    """What Prf and nPrf read for one run (see the module docstring)."""

    docs: JudgedRanking
    docnos: np.ndarray  # S bytes, aligned with docs
    qrels: Qrels
    side: SideInputs
    cache: dict[object, Any]
    _memo: dict[object, Any] = field(default_factory=dict, repr=False)

    def table(self, profile: ProfileSelector, min_app: int, seed: int) -> UtilityTable:
        """The utility estimates selected by the measure's parameters (built once per evaluator)."""
        if profile == "trec":
            return self._simulated(None, "all", min_app, seed)
        if JUDGMENTS in self.side:
            judgments = self.side.get(JUDGMENTS)
            assert isinstance(judgments, PreferenceJudgments)
            key = ("preference", "judgments", id(judgments), profile, min_app)
            if key not in self.cache:  # the judgments are kept with the table, so their id stays theirs
                self.cache[key] = (judgments, estimate_utilities(judgments, profile=profile, min_app=min_app))
            found: UtilityTable = self.cache[key][1]
            return found
        if PROFILES in self.side:
            profiles = self.side.get(PROFILES)
            assert isinstance(profiles, UserProfiles)
            return self._simulated(profiles, profile, min_app, seed)
        raise MeasureError(_MISSING)

    def _simulated(self, profiles: UserProfiles | None, profile: ProfileSelector, min_app: int,
                   seed: int) -> UtilityTable:
        topics = self.docs.topics
        source = "trec" if profiles is None else id(profiles)
        key = ("preference", "simulated-table", source, profile, min_app, seed, topics)
        if key not in self.cache:
            counts = [self._topic_counts(profiles, source, seed, t) for t in topics]
            self.cache[key] = (profiles, counts_table(counts, profile, min_app))
        found: UtilityTable = self.cache[key][1]
        return found

    def _topic_counts(self, profiles: UserProfiles | None, source: object, seed: int, topic: str) -> TopicCounts:
        key = ("preference", "simulated-topic", source, seed, topic)
        if key not in self.cache:
            if profiles is None:
                chosen = UserProfiles.trec(self.qrels, [topic]).for_topic(topic)
            else:
                chosen = profiles.for_topic(topic)
            counts = simulate_topic_counts(topic_pool(self.qrels, topic), chosen, topic_rng(seed, topic))
            self.cache[key] = (profiles, counts)
        found: TopicCounts = self.cache[key][1]
        return found

    def located(self, table: UtilityTable) -> tuple[IntArray, IntArray]:
        """The table topic of each evaluated topic (-1: none) and each retrieved document's topic-local index in
        the table (-1: no estimate), computed once per run and table."""
        key = ("located", id(table))
        if key not in self._memo:
            docs = self.docs
            table_topic = np.array([table.topic_index.get(t, -1) for t in docs.topics], dtype=np.int64)
            local = np.full(docs.rank.size, -1, dtype=np.int64)
            for e, t in enumerate(table_topic.tolist()):
                lo, hi = int(docs.offsets[e]), int(docs.offsets[e + 1])
                if t >= 0 and hi > lo:
                    local[lo:hi] = table.locate(t, self.docnos[lo:hi])
            self._memo[key] = (table, table_topic, local)
        _, table_topic, local = self._memo[key]
        return table_topic, local

    def memo(self, key: object, make: Any) -> Any:
        """Per-run cache (rank utilities shared by Prf and nPrf)."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]


def build_preferences(ctx: PrepareContext) -> PreferenceInputs:
    return PreferenceInputs(ctx.docs, ctx.docnos(), ctx.qrels, ctx.side, ctx.cache)
