"""Meta-evaluation methods as documents: one entry point per method, taking a score table and options and
returning JSON-ready results keyed by method then canonical measure name. The CLI (``evalserve meta``) and the
service's meta-evaluation jobs both call ``run_method``, so they give the same document for the same table.

Most methods read the table alone. Those that evaluate perturbed copies of the inputs (``scenarios``,
``robustness``: ``Method.needs_inputs``) also take the ``Sources`` the table was evaluated from -- judgments,
runs, side inputs and policies -- so they cannot run on a results document.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evaluation.meta.bootstrap import bootstrap_indices, discriminative_power
from evaluation.meta.correlation import correlation_matrix
from evaluation.meta.names import CORRELATIONS, METHOD_NAMES
from evaluation.meta.preferences import measure_labels, preference_agreement
from evaluation.meta.robustness import robustness
from evaluation.meta.scenarios import SCENARIOS, scenario_table
from evaluation.meta.significance import TESTS, compare_runs
from evaluation.meta.table import ScoreTable
from evaluation.meta.unanimity import metric_unanimity
from evaluation.params import Param
from evaluation.problems import InputError, MetaOptionError, RequestError
from evaluation.sources import Sources

#: ``progress(stage, fraction)``, as in ``evaluation.pipeline``
Progress = Callable[[str, float], None]
CORRECTIONS = ("holm", "bonferroni", "bh", "none")
#: the largest number of triplets per topic a robustness curve samples
MAX_TRIPLETS = 100_000


@dataclass(frozen=True)
class Method:
    name: str  # as in the CLI and the API (``discriminative-power``)
    key: str  # top-level key of the result document (``discriminative_power``)
    summary: str
    options: tuple[Param, ...]  # declared as measures declare theirs: kind, default, choices, range
    run: Callable[[ScoreTable, Mapping[str, Any], Progress | None, Sources | None], dict[str, Any]]
    needs_inputs: bool = False  # evaluates perturbed inputs: needs the table's Sources, not a results document


def _finite(value: float) -> float | None:
    """JSON has no NaN or infinity: undefined values (e.g. a test on identical runs) are null."""
    return float(value) if math.isfinite(value) else None


def _unanimity(table: ScoreTable, options: Mapping[str, Any], progress: Progress | None,
               sources: Sources | None) -> dict[str, Any]:
    against = options.get("against") or None
    found = metric_unanimity(table, against=against, strict=bool(options["strict"]))
    return {"unanimity": {m: _finite(v) for m, v in found.as_dict().items()},
            "pairs": found.pairs, "against": list(against or table.measures), "strict": bool(options["strict"])}


def _discriminative_power(table: ScoreTable, options: Mapping[str, Any], progress: Progress | None,
                          sources: Sources | None) -> dict[str, Any]:
    """Every measure with one shared set of resamples (common random numbers), one measure at a time so that
    progress can be reported."""
    resamples, alpha = int(options["resamples"]), float(options["alpha"])
    indices = bootstrap_indices(len(table.topics), resamples, np.random.default_rng(int(options["seed"])))
    out: dict[str, Any] = {}
    for i, measure in enumerate(table.measures):
        if progress is not None:
            progress(f"bootstrap: {measure} ({i + 1} of {len(table.measures)})", i / len(table.measures))
        found = discriminative_power(table, indices=indices, alpha=alpha, measures=[measure])
        summary = found.summary()[measure]
        out[measure] = {"significant_pairs": summary["significant"], "pairs": summary["pairs"],
                        "proportion": _finite(summary["power"]), "delta": _finite(summary["delta"]),
                        "asl": [_finite(v) for v in found.asl_curves()[measure].tolist()]}
    return {"discriminative_power": out, "resamples": resamples, "alpha": alpha, "seed": int(options["seed"]),
            "topics": len(table.topics), "runs": list(table.runs)}


def _significance(table: ScoreTable, options: Mapping[str, Any], progress: Progress | None,
                  sources: Sources | None) -> dict[str, Any]:
    correction = None if options["correction"] == "none" else str(options["correction"])
    if options["test"] == "tukey":
        correction = None  # Tukey HSD controls the family-wise error itself
    out: dict[str, Any] = {}
    for i, measure in enumerate(table.measures):
        if progress is not None:
            progress(f"testing: {measure} ({i + 1} of {len(table.measures)})", i / len(table.measures))
        tests = compare_runs(table, measure, test=str(options["test"]), correction=correction,
                             alpha=float(options["alpha"]), rng=np.random.default_rng(int(options["seed"])))
        rows = tests.rows(undefined_as_none=True)  # JSON has no NaN: undefined values are null (``_finite``)
        out[measure] = {"means": {r: _finite(v) for r, v in zip(table.runs, table.means()[i].tolist())},
                        "pairs": rows}
    return {"significance": out, "test": options["test"], "correction": correction or "none",
            "alpha": float(options["alpha"]), "seed": int(options["seed"])}


def _correlation(table: ScoreTable, options: Mapping[str, Any], progress: Progress | None,
                 sources: Sources | None) -> dict[str, Any]:
    method = str(options["method"])
    matrix = correlation_matrix(table, method)  # type: ignore[arg-type]
    return {"correlation": {a: {b: _finite(float(matrix[i, j])) for j, b in enumerate(table.measures)}
                            for i, a in enumerate(table.measures)},
            "method": method, "ties": "systems tied in mean score are ordered by name (tau_ap)"}


def _advice(table: ScoreTable, options: Mapping[str, Any], progress: Progress | None,
            sources: Sources | None) -> dict[str, Any]:
    """Unanimity, discriminative power and the correlation with the primary measure, each as its own method
    computes it, with each measure's axiomatic profile as used, read into the advice table and its sentences."""
    from evaluation.meta.advice import advise, figures_from

    primary = options["primary"] or table.measures[0]
    if not isinstance(primary, str) or primary not in table.measures:
        raise MetaOptionError(f"advice: primary must be one of the measures ({', '.join(table.measures)}), not"
                              f" {primary!r}")
    power_options = {k: options[k] for k in ("resamples", "alpha", "seed")}
    if progress is not None:
        progress("unanimity", 0.0)
    unanimity = _unanimity(table, {"against": (), "strict": False}, None, None)
    power = _discriminative_power(table, power_options, None if progress is None else (
        lambda stage, f: progress(stage, 0.1 + 0.7 * f)), None)
    if progress is not None:
        progress("correlation and axiomatic profiles", 0.8)
    correlation = _correlation(table, {"method": options["correlation"]}, None, None)
    found = advise(figures_from(unanimity, power, correlation, primary, axiom_profiles(table.measures)),
                   primary=primary, alpha=float(options["alpha"]), resamples=int(options["resamples"]),
                   runs=len(table.runs), topics=len(table.topics), correlation=str(options["correlation"]))
    document = found.to_json()
    return {"advice": document.pop("measures"), **document, "seed": int(options["seed"])}


