"""Reports a person reads: an evaluation or meta-evaluation result document as an HTML page or a LaTeX document
(the runs' scores, significance tests, each measure's definition and reference, its axiomatic profile).

    from evaluation.reports import render_report
    render_report(document, "html")     # or "latex"; axioms=False leaves the profiles out

Computing and typesetting are apart, so that a worker can build a report once and anyone can render it later::

    content = build(document)                       # evaluation.reports.building: tests, axioms (numpy, scipy)
    stored = content.to_json()                      # plain JSON (evaluation.reports.model)
    render(ReportContent.from_json(stored), "html") # evaluation.reports.html / .latex: formatting only

Nothing heavy is imported with this package: ``build`` and its dependencies load when first used.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import TYPE_CHECKING, Any

from evaluation.problems import FormatError
from evaluation.reports.model import ReportContent
from evaluation.result_formats import REPORT_FORMATS, ResultFormat

if TYPE_CHECKING:
    from evaluation.reports.building import build
    from evaluation.reports.latex import latex_escape

#: report formats, with their media types
FORMATS: tuple[str, ...] = tuple(f.value for f in REPORT_FORMATS)
MEDIA_TYPES = {f.value: f.media_type for f in REPORT_FORMATS}

#: names imported from their modules on first use (PEP 562): ``build`` loads numpy, scipy and the axioms
_HOME = {"build": "evaluation.reports.building", "latex_escape": "evaluation.latex"}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'evaluation.reports' has no attribute {name!r}")
    return getattr(import_module(module), name)


def render(content: ReportContent, fmt: str) -> str:
    """Typeset built (or stored, ``ReportContent.from_json``) content in ``fmt`` (html or latex); computes nothing."""
    if fmt == ResultFormat.HTML:
        from evaluation.reports.html import render_html

        return render_html(content)
    if fmt == ResultFormat.LATEX:
        from evaluation.reports.latex import render_latex

        return render_latex(content)
    raise FormatError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")


def render_report(doc: Mapping[str, Any], fmt: str, *, axioms: bool = True) -> str:
    """The report on a result document in ``fmt`` (html or latex); FormatError for another format, RequestError
    for a document that is not a result."""
    if fmt not in FORMATS:
        raise FormatError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
    from evaluation.reports.building import build

    return render(build(doc, axioms=axioms), fmt)


def render_document(doc: Mapping[str, Any], fmt: str, per_topic: bool = False) -> str:
    """An evaluation result document in any result format: html and latex as reports, the others as
    ``evaluation.report.render_document`` writes them (the service's one call for every format)."""
    if fmt in FORMATS:
        return render_report(doc, fmt)
    from evaluation.report import render_document as render_text

    return render_text(doc, fmt, per_topic)


__all__ = ["FORMATS", "MEDIA_TYPES", "ReportContent", "build", "latex_escape", "render", "render_document",
           "render_report"]
