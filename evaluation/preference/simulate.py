"""Simulated preference judgments from per-intent qrels and user profiles (spec 6.7; Chandar & Carterette,
SIGIR 2013, Sec. 4).

``S(d)`` is the set of intents for which ``d`` is judged relevant (grade > 0); a profile ``u`` is a set ``T_u`` of
intents. A profile prefers, between ``a`` and ``b``,

- without a top document: the one with more profile intents, ``|S(.) & T_u|``;
- after reading a top document ``x``: the one with more profile intents that ``x`` does not have,
  ``|(S(.) & T_u) - S(x)|``;

and flips a fair coin on a tie (spec C-PRF-6 for the conditional case). The pool of a topic is every document of
its qrels (relevant or not).

Designs:

- **complete** (spec C-PRF-6): every unordered pair of pool documents once per profile, and every (top, unordered
  pair of other documents) once per profile -- about ``m^3 / 2`` judgments for a pool of ``m``.
  ``simulate_counts`` computes their win counts without listing them; ``simulate_preferences`` lists them (small
  pools). Both draw the same coins from the generator, so for one seed they agree exactly.
- **sampled triplets** (``simulate_triplets``, the incomplete design of spec 6.7 / 8.8): ``N`` random triplets of
  distinct pool documents per topic, the top chosen uniformly among the three, ``per_triplet`` (5) profiles drawn
  with replacement, each judging the other two after the top; a judgment whose top has none of the profile's
  intents is also recorded as a pairwise one (spec C-PRF-6).

Coins. In the complete design the ties of one comparison context (one profile, one top or none) form groups of
equally good candidates; the coins within a group are a uniformly random tournament, drawn as one random bit
matrix per group (bit ``[i, j]``, ``i < j`` in pool order: the earlier document wins). Groups are drawn bucketed by
size and in (context, position) order within a bucket, with ``numpy.random.Generator.bytes``. The measures derive
one generator per topic from the seed and the topic (``topic_rng``), so a topic's preferences do not depend on
which other topics are evaluated.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evaluation.model import IntArray, Qrels
from evaluation.preference.judgments import PreferenceJudgments, Profile, UserProfiles
from evaluation.preference.utilities import ProfileSelector, UtilityTable, table_from_counts
from evaluation.problems import OptionError, RequestError

#: bits drawn per block of same-size tie groups (bounds the memory of one step)
_BLOCK = 1 << 23
#: the largest number of judgments ``simulate_preferences`` lists (use ``simulate_counts`` beyond)
MAX_JUDGMENTS = 5_000_000


def topic_rng(seed: int, topic: str) -> np.random.Generator:
    """The generator the measures use for one topic: seeded by (seed, topic), independent of other topics."""
    digest = hashlib.sha256(topic.encode()).digest()
    return np.random.default_rng(np.random.SeedSequence([seed, int.from_bytes(digest[:8], "little")]))


@dataclass(frozen=True)
class TopicPool:
    """A topic's pool (qrels documents, docno ascending), its intents and who is relevant to what."""

    topic: str
    docnos: np.ndarray  # S bytes, ascending
    intents: tuple[str, ...]
    relevant: npt.NDArray[np.bool_]  # (documents, intents)

    @property
    def size(self) -> int:
        return int(self.docnos.size)

    def profile_mask(self, profile: Profile) -> npt.NDArray[np.bool_]:
        wanted = set(profile.intents)
        return np.array([i in wanted for i in self.intents], dtype=bool)


def topic_pool(qrels: Qrels, topic: str) -> TopicPool:
    """The pool of ``topic``: every document of its qrels, with S(d) over the topic's intents."""
    t = qrels.topic_index.get(topic)
    if t is None:
        return TopicPool(topic, np.zeros(0, dtype="S1"), (), np.zeros((0, 0), dtype=bool))
    rows = np.flatnonzero(qrels.topic == t)
    docs, doc_of = np.unique(qrels.doc[rows], return_inverse=True)
    intents, intent_of = np.unique(qrels.intent[rows], return_inverse=True)
    relevant = np.zeros((docs.size, intents.size), dtype=bool)
    relevant[doc_of.ravel(), intent_of.ravel()] = qrels.grade[rows] > 0
    return TopicPool(topic, qrels.docnos[docs], tuple(qrels.intents[i] for i in intents.tolist()), relevant)


def context_gains(pool: TopicPool, profile: Profile) -> IntArray:
    """The gains that decide the profile's preferences: row 0 without a top (``|S(d) & T_u|``), row ``1 + x``
    after top ``x`` (``|(S(d) & T_u) - S(x)|``, -1 for ``x`` itself, which is not a candidate)."""
    mine = (pool.relevant & pool.profile_mask(profile)[None, :]).astype(np.int64)
    missing = (~pool.relevant).astype(np.int64)
    m = pool.size
    gains = np.empty((m + 1, m), dtype=np.int64)
    gains[0] = mine.sum(axis=1)
    gains[1:] = missing @ mine.T
    if m:
        gains[1 + np.arange(m), np.arange(m)] = -1
    return gains