def axiom_profiles(measures: Sequence[str]) -> dict[str, dict[str, str]]:
    """Each measure's constraint -> status profile as used (its parameters and cutoff), checked once per process
    (``evaluation.axioms.harness.profiles``); a measure the harness cannot resolve has an empty profile."""
    from evaluation.axioms.harness import profiles, resolve
    from evaluation.measures.registry import default_registry
    from evaluation.problems import EvaluationError

    forms = {}
    for name in measures:
        try:
            forms[name] = resolve(default_registry().parse(name).name)
        except EvaluationError:
            continue
    found = profiles(list(forms.values())) if forms else {}
    return {name: {c: o.status for c, o in found[form.name].items()} for name, form in forms.items()}


def _preference_agreement(table: ScoreTable, options: Mapping[str, Any], progress: Progress | None,
                          sources: Sources | None) -> dict[str, Any]:
    prefs: Sequence[Mapping[str, str]] = options.get("preferences") or ()
    if not prefs:
        raise InputError.single("no-preferences", "preference agreement needs user preference labels"
                                " (topic, left run, right run, label, user)")
    topic_at = {t: k for k, t in enumerate(table.topics)}
    run_at = {r: k for k, r in enumerate(table.runs)}
    missing = sorted({p[f] for p in prefs for f, where in (("topic", topic_at), ("left", run_at), ("right", run_at))
                      if p[f] not in where})
    if missing:
        raise InputError.single("preference-unknown-name", "preference labels name topics or runs the results"
                                f" do not have: {', '.join(missing[:10])}")
    topics = np.array([topic_at[p["topic"]] for p in prefs])
    left = np.array([run_at[p["left"]] for p in prefs])
    right = np.array([run_at[p["right"]] for p in prefs])
    users: dict[str, list[int]] = {}
    for k, p in enumerate(prefs):
        users.setdefault(p.get("user") or "user", []).append(k)
    out: dict[str, Any] = {}
    for i, measure in enumerate(table.measures):
        labels = measure_labels(table.values[i, left, topics], table.values[i, right, topics])
        taus = {u: preference_agreement(labels[ks], [prefs[k]["label"] for k in ks]).tau for u, ks in users.items()}
        if len(taus) > 1:
            taus["average"] = float(np.mean(list(taus.values())))
        out[measure] = {u: _finite(v) for u, v in taus.items()}
    return {"preference_agreement": out, "pairs": len(prefs), "users": sorted(users)}


