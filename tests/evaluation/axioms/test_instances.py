"""Each constraint's instance generator draws instances that meet the constraint's preconditions (spec 7.2-7.3),
deterministically, within the measure's cutoff, on pools whose grade scale is pinned."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from evaluation.axioms import instances as inst
from evaluation.axioms.constraints import CONSTRAINTS, Constraint, constraint
from evaluation.axioms.instances import Comparison, Pool, Settings

COUNT = 200


def draw(name: str, seed: int = 7, depth: int | None = None, multi_aspect: bool = True) -> list[Comparison]:
    return constraint(name).generate(random.Random(seed), Settings(COUNT, depth, multi_aspect))


def grade(pool: Pool, doc: str, intent: int = 0) -> int:
    return pool.grades[doc][intent]


def relevant_intents(pool: Pool, doc: str) -> list[int]:
    return [k for k, g in enumerate(pool.grades[doc]) if g > 0]


def positions_differing(a: tuple[str, ...], b: tuple[str, ...]) -> list[int]:
    assert len(a) == len(b)
    return [k for k, (x, y) in enumerate(zip(a, b)) if x != y]


# -- properties every generator shares ------------------------------------------------------------------------


@pytest.mark.parametrize("c", CONSTRAINTS, ids=lambda c: c.name)
def test_deterministic(c: Constraint) -> None:
    first, again = draw(c.name, seed=3), draw(c.name, seed=3)
    assert [(x.higher, x.lower, dict(x.pool.grades)) for x in first] == [
        (x.higher, x.lower, dict(x.pool.grades)) for x in again
    ]
    assert first


@pytest.mark.parametrize("c", CONSTRAINTS, ids=lambda c: c.name)
def test_pools_are_well_formed(c: Constraint) -> None:
    for comp in draw(c.name):
        pool = comp.pool
        assert abs(sum(pool.weights) - 1.0) < 1e-12 and all(w > 0 for w in pool.weights)
        assert len(pool.weights) == len(pool.intents)
        assert set(comp.higher) <= set(pool.grades) and set(comp.lower) <= set(pool.grades)
        assert len(set(comp.higher)) == len(comp.higher) and len(set(comp.lower)) == len(comp.lower)
        if not c.fixed:
            assert max(len(comp.higher), len(comp.lower)) <= inst.LONGEST
        assert all(len(g) == len(pool.intents) and min(g) >= 0 for g in pool.grades.values())
        # every intent has a relevant document, and they all share one top grade (the pinned scale)
        tops = {max(g[k] for g in pool.grades.values()) for k in range(len(pool.intents))}
        assert len(tops) == 1 and tops.pop() > 0
        if len(pool.intents) > 1:  # balanced pools: the same multiset of relevant grades for every intent
            multisets = [Counter(g[k] for g in pool.grades.values() if g[k] > 0) for k in range(len(pool.intents))]
            assert all(m == multisets[0] for m in multisets)


@pytest.mark.parametrize("depth", [2, 3, 5, 10])
@pytest.mark.parametrize("c", [c for c in CONSTRAINTS if not c.fixed], ids=lambda c: c.name)
def test_rankings_fit_the_cutoff(c: Constraint, depth: int) -> None:
    for comp in draw(c.name, depth=depth):
        assert len(comp.higher) <= depth and len(comp.lower) <= depth


def test_too_small_a_cutoff_gives_no_instances() -> None:
    assert draw("Pri", depth=1) == [] and draw("Deep", depth=3) == [] and draw("Conf", depth=1) == []
    assert draw("Red", depth=1) == [] and draw("MRed", depth=1) == [] and draw("Sat", depth=1) == []
    assert draw("AspRel", depth=0) == [] and draw("AspDiv", depth=0) == []
    assert draw("Deep", depth=4) and draw("Sat", depth=2) and draw("AspRel", depth=1)


# -- relevance-oriented constraints ---------------------------------------------------------------------------


def test_pri_swaps_a_more_relevant_document_up() -> None:
    comps = draw("Pri")
    assert len(comps) > COUNT  # every qualifying pair of every ranking
    for comp in comps:
        pool = comp.pool
        assert pool.intents == ("t1",) and len(comp.lower) == inst.PRI_LENGTH
        i, j = positions_differing(comp.higher, comp.lower)
        assert comp.higher[i] == comp.lower[j] and comp.higher[j] == comp.lower[i]
        assert grade(pool, comp.lower[j]) > grade(pool, comp.lower[i])
        assert all(grade(pool, d) in inst.GRADED for d in comp.lower)
        unretrieved = [d for d in pool.grades if d not in comp.lower and not d.startswith("a")]
        assert len(unretrieved) == 2 and all(grade(pool, d) > 0 for d in unretrieved)


def test_deep_swaps_equal_pairs_at_two_depths() -> None:
    for comp in draw("Deep"):
        pool = comp.pool
        original = tuple(sorted(comp.higher, key=lambda d: int(d[1:])))  # d1, d2, ... in order
        i, i1 = positions_differing(comp.higher, original)
        j, j1 = positions_differing(comp.lower, original)
        assert i1 == i + 1 and j1 == j + 1 and j >= i + 2
        a, b = grade(pool, original[i]), grade(pool, original[i + 1])
        assert a < b and grade(pool, original[j]) == a and grade(pool, original[j + 1]) == b


@pytest.mark.parametrize("name", ["DeepTh", "CloseTh"])
def test_threshold_instances(name: str) -> None:
    comps = draw(name)
    sizes = inst.DEEPTH_WINDOW if name == "DeepTh" else inst.CLOSETH_RANGE
    assert len(comps) == len(sizes)
    for n, comp in zip(sizes, comps):
        a, b = (comp.higher, comp.lower) if name == "DeepTh" else (comp.lower, comp.higher)
        pool = comp.pool
        assert len(a) == len(b) == 2 * n
        assert [grade(pool, d) for d in a] == [inst.BINARY] + [0] * (2 * n - 1)
        assert [grade(pool, d) for d in b] == [0] * n + [inst.BINARY] * n
        assert sum(g[0] > 0 for g in pool.grades.values()) == n and len(pool.grades) == 3 * n - 1


@pytest.mark.parametrize("multi", [False, True])
def test_conf_appends_a_non_relevant_document(multi: bool) -> None:
    for comp in draw("Conf", multi_aspect=multi):
        pool = comp.pool
        assert len(pool.intents) == (3 if multi else 1)
        assert comp.lower[:-1] == comp.higher and 1 <= len(comp.higher) <= 7
        assert relevant_intents(pool, comp.lower[-1]) == []
        assert pool.weights == tuple(1 / len(pool.intents) for _ in pool.intents)


# -- diversity-oriented constraints ---------------------------------------------------------------------------


def test_aspdiv_raises_every_aspect_of_the_last_document() -> None:
    for comp in draw("AspDiv"):
        pool = comp.pool
        assert len(pool.intents) == 3 and comp.higher[:-1] == comp.lower[:-1] and 1 <= len(comp.lower) <= 6
        old, new = pool.grades[comp.lower[-1]], pool.grades[comp.higher[-1]]
        assert all(n == o + 1 and o <= 3 for o, n in zip(old, new))


def test_red_binary_balanced_no_overlap() -> None:
    for comp in draw("Red"):
        pool = comp.pool
        assert pool.weights == (1 / 3, 1 / 3, 1 / 3)
        assert comp.higher[:-1] == comp.lower[:-1]
        assert all(set(g) <= {0, inst.BINARY} and sum(x > 0 for x in g) <= 1 for g in pool.grades.values())
        (t,), (u,) = relevant_intents(pool, comp.lower[-1]), relevant_intents(pool, comp.higher[-1])
        prefix = comp.lower[:-1]
        covered = Counter(k for d in prefix for k in relevant_intents(pool, d))
        assert covered[t] > covered[u]
        assert sum(1 for d in prefix if not relevant_intents(pool, d)) <= 2


def test_mred_prefix_favours_t() -> None:
    for comp in draw("MRed"):
        pool = comp.pool
        assert pool.weights == (0.5, 0.5) and 1 <= len(comp.lower) - 1 <= 4
        assert all(pool.grades[d][0] > pool.grades[d][1] for d in comp.lower[:-1])
        x, y = pool.grades[comp.lower[-1]], pool.grades[comp.higher[-1]]
        assert x[1] == 0 and y[0] == 0 and x[0] == y[1] > 0


def test_sat_follows_a_fully_relevant_document() -> None:
    for comp in draw("Sat"):
        pool = comp.pool
        assert comp.lower[:-1] == comp.higher and not comp.strict
        assert all(sum(x > 0 for x in g) <= 1 for g in pool.grades.values())  # no aspect overlap
        (t,) = relevant_intents(pool, comp.higher[-1])
        assert pool.grades[comp.higher[-1]][t] == inst.SAT_TOP
        assert relevant_intents(pool, comp.lower[-1]) == [t]
        assert all(g in (0, *inst.SAT_GRADES, inst.SAT_TOP) for gs in pool.grades.values() for g in gs)


def test_asprel_heavier_aspect_at_the_last_position() -> None:
    for comp in draw("AspRel"):
        pool = comp.pool
        w = pool.weights
        assert w[0] > w[1] >= w[2]
        assert comp.higher[:-1] == comp.lower[:-1] and len(comp.lower) <= 5
        assert all(relevant_intents(pool, d) in ([], [2]) for d in comp.lower[:-1])
        x, y = pool.grades[comp.lower[-1]], pool.grades[comp.higher[-1]]
        assert x == (0, x[1], 0) and y == (y[0], 0, 0) and x[1] == y[0] > 0
