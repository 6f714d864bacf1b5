"""Reproduce two meta-evaluation experiments of the seed papers on TREC Web 2012 (docs/reproductions.md).

1. Metric Unanimity (Amigo, Spina & Carrillo-de-Albornoz, SIGIR 2018, Table 2): the paper's measure set and
   parameter grid, mapped onto evalserve's canonical names, on the TREC Web 2012 diversity qrels, in the official
   scenario and the four simulated scenarios of spec 8.2 (``evaluation.meta.scenarios``).
2. Discriminative power (Sakai & Robertson, EVIA 2008, Table 6): the paired bootstrap test (B = 1000, alpha =
   0.05) over every run pair for AP, Q and the NCU family (stop = u, rb, gu, first; beta = 0, 1, 10000; gain and
   stop tables 1:2:3 and 1:5:10) on the TREC Web 2012 ad hoc (graded) qrels; optionally (``--ntcir``) also on the
   NTCIR-13 WWW-1 graded qrels with runs simulated from the judgments.

Run set: the four real TREC Web 2012 runs (Indri query likelihood, ClueWeb09 category A/B, with and without the
spam filter) plus ``--synthetic`` runs derived from them per topic, without looking at the judgments: ``perturb``
(one real run, Gaussian noise on its min-max normalised scores), ``fuse`` (weighted CombSUM of two real runs),
``rrf`` (reciprocal-rank fusion of two or three real runs) and ``swap`` (one real run, every document displaced by
a uniform random offset of up to w ranks), each cut at a run-level depth (20 ... 1000, or a random depth per
topic). The runs are written as TREC run files (ranked, distinct scores) and read back with the engine's reader.

Everything is seeded (``--seed``); the same arguments give the same JSON. Results: ``<out>/reproduce_meta.json``
(machine-readable), ``<out>/reproduce_meta.md`` (the markdown tables, also printed), ``<out>/runs/`` (the run
files), ``<out>/measures-*.txt`` (the measure lists, one per line, for ``evalserve evaluate -m``).

Usage: ``python3 bench/reproduce_meta.py [--synthetic 26] [--resamples 1000] [--alpha 0.05] [--seed 2018]
[--scenarios official,graded_relevance,aspect_weights,random_truncation,short_lists] [--grid full|small]
[--parts mu,power] [--ntcir] [--ntcir-runs 16] [--data /work/shared/data] [--out bench/work/reproduce_meta]``
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from evaluation.evaluator import evaluate  # noqa: E402
from evaluation.formats import read_qrels, read_run  # noqa: E402
from evaluation.measures.registry import default_registry  # noqa: E402
from evaluation.meta import SCENARIOS, ScoreTable, kendall_tau, metric_unanimity, score_scenario, simulate  # noqa: E402
from evaluation.meta.methods import run_method  # noqa: E402
from evaluation.model import Qrels, Run  # noqa: E402
from evaluation.ranking import rank_run  # noqa: E402

DEFAULT_DATA = Path("/work/shared/data")
DEFAULT_OUT = HERE / "work" / "reproduce_meta"
SEED = 2018
DIVERSITY_QRELS = Path("trec-web-2009-2014") / "2012" / "qrels-for-ndeval.txt"
ADHOC_QRELS = Path("trec-web-2009-2014") / "2012" / "qrels.adhoc.txt"
NTCIR_QRELS = Path("ntcir-www") / "wwwE.qrels"
REAL_RUNS = ("ql-results-cata", "ql-results-catb", "ql-results-cata-filtered", "ql-results-catb-filtered")
ALL_SCENARIOS = ("official", *SCENARIOS)
TIES = "trec"
#: MU is also computed on scores rounded to this many decimals (a sensitivity check on exact ties)
ROUND_DECIMALS = 12

# ------------------------------------------------------------------------------------------------ measure sets

#: Amigo et al.'s grid (Table 2 and Section 6.2): cutoffs, RBP/NRBP/RBU patience, alpha, effort
GRIDS: dict[str, dict[str, tuple[Any, ...]]] = {
    "full": {"k": (10, 20, 50, 100, 1000), "k_recall": (10, 20, 50, 100), "p": (0.8, 0.9, 0.99),
             "alpha": (0.1, 0.25, 0.5, 0.75), "e": (0.001, 0.05, 0.1, 0.5)},
    "small": {"k": (10, 100), "k_recall": (10, 100), "p": (0.8, 0.99), "alpha": (0.5,), "e": (0.05,)},
}

#: how each measure of the paper is expressed here (family -> our name pattern, what differs)
MU_MAPPING: tuple[tuple[str, str, str], ...] = (
    ("AP", "AP", "ad hoc AP on g(d) = max_t g_t(d) (trec_eval AP, binary at grade >= 1)"),
    ("RR", "RR", "ad hoc reciprocal rank on max_t g_t(d)"),
    ("AP-IA", "AP_IA(variant=paper)", "intent-weighted mean of per-intent AP"),
    ("RR-IA", "RR_IA", "intent-weighted mean of per-intent RR"),
    ("P@k", "P@k", "ad hoc precision on max_t g_t(d)"),
    ("ERR@k", "ERR@k", "gdeval's ERR, R = (2^g - 1)/16, on max_t g_t(d)"),
    ("DCG@k / nDCG@k", "nDCG(gain=exp)@k", "normalised; at topic level it orders rankings as DCG does"),
    ("P-IA@k", "P_IA(variant=paper)@k", "intent-weighted per-intent P@k"),
    ("ERR-IA@k", "ERR_IA(variant=paper)@k", "Chapelle/Agrawal ERR-IA, intent weights, R = (2^g - 1)/2^gmax"),
    ("DCG-IA@k / nDCG-IA@k", "nDCG_IA(gain=exp)@k", "intent-weighted per-intent nDCG"),
    ("S-Recall@k", "StRecall@k", "intents with a relevant document (T*) as denominator"),
    ("RBP (p)", "RBP(p=p,rel=graded)", "graded RBP, rel = g / gmax, on max_t g_t(d)"),
    ("NRBP (p, alpha)", "NRBP(alpha=a,beta=p)", "ndeval's form: binary per-intent gain, uniform intent weights"),
    ("alpha-DCG@k (alpha)", "alpha_nDCG(alpha=a,gain=graded)@k", "graded novelty gain r(d,t); greedy ideal"),
    ("EU (alpha, e)", "EU(alpha=a,e=e)", "whole run; discount 1/(1 + log2 i); r = (2^g - 1)/2^gmax_t"),
    ("RBU (p, e)", "RBU(p=p,e=e)", "whole run; RBP-scaled weights (1-p)p^(i-1): the same comparisons as Eq. 11"),
)

#: measures of the paper's set that are not part of the reproduction, and why
MU_NOT_EXPRESSED: tuple[tuple[str, str], ...] = (
    ("NRBP with graded r(d,t)", "our NRBP is ndeval's binary-gain, uniform-weight form; there is no graded NRBP, so "
     "NRBP ignores scenario 1's grades and scenario 2's weights"),
    ("RBU / EU / alpha-DCG at depth 10,000", "the 2012 runs stop at 1,000 documents; whole-run forms are used"),
    ("continuous grades in scenario 1", "the engine's grades are integers: a grade g > 0 becomes a uniform integer "
     "in 1..g (spec 8.2 with resolution 1), so binary judgments are untouched"),
    ("S-Recall@1000", "not in the paper's table; left out as in the paper"),
)


def amigo_measures(grid: str) -> list[str]:
    """The paper's measure set over the grid, in our canonical spelling."""
    g = GRIDS[grid]
    names = ["AP", "RR", "AP_IA(variant=paper)", "RR_IA"]
    for k in g["k"]:
        names += [f"P@{k}", f"ERR@{k}", f"nDCG(gain=exp)@{k}", f"P_IA(variant=paper)@{k}",
                  f"ERR_IA(variant=paper)@{k}", f"nDCG_IA(gain=exp)@{k}"]
    names += [f"StRecall@{k}" for k in g["k_recall"]]
    names += [f"RBP(p={p},rel=graded)" for p in g["p"]]
    names += [f"NRBP(alpha={a},beta={p})" for p in g["p"] for a in g["alpha"]]
    names += [f"alpha_nDCG(alpha={a},gain=graded)@{k}" for k in g["k"] for a in g["alpha"]]
    names += [f"EU(alpha={a},e={e})" for a in g["alpha"] for e in g["e"]]
    names += [f"RBU(p={p},e={e})" for p in g["p"] for e in g["e"]]
    return canonical(names)