def _scenarios(table: ScoreTable, options: Mapping[str, Any], progress: Progress | None,
               sources: Sources | None) -> dict[str, Any]:
    """MU of every measure on the official scores and on each simulated scenario (8.2, AMIGO18 Table 2)."""
    assert sources is not None  # run_method checks
    against, strict, seed = options.get("against") or None, bool(options["strict"]), int(options["seed"])
    chosen = list(dict.fromkeys(options["scenarios"] or SCENARIOS))
    mu = {"official": metric_unanimity(table, against=against, strict=strict)}
    for k, scenario in enumerate(chosen):
        if progress is not None:
            progress(f"scenario: {scenario} ({k + 1} of {len(chosen)})", k / len(chosen))
        scored = scenario_table(sources, table.measures, scenario, seed)
        mu[scenario] = metric_unanimity(scored, against=against, strict=strict)
    values = {s: found.as_dict() for s, found in mu.items()}
    return {"scenarios": {m: {s: _finite(v[m]) for s, v in values.items()} for m in table.measures},
            "simulated": chosen, "pairs": {s: found.pairs for s, found in mu.items()},
            "against": list(against or table.measures), "strict": strict, "seed": seed}


def _robustness(table: ScoreTable, options: Mapping[str, Any], progress: Progress | None,
                sources: Sources | None) -> dict[str, Any]:
    """Mean Kendall tau between each measure's system ranking on N sampled triplets per topic and on every
    available preference, per N (8.8, CHANDAR13)."""
    assert sources is not None  # run_method checks
    sizes = tuple(dict.fromkeys(int(n) for n in options["sizes"]))
    found = robustness(table, sources, sizes=sizes, repetitions=int(options["repetitions"]),
                       per_triplet=int(options["per_triplet"]), seed=int(options["seed"]),
                       variant="a" if options["tau"] == "tau_a" else "b", progress=progress)
    return {"robustness": {m: {str(n): _finite(v) for n, v in curve.items()} for m, curve in found.tau.items()},
            "sizes": list(sizes), "repetitions": int(options["repetitions"]),
            "per_triplet": int(options["per_triplet"]), "tau": options["tau"], "seed": int(options["seed"]),
            "sampled_from": found.sampled_from, "runs": list(table.runs)}


SEED = Param("seed", "int", 0, "seed of the random resamples (results are reproducible)")
SIMULATION_SEED = Param("seed", "int", 0, "seed of the simulation (results are reproducible)", minimum=0)
ALPHA = Param("alpha", "float", 0.05, "significance level", minimum=0, maximum=1, min_exclusive=True,
              max_exclusive=True)
METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("unanimity", "unanimity", "Metric Unanimity of each measure against the others (spec 8.1)",
               (Param("against", "list", (), "restrict the comparison set to these measures"),
                Param("strict", "bool", False, "unanimity with > instead of >=")), _unanimity),
        Method("discriminative-power", "discriminative_power",
               "paired bootstrap test over every run pair, discriminative power, Delta and ASL curves (8.3-8.4)",
               (Param("resamples", "int", 1000, "bootstrap samples B", minimum=1, maximum=100_000), ALPHA, SEED),
               _discriminative_power),
        Method("significance", "significance", "pairwise significance tests between runs, per measure",
               (Param("test", "choice", "t", "paired t, Fisher randomisation, paired bootstrap or randomised Tukey"
                      " HSD", choices=TESTS),
                Param("correction", "choice", "holm", "multiple-comparison correction", choices=CORRECTIONS),
                ALPHA, SEED), _significance),
        Method("correlation", "correlation", "rank correlation of the measures' system rankings (8.5-8.6)",
               (Param("method", "choice", "tau_b", "Kendall tau-a, tau-b, tau_ap (row examined against column as"
                      " gold) or symmetric tau_ap", choices=CORRELATIONS),), _correlation),
        Method("advice", "advice",
               "measure advice: Metric Unanimity, discriminative power, correlation with the primary measure and"
               " axiomatic profile of each measure, with sentences on which to choose for what",
               (Param("primary", "choice", "", "the measure the others are correlated with (default: the first)"),
                Param("resamples", "int", 1000, "bootstrap samples B", minimum=1, maximum=100_000), ALPHA, SEED,
                Param("correlation", "choice", "tau_b", "Kendall tau-a, tau-b, tau_ap or symmetric tau_ap",
                      choices=CORRELATIONS)), _advice),
        Method("preference-agreement", "preference_agreement",
               "agreement of each measure's per-topic preferences with user preference labels (8.7)",
               (Param("preferences", "list", (), "labels: topic, left run, right run, label (>, <, =), user"),),
               _preference_agreement),
        Method("scenarios", "scenarios",
               "Metric Unanimity on the official scores and on simulated scenarios of the judgments and runs (8.2)",
               (Param("scenarios", "list", (), "scenarios to simulate (default all): " + ", ".join(SCENARIOS),
                      choices=SCENARIOS),
                Param("against", "list", (), "restrict the comparison set to these measures"),
                Param("strict", "bool", False, "unanimity with > instead of >="), SIMULATION_SEED),
               _scenarios, needs_inputs=True),
        Method("robustness", "robustness",
               "rank correlation of Prf/nPrf system rankings on N sampled preference triplets per topic with the"
               " rankings on every preference, per N (8.8)",
               (Param("sizes", "list", (10, 20, 50, 100), "triplets per topic, N (each at least 1)"),
                Param("repetitions", "int", 10, "samples per N", minimum=1, maximum=1000),
                Param("per_triplet", "int", 5, "profiles drawn per triplet", minimum=1, maximum=100),
                Param("tau", "choice", "tau_a", "Kendall tau-a or tau-b", choices=("tau_a", "tau_b")),
                SIMULATION_SEED), _robustness, needs_inputs=True),
    )
}

