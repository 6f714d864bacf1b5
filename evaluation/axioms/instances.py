"""Instances of the ten constraints (spec 7.3): small judgment pools with two rankings each, whose scores a
constraint compares. Every generator is deterministic given its random generator.

Relevance is written as integer grades, which every measure maps with its own rule (spec 1.6):

* graded instances use the grades 0-4 for the spec's grade set G = {0, .2, .4, .6, .8}; every intent of the
  pool also has an unretrieved *anchor* document at the top grade 4, so each intent's (and the topic's, and
  the pool's) highest grade is 4 in every instance: equal grades of different intents then map to equal
  values under every mapping, and an instance scores the same alone as in a batch of instances;
* binary instances use grade 1 only (the spec's r_c = 0.5 is what the satisfaction mapping (2^g - 1)/2^gmax
  gives for it); binary-relevance measures see grades as relevant/non-relevant in every instance;
* Sat's instances use a fine scale 0-60 whose top grade 60 stands for r = 1: the satisfaction
  (2^60 - 1)/2^60 rounds to exactly 1.0 in double precision (the only way an integer grade reaches r = 1 under
  that mapping) and the linear mappings g/gmax give 1 too; the grades 12, 24, 36, 48 stand for .2, .4, .6, .8
  (exactly so under the linear mappings; nearly 0 under the satisfaction mapping, whose Sat verdicts depend
  only on the documents with r = 1);
* pools with several intents are balanced: unretrieved documents are added until every intent has the same
  multiset of relevant grades, so measures normalised per intent (nDCG-IA, AP-IA) divide every intent by the
  same ideal and compare rankings as their unnormalised forms do (spec 7.1).

A ``Comparison`` states that one ranking should score higher than (or, non-strict, at least as high as) the
other on the same pool; both rankings are scored against the whole pool.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: the spec's graded set G = {0, .2, .4, .6, .8} as grades, and the top grade pinned by the anchors
GRADED = (0, 1, 2, 3, 4)
GRADED_TOP = 4
#: the one relevant grade of binary instances (r_c)
BINARY = 1
#: Sat's scale: relevant grades below the top, and the top grade that maps to r = 1
SAT_GRADES = (12, 24, 36, 48)
SAT_TOP = 60
#: DeepTh's window of n (spec 7.3: N0 = 1000, N1 = 2000, step 100) and CloseTh's range of m
DEEPTH_WINDOW = tuple(range(1000, 2001, 100))
CLOSETH_RANGE = tuple(range(1, 51))
#: ranking sizes of the random generators (spec 7.3)
PRI_LENGTH = 8
DEEP_LENGTH = 8
#: no random instance has a ranking longer than this (Red: 3 x 3 relevant + 2 non-relevant + 1 appended)
LONGEST = 12

INTENTS_1 = ("t1",)
INTENTS_2 = ("t1", "t2")
INTENTS_3 = ("t1", "t2", "t3")


@dataclass(frozen=True, eq=False)
class Pool:
    """The judgments of one instance: intents with weights, and every pool document's grade per intent.

    Every pool document is judged for every intent (grade 0 = judged non-relevant for that intent).
    """

    intents: tuple[str, ...]
    weights: tuple[float, ...]
    grades: Mapping[str, tuple[int, ...]]


@dataclass(frozen=True, eq=False)
class Comparison:
    """One instance of a constraint: on ``pool``, Q(higher) > Q(lower) (``strict``) or Q(higher) >= Q(lower)."""

    pool: Pool
    higher: tuple[str, ...]
    lower: tuple[str, ...]
    strict: bool = True
    label: str = ""

    @property
    def size(self) -> tuple[int, int]:
        """Sort key for "smallest": documents in both rankings, then documents in the pool."""
        return (len(self.higher) + len(self.lower), len(self.pool.grades))


@dataclass(frozen=True)
class Settings:
    """What a generator may produce: how many random instances, the longest ranking allowed (the measure's
    cutoff, so no modified or appended position falls beyond it; None = no limit) and whether the measure
    reads several aspects (only Conf depends on it: single aspect for ad hoc measures, 3 aspects otherwise)."""

    count: int = 300
    depth: int | None = None
    multi_aspect: bool = True

    def room(self, wanted: int) -> int:
        """The largest ranking length up to ``wanted`` that the depth allows."""
        return wanted if self.depth is None else min(wanted, self.depth)


# -- helpers --------------------------------------------------------------------------------------------------


def _uniform(n: int) -> tuple[float, ...]:
    return tuple(1.0 / n for _ in range(n))


def _anchors(intents: Sequence[str], top: int) -> dict[str, tuple[int, ...]]:
    """One unretrieved document per intent, relevant to it alone at the top grade."""
    return {f"a{k + 1}": tuple(top if j == k else 0 for j in range(len(intents))) for k in range(len(intents))}


def _balanced(intents: Sequence[str], weights: tuple[float, ...], judged: dict[str, tuple[int, ...]]) -> Pool:
    """A pool in which every intent has the same multiset of relevant grades: unretrieved documents relevant to
    one intent alone are added until each intent has, for every grade, as many documents as the intent that
    has most. Per-intent normalisers (ideal lists, R_t, top grades) are then the same for every intent, so a
    measure normalised per intent compares rankings as its unnormalised form does (spec 7.1)."""
    counts = [Counter(g[k] for g in judged.values() if g[k] > 0) for k in range(len(intents))]
    target: Counter[int] = Counter()
    for c in counts:
        target |= c
    padded = dict(judged)
    for k, c in enumerate(counts):
        for grade in sorted(target):
            for m in range(target[grade] - c[grade]):
                padded[f"b{k + 1}_{grade}_{m + 1}"] = _only(intents, k, grade)
    return Pool(tuple(intents), weights, padded)


def _only(intents: Sequence[str], which: int, grade: int) -> tuple[int, ...]:
    """Grades of a document relevant to intent number ``which`` alone (``which`` = -1: to none)."""
    return tuple(grade if j == which else 0 for j in range(len(intents)))


def _choice(rng: random.Random, values: Sequence[int]) -> int:
    return values[rng.randrange(len(values))]


def _between(rng: random.Random, low: int, high: int) -> int:
    """A uniform integer in [low, high]."""
    return rng.randint(low, high)


def _random_weights(rng: random.Random, n: int) -> list[float]:
    """n normalised uniform weights."""
    raw = [rng.random() + 1e-9 for _ in range(n)]
    return [w / sum(raw) for w in raw]


def _swap(ranking: Sequence[str], i: int, j: int) -> tuple[str, ...]:
    out = list(ranking)
    out[i], out[j] = out[j], out[i]
    return tuple(out)


def _fmt(grades: Sequence[int]) -> str:
    return "(" + ", ".join(str(g) for g in grades) + ")"


def _listing(judged: Mapping[str, tuple[int, ...]], docs: Sequence[str]) -> str:
    """Documents with their per-intent grades, e.g. ``d1 (0, 2, 0), d2 (1, 0, 0)``."""
    return ", ".join(f"{d} {_fmt(judged[d])}" for d in docs) or "nothing"


# -- relevance-oriented constraints ---------------------------------------------------------------------------


def priority(rng: random.Random, settings: Settings) -> list[Comparison]:
    """Pri: single aspect, 8 documents with random grades, pool plus 2 unretrieved relevant documents; every
    pair i < j with r_j > r_i gives the comparison Q(swap(i, j)) > Q(d)."""
    n = settings.room(PRI_LENGTH)
    if n < 2:
        return []
    out: list[Comparison] = []
    for _ in range(settings.count):
        grades = [_choice(rng, GRADED) for _ in range(n)]
        docs = tuple(f"d{k + 1}" for k in range(n))
        judged: dict[str, tuple[int, ...]] = {d: (g,) for d, g in zip(docs, grades)}
        judged.update({f"p{k + 1}": (_choice(rng, GRADED[1:]),) for k in range(2)})
        judged.update(_anchors(INTENTS_1, GRADED_TOP))
        pool = Pool(INTENTS_1, (1.0,), judged)
        for i in range(n):
            for j in range(i + 1, n):
                if grades[j] > grades[i]:
                    label = f"grades {_fmt(grades)}: swap ranks {i + 1} and {j + 1}"
                    out.append(Comparison(pool, _swap(docs, i, j), docs, label=label))
    return out


def deepness(rng: random.Random, settings: Settings) -> list[Comparison]:
    """Deep: single aspect, 8 documents; r_i = r_j = a < b = r_{i+1} = r_{j+1} with j >= i + 2, the other
    grades random: Q(swap(i, i+1)) > Q(swap(j, j+1))."""
    n = settings.room(DEEP_LENGTH)
    if n < 4:
        return []
    out: list[Comparison] = []
    for _ in range(settings.count):
        a = _choice(rng, GRADED[:-1])
        b = _choice(rng, [g for g in GRADED if g > a])
        i = _between(rng, 0, n - 4)
        j = _between(rng, i + 2, n - 2)
        grades = [_choice(rng, GRADED) for _ in range(n)]
        grades[i] = grades[j] = a
        grades[i + 1] = grades[j + 1] = b
        docs = tuple(f"d{k + 1}" for k in range(n))
        judged: dict[str, tuple[int, ...]] = {d: (g,) for d, g in zip(docs, grades)}
        judged.update(_anchors(INTENTS_1, GRADED_TOP))
        pool = Pool(INTENTS_1, (1.0,), judged)
        label = f"grades {_fmt(grades)}: swap ranks {i + 1},{i + 2} vs ranks {j + 1},{j + 2}"
        out.append(Comparison(pool, _swap(docs, i, i + 1), _swap(docs, j, j + 1), label=label))
    return out


def threshold_pair(n: int) -> tuple[Pool, tuple[str, ...], tuple[str, ...]]:
    """The rankings of DeepTh and CloseTh for size n: A = (rel, n-rel x (2n - 1)) and
    B = (non-rel x n, rel x n), binary relevance, pool = n relevant + 2n - 1 non-relevant documents."""
    rel = [f"r{k + 1}" for k in range(n)]
    non = [f"n{k + 1}" for k in range(2 * n - 1)]
    judged = {d: (BINARY,) for d in rel}
    judged.update({d: (0,) for d in non})
    a = (rel[0], *non)
    b = (*non[:n], *rel)
    return Pool(INTENTS_1, (1.0,), judged), a, b


def deepness_threshold(rng: random.Random, settings: Settings) -> list[Comparison]:
    """DeepTh: for every n of the window, Q(A_n) > Q(B_n) (one relevant document on top beats n relevant
    documents after n non-relevant ones, for all large n)."""
    out: list[Comparison] = []
    for n in DEEPTH_WINDOW:
        pool, a, b = threshold_pair(n)
        out.append(Comparison(pool, a, b, label=f"n = {n}: A = (rel, non-rel x {2 * n - 1}),"
                              f" B = (non-rel x {n}, rel x {n})"))
    return out


def closeness_threshold(rng: random.Random, settings: Settings) -> list[Comparison]:
    """CloseTh (existential): some m in 1..50 has Q(B_m) > Q(A_m)."""
    out: list[Comparison] = []
    for m in CLOSETH_RANGE:
        pool, a, b = threshold_pair(m)
        out.append(Comparison(pool, b, a, label=f"m = {m}: B = (non-rel x {m}, rel x {m}),"
                              f" A = (rel, non-rel x {2 * m - 1})"))
    return out


def confidence(rng: random.Random, settings: Settings) -> list[Comparison]:
    """Conf: a random ranking of 1-7 documents (single aspect for ad hoc measures, 3 balanced aspects
    otherwise) against itself with a non-relevant document appended: Q(d) > Q(d, z)."""
    top = settings.room(8) - 1
    if top < 1:
        return []
    intents = INTENTS_3 if settings.multi_aspect else INTENTS_1
    out: list[Comparison] = []
    for _ in range(settings.count):
        n = _between(rng, 1, min(7, top))
        docs = tuple(f"d{k + 1}" for k in range(n))
        judged = {d: tuple(_choice(rng, GRADED) for _ in intents) for d in docs}
        judged["z"] = _only(intents, -1, 0)
        judged.update(_anchors(intents, GRADED_TOP))
        pool = _balanced(intents, _uniform(len(intents)), judged)
        label = f"{_listing(judged, docs)}: append z, non-relevant to every aspect"
        out.append(Comparison(pool, docs, (*docs, "z"), label=label))
    return out


# -- diversity-oriented constraints ---------------------------------------------------------------------------


def aspect_diversity(rng: random.Random, settings: Settings) -> list[Comparison]:
    """AspDiv: 3 aspects with random weights, 1-6 documents with random grades per aspect; the last document
    (grades 0-3) is replaced by one with every grade one step higher: Q(d with d'_n) > Q(d)."""
    top = settings.room(6)
    if top < 1:
        return []
    out: list[Comparison] = []
    for _ in range(settings.count):
        weights = tuple(_random_weights(rng, 3))
        n = _between(rng, 1, top)
        docs = tuple(f"d{k + 1}" for k in range(n))
        judged = {d: tuple(_choice(rng, GRADED) for _ in INTENTS_3) for d in docs[:-1]}
        last = tuple(_choice(rng, GRADED[:-1]) for _ in INTENTS_3)
        judged[docs[-1]] = last
        judged["x"] = tuple(g + 1 for g in last)
        judged.update(_anchors(INTENTS_3, GRADED_TOP))
        pool = _balanced(INTENTS_3, weights, judged)
        label = f"weights {_fmt_w(weights)}; {_listing(judged, docs)}: replace {docs[-1]} by x {_fmt(judged['x'])}"
        out.append(Comparison(pool, (*docs[:-1], "x"), docs, label=label))
    return out


def _fmt_w(weights: Sequence[float]) -> str:
    return "(" + ", ".join(f"{w:.3f}" for w in weights) + ")"


def redundancy(rng: random.Random, settings: Settings) -> list[Comparison]:
    """Red: 3 balanced aspects, binary relevance, no overlap; a shuffled prefix with c_t documents per aspect
    (c_t > c_t' forced) and 0-2 non-relevant ones; appending a new document of the less covered aspect t'
    beats appending one of t: Q(prefix, x') > Q(prefix, x). 10 more relevant documents per aspect pad the
    pool."""
    limit = settings.room(LONGEST) - 1  # longest prefix allowed
    if limit < 1:
        return []
    out: list[Comparison] = []
    while len(out) < settings.count:
        t, u = rng.sample(range(3), 2)
        counts = [_between(rng, 0, 3) for _ in INTENTS_3]
        counts[u] = _between(rng, 0, 2)
        counts[t] = _between(rng, counts[u] + 1, 3)
        nonrel = _between(rng, 0, 2)
        if sum(counts) + nonrel > limit:
            continue  # beyond the measure's cutoff: draw again
        judged: dict[str, tuple[int, ...]] = {}
        prefix: list[str] = []
        for k, c in enumerate(counts):
            for m in range(c):
                doc = f"d{k + 1}_{m + 1}"
                judged[doc] = _only(INTENTS_3, k, BINARY)
                prefix.append(doc)
        for m in range(nonrel):
            judged[f"n{m + 1}"] = _only(INTENTS_3, -1, 0)
            prefix.append(f"n{m + 1}")
        rng.shuffle(prefix)
        ranked = tuple(prefix)
        judged["x"] = _only(INTENTS_3, t, BINARY)
        judged["y"] = _only(INTENTS_3, u, BINARY)
        for k in range(3):
            for m in range(10):
                judged[f"p{k + 1}_{m + 1}"] = _only(INTENTS_3, k, BINARY)
        pool = _balanced(INTENTS_3, _uniform(3), judged)
        label = (f"prefix covers t1, t2, t3 with {counts[0]}, {counts[1]}, {counts[2]} documents (+{nonrel}"
                 f" non-relevant): append y (t{u + 1}) vs x (t{t + 1})")
        out.append(Comparison(pool, (*ranked, "y"), (*ranked, "x"), label=label))
    return out


def monotonic_redundancy(rng: random.Random, settings: Settings) -> list[Comparison]:
    """MRed: two balanced aspects; a prefix of 1-4 documents each more relevant to t than to t'; appending x'
    (only t') beats appending x (only t) at the same grade: Q(prefix, x') > Q(prefix, x)."""
    top = settings.room(5) - 1
    if top < 1:
        return []
    out: list[Comparison] = []
    for _ in range(settings.count):
        n = _between(rng, 1, top)
        judged: dict[str, tuple[int, ...]] = {}
        docs = tuple(f"d{k + 1}" for k in range(n))
        for d in docs:
            a = _choice(rng, GRADED[1:])
            judged[d] = (a, _choice(rng, [g for g in GRADED if g < a]))
        c = _choice(rng, GRADED[1:])
        judged["x"] = (c, 0)
        judged["y"] = (0, c)
        judged.update(_anchors(INTENTS_2, GRADED_TOP))
        pool = _balanced(INTENTS_2, _uniform(2), judged)
        label = f"{_listing(judged, docs)}: append y (0, {c}) vs x ({c}, 0)"
        out.append(Comparison(pool, (*docs, "y"), (*docs, "x"), label=label))
    return out


def saturation(rng: random.Random, settings: Settings) -> list[Comparison]:
    """Sat: 3 balanced aspects, no overlap; a random prefix of 0-4 documents (each relevant to at most one
    aspect), then d_n fully relevant (r = 1) to t; appending a further document relevant only to t must not
    raise the score: Q(d) >= Q(d, d_{n+1})."""
    top = settings.room(6) - 2
    if top < 0:
        return []
    out: list[Comparison] = []
    for _ in range(settings.count):
        n = _between(rng, 0, top)
        judged: dict[str, tuple[int, ...]] = {}
        docs = [f"d{k + 1}" for k in range(n)]
        for d in docs:
            which = _between(rng, -1, 2)
            judged[d] = _only(INTENTS_3, which, _choice(rng, SAT_GRADES) if which >= 0 else 0)
        t = _between(rng, 0, 2)
        judged["s"] = _only(INTENTS_3, t, SAT_TOP)
        extra = _choice(rng, (*SAT_GRADES, SAT_TOP))
        judged["x"] = _only(INTENTS_3, t, extra)
        judged.update(_anchors(INTENTS_3, SAT_TOP))
        pool = _balanced(INTENTS_3, _uniform(3), judged)
        ranked = (*docs, "s")
        label = f"{_listing(judged, ranked)} (grade {SAT_TOP}: r = 1): append x {_fmt(judged['x'])}"
        out.append(Comparison(pool, ranked, (*ranked, "x"), strict=False, label=label))
    return out


def aspect_relevance(rng: random.Random, settings: Settings) -> list[Comparison]:
    """AspRel: weights w(t1) > w(t2) >= w(t3); a prefix of 0-4 documents relevant only to t3 (or to nothing);
    at the last position a document relevant only to the heavier t1 beats one relevant only to t2 at the same
    grade: Q(prefix, x') > Q(prefix, x)."""
    top = settings.room(5) - 1
    if top < 0:
        return []
    out: list[Comparison] = []
    while len(out) < settings.count:
        weights = tuple(sorted(_random_weights(rng, 3), reverse=True))
        if weights[0] - weights[1] < 1e-6:
            continue
        n = _between(rng, 0, top)
        judged: dict[str, tuple[int, ...]] = {}
        docs = tuple(f"d{k + 1}" for k in range(n))
        for d in docs:
            judged[d] = _only(INTENTS_3, 2 if rng.random() < 0.5 else -1, _choice(rng, GRADED[1:]))
        c = _choice(rng, GRADED[1:])
        judged["x"] = _only(INTENTS_3, 1, c)
        judged["y"] = _only(INTENTS_3, 0, c)
        judged.update(_anchors(INTENTS_3, GRADED_TOP))
        pool = _balanced(INTENTS_3, weights, judged)
        label = (f"weights {_fmt_w(weights)}; {_listing(judged, docs)}: append y {_fmt(judged['y'])}"
                 f" vs x {_fmt(judged['x'])}")
        out.append(Comparison(pool, (*docs, "y"), (*docs, "x"), label=label))
    return out
