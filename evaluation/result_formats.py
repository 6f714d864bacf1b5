"""The formats a result is rendered in, with their media types, in one place: the CLI's ``--format``, the
service's ``?format=`` (job results and leaderboards) and the OpenAPI document read them from here.

A leaf module (nothing of the engine imported), so the API lists the formats without loading the renderers.
"""

from __future__ import annotations

from evaluation.enums import StrEnum


class ResultFormat(StrEnum):
    """A rendering of a result document (members are the ``format`` strings themselves)."""

    JSON = "json"  # the result document itself
    TSV = "tsv"  # run, measure, topic, value rows
    CSV = "csv"  # the same rows as CSV (a leaderboard: its table)
    TREC_EVAL = "trec_eval"  # trec_eval -q's text layout
    HTML = "html"  # a report for people (``evaluation.reports``; a leaderboard: its page)
    LATEX = "latex"  # the same report as a LaTeX document (a leaderboard: its table)
    TABLE = "table"  # a meta-evaluation's tables as text

    @property
    def media_type(self) -> str:
        """The media type the service answers this format with."""
        return MEDIA_TYPES[self]


#: each format's media type
MEDIA_TYPES: dict[ResultFormat, str] = {
    ResultFormat.JSON: "application/json",
    ResultFormat.TSV: "text/tab-separated-values",
    ResultFormat.CSV: "text/csv",
    ResultFormat.TREC_EVAL: "text/plain",
    ResultFormat.HTML: "text/html",
    ResultFormat.LATEX: "application/x-latex",
    ResultFormat.TABLE: "text/plain",
}
#: an evaluation's result: the data, and the reports for people
EVALUATION_FORMATS = (ResultFormat.JSON, ResultFormat.TSV, ResultFormat.CSV, ResultFormat.TREC_EVAL,
                      ResultFormat.HTML, ResultFormat.LATEX)
#: a meta-evaluation's result
META_FORMATS = (ResultFormat.JSON, ResultFormat.TABLE, ResultFormat.HTML, ResultFormat.LATEX)
#: the reports for people (``evaluation.reports``)
REPORT_FORMATS = (ResultFormat.HTML, ResultFormat.LATEX)
#: a shared task's leaderboard: its document, CSV, a LaTeX table, an HTML page
LEADERBOARD_FORMATS = (ResultFormat.JSON, ResultFormat.CSV, ResultFormat.LATEX, ResultFormat.HTML)


def one_of(formats: tuple[ResultFormat, ...]) -> str:
    """``formats`` as a person reads them: ``json, table, html or latex``."""
    return f"{', '.join(formats[:-1])} or {formats[-1]}"
