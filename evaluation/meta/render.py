"""Meta-evaluation documents as readable text tables (the JSON document is the contract; this is for people)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _num(value: Any, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(lines) + "\n"


def render_text(doc: Mapping[str, Any]) -> str:
    """One table per method: measures as rows (correlation: a matrix; significance: one block per measure)."""
    meta = doc["meta"]
    head = f"{meta['method']}: {len(meta['measures'])} measures, {meta['runs']} runs, {meta['topics']} topics\n\n"
    if "unanimity" in doc:
        rows = sorted(doc["unanimity"].items(), key=lambda kv: -(kv[1] if kv[1] is not None else -1e9))
        return head + _table(["measure", "MU"], [[m, _num(v)] for m, v in rows])
    if "discriminative_power" in doc:
        found = doc["discriminative_power"]
        rows = [[m, f"{v['significant_pairs']}/{v['pairs']}", _num(v["proportion"], 3), _num(v["delta"])]
                for m, v in sorted(found.items(), key=lambda kv: -(kv[1]["proportion"] or 0))]
        return head + f"B = {doc['resamples']}, alpha = {doc['alpha']}\n" + _table(
            ["measure", "significant", "power", "delta"], rows)
    if "significance" in doc:
        out = [head + f"test = {doc['test']}, correction = {doc['correction']}, alpha = {doc['alpha']}\n"]
        for m, v in doc["significance"].items():
            rows = [[p["a"], p["b"], _num(p["mean_difference"]), _num(p["p_adjusted"]), "*" if p["significant"] else "",
                     _num(p["hedges_g"], 2)] for p in v["pairs"]]
            out.append(f"\n{m}\n" + _table(["run a", "run b", "a - b", "p (adj.)", "sig", "g"], rows))
        return "".join(out)
    if "correlation" in doc:
        matrix = doc["correlation"]
        names = list(matrix)
        rows = [[a, *(_num(matrix[a][b], 3) for b in names)] for a in names]
        return head + f"{doc['method']}\n" + _table(["", *names], rows)
    if "preference_agreement" in doc:
        users = list(next(iter(doc["preference_agreement"].values()), {}))
        rows = [[m, *(_num(v.get(u), 3) for u in users)] for m, v in doc["preference_agreement"].items()]
        return head + f"{doc['pairs']} labelled pairs\n" + _table(["measure", *users], rows)
    if "scenarios" in doc:
        columns = ["official", *doc["simulated"]]
        rows = [[m, *(_num(v.get(c)) for c in columns)] for m, v in doc["scenarios"].items()]
        return head + f"MU per scenario (seed {doc['seed']})\n" + _table(["measure", *columns], rows)
    if "robustness" in doc:
        sizes = [str(n) for n in doc["sizes"]]
        rows = [[m, *(_num(v.get(n), 3) for n in sizes)] for m, v in doc["robustness"].items()]
        return head + (f"mean {doc['tau']} with the full ranking, {doc['repetitions']} repetitions per N triplets per"
                       f" topic (seed {doc['seed']})\n") + _table(["measure", *(f"N={n}" for n in sizes)], rows)
    raise ValueError("not a meta-evaluation document")
