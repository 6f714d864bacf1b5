"""Which content a result document's report has: the measure advice's own (``evaluation.reports.advice``) for the
``advice`` method, the evaluation or meta-evaluation report (``evaluation.reports.content``) for the rest."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluation.reports.advice import method_advice_content
from evaluation.reports.content import build as build_content
from evaluation.reports.model import ReportContent


def build(doc: Mapping[str, Any], *, axioms: bool = True) -> ReportContent:
    """The content of a report on a result document (``evaluation.reports.content.build``); an ``advice``
    document carries its own profiles, so nothing is checked again."""
    meta = doc.get("meta") if isinstance(doc, Mapping) else None
    if isinstance(meta, Mapping) and meta.get("method") == "advice" and "advice" in doc:
        return method_advice_content(doc)
    return build_content(doc, axioms=axioms)