@dataclass(frozen=True)
class _Coins:
    """The coin matrices of one bucket step: contexts, group members (pool indices) and bits (i < j used)."""

    context: IntArray
    members: IntArray  # (groups, n)
    bits: npt.NDArray[np.uint8]  # (groups, n, n)


def _random_bits(rng: np.random.Generator, shape: tuple[int, ...]) -> npt.NDArray[np.uint8]:
    count = int(np.prod(shape))
    raw = np.frombuffer(rng.bytes((count + 7) // 8), dtype=np.uint8)
    return np.unpackbits(raw, count=count).reshape(shape)


def tournament_wins(gains: IntArray, rng: np.random.Generator,
                    keep: bool = False) -> tuple[IntArray, list[_Coins]]:
    """Wins of every candidate in every context (row) when each candidate meets each other candidate of the row
    once: one win per candidate with a lower gain, plus the coins won against equally good ones. Entries with
    gain -1 are not candidates (their wins are 0)."""
    rows, m = gains.shape
    wins = np.zeros((rows, m), dtype=np.int64)
    coins: list[_Coins] = []
    if rows == 0 or m == 0:
        return wins, coins
    order = np.argsort(gains, axis=1, kind="stable")  # by gain, then pool order
    ranked = np.take_along_axis(gains, order, axis=1)
    excluded = (ranked < 0).sum(axis=1)
    new_group = np.ones((rows, m), dtype=bool)
    new_group[:, 1:] = ranked[:, 1:] != ranked[:, :-1]
    position = np.arange(m)
    start = np.maximum.accumulate(np.where(new_group, position, 0), axis=1)
    ends_here = np.ones((rows, m), dtype=bool)
    ends_here[:, :-1] = new_group[:, 1:]
    end = np.minimum.accumulate(np.where(ends_here, position + 1, m)[:, ::-1], axis=1)[:, ::-1]
    sorted_wins = start - excluded[:, None]  # candidates with a strictly lower gain
    group_row, group_start = np.nonzero(new_group & (ranked >= 0) & (end - start > 1))
    sizes = (end - start)[group_row, group_start]
    for n in np.unique(sizes).tolist():
        chosen = np.flatnonzero(sizes == n)
        upper = np.triu(np.ones((n, n), dtype=np.uint8), 1)
        per_block = max(1, _BLOCK // (n * n))
        span = np.arange(n)
        for lo in range(0, chosen.size, per_block):
            part = chosen[lo : lo + per_block]
            bits = _random_bits(rng, (part.size, n, n))
            np.bitwise_and(bits, upper, out=bits)
            small = np.uint16 if n < 1 << 16 else np.int64  # narrow sums are several times faster
            won = bits.sum(axis=2, dtype=small).astype(np.int64) - bits.sum(axis=1, dtype=small) + span
            r, s = group_row[part], group_start[part]
            sorted_wins[r[:, None], s[:, None] + span] += won
            if keep:
                coins.append(_Coins(r, order[r[:, None], s[:, None] + span], bits))
    sorted_wins[ranked < 0] = 0
    np.put_along_axis(wins, order, sorted_wins, axis=1)
    return wins, coins


@dataclass(frozen=True, eq=False)
class TopicCounts:
    """Complete-design win counts of one topic, per profile: pairwise wins (each candidate appears ``m - 1``
    times) and conditional wins (row = top; each candidate appears ``m - 2`` times after each other top)."""

    pool: TopicPool
    profiles: tuple[str, ...]
    pair_wins: IntArray  # (profiles, m)
    cond_wins: IntArray  # (profiles, m, m)


def simulate_topic_counts(pool: TopicPool, profiles: Sequence[Profile], rng: np.random.Generator) -> TopicCounts:
    """The complete design of one topic, profile after profile, as win counts."""
    m = pool.size
    pair = np.zeros((len(profiles), m), dtype=np.int64)
    cond = np.zeros((len(profiles), m, m), dtype=np.int64)
    for p, profile in enumerate(profiles):
        wins, _ = tournament_wins(context_gains(pool, profile), rng)
        pair[p] = wins[0]
        cond[p] = wins[1:]
    return TopicCounts(pool, tuple(p.name for p in profiles), pair, cond)


@dataclass(frozen=True, eq=False)
class SimulatedCounts:
    """Complete-design counts of several topics; ``table`` turns them into utility estimates."""

    topics: tuple[TopicCounts, ...]

    def table(self, profile: ProfileSelector = "all", min_app: int = 1) -> UtilityTable:
        """Utilities from every profile's preferences pooled (``"all"``) or from profile i's (1-based) alone."""
        return counts_table(self.topics, profile, min_app)


def counts_table(topics: Sequence[TopicCounts], profile: ProfileSelector = "all",
                 min_app: int = 1) -> UtilityTable:
    """Utility estimates from complete-design counts (documents docno descending, as tables keep them)."""
    names: list[str] = []
    docnos: list[np.ndarray] = []
    sizes: list[int] = []
    pw: list[IntArray] = []
    pa: list[IntArray] = []
    cw: list[IntArray] = []
    ca: list[IntArray] = []
    for counts in topics:
        m = counts.pool.size
        if profile == "all":
            chosen = list(range(len(counts.profiles)))
        else:
            if isinstance(profile, bool) or not isinstance(profile, int) or profile < 1:
                raise OptionError(f"profile must be 'all' or a positive integer, not {profile!r}")
            chosen = [profile - 1] if profile <= len(counts.profiles) else []
        names.append(counts.pool.topic)
        if not chosen or m == 0:
            sizes.append(0)
            continue
        k = len(chosen)
        flip = slice(None, None, -1)  # pool order is ascending; tables are descending
        sizes.append(m)
        docnos.append(counts.pool.docnos[flip])
        pw.append(counts.pair_wins[chosen].sum(axis=0)[flip])
        pa.append(np.full(m, k * (m - 1), dtype=np.int64))
        cw.append(counts.cond_wins[chosen].sum(axis=0)[flip, flip].ravel())
        apps = np.full((m, m), k * (m - 2), dtype=np.int64)
        np.fill_diagonal(apps, 0)
        ca.append(apps.ravel())
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)

    def joined(parts: list[IntArray]) -> IntArray:
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    all_docnos = np.concatenate(docnos) if docnos else np.zeros(0, dtype="S1")
    return table_from_counts(names, offsets, all_docnos, joined(pw), joined(pa), joined(cw), joined(ca), min_app)


def _topics_of(qrels: Qrels, profiles: UserProfiles, topics: Sequence[str] | None) -> list[str]:
    return [t for t in (qrels.topics if topics is None else topics) if profiles.for_topic(t)]


def simulate_counts(qrels: Qrels, profiles: UserProfiles, rng: np.random.Generator, *,
                    topics: Sequence[str] | None = None) -> SimulatedCounts:
    """The complete design (every pair, every top and pair, once per profile) of each topic with profiles, as
    win counts; topics in qrels order (or ``topics``), profiles in file order, all coins from ``rng``."""
    return SimulatedCounts(tuple(simulate_topic_counts(topic_pool(qrels, t), profiles.for_topic(t), rng)
                                 for t in _topics_of(qrels, profiles, topics)))


@dataclass
class _Records:
    """Judgments being collected as arrays (docnos as ``S`` arrays, b"" = no top)."""

    topic: list[str]
    user: list[str]
    top: list[np.ndarray]
    left: list[np.ndarray]
    right: list[np.ndarray]
    right_wins: list[np.ndarray]

    def add(self, topic: str, user: str, top: np.ndarray, left: np.ndarray, right: np.ndarray,
            right_wins: np.ndarray) -> None:
        self.topic += [topic] * left.size
        self.user += [user] * left.size
        self.top.append(top)
        self.left.append(left)
        self.right.append(right)
        self.right_wins.append(right_wins)

    def judgments(self, name: str) -> PreferenceJudgments:
        if not self.topic:
            empty = np.zeros(0, dtype=np.int64)
            return PreferenceJudgments((), (), np.zeros(0, dtype="S1"), empty, empty, empty, empty, empty,
                                       np.zeros(0, dtype=bool), name)
        topics, topic = np.unique(np.array(self.topic), return_inverse=True)
        users, user = np.unique(np.array(self.user), return_inverse=True)
        top, left, right = np.concatenate(self.top), np.concatenate(self.left), np.concatenate(self.right)
        has_top = top != b""
        docnos, inverse = np.unique(np.concatenate((left, right, top[has_top])), return_inverse=True)
        inverse = inverse.ravel()
        n = left.size
        top_id = np.full(n, -1, dtype=np.int64)
        top_id[has_top] = inverse[2 * n :]
        return PreferenceJudgments(tuple(topics.tolist()), tuple(users.tolist()), docnos,
                                   topic.ravel().astype(np.int64), user.ravel().astype(np.int64), top_id,
                                   inverse[:n].astype(np.int64), inverse[n : 2 * n].astype(np.int64),
                                   np.concatenate(self.right_wins).astype(bool), name)


def simulate_preferences(qrels: Qrels, profiles: UserProfiles, rng: np.random.Generator, *,
                         topics: Sequence[str] | None = None, max_judgments: int = MAX_JUDGMENTS,
                         name: str = "<simulated-preferences>") -> PreferenceJudgments:
    """The complete design listed judgment by judgment (the same coins as ``simulate_counts`` for the same
    generator state): per topic and profile, every pairwise judgment, then every conditional one by top (pool
    order), pairs in pool order. Refuses designs above ``max_judgments``."""
    chosen = _topics_of(qrels, profiles, topics)
    pools = [topic_pool(qrels, t) for t in chosen]
    total = sum(len(profiles.for_topic(p.topic)) * (p.size * (p.size - 1) // 2) * max(1, p.size - 1) for p in pools)
    if total > max_judgments:
        raise RequestError(f"the complete design has about {total} judgments (more than max_judgments ="
                           f" {max_judgments}); use simulate_counts, which counts wins without listing them")
    out = _Records([], [], [], [], [], [])
    for pool in pools:
        m = pool.size
        first, second = np.triu_indices(m, 1)
        for profile in profiles.for_topic(pool.topic):
            gains = context_gains(pool, profile)
            _, coins = tournament_wins(gains, rng, keep=True)
            earlier_wins = np.zeros((m + 1, m, m), dtype=bool)  # tied pairs only: does the earlier one win?
            for c in coins:
                upper = c.bits.astype(bool)
                ctx, members = c.context[:, None, None], c.members
                earlier_wins[ctx, members[:, :, None], members[:, None, :]] = upper
            for row in range(m + 1):
                top = row - 1
                keep = (first != top) & (second != top)
                a, b = first[keep], second[keep]
                ga, gb = gains[row, a], gains[row, b]
                right_wins = (gb > ga) | ((gb == ga) & ~earlier_wins[row, a, b])
                top_names = np.full(a.size, b"" if top < 0 else pool.docnos[top], dtype=pool.docnos.dtype)
                out.add(pool.topic, profile.name, top_names, pool.docnos[a], pool.docnos[b], right_wins)
    return out.judgments(name)


def simulate_triplets(qrels: Qrels, profiles: UserProfiles, rng: np.random.Generator, n_triplets: int, *,
                      per_triplet: int = 5, topics: Sequence[str] | None = None,
                      name: str = "<simulated-triplets>") -> PreferenceJudgments:
    """The sampled design of spec 6.7: ``n_triplets`` triplets per topic, ``per_triplet`` profiles drawn for each.

    Judgments are listed per topic, then per profile in file order (so profile i of a topic is its i-th user, as
    long as every profile was drawn), each profile's conditional judgments by triplet and draw, followed by the
    pairwise copies of those whose top has none of the profile's intents."""
    if n_triplets < 0 or per_triplet < 1:
        raise OptionError("n_triplets must be >= 0 and per_triplet >= 1")
    out = _Records([], [], [], [], [], [])
    for topic in _topics_of(qrels, profiles, topics):
        pool, chosen = topic_pool(qrels, topic), profiles.for_topic(topic)
        m = pool.size
        if m < 3 or n_triplets == 0:
            continue
        # three distinct documents, uniformly: draw from m, m-1, m-2 and skip the ones already taken
        a = rng.integers(0, m, n_triplets)
        b = rng.integers(0, m - 1, n_triplets)
        b += b >= a
        low, high = np.minimum(a, b), np.maximum(a, b)
        c = rng.integers(0, m - 2, n_triplets)
        c += c >= low
        c += c >= high
        triplet = np.stack((a, b, c), axis=1)
        top_at = rng.integers(0, 3, n_triplets)
        others = np.array([[1, 2], [0, 2], [0, 1]])[top_at]
        rows = np.arange(n_triplets)
        x = np.repeat(triplet[rows, top_at], per_triplet)
        left = np.repeat(triplet[rows, others[:, 0]], per_triplet)
        right = np.repeat(triplet[rows, others[:, 1]], per_triplet)
        who = rng.integers(0, len(chosen), n_triplets * per_triplet)
        coin = rng.integers(0, 2, n_triplets * per_triplet).astype(bool)
        mask = np.array([pool.profile_mask(p) for p in chosen], dtype=bool)[who]  # each judge's intents
        rel = pool.relevant
        new_left = (rel[left] & mask & ~rel[x]).sum(axis=1)
        new_right = (rel[right] & mask & ~rel[x]).sum(axis=1)
        right_wins = (new_right > new_left) | ((new_right == new_left) & coin)
        unrelated_top = ~(rel[x] & mask).any(axis=1)
        for p, profile in enumerate(chosen):
            mine = who == p
            copy = mine & unrelated_top
            out.add(topic, profile.name, pool.docnos[x[mine]], pool.docnos[left[mine]], pool.docnos[right[mine]],
                    right_wins[mine])
            out.add(topic, profile.name, np.full(int(copy.sum()), b"", dtype=pool.docnos.dtype),
                    pool.docnos[left[copy]], pool.docnos[right[copy]], right_wins[copy])
    return out.judgments(name)
