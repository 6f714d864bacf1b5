"""Preference judgments and user profiles (spec 6.1, 6.6) as flat arrays with interned ids.

A judgment is ``(topic, user, top, left, right, winner)``: a *simple pairwise* preference when there is no top
document (``top = -1``), a *conditional* one (a triplet) when the user read ``top`` first and then chose which of
``left`` and ``right`` they would like to see next. Which candidate is "left" carries no meaning for the measures
(utilities count wins and appearances); it is kept so a file reads back as it was written.

A user profile is a named set of intents of one topic (spec 6.6); the simulator (``evaluation.preference.simulate``)
turns profiles and per-intent judgments into preferences. Profiles of a topic keep their order of first appearance,
and so do the users of a topic in a judgments file: "profile i" of a topic is the i-th one (1-based) in that order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from evaluation.model import IntArray, Qrels
from evaluation.problems import RequestError

BoolArray = npt.NDArray[np.bool_]

#: the name the simulator gives the "TREC profile", a user interested in every intent of the topic (spec 6.6)
TREC_PROFILE = "TREC"


def _intern(values: Sequence[str]) -> tuple[tuple[str, ...], IntArray]:
    vocab = tuple(sorted(set(values)))
    index = {v: i for i, v in enumerate(vocab)}
    return vocab, np.array([index[v] for v in values], dtype=np.int64)


@dataclass(frozen=True, eq=False)
class PreferenceJudgments:
    """Pairwise and conditional preference judgments, one element per judgment (in file order).

    ``topics`` and ``users`` are sorted label vocabularies, ``docnos`` the sorted vocabulary of documents
    (``S`` bytes). ``top`` is -1 for a simple pairwise preference.
    """

    topics: tuple[str, ...]
    users: tuple[str, ...]
    docnos: np.ndarray
    topic: IntArray
    user: IntArray
    top: IntArray
    left: IntArray
    right: IntArray
    right_wins: BoolArray
    name: str = "<preference-judgments>"
    _memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return int(self.topic.size)

    @property
    def winner(self) -> IntArray:
        return np.where(self.right_wins, self.right, self.left)

    @property
    def loser(self) -> IntArray:
        return np.where(self.right_wins, self.left, self.right)

    @property
    def conditional(self) -> BoolArray:
        """Which judgments are conditional (have a top document)."""
        return self.top >= 0

    @classmethod
    def from_records(
        cls,
        records: Iterable[tuple[str, str, str | None, str, str, str]],
        name: str = "<preference-judgments>",
    ) -> PreferenceJudgments:
        """Judgments from ``(topic, user, top or None, left, right, winner)`` tuples; ``winner`` is ``left`` or
        ``right`` (RequestError otherwise, and for a document compared with itself or with its top)."""
        rows = list(records)
        for t, u, x, a, b, w in rows:
            if a == b:
                raise RequestError(f"topic {t}, user {u}: {a} is compared with itself")
            if w not in (a, b):
                raise RequestError(f"topic {t}, user {u}: winner {w} is neither {a} nor {b}")
            if x is not None and x in (a, b):
                raise RequestError(f"topic {t}, user {u}: the top document {x} is also a candidate")
        topics, topic = _intern([r[0] for r in rows])
        users, user = _intern([r[1] for r in rows])
        names = sorted({d for r in rows for d in (r[2], r[3], r[4]) if d is not None})
        doc_index = {d: i for i, d in enumerate(names)}
        docnos = np.array([d.encode() for d in names], dtype=bytes) if names else np.zeros(0, dtype="S1")
        top = np.array([-1 if r[2] is None else doc_index[r[2]] for r in rows], dtype=np.int64)
        left = np.array([doc_index[r[3]] for r in rows], dtype=np.int64)
        right = np.array([doc_index[r[4]] for r in rows], dtype=np.int64)
        right_wins = np.array([r[5] == r[4] for r in rows], dtype=bool)
        return cls(topics, users, docnos, topic, user, top, left, right, right_wins, name)

    def records(self) -> list[tuple[str, str, str | None, str, str, str]]:
        """The judgments as ``(topic, user, top or None, left, right, winner)`` tuples, in order."""
        names = [d.decode("utf-8", "replace") for d in self.docnos.tolist()]
        out: list[tuple[str, str, str | None, str, str, str]] = []
        for t, u, x, a, b, rw in zip(self.topic.tolist(), self.user.tolist(), self.top.tolist(),
                                     self.left.tolist(), self.right.tolist(), self.right_wins.tolist()):
            out.append((self.topics[t], self.users[u], None if x < 0 else names[x], names[a], names[b],
                        names[b] if rw else names[a]))
        return out

    def take(self, mask: BoolArray | IntArray) -> PreferenceJudgments:
        """The judgments selected by ``mask`` (vocabularies unchanged)."""
        return PreferenceJudgments(self.topics, self.users, self.docnos, self.topic[mask], self.user[mask],
                                   self.top[mask], self.left[mask], self.right[mask], self.right_wins[mask],
                                   self.name)

    def user_rank(self) -> IntArray:
        """For every judgment, the 1-based position of its user among the users of its topic, in order of first
        appearance (the "profile number" of spec 6.6 when each profile judged as one user)."""
        found = self._memo.get("user_rank")
        if found is None:
            n_users = max(1, len(self.users))
            keys, first, inverse = np.unique(self.topic * n_users + self.user, return_index=True,
                                             return_inverse=True)
            topic_of = keys // n_users
            order = np.lexsort((first, topic_of))  # by topic, then by first appearance
            sorted_topics = topic_of[order]
            ranks = np.empty(keys.size, dtype=np.int64)
            ranks[order] = np.arange(keys.size) - np.searchsorted(sorted_topics, sorted_topics, side="left") + 1
            found = ranks[inverse.ravel()]
            self._memo["user_rank"] = found
        result: IntArray = found
        return result

    def users_of(self, topic: str) -> tuple[str, ...]:
        """The users who judged ``topic``, in order of first appearance."""
        if topic not in self.topics:
            return ()
        t = self.topics.index(topic)
        seen: dict[str, None] = {}
        for u in self.user[self.topic == t].tolist():
            seen.setdefault(self.users[u], None)
        return tuple(seen)

    @staticmethod
    def merge(parts: Sequence[PreferenceJudgments], name: str = "<preference-judgments>") -> PreferenceJudgments:
        """The union of several sets of judgments (in the given order): the pooled judgments of spec 6.6."""
        return PreferenceJudgments.from_records((r for p in parts for r in p.records()), name)


@dataclass(frozen=True)
class Profile:
    """One user profile: its name and the intents (subtopics) it is interested in, in file order."""

    name: str
    intents: tuple[str, ...]


@dataclass(frozen=True)
class UserProfiles:
    """User profiles per topic, in order of first appearance (spec 6.6)."""

    topics: Mapping[str, tuple[Profile, ...]]
    name: str = "<user-profiles>"

    def for_topic(self, topic: str) -> tuple[Profile, ...]:
        return tuple(self.topics.get(topic, ()))

    def __len__(self) -> int:
        return sum(len(p) for p in self.topics.values())

    @classmethod
    def from_mapping(cls, profiles: Mapping[str, Mapping[str, Iterable[str]]],
                     name: str = "<user-profiles>") -> UserProfiles:
        """Profiles from ``{topic: {profile: intents}}`` (orders kept)."""
        return cls({t: tuple(Profile(p, tuple(dict.fromkeys(i))) for p, i in ps.items())
                    for t, ps in profiles.items()}, name)

    @classmethod
    def trec(cls, qrels: Qrels, topics: Sequence[str] | None = None) -> UserProfiles:
        """The "TREC profile" of every topic: one user interested in every intent the qrels list for it."""
        chosen = qrels.topics if topics is None else tuple(topics)
        out: dict[str, tuple[Profile, ...]] = {}
        for topic in chosen:
            t = qrels.topic_index.get(topic)
            if t is None:
                continue
            intents = np.unique(qrels.intent[qrels.topic == t])
            out[topic] = (Profile(TREC_PROFILE, tuple(qrels.intents[i] for i in intents.tolist())),)
        return cls(out, "<trec-profile>")
