"""Measure advice (issue 30): per measure its Metric Unanimity (spec 8.1), discriminative power (8.3), rank
correlation with the primary measure (8.5) and axiomatic profile (7), with plain sentences on what each says and
which measure to choose for what purpose.

Pure and deterministic: ``advise`` takes the figures the meta-evaluation methods computed (``figures_from``
reads them off their documents) and returns rows and sentences; nothing is resampled here. Ties are ties: the
measures sharing a best (or worst) value are all named, and discriminative power is compared on counts of
significant pairs, never on rounded proportions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from evaluation.axioms.constraints import CONSTRAINTS

RELEVANCE = tuple(c.name for c in CONSTRAINTS if c.group == "relevance")
DIVERSITY = tuple(c.name for c in CONSTRAINTS if c.group == "diversity")
#: the rule of thumb of spec 8.5 (CHANDAR13): at or above, equivalent rankings; at or below, noticeably different
EQUIVALENT_TAU = 0.9
DIFFERENT_TAU = 0.8
#: MU values this close are the same value (they come from counts of pairs: only rounding separates equal ones)
MU_TIE = 1e-9


@dataclass(frozen=True)
class Figures:
    """What the methods found for one measure: MU (None: undefined or minus infinity), the significant pairs out
    of all run pairs, the rank correlation with the primary measure (None: undefined) and the constraint ->
    status profile (empty: not checked)."""

    measure: str
    unanimity: float | None
    significant: int
    pairs: int
    tau: float | None
    axioms: Mapping[str, str] = field(default_factory=dict)

    @property
    def power(self) -> float | None:
        return self.significant / self.pairs if self.pairs else None

    def satisfied(self, group: Sequence[str]) -> int:
        return sum(1 for c in group if self.axioms.get(c) == "satisfied")

    def applicable(self, group: Sequence[str]) -> int:
        return sum(1 for c in group if self.axioms.get(c) in ("satisfied", "violated"))


@dataclass(frozen=True)
class Advice:
    """The recommendation table and its sentences. ``best_*``/``worst_*`` name every measure sharing the value."""

    primary: str
    correlation: str
    alpha: float
    resamples: int
    runs: int
    topics: int
    rows: tuple[Figures, ...]
    best_unanimity: tuple[str, ...]
    worst_unanimity: tuple[str, ...]
    best_power: tuple[str, ...]
    worst_power: tuple[str, ...]
    most_relevance: tuple[str, ...]
    most_diversity: tuple[str, ...]
    sentences: tuple[str, ...]

    def header(self) -> tuple[str, ...]:
        return ("measure", "MU", "significant", "power", f"{self.correlation} vs primary", "constraints")

    def table(self) -> tuple[tuple[str, ...], ...]:
        """The rows as strings: MU to 4 decimals, significant pairs of all pairs, power as a percentage, tau to 3
        decimals, the profile as the constraints satisfied per group (n/a: the group does not apply)."""
        return tuple((f.measure + (" (primary)" if f.measure == self.primary else ""), _num(f.unanimity, 4),
                      f"{f.significant}/{f.pairs}", "-" if f.power is None else f"{100 * f.power:.1f}%",
                      _num(f.tau, 3), _profile_cell(f)) for f in self.rows)

    def to_json(self) -> dict[str, Any]:
        return {
            "primary": self.primary, "correlation": self.correlation, "alpha": self.alpha,
            "resamples": self.resamples, "runs": self.runs, "topics": self.topics,
            "measures": {f.measure: {
                "unanimity": f.unanimity, "significant_pairs": f.significant, "pairs": f.pairs,
                "discriminative_power": f.power, "tau_with_primary": f.tau, "axioms": dict(f.axioms),
                "relevance_constraints": f"{f.satisfied(RELEVANCE)}/{len(RELEVANCE)}",
                "diversity_constraints": f"{f.satisfied(DIVERSITY)}/{len(DIVERSITY)}",
            } for f in self.rows},
            "best": {"unanimity": list(self.best_unanimity), "discriminative_power": list(self.best_power),
                     "relevance_constraints": list(self.most_relevance),
                     "diversity_constraints": list(self.most_diversity)},
            "worst": {"unanimity": list(self.worst_unanimity), "discriminative_power": list(self.worst_power)},
            "table": {"header": list(self.header()), "rows": [list(r) for r in self.table()]},
            "sentences": list(self.sentences),
        }


def advise(figures: Sequence[Figures], *, primary: str, alpha: float, resamples: int, runs: int, topics: int,
           correlation: str = "tau_b") -> Advice:
    """The advice on ``figures`` (one per measure, in table order; ``primary`` among them)."""
    if not figures:
        raise ValueError("advice needs at least one measure")  # internal: the methods give one row per measure
    if primary not in {f.measure for f in figures}:
        raise ValueError(f"primary measure {primary!r} is not among the measures")  # internal: checked by callers
    rows = tuple(figures)
    mu = {f.measure: f.unanimity for f in rows if f.unanimity is not None and math.isfinite(f.unanimity)}
    power = {f.measure: f.significant for f in rows if f.pairs}
    relevance = {f.measure: float(f.satisfied(RELEVANCE)) for f in rows if f.applicable(RELEVANCE)}
    diversity = {f.measure: float(f.satisfied(DIVERSITY)) for f in rows if f.applicable(DIVERSITY)}
    best_mu, worst_mu = _extremes(mu, MU_TIE)
    best_power, worst_power = _extremes({m: float(v) for m, v in power.items()}, 0.0)
    advice = Advice(primary, correlation, alpha, resamples, runs, topics, rows, best_mu, worst_mu, best_power,
                    worst_power, _extremes(relevance, 0.0)[0], _extremes(diversity, 0.0)[0], ())
    return replace(advice, sentences=tuple(_sentences(advice)))


def figures_from(unanimity: Mapping[str, Any], power: Mapping[str, Any], correlation: Mapping[str, Any],
                 primary: str, profiles: Mapping[str, Mapping[str, str]] | None = None) -> list[Figures]:
    """The figures of each measure from the documents of the unanimity, discriminative-power and correlation
    methods (``run_method``) and each measure's constraint profile (measure -> constraint -> status)."""
    by_power = power["discriminative_power"]
    matrix = correlation["correlation"]
    return [Figures(m, _float(unanimity["unanimity"].get(m)), int(by_power[m]["significant_pairs"]),
                    int(by_power[m]["pairs"]), _float(matrix[m].get(primary)), dict((profiles or {}).get(m, {})))
            for m in by_power]


