"""The measure advice of a meta-evaluation as a report (HTML or LaTeX through ``evaluation.reports.render``): its
recommendation table first, then its sentences and the tables of the methods it was built from, each measure's
definition and its axiomatic profile as the advice read it. Computes nothing: everything is in the document."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaluation.meta.render import meta_view
from evaluation.reports.content import _AXIOMS_NOTE, CONSTRAINT_SUMMARIES, _canonical, _from_meta, _info
from evaluation.reports.model import AxiomRow, ReportContent, Section, Table


def advice_content(title: str, settings: Sequence[tuple[str, str]], advice: Mapping[str, Any],
                   methods: Mapping[str, Mapping[str, Any]]) -> ReportContent:
    """A report on ``advice`` (``Advice.to_json``) and the method documents (``run_method``) it was built from."""
    table = advice["table"]
    best = {advice["primary"]}
    rows = tuple(tuple(str(c) for c in row) for row in table["rows"])
    marked = frozenset((i, 0) for i, row in enumerate(rows) if row[0].split(" (")[0] in best)
    caption = (f"Recommendation table (significant: run pairs significantly different at alpha = {advice['alpha']};"
               f" {advice['correlation']} with the primary measure {advice['primary']}; constraints satisfied)")
    recommendation = Table(caption, tuple(table["header"]), rows, marked)
    tables: list[Table] = []
    for name, doc in methods.items():
        view = meta_view(doc)
        tables += [Table(f"{name}: {view.note}" if view.note else name, t.header, t.rows) for t in
                   (_from_meta(t) for t in view.tables)]
    measures = list(advice["measures"])
    axioms = tuple(AxiomRow(m, _canonical(m), dict(v["axioms"]),
                            "" if v["axioms"] else "not checked (the harness cannot build this measure's inputs)")
                   for m, v in advice["measures"].items())
    return ReportContent(
        title=title,
        settings=tuple(settings),
        warnings=(),
        scores=Section("Measure advice", (), (recommendation,)),
        results=Section("What the figures say", tuple(advice["sentences"]), tuple(tables)),
        significance=None,
        measures=tuple(_info(m, _canonical(m)) for m in measures),
        axioms=axioms,
        axioms_note=_AXIOMS_NOTE,
        constraints=tuple(CONSTRAINT_SUMMARIES.items()),
    )


def method_advice_content(doc: Mapping[str, Any]) -> ReportContent:
    """A report on the document of the ``advice`` method (``evalserve meta advice``, a meta-evaluation job)."""
    meta = doc["meta"]
    settings = [("method", "advice"), ("runs", str(meta.get("runs", "-"))), ("topics", str(meta.get("topics", "-"))),
                ("measures", ", ".join(str(m) for m in meta.get("measures", ()))),
                ("options", ", ".join(f"{k} = {doc[k]}" for k in ("primary", "resamples", "alpha", "seed",
                                                                   "correlation")))]
    return advice_content("Measure advice", settings, {**doc, "measures": doc["advice"]}, {})
