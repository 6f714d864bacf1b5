"""Meta-evaluation documents as readable tables (the JSON document is the contract; this is for people).

``meta_view`` turns a document into a note and captioned tables of strings; ``render_text`` lays them out as
plain text, and the HTML and LaTeX reports (``evaluation.reports``) typeset the same tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evaluation.problems import RequestError


@dataclass(frozen=True)
class Table:
    """One table of a meta-evaluation result: an optional caption above it, a header and rows of cells."""

    caption: str | None
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class MetaView:
    """A meta-evaluation document for people: its heading, a note on the method's settings, its tables."""

    heading: str
    note: str
    tables: tuple[Table, ...]


def _num(value: Any, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _text_table(header: tuple[str, ...], rows: tuple[tuple[str, ...], ...]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(lines) + "\n"


def _one(header: list[str], rows: list[list[str]]) -> tuple[Table, ...]:
    return (Table(None, tuple(header), tuple(tuple(r) for r in rows)),)


def meta_view(doc: Mapping[str, Any]) -> MetaView:
    """One table per method: measures as rows (correlation: a matrix; significance: one table per measure)."""
    meta = doc["meta"]
    heading = f"{meta['method']}: {len(meta['measures'])} measures, {meta['runs']} runs, {meta['topics']} topics"
    if "advice" in doc:  # before the others: its document has correlation and unanimity entries of its own
        table = doc["table"]
        return MetaView(heading, " ".join(doc["sentences"]),
                        _one(list(table["header"]), [list(r) for r in table["rows"]]))
    if "unanimity" in doc:
        rows = sorted(doc["unanimity"].items(), key=lambda kv: -(kv[1] if kv[1] is not None else -1e9))
        return MetaView(heading, "", _one(["measure", "MU"], [[m, _num(v)] for m, v in rows]))
    if "discriminative_power" in doc:
        found = doc["discriminative_power"]
        rows = [[m, f"{v['significant_pairs']}/{v['pairs']}", _num(v["proportion"], 3), _num(v["delta"])]
                for m, v in sorted(found.items(), key=lambda kv: -(kv[1]["proportion"] or 0))]
        return MetaView(heading, f"B = {doc['resamples']}, alpha = {doc['alpha']}",
                        _one(["measure", "significant", "power", "delta"], rows))
    if "significance" in doc:
        tables = tuple(
            Table(m, ("run a", "run b", "a - b", "p (adj.)", "sig", "g"),
                  tuple((p["a"], p["b"], _num(p["mean_difference"]), _num(p["p_adjusted"]),
                         "*" if p["significant"] else "", _num(p["hedges_g"], 2)) for p in v["pairs"]))
            for m, v in doc["significance"].items())
        return MetaView(heading, f"test = {doc['test']}, correction = {doc['correction']}, alpha = {doc['alpha']}",
                        tables)
    if "correlation" in doc:
        matrix = doc["correlation"]
        names = list(matrix)
        rows = [[a, *(_num(matrix[a][b], 3) for b in names)] for a in names]
        return MetaView(heading, f"{doc['method']}", _one(["", *names], rows))
    if "preference_agreement" in doc:
        users = list(next(iter(doc["preference_agreement"].values()), {}))
        rows = [[m, *(_num(v.get(u), 3) for u in users)] for m, v in doc["preference_agreement"].items()]
        return MetaView(heading, f"{doc['pairs']} labelled pairs", _one(["measure", *users], rows))
    if "scenarios" in doc:
        columns = ["official", *doc["simulated"]]
        rows = [[m, *(_num(v.get(c)) for c in columns)] for m, v in doc["scenarios"].items()]
        return MetaView(heading, f"MU per scenario (seed {doc['seed']})", _one(["measure", *columns], rows))
    if "robustness" in doc:
        sizes = [str(n) for n in doc["sizes"]]
        rows = [[m, *(_num(v.get(n), 3) for n in sizes)] for m, v in doc["robustness"].items()]
        return MetaView(heading, f"mean {doc['tau']} with the full ranking, {doc['repetitions']} repetitions per N"
                        f" triplets per topic (seed {doc['seed']})", _one(["measure", *(f"N={n}" for n in sizes)],
                                                                          rows))
    raise RequestError("not a meta-evaluation document")


def render_text(doc: Mapping[str, Any]) -> str:
    """The document's tables as plain text, captions above their tables."""
    view = meta_view(doc)
    out = [view.heading + "\n\n"]
    if view.note:
        out.append(view.note + "\n")
    for table in view.tables:
        if table.caption is not None:
            out.append(f"\n{table.caption}\n")
        out.append(_text_table(table.header, table.rows))
    return "".join(out)