def _extremes(values: Mapping[str, float], tie: float) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The measures sharing the highest value and those sharing the lowest (within ``tie``), in table order."""
    if not values:
        return (), ()
    top, bottom = max(values.values()), min(values.values())
    return (tuple(m for m, v in values.items() if v >= top - tie),
            tuple(m for m, v in values.items() if v <= bottom + tie))


def _sentences(a: Advice) -> list[str]:
    """What each figure says, then which measure to choose for what, then where the primary measure stands."""
    by = {f.measure: f for f in a.rows}
    out = [_about_unanimity(a, by), *_about_power(a, by), *_about_tau(a), *_about_axioms(a, by)]
    return out + _choices(a, by) + _primary_ranks(a, by)


def _about_unanimity(a: Advice, by: Mapping[str, Figures]) -> str:
    if not a.best_unanimity:
        return ("Metric Unanimity is undefined for every measure here: no pair of runs is improved on a topic by all"
                " the other measures at once.")
    sentence = (f"Metric Unanimity (Amigo et al., SIGIR 2018) says how often a measure prefers one run to another"
                f" on a topic when none of the other measures here prefers the other (ties count half), as log2 of"
                f" twice that rate: 1 is every time, 0 no more often than chance. Highest:"
                f" {_best(a.best_unanimity, by, 'unanimity')}")
    if len(a.best_unanimity) < len(a.rows):
        sentence += f"; lowest: {_best(a.worst_unanimity, by, 'unanimity')}"
    return sentence + (". MU rewards agreeing with the other measures of this table; it is not agreement with"
                       " users.")


def _about_power(a: Advice, by: Mapping[str, Figures]) -> list[str]:
    pairs = next((f.pairs for f in a.rows if f.pairs), 0)
    if not pairs:
        return []
    sentence = (f"Discriminative power (Sakai, SIGIR 2006) is the share of the {_count(pairs, 'pair')} of the"
                f" {a.runs} runs whose difference a two-sided paired bootstrap test (B = {a.resamples}) finds"
                f" significant at alpha = {_g(a.alpha)} over these {a.topics} topics. ")
    if len(a.best_power) < len(a.rows):
        sentence += f"Most: {_counted(a.best_power, by)}; fewest: {_counted(a.worst_power, by)}"
    else:
        sentence += f"Every measure finds the same number: {_counted(a.best_power, by)}"
    return [sentence + ". A more discriminative measure separates more runs with the same topics; it does not"
            f" show that it measures the right thing. One pair moves it by {100 / pairs:.1f} points, so a"
            " difference of a pair or two is no evidence."]


def _about_tau(a: Advice) -> list[str]:
    others = [f for f in a.rows if f.measure != a.primary]
    if not others:
        return []
    equivalent = [f.measure for f in others if f.tau is not None and f.tau >= EQUIVALENT_TAU]
    different = [f.measure for f in others if f.tau is not None and f.tau <= DIFFERENT_TAU]
    between = [f.measure for f in others if f.tau is not None and DIFFERENT_TAU < f.tau < EQUIVALENT_TAU]
    values = [f"{f.measure} {_num(f.tau, 3)}" for f in others]
    sentence = (f"{a.correlation} between each measure's ranking of the runs by mean score and the primary measure"
                f" {a.primary}'s: {', '.join(values)}. By the rule of thumb Chandar and Carterette cite (0.9 or"
                " more: equivalent rankings; 0.8 or less: noticeably different)")
    groups = [(equivalent, "ranks the runs equivalently", "rank the runs equivalently"),
              (different, "ranks them noticeably differently", "rank them noticeably differently"),
              (between, "is in between", "are in between")]
    said = [f"{_and(ms)} {one if len(ms) == 1 else many}" for ms, one, many in groups if ms]
    return [sentence + (", " + "; ".join(said) if said else ", no correlation is defined") + "."]


def _about_axioms(a: Advice, by: Mapping[str, Figures]) -> list[str]:
    checked = [f for f in a.rows if f.axioms]
    if not checked:
        return []
    ad_hoc = [f.measure for f in checked if f.applicable(DIVERSITY) == 0]
    diverse = [f for f in checked if f.applicable(DIVERSITY)]
    parts: list[str] = []
    for group, names, best, applies in (
            ("relevance", RELEVANCE, a.most_relevance, [f for f in checked if f.applicable(RELEVANCE)]),
            ("diversity", DIVERSITY, a.most_diversity, diverse)):
        if not best:
            continue
        count = by[best[0]].satisfied(names)
        if len(best) == len(applies) and len(best) > 1:
            parts.append(f"of the five {group} constraints {_and(best)} each satisfy {count}")
        else:
            parts.append(f"of the five {group} constraints {_and(best)}"
                         f" {'satisfies' if len(best) == 1 else 'satisfy'} the most ({count})")
    if diverse and not any(f.satisfied(DIVERSITY) == len(DIVERSITY) for f in diverse):
        parts[-1] += ", and none all five (in the paper's graded forms ERR-IA and RBU do)"
    if ad_hoc:
        parts.append(f"{_and(ad_hoc)} {'ignores' if len(ad_hoc) == 1 else 'ignore'} intents, so the diversity"
                     " constraints do not apply")
    return ["Axiomatic profile (the ten constraints of Amigo et al. 2018, checked on each measure as used here,"
            " parameters and cutoff included): " + "; ".join(parts) + ". A profile is a property of the measure,"
            " not of these runs."]


def _choices(a: Advice, by: Mapping[str, Figures]) -> list[str]:
    """Which measure for which purpose; nothing is recommended on a criterion where every measure ties."""
    n = len(a.rows)
    out = []
    if a.best_power and len(a.best_power) < n:
        margin = by[a.best_power[0]].significant - max(f.significant for f in a.rows
                                                       if f.measure not in a.best_power)
        close = f" (ahead by only {margin} pair{'s' if margin > 1 else ''}: close to a tie)" if margin < 3 else ""
        blind = [m for m in a.best_power if by[m].axioms and not by[m].applicable(DIVERSITY)]
        seeing = {f.measure: float(f.significant) for f in a.rows if f.applicable(DIVERSITY)}
        if blind and seeing:
            best_seeing = _extremes(seeing, 0.0)[0]
            subject = "it" if len(a.best_power) == 1 else _and(blind)
            close += (f"; {subject} {'ignores' if len(blind) == 1 else 'ignore'} intents: of the measures that"
                      f" read them, {_counted(best_seeing, by)}"
                      f" {'is' if len(best_seeing) == 1 else 'are'} the most discriminative")
        out.append(f"To separate systems reliably with these topics (the official ranking, significance tests),"
                   f" prefer {_and(a.best_power)}{close}.")
    if a.best_unanimity and len(a.best_unanimity) < n:
        out.append(f"To follow what all the other measures agree on, prefer {_and(a.best_unanimity)}.")
    if a.most_diversity and len(a.most_diversity) < sum(1 for f in a.rows if f.applicable(DIVERSITY)):
        out.append(f"For the formal properties of a diversity measure (redundancy, aspect coverage and weights),"
                   f" prefer {_and(a.most_diversity)}.")
    conflict = [m for m in a.best_unanimity if m in a.worst_power and len(a.best_power) < n]
    if conflict:
        one = len(conflict) == 1
        out.append(f"{_and(conflict)} {'has' if one else 'have'} the highest MU but the lowest discriminative"
                   f" power: {'it follows' if one else 'they follow'} the other measures where they all agree, but"
                   f" with {a.topics} topics {'it finds' if one else 'they find'} fewer significant differences;"
                   f" report {'it' if one else 'them'} beside a more discriminative measure rather than instead.")
    both = [m for m in a.best_unanimity if m in a.best_power]
    decided = 0 < len(a.best_unanimity) < n and 0 < len(a.best_power) < n
    if both and decided:
        out.append(f"{_and(both)} {'is' if len(both) == 1 else 'are'} best on both MU and discriminative power: a"
                   " strong candidate for the primary measure.")
    elif decided:
        out.append("No measure is best on both MU and discriminative power: choose by purpose, and publish the"
                   " others beside it.")
    return out


def _primary_ranks(a: Advice, by: Mapping[str, Figures]) -> list[str]:
    p, n = by[a.primary], len(a.rows)
    ranks = []
    if p.unanimity is not None and math.isfinite(p.unanimity) and a.best_unanimity:
        ranks.append(f"{_rank(p.measure, {f.measure: f.unanimity for f in a.rows}, MU_TIE)} of {n} on MU")
    if p.pairs:
        ranks.append(f"{_rank(p.measure, {f.measure: float(f.significant) for f in a.rows if f.pairs}, 0.0)}"
                     f" of {n} on discriminative power")
    return [f"The primary measure {a.primary} ranks {' and '.join(ranks)} (ties share a rank)."] if ranks else []


def _rank(measure: str, values: Mapping[str, float | None], tie: float) -> int:
    """1 + the number of measures with a clearly higher value (competition ranking: ties share a rank)."""
    own = values[measure]
    assert own is not None
    return 1 + sum(1 for v in values.values() if v is not None and math.isfinite(v) and v > own + tie)


def _best(names: Sequence[str], by: Mapping[str, Figures], what: str) -> str:
    value = getattr(by[names[0]], what)
    tied = "tied, " if len(names) > 1 else ""
    return f"{_and(names)} ({tied}{_num(value, 3)})"


def _counted(names: Sequence[str], by: Mapping[str, Figures]) -> str:
    f = by[names[0]]
    each = "each " if len(names) > 1 else ""
    return f"{_and(names)} ({each}{f.significant} of {f.pairs}, {100 * (f.power or 0):.1f}%)"


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _and(names: Sequence[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _profile_cell(f: Figures) -> str:
    if not f.axioms:
        return "not checked"
    diversity = f"{f.satisfied(DIVERSITY)}/{len(DIVERSITY)}" if f.applicable(DIVERSITY) else "n/a"
    return f"relevance {f.satisfied(RELEVANCE)}/{len(RELEVANCE)}, diversity {diversity}"


def _num(value: float | None, digits: int) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _g(value: float) -> str:
    return f"{value:g}"


def _float(value: Any) -> float | None:
    return None if value is None else float(value)