def rbu_zero_effort(grid: str) -> list[str]:
    """RBU with e = 0: scored against the paper's set but not part of it (the paper reports it aside)."""
    return canonical([f"RBU(p={p},e=0)" for p in GRIDS[grid]["p"]])


GAIN_TABLES = ("1:2:3", "1:5:10")  # Sakai & Robertson's B:A:S tables; TREC grade 4 (nav) takes the top value
RB_GAMMAS = (0.9, 0.7, 0.5)
BETAS = (0, 1, 10000)


def sakai_measures() -> list[tuple[str, str]]:
    """(canonical name, label in the paper's notation) of the NCU family as in Table 6, plus stop=first."""
    out: list[tuple[str, str]] = [("NCU(stop=u,beta=0)", "u, beta=0 (AP)")]
    out += [(f"NCU(stop=rb,gamma={g},beta=0)", f"rb gamma={g}, beta=0") for g in RB_GAMMAS]
    out.append(("NCU(stop=first,beta=0)", "first, beta=0 (RR)"))
    for table in GAIN_TABLES:
        for beta in BETAS[1:]:
            tag = " (Q)" if beta == 1 else ""
            out.append((f"NCU(stop=u,beta={beta},gain={table})", f"u, beta={beta}{tag} [{table}]"))
            out += [(f"NCU(stop=rb,gamma={g},beta={beta},gain={table})", f"rb gamma={g}, beta={beta} [{table}]")
                    for g in RB_GAMMAS]
        out += [(f"NCU(stop=gu,beta={beta},gain={table})", f"gu, beta={beta} [{table}]") for beta in BETAS]
        out.append((f"NCU(stop=first,beta=1,gain={table})", f"first, beta=1 [{table}]"))
    names = canonical([n for n, _ in out])
    return [(n, label) for n, (_, label) in zip(names, out)]


#: identities of spec 2.8 checked on every per-topic value: (left, right)
IDENTITIES = (("AP", "NCU(stop=u,beta=0)"), ("Q(gain=1:2:3)", "NCU(stop=u,beta=1,gain=1:2:3)"),
              ("RR", "NCU(stop=first,beta=0)"))


def canonical(names: Iterable[str]) -> list[str]:
    return [m.name for m in default_registry().parse_all(list(names))]


def family(name: str) -> str:
    return re.split(r"[(@]", name, maxsplit=1)[0]


def cutoff(name: str) -> int | None:
    return int(name.rsplit("@", 1)[1]) if "@" in name else None


def without_cutoff(name: str) -> str:
    return name.rsplit("@", 1)[0]


# ------------------------------------------------------------------------------------------------ run set


def real_runs(data: Path) -> list[Run]:
    folder = data / "trec-web-2012-runs" / "runs"
    out = []
    for name in REAL_RUNS:
        path = folder / f"{name}.txt"
        run = read_run(path if path.exists() else path.with_suffix(".txt.gz"))
        out.append(replace(run, name=name))
    return out


Ranked = dict[str, tuple[np.ndarray, np.ndarray]]  # topic -> (docnos best first, min-max normalised scores)


