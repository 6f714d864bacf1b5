"""Reports a person reads: an evaluation or meta-evaluation result document as an HTML page or a LaTeX document
(the runs' scores, significance tests, each measure's definition and reference, its axiomatic profile).

    from evaluation.reports import render_report
    render_report(document, "html")     # or "latex"; axioms=False leaves the profiles out

Pure functions of the document: the CLI (``--format html|latex``) and the service (``?format=``) share them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluation.reports.content import ReportContent, build
from evaluation.reports.html import render_html
from evaluation.reports.latex import latex_escape, render_latex

#: report formats, with their media types
FORMATS = ("html", "latex")
MEDIA_TYPES = {"html": "text/html", "latex": "application/x-latex"}


def render_report(doc: Mapping[str, Any], fmt: str, *, axioms: bool = True) -> str:
    """The report on a result document in ``fmt`` (html or latex); ValueError for another format or a document
    that is not a result."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
    content = build(doc, axioms=axioms)
    return render_html(content) if fmt == "html" else render_latex(content)


def render_document(doc: Mapping[str, Any], fmt: str, per_topic: bool = False) -> str:
    """An evaluation result document in any result format: html and latex as reports, the others as
    ``evaluation.report.render_document`` writes them (the service's one call for every format)."""
    if fmt in FORMATS:
        return render_report(doc, fmt)
    from evaluation.report import render_document as render_text

    return render_text(doc, fmt, per_topic)


__all__ = ["FORMATS", "MEDIA_TYPES", "ReportContent", "build", "latex_escape", "render_document", "render_report"]