assert tuple(METHODS) == METHOD_NAMES, "evaluation.meta.names.METHOD_NAMES lists every method, in order"


def options_for(method: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The method's options with defaults filled in and values checked; MetaOptionError names what is wrong."""
    found = METHODS.get(method)
    if found is None:
        raise MetaOptionError(f"unknown meta-evaluation method {method!r}; choose one of {', '.join(METHODS)}")
    known = {o.name: o for o in found.options}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise MetaOptionError(f"{method} has no option {', '.join(unknown)}; it takes {', '.join(known) or 'none'}")
    out: dict[str, Any] = {}
    for name, param in known.items():  # types and choices first, then ranges
        out[name] = given.get(name, param.default)
        problem = param.value_problem(out[name])
        if problem:
            raise MetaOptionError(f"{method}: {problem}")
    for name, convert in _LISTS.items():
        if name in out:
            try:
                out[name] = convert(out[name])
            except ValueError as exc:
                raise MetaOptionError(f"{method}: {exc}") from None
    for name, param in known.items():
        problem = param.range_problem(out[name])
        if problem:
            raise MetaOptionError(f"{method}: {problem}")
    return out


def _sizes(given: Any) -> tuple[int, ...]:
    """Triplets per topic of the robustness curve: whole numbers from 1 to MAX_TRIPLETS, at most 50 of them."""
    if not given or len(given) > 50 or any(isinstance(n, bool) or not isinstance(n, (int, float)) or n != int(n)
                                           or not 1 <= n <= MAX_TRIPLETS for n in given):
        raise MetaOptionError("sizes must list 1 to 50 whole numbers of triplets per topic, each from 1 to"
                              f" {MAX_TRIPLETS}")
    return tuple(int(n) for n in given)


def _names(given: Any) -> tuple[str, ...]:
    if not all(isinstance(v, str) for v in given):
        raise MetaOptionError("lists of measures and scenarios hold names (strings)")
    return tuple(given)


def _preferences(given: Any) -> tuple[dict[str, str], ...]:
    """Labels as given over the API (a list of objects) or by the reader, checked and normalised."""
    from evaluation.formats.preferences import LABELS

    if not isinstance(given, (list, tuple)):
        raise MetaOptionError("preferences must be a list of {topic, left, right, label, user} objects")
    out = []
    for k, item in enumerate(given):
        if not isinstance(item, dict) or not all(isinstance(item.get(f), str) for f in ("topic", "left", "right",
                                                                                      "label")):
            raise MetaOptionError(f"preference {k + 1}: needs string fields topic, left, right and label")
        label = LABELS.get(item["label"].lower())
        if label is None:
            raise MetaOptionError(f"preference {k + 1}: label {item['label']!r} is not one of >, <, =")
        out.append({"topic": item["topic"], "left": item["left"], "right": item["right"], "label": label,
                    "user": str(item.get("user") or "user")})
    return tuple(out)


#: list options, normalised and their items checked after the declared checks (kinds, choices)
_LISTS: dict[str, Callable[[Any], Any]] = {"preferences": _preferences, "against": _names, "scenarios": _names,
                                           "sizes": _sizes}


def run_method(method: str, table: ScoreTable, options: Mapping[str, Any] | None = None,
               progress: Progress | None = None, sources: Sources | None = None) -> dict[str, Any]:
    """Run one method on a score table (evaluated from ``sources``, which the methods that evaluate perturbed
    inputs need): the result document, with the table's shape under ``meta``."""
    checked = options_for(method, options or {})
    if METHODS[method].needs_inputs and sources is None:
        raise RequestError(f"{method} evaluates perturbed judgments and runs: give the judgments, runs and measures"
                           " to evaluate, not results already evaluated")
    doc = METHODS[method].run(table, checked, progress, sources)
    if progress is not None:
        progress("done", 1.0)
    return {"meta": {"method": method, "measures": list(table.measures), "runs": len(table.runs),
                     "topics": len(table.topics)}, **doc}