def ranked_lists(run: Run) -> Ranked:
    """Each topic's documents in the evaluation order (score desc, docno desc) with min-max normalised scores."""
    ranking = rank_run(run, TIES)
    out: Ranked = {}
    for t, topic in enumerate(run.topics):
        rows = ranking.order[ranking.offsets[t] : ranking.offsets[t + 1]]
        score = run.score[rows]
        lo, hi = float(score.min()), float(score.max())
        out[topic] = (run.docno[rows], (score - lo) / (hi - lo) if hi > lo else np.ones(score.size))
    return out


RECIPES = ("perturb", "fuse", "rrf", "swap")
#: run-level depths a synthetic run is cut at, drawn uniformly (1000 twice: most TREC runs go to 1,000);
#: 0 = a random depth per topic, uniform in 10..(list length)
DEPTHS = (1000, 1000, 500, 200, 100, 0)


def _union(sources: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, list[np.ndarray]]:
    """The documents of several ranked lists and, per source, each document's position in the union."""
    docs, inverse = np.unique(np.concatenate([d for d, _ in sources]), return_inverse=True)
    at, start = [], 0
    for d, _ in sources:
        at.append(inverse[start : start + d.size])
        start += d.size
    return docs, at


def synthesise(real: Sequence[Ranked], names: Sequence[str], r: int, seed: int,
               depths: Sequence[int] = DEPTHS) -> tuple[dict[str, Any], Ranked]:
    """Synthetic run number ``r``: its recipe (recorded for the JSON) and its ranked lists."""
    rng = np.random.default_rng([seed, 1, r])
    recipe = RECIPES[r % len(RECIPES)]
    n_sources = {"perturb": 1, "swap": 1, "fuse": 2, "rrf": int(rng.integers(2, 4))}[recipe]
    picked = sorted(rng.choice(len(real), size=n_sources, replace=False).tolist())
    depth = int(rng.choice(np.asarray(depths)))
    info: dict[str, Any] = {"recipe": recipe, "sources": [names[i] for i in picked],
                            "depth": depth or "random per topic"}
    if recipe == "perturb":
        info["noise_sd"] = round(float(rng.uniform(0.02, 0.3)), 4)
    elif recipe == "fuse":
        info["weight"] = round(float(rng.uniform(0.2, 0.8)), 4)
        info["noise_sd"] = round(float(rng.uniform(0.0, 0.05)), 4)
    elif recipe == "rrf":
        info["k"] = int(rng.choice([10, 60]))
    else:
        info["window"] = int(rng.integers(2, 31))
    out: Ranked = {}
    topics = sorted(set().union(*(real[i] for i in picked)), key=lambda t: (len(t), t))
    for topic in topics:
        sources = [real[i][topic] for i in picked if topic in real[i]]
        if recipe == "perturb":
            docs, x = sources[0]
            key = x + info["noise_sd"] * rng.standard_normal(x.size)
        elif recipe == "swap":
            docs, x = sources[0]
            key = -(np.arange(x.size) + rng.uniform(-info["window"], info["window"], x.size))
        else:
            docs, at = _union(sources)
            key = np.zeros(docs.size)
            for j, ((d, x), where) in enumerate(zip(sources, at)):
                if recipe == "fuse":
                    key[where] += (info["weight"] if j == 0 else 1.0 - info["weight"]) * x
                else:
                    key[where] += 1.0 / (info["k"] + np.arange(1, d.size + 1))
            if recipe == "fuse":
                key += info["noise_sd"] * rng.standard_normal(docs.size)
        order = np.lexsort((docs, -key))  # best first; equal keys by docno (ascending), deterministic
        most = min(order.size, 1000)
        keep = depth if depth else int(rng.integers(min(most, 10), most + 1))
        order = order[: min(keep, most)]
        out[topic] = (docs[order], key[order])
    return info, out


def write_run(path: Path, name: str, ranked: Ranked) -> None:
    """A TREC run in ranked order with strictly decreasing integer scores (no ties under any policy)."""
    lines = []
    for topic, (docs, _) in ranked.items():
        n = docs.size
        lines.extend(f"{topic} Q0 {d.decode()} {i + 1} {n - i} {name}\n" for i, d in enumerate(docs.tolist()))
    path.write_text("".join(lines))


def build_runs(data: Path, out: Path, n_synthetic: int, seed: int,
               depths: Sequence[int] = DEPTHS) -> tuple[list[Run], list[dict[str, Any]]]:
    real = real_runs(data)
    lists = [ranked_lists(r) for r in real]
    folder = out / "runs"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.txt"):
        old.unlink()
    runs = list(real)
    described: list[dict[str, Any]] = [{"name": r.name, "recipe": "real", "lines": len(r)} for r in real]
    for r in range(n_synthetic):
        info, ranked = synthesise(lists, REAL_RUNS, r, seed, depths)
        name = f"syn{r + 1:02d}-{info['recipe']}"
        path = folder / f"{name}.txt"
        write_run(path, name, ranked)
        run = replace(read_run(path), name=name)
        runs.append(run)
        described.append({"name": name, **info, "lines": len(run)})
    return runs, described


# ------------------------------------------------------------------------------------------------ MU


def _num(v: float | None, digits: int = 4) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


def _finite(v: float) -> float | None:
    return float(v) if math.isfinite(v) else None


def mu_experiment(qrels: Qrels, runs: Sequence[Run], grid: str, scenarios: Sequence[str],
                  seed: int) -> dict[str, Any]:
    measures = amigo_measures(grid)
    extra = rbu_zero_effort(grid)
    out: dict[str, Any] = {"measures": measures, "extra_targets": extra, "scenarios": {}}
    for i, scenario in enumerate(ALL_SCENARIOS):
        if scenario not in scenarios:
            continue
        start = time.perf_counter()
        if scenario == "official":
            table = ScoreTable.from_run_scores(evaluate(qrels, list(runs), [*measures, *extra], ties=TIES))
        else:
            inputs = simulate(scenario, qrels, runs, np.random.default_rng([seed, 2, i]), ties=TIES)
            table = score_scenario(inputs, [*measures, *extra], ties=TIES)
        found = metric_unanimity(table, against=measures, measures=[*measures, *extra])
        mu = found.as_dict()
        # the same with scores rounded to ROUND_DECIMALS: mathematically equal scores computed with different
        # rounding become ties (MU compares exactly, so 1e-17 differences otherwise count as preferences)
        rounded = ScoreTable(table.measures, table.runs, table.topics, np.round(table.values, ROUND_DECIMALS))
        mu_r = metric_unanimity(rounded, against=measures, measures=[*measures, *extra]).as_dict()
        change = {m: abs(mu[m] - mu_r[m]) for m in measures if math.isfinite(mu[m]) and math.isfinite(mu_r[m])}
        worst = max(change, key=lambda m: change[m]) if change else None
        pool = table.select(measures=measures).values  # (measures, runs, topics)
        a, b = pool[:, :, None, :], pool[:, None, :, :]
        same = (a == b).all(axis=0)  # (a, b, topic): tied on every measure
        tied = int(same.sum()) - int(np.trace(same).sum())
        weak = (a >= b).all(axis=0)  # unanimous for the whole set
        unanimous = int(weak.sum()) - int(np.trace(weak).sum())
        out["scenarios"][scenario] = {
            "mu": {m: _finite(mu[m]) for m in measures},
            "extra": {m: _finite(mu[m]) for m in extra},
            "unanimous_pairs": {m: int(u) for m, u in zip(found.measures, found.unanimous)},
            "pairs": found.pairs, "unanimous_for_the_set": unanimous, "tied_on_every_measure": tied,
            "topics": len(table.topics), "runs": len(table.runs),
            "findings": mu_findings(mu, measures, extra),
            "rounded": {"decimals": ROUND_DECIMALS, "mu": {m: _finite(mu_r[m]) for m in measures},
                        "extra": {m: _finite(mu_r[m]) for m in extra},
                        "max_change": change[worst] if worst else None, "max_change_measure": worst,
                        "findings": mu_findings(mu_r, measures, extra)},
        }
        print(f"  MU {scenario}: {len(table.measures)} measures x {len(table.runs)} runs x {len(table.topics)} "
              f"topics, {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return out


def family_best(mu: dict[str, float], measures: Sequence[str]) -> dict[str, tuple[str, float]]:
    """Per family, the variant with the highest MU (ties: the first in list order)."""
    best: dict[str, tuple[str, float]] = {}
    for m in measures:
        v = mu[m]
        if not math.isnan(v) and (family(m) not in best or v > best[family(m)][1]):
            best[family(m)] = (m, v)
    return best


def mu_findings(mu: dict[str, float], measures: Sequence[str], extra: Sequence[str]) -> dict[str, Any]:
    """The paper's qualitative claims, checked on one scenario's MU values."""
    valid = [m for m in measures if not math.isnan(mu[m])]
    best = family_best(mu, measures)
    ranked_families = sorted(best, key=lambda f: -best[f][1])
    top = max(valid, key=lambda m: mu[m])
    bottom = min(valid, key=lambda m: mu[m])
    rbu = best.get("RBU", ("", math.nan))[1]
    others = max((v for f, (_, v) in best.items() if f != "RBU"), default=math.nan)
    recall = [mu[m] for m in valid if family(m) == "StRecall"]
    non_recall = [mu[m] for m in valid if family(m) != "StRecall"]
    # deeper cutoffs: consecutive cutoffs of the same measure with the same parameters
    groups: dict[str, list[tuple[int, float]]] = {}
    for m in valid:
        k = cutoff(m)
        if k is not None:
            groups.setdefault(without_cutoff(m), []).append((k, mu[m]))
    steps = [(a[1], b[1]) for g in groups.values() for a, b in zip(sorted(g), sorted(g)[1:])]
    deeper = sum(1 for a, b in steps if b >= a - 1e-12)
    rbp = [mu[m] for m in measures if family(m) == "RBP"]  # in p order
    rbu_e0 = [mu[m] for m in extra]
    rbu_pos = [mu[m] for m in valid if family(m) == "RBU"]
    return {
        "top_measure": top, "top_family": family(top), "bottom_measure": bottom, "bottom_family": family(bottom),
        "family_order": ranked_families,
        "rbu_rank": 1 + sum(1 for f in ranked_families if f != "RBU" and best[f][1] > rbu + 1e-12),
        "rbu_margin": _finite(rbu - others),
        "recall_below_all_others": bool(recall and non_recall and max(recall) < min(non_recall)),
        "deeper_cutoff_not_lower": [deeper, len(steps)],
        "rbp_increasing_in_p": bool(rbp and all(b >= a - 1e-12 for a, b in itertools.pairwise(rbp))),
        "rbu_e0_best": _finite(max(rbu_e0)) if rbu_e0 else None,
        "rbu_positive_e_worst": _finite(min(rbu_pos)) if rbu_pos else None,
    }


#: Amigo et al. Table 2: best variant per family (official, graded + weights + random truncation, + short lists)
PAPER_MU: dict[str, tuple[float | None, float | None, float | None]] = {
    "RBU": (0.8024, 0.8568, 0.9808), "alpha_nDCG": (0.7956, 0.7734, 0.7709), "nDCG": (0.7956, 0.7734, 0.7687),
    "nDCG_IA": (0.7956, 0.7734, 0.7709), "EU": (0.7956, 0.7734, 0.7709), "ERR_IA": (0.7956, 0.7734, 0.7709),
    "ERR": (0.7956, 0.7734, 0.7679), "NRBP": (0.7956, 0.7734, 0.7709), "AP": (0.7926, 0.7734, 0.7627),
    "AP_IA": (0.7926, 0.7734, 0.7642), "RBP": (0.7911, 0.7717, 0.7597), "P_IA": (0.7272, 0.7103, 0.7077),
    "P": (0.7192, 0.7103, None), "RR_IA": (0.6835, 0.6704, 0.6841), "RR": (0.6486, 0.6082, 0.6561),
    "StRecall": (0.3965, 0.4238, 0.5137),
}
PAPER_COLUMNS = {"official": 0, "random_truncation": 1, "short_lists": 2}
SHORT = {"official": "official", "graded_relevance": "1 grades", "aspect_weights": "2 weights",
         "random_truncation": "1+2+3 trunc.", "short_lists": "1+2+4 short"}


def mu_tables(mu: dict[str, Any]) -> str:
    scen = [s for s in ALL_SCENARIOS if s in mu["scenarios"]]
    res = {s: mu["scenarios"][s] for s in scen}
    measures = mu["measures"]
    nan = float("nan")
    values = {s: {m: (v if v is not None else nan) for m, v in res[s]["mu"].items()} for s in scen}
    best = {s: family_best(values[s], measures) for s in scen}
    families = sorted(best[scen[0]], key=lambda f: -best[scen[0]][f][1])
    lines = ["### MU: best variant per measure family", "",
             "Ours (TREC Web 2012) | paper (TREC Web 2014, Table 2) where it has the column.", ""]
    head = ["family"]
    for s in scen:
        head.append(f"{SHORT[s]}")
        if s in PAPER_COLUMNS:
            head.append("paper")
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for f in families:
        row = [f]
        for s in scen:
            row.append(_num(best[s][f][1]) if f in best[s] else "-")
            if s in PAPER_COLUMNS:
                row.append(_num(PAPER_MU.get(f, (None, None, None))[PAPER_COLUMNS[s]]))
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "Best variant per family (official scenario): " + "; ".join(
        f"{f}: `{best[scen[0]][f][0]}`" for f in families), ""]
    # cutoff profiles
    lines += ["### MU by cutoff (best over the other parameters)", ""]
    ks = sorted({cutoff(m) for m in measures if cutoff(m) is not None})
    lines += ["| family | scenario | " + " | ".join(f"@{k}" for k in ks) + " |", "|---|---|" + "---|" * len(ks)]
    for f in [f for f in families if any(cutoff(m) for m in measures if family(m) == f)]:
        for s in scen:
            cells = []
            for k in ks:
                vs = [values[s][m] for m in measures if family(m) == f and cutoff(m) == k]
                cells.append(_num(max(vs)) if vs else "-")
            lines.append(f"| {f} | {SHORT[s]} | " + " | ".join(cells) + " |")
    lines += ["", "### MU of the parameterised families (p, e, alpha)", ""]
    lines += ["| measure | " + " | ".join(SHORT[s] for s in scen) + " |", "|---|" + "---|" * len(scen)]
    for m in [m for m in measures if family(m) in ("RBU", "RBP", "NRBP", "EU")] + list(mu["extra_targets"]):
        cells = [_num(res[s]["mu"].get(m, res[s]["extra"].get(m))) for s in scen]
        tag = " (not in M)" if m in mu["extra_targets"] else ""
        lines.append(f"| `{m}`{tag} | " + " | ".join(cells) + " |")
    lines += ["", "### Findings checked per scenario", ""]
    lines += ["| check | " + " | ".join(SHORT[s] for s in scen) + " |", "|---|" + "---|" * len(scen)]
    checks = [
        ("top measure", lambda f: f"`{f['top_measure']}`"),
        ("RBU rank among families", lambda f: str(f["rbu_rank"])),
        ("RBU margin over best other family", lambda f: _num(f["rbu_margin"])),
        ("bottom measure", lambda f: f"`{f['bottom_measure']}`"),
        ("every S-Recall below every other measure", lambda f: "yes" if f["recall_below_all_others"] else "no"),
        ("deeper cutoff MU >= shallower (steps)", lambda f: "{}/{}".format(*f["deeper_cutoff_not_lower"])),
        ("RBP MU non-decreasing in p", lambda f: "yes" if f["rbp_increasing_in_p"] else "no"),
        ("RBU e=0: best MU (not in M)", lambda f: _num(f["rbu_e0_best"])),
        ("RBU e>0: worst MU", lambda f: _num(f["rbu_positive_e_worst"])),
    ]
    for label, show in checks:
        lines.append(f"| {label} | " + " | ".join(show(res[s]["findings"]) for s in scen) + " |")
    lines += [
        f"| largest MU change, scores rounded to {ROUND_DECIMALS} decimals | " + " | ".join(
            f"{_num(res[s]['rounded']['max_change'])} (`{res[s]['rounded']['max_change_measure']}`)" for s in scen)
        + " |",
        "| ... then RBU rank / margin | " + " | ".join(
            f"{res[s]['rounded']['findings']['rbu_rank']} / {_num(res[s]['rounded']['findings']['rbu_margin'])}"
            for s in scen) + " |",
    ]
    unanimous = [100 * res[s]["unanimous_for_the_set"] / res[s]["pairs"] for s in scen]
    tied = [100 * res[s]["tied_on_every_measure"] / max(1, res[s]["unanimous_for_the_set"]) for s in scen]
    lines += [
        "| unanimous comparisons (% of all) | " + " | ".join(_num(v, 1) for v in unanimous) + " |",
        "| ... of which tied on every measure (%) | " + " | ".join(_num(v, 1) for v in tied) + " |",
        "", f"Comparisons per scenario: {res[scen[0]]['pairs']} ordered (run, run, topic) triples "
        f"({res[scen[0]]['runs']} runs, {res[scen[0]]['topics']} topics); {len(measures)} measures.", ""]
    return "\n".join(lines)


def mu_full_table(mu: dict[str, Any]) -> str:
    scen = [s for s in ALL_SCENARIOS if s in mu["scenarios"]]
    res = {s: mu["scenarios"][s] for s in scen}
    first = res[scen[0]]["mu"]
    order = sorted(mu["measures"], key=lambda m: -(first[m] if first[m] is not None else -1e9))
    lines = ["### MU of every measure (sorted by the official scenario)", "",
             "| measure | " + " | ".join(SHORT[s] for s in scen) + " |", "|---|" + "---|" * len(scen)]
    lines += [f"| `{m}` | " + " | ".join(_num(res[s]["mu"][m]) for s in scen) + " |" for m in order]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------ power


def power_experiment(qrels: Qrels, runs: Sequence[Run], resamples: int, alpha: float, seed: int,
                     label: str, real: Sequence[str] = ()) -> dict[str, Any]:
    start = time.perf_counter()
    pairs = sakai_measures()
    names = [n for n, _ in pairs]
    checks = canonical(sorted({a for a, _ in IDENTITIES} | {b for _, b in IDENTITIES}))
    scores = evaluate(qrels, list(runs), list(dict.fromkeys([*names, *checks])), ties=TIES)
    full = ScoreTable.from_run_scores(scores)
    identities = {}
    for a, b in IDENTITIES:
        a_, b_ = canonical([a, b])
        diff = float(np.abs(full.measure(a_) - full.measure(b_)).max())
        identities[f"{a_} = {b_}"] = {"max_abs_difference": diff, "holds": diff <= 1e-9}
    table = full.select(measures=names)
    options = {"resamples": resamples, "alpha": alpha, "seed": seed}
    doc = run_method("discriminative-power", table, options)
    means = table.means()
    ap = means[names.index("NCU(stop=u,beta=0)")]
    out: dict[str, Any] = {"collection": label, "runs": list(table.runs), "topics": len(table.topics),
                           "resamples": resamples, "alpha": alpha, "seed": seed, "identities": identities,
                           "measures": {}}
    for i, (name, pretty) in enumerate(pairs):
        found = doc["discriminative_power"][name]
        out["measures"][name] = {"label": pretty, "significant_pairs": found["significant_pairs"],
                                 "pairs": found["pairs"], "proportion": found["proportion"],
                                 "delta": found["delta"], "mean": float(means[i].mean()),
                                 "tau_b_vs_ap": _finite(kendall_tau(ap, means[i], "b")), "asl": found["asl"]}
    out["findings"] = power_findings(out["measures"])
    if real:
        sub = run_method("discriminative-power", table.select(runs=list(real)), options)
        out["real_runs_only"] = {m: {"significant_pairs": v["significant_pairs"], "pairs": v["pairs"]}
                                 for m, v in sub["discriminative_power"].items()}
    print(f"  discriminative power ({label}): {len(names)} measures x {len(table.runs)} runs, B = {resamples}, "
          f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
    return out


#: Sakai & Robertson Table 6 (TREC03, 16 runs, 120 pairs): proportion (%) and Delta; 1:2:3 and 1:5:10 tables
PAPER_POWER_TREC03: dict[str, tuple[float, float]] = {
    "u, beta=0 (AP)": (64.2, 0.07), "rb gamma=0.9, beta=0": (54.2, 0.11), "rb gamma=0.7, beta=0": (46.7, 0.14),
    "rb gamma=0.5, beta=0": (41.7, 0.14),
    "u, beta=1 (Q) [1:2:3]": (66.7, 0.07), "rb gamma=0.9, beta=1 [1:2:3]": (62.5, 0.09),
    "rb gamma=0.7, beta=1 [1:2:3]": (45.8, 0.11), "rb gamma=0.5, beta=1 [1:2:3]": (40.8, 0.12),
    "u, beta=10000 [1:2:3]": (58.3, 0.07), "rb gamma=0.9, beta=10000 [1:2:3]": (53.3, 0.08),
    "rb gamma=0.7, beta=10000 [1:2:3]": (43.3, 0.10), "rb gamma=0.5, beta=10000 [1:2:3]": (38.3, 0.12),
    "gu, beta=0 [1:2:3]": (64.2, 0.08), "gu, beta=1 [1:2:3]": (68.3, 0.08), "gu, beta=10000 [1:2:3]": (60.0, 0.08),
    "u, beta=1 (Q) [1:5:10]": (65.0, 0.08), "rb gamma=0.9, beta=1 [1:5:10]": (56.7, 0.09),
    "rb gamma=0.7, beta=1 [1:5:10]": (37.5, 0.10), "rb gamma=0.5, beta=1 [1:5:10]": (31.7, 0.12),
    "u, beta=10000 [1:5:10]": (47.5, 0.08), "rb gamma=0.9, beta=10000 [1:5:10]": (46.7, 0.08),
    "rb gamma=0.7, beta=10000 [1:5:10]": (33.3, 0.10), "rb gamma=0.5, beta=10000 [1:5:10]": (30.0, 0.12),
    "gu, beta=0 [1:5:10]": (60.0, 0.09), "gu, beta=1 [1:5:10]": (65.0, 0.08), "gu, beta=10000 [1:5:10]": (56.7, 0.09),
}


#: Sakai & Robertson Table 6 (NTCIR-6J, 10 runs, 45 pairs)
PAPER_POWER_NTCIR6J: dict[str, tuple[float, float]] = {
    "u, beta=0 (AP)": (57.8, 0.08), "rb gamma=0.9, beta=0": (55.6, 0.09), "rb gamma=0.7, beta=0": (53.3, 0.10),
    "rb gamma=0.5, beta=0": (53.3, 0.13),
    "u, beta=1 (Q) [1:2:3]": (62.2, 0.07), "rb gamma=0.9, beta=1 [1:2:3]": (60.0, 0.08),
    "rb gamma=0.7, beta=1 [1:2:3]": (48.9, 0.10), "rb gamma=0.5, beta=1 [1:2:3]": (48.9, 0.11),
    "u, beta=10000 [1:2:3]": (64.4, 0.09), "rb gamma=0.9, beta=10000 [1:2:3]": (64.4, 0.07),
    "rb gamma=0.7, beta=10000 [1:2:3]": (46.7, 0.10), "rb gamma=0.5, beta=10000 [1:2:3]": (40.0, 0.11),
    "gu, beta=0 [1:2:3]": (57.8, 0.07), "gu, beta=1 [1:2:3]": (64.4, 0.08), "gu, beta=10000 [1:2:3]": (64.4, 0.08),
    "u, beta=1 (Q) [1:5:10]": (64.4, 0.08), "rb gamma=0.9, beta=1 [1:5:10]": (57.8, 0.09),
    "rb gamma=0.7, beta=1 [1:5:10]": (37.8, 0.11), "rb gamma=0.5, beta=1 [1:5:10]": (31.1, 0.13),
    "u, beta=10000 [1:5:10]": (66.7, 0.07), "rb gamma=0.9, beta=10000 [1:5:10]": (60.0, 0.10),
    "rb gamma=0.7, beta=10000 [1:5:10]": (35.6, 0.10), "rb gamma=0.5, beta=10000 [1:5:10]": (26.7, 0.13),
    "gu, beta=0 [1:5:10]": (60.0, 0.08), "gu, beta=1 [1:5:10]": (68.9, 0.08), "gu, beta=10000 [1:5:10]": (64.4, 0.07),
}


def power_findings(measures: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Sakai & Robertson's observations, checked: along each rank-biased series (gamma = 1, i.e. uniform
    stopping, then 0.9, 0.7, 0.5 at a fixed beta and gain table) power should not rise and Delta not fall."""
    by_label = {v["label"]: v for v in measures.values()}
    power_steps = delta_steps = total = 0
    series = [("", "beta=0")] + [(f" [{t}]", f"beta={b}") for t in GAIN_TABLES for b in BETAS[1:]]
    for table, beta in series:
        q_tag = " (Q)" if beta == "beta=1" else ""
        first = "u, beta=0 (AP)" if beta == "beta=0" else f"u, {beta}{q_tag}{table}"
        chain = [by_label[x] for x in [first] + [f"rb gamma={g}, {beta}{table}" for g in RB_GAMMAS]]
        power = [v["proportion"] or 0.0 for v in chain]
        delta = [v["delta"] or 0.0 for v in chain]
        total += len(chain) - 1
        power_steps += sum(1 for a, b in itertools.pairwise(power) if b <= a)
        delta_steps += sum(1 for a, b in itertools.pairwise(delta) if b >= a)
    ranked = sorted(by_label, key=lambda x: -(by_label[x]["proportion"] or 0.0))
    return {
        "most_powerful": ranked[0], "least_powerful": ranked[-1],
        "rank_bias_steps_not_raising_power": [power_steps, total],
        "rank_bias_steps_not_lowering_delta": [delta_steps, total],
        "power": {x: by_label[x]["proportion"] for x in ("u, beta=0 (AP)", "u, beta=1 (Q) [1:2:3]",
                                                         "gu, beta=1 [1:2:3]", "first, beta=0 (RR)")},
    }


def power_table(result: dict[str, Any], paper: dict[str, tuple[float, float]] | None, paper_name: str) -> str:
    m = result["measures"]
    real = result.get("real_runs_only")
    head = ["measure", "NCU variant", "significant", "power", "Delta", "tau_b vs AP"]
    if real:
        head.append("real runs only")
    if paper:
        head.append(f"paper {paper_name} power / Delta")
    lines = [f"### Discriminative power: {result['collection']}", "",
             f"{len(result['runs'])} runs, {result['topics']} topics, paired bootstrap B = {result['resamples']}, "
             f"alpha = {result['alpha']}, seed {result['seed']}; sorted by power.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, v in sorted(m.items(), key=lambda kv: (-(kv[1]["proportion"] or 0), kv[0])):
        row = [f"`{name}`", v["label"], f"{v['significant_pairs']}/{v['pairs']}",
               f"{100 * (v['proportion'] or 0):.1f}%", _num(v["delta"], 3), _num(v["tau_b_vs_ap"], 3)]
        if real:
            row.append(f"{real[name]['significant_pairs']}/{real[name]['pairs']}")
        if paper:
            p = paper.get(v["label"])
            row.append(f"{p[0]:.1f}% / {p[1]:.2f}" if p else "-")
        lines.append("| " + " | ".join(row) + " |")
    ids = "; ".join(f"{k}: {'holds' if v['holds'] else 'FAILS'} (max |diff| {v['max_abs_difference']:.1e})"
                    for k, v in result["identities"].items())
    f = result["findings"]
    lines += ["", f"Identities (per topic, every run): {ids}.", "",
              f"Most / least powerful: {f['most_powerful']} / {f['least_powerful']}. Along the rank-biased series "
              "(uniform stopping, then gamma = 0.9, 0.7, 0.5 at fixed beta and gain table) power did not rise in "
              "{}/{} steps and Delta did not fall in {}/{}.".format(
                  *f["rank_bias_steps_not_raising_power"], *f["rank_bias_steps_not_lowering_delta"]), ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ NTCIR


def ntcir_runs(qrels: Qrels, out: Path, n_runs: int, seed: int) -> list[Run]:
    """Runs simulated from graded judgments (no real runs are available for NTCIR WWW-1).

    Per run: a skill ``theta ~ U(0.3, 1.5)`` and a grade sensitivity ``lam ~ U(0, 1)``; per topic a difficulty
    ``delta ~ U(0.3, 1)`` shared by the runs. A run retrieves a random fraction ``U(0.5, 0.9)`` of the judged
    documents plus 300 unjudged fillers and scores each ``theta * delta * (1[g > 0] + lam (g - 1)/3) + N(0, 1)``.
    """
    rng = np.random.default_rng([seed, 3])
    adhoc = qrels.adhoc
    docnos = qrels.docnos[qrels.doc[adhoc.row_start]]
    difficulty = rng.uniform(0.3, 1.0, len(qrels.topics))
    folder = out / "ntcir-runs"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.txt"):
        old.unlink()
    runs = []
    for r in range(n_runs):
        run_rng = np.random.default_rng([seed, 4, r])
        theta, lam = run_rng.uniform(0.3, 1.5), run_rng.uniform(0.0, 1.0)
        name = f"ntcir-sim{r + 1:02d}"
        lines = []
        for t, topic in enumerate(qrels.topics):
            lo, hi = adhoc.offsets[t], adhoc.offsets[t + 1]
            grade = np.maximum(adhoc.grade[lo:hi], 0)
            keep = run_rng.random(grade.size) < run_rng.uniform(0.5, 0.9)
            docs = [d.decode() for d in docnos[lo:hi][keep].tolist()] + [f"filler-{topic}-{j:03d}" for j in range(300)]
            g = np.concatenate([grade[keep], np.zeros(300, dtype=np.int64)])
            signal = theta * difficulty[t] * ((g > 0) + lam * np.maximum(g - 1, 0) / 3.0)
            key = signal + run_rng.standard_normal(g.size)
            order = np.argsort(-key, kind="stable")[:1000]
            n = order.size
            lines.extend(f"{topic} Q0 {docs[j]} {i + 1} {n - i} {name}\n" for i, j in enumerate(order.tolist()))
        path = folder / f"{name}.txt"
        path.write_text("".join(lines))
        runs.append(replace(read_run(path), name=name))
    return runs


# ------------------------------------------------------------------------------------------------ main


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared real data")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results folder (git-ignored under bench/work)")
    ap.add_argument("--seed", type=int, default=SEED, help="seed of the synthetic runs, scenarios and resamples")
    ap.add_argument("--synthetic", type=int, default=26, help="synthetic runs added to the 4 real ones")
    ap.add_argument("--depths", default=",".join(map(str, DEPTHS)),
                    help="run-level depths a synthetic run is cut at, drawn uniformly (0: random per topic)")
    ap.add_argument("--resamples", type=int, default=1000, help="bootstrap samples B")
    ap.add_argument("--alpha", type=float, default=0.05, help="significance level")
    ap.add_argument("--scenarios", default=",".join(ALL_SCENARIOS), help="MU scenarios (comma-separated)")
    ap.add_argument("--grid", choices=tuple(GRIDS), default="full", help="MU parameter grid (small: for tests)")
    ap.add_argument("--parts", default="mu,power", help="experiments to run: mu, power (comma-separated)")
    ap.add_argument("--ntcir", action="store_true", help="also discriminative power on NTCIR-13 WWW-1 qrels "
                    "with simulated runs (see docs/reproductions.md on the data's terms)")
    ap.add_argument("--ntcir-runs", type=int, default=16, help="simulated runs for --ntcir")
    args = ap.parse_args(argv)
    scenarios = [s for s in args.scenarios.split(",") if s]
    unknown = sorted(set(scenarios) - set(ALL_SCENARIOS))
    if unknown:
        ap.error(f"unknown scenario(s) {', '.join(unknown)}; choose from {', '.join(ALL_SCENARIOS)}")
    parts = {p for p in args.parts.split(",") if p}
    if not parts or parts - {"mu", "power"}:
        ap.error("--parts takes mu, power or both")
    start = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    depths = [int(d) for d in args.depths.split(",") if d]
    if not depths or min(depths) < 0:
        ap.error("--depths needs non-negative integers")
    runs, described = build_runs(args.data, args.out, args.synthetic, args.seed, depths)
    print(f"run set: {len(runs)} runs ({len(REAL_RUNS)} real, {args.synthetic} synthetic) -> {args.out / 'runs'}",
          file=sys.stderr)
    result: dict[str, Any] = {
        "config": {"seed": args.seed, "synthetic": args.synthetic, "resamples": args.resamples, "alpha": args.alpha,
                   "depths": depths, "scenarios": scenarios, "grid": args.grid, "ties": TIES, "topics": "common",
                   "diversity_qrels": str(DIVERSITY_QRELS), "adhoc_qrels": str(ADHOC_QRELS)},
        "runs": described,
    }
    md: list[str] = []
    if "mu" in parts:
        qrels = read_qrels(args.data / DIVERSITY_QRELS)
        mu = mu_experiment(qrels, runs, args.grid, scenarios, args.seed)
        mu["mapping"] = [{"paper": p, "ours": o, "note": n} for p, o, n in MU_MAPPING]
        mu["not_expressed"] = [{"paper": p, "why": w} for p, w in MU_NOT_EXPRESSED]
        result["mu"] = mu
        (args.out / "measures-mu.txt").write_text("\n".join(mu["measures"]) + "\n")
        md += ["## Metric Unanimity (Amigo et al. 2018) on TREC Web 2012", "", mu_tables(mu), mu_full_table(mu)]
    if "power" in parts:
        qrels = read_qrels(args.data / ADHOC_QRELS)
        power = {"trec2012": power_experiment(qrels, runs, args.resamples, args.alpha, args.seed,
                                              "TREC Web 2012 ad hoc qrels", real=REAL_RUNS)}
        md += ["## Discriminative power (Sakai & Robertson 2008)", "",
               power_table(power["trec2012"], PAPER_POWER_TREC03, "TREC03")]
        if args.ntcir:
            nq = read_qrels(args.data / NTCIR_QRELS)
            nruns = ntcir_runs(nq, args.out, args.ntcir_runs, args.seed)
            power["ntcir_www1"] = power_experiment(nq, nruns, args.resamples, args.alpha, args.seed,
                                                   "NTCIR-13 WWW-1 qrels, simulated runs")
            md.append(power_table(power["ntcir_www1"], PAPER_POWER_NTCIR6J, "NTCIR-6J"))
        result["discriminative_power"] = power
        (args.out / "measures-power.txt").write_text("\n".join(n for n, _ in sakai_measures()) + "\n")
    text = "\n".join(md)
    (args.out / "reproduce_meta.json").write_text(json.dumps(result, indent=1) + "\n")
    (args.out / "reproduce_meta.md").write_text(text)
    print(text)
    print(f"wrote {args.out / 'reproduce_meta.json'} ({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
