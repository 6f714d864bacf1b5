"""Server-rendered HTML of a shared-task leaderboard: one self-contained page (inline CSS, no JavaScript, no
external assets) for people looking at a public leaderboard in a browser.

The input is the leaderboard document the API serves as JSON (the engine's ``Leaderboard.as_dict()`` inside the
service envelope); :func:`render_leaderboard_html` turns it into a view model here and lets the Jinja2 template
(``service/web/templates/leaderboard.html``, autoescaped: team names and descriptions are user input) lay it out.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from evalserve.service.store.models import SortOrder
from evaluation.leaderboard.render import CORRECTION_NAMES, TEST_NAMES, row_letter

#: how a missing (null / NaN) number is shown
MISSING = "–"
MINUS = "−"

#: the ``service`` package's templates directory (its package data)
TEMPLATES = Path(__file__).resolve().parent / "templates"

STOCHASTIC_TESTS = frozenset({"randomisation", "bootstrap", "tukey"})


@dataclass(frozen=True)
class Moment:
    """A timestamp as an ISO value for ``<time datetime>`` and as short UTC text for people."""

    iso: str
    text: str


@dataclass(frozen=True)
class Column:
    """One measure column of the table."""

    name: str
    primary: bool


@dataclass(frozen=True)
class Score:
    """One formatted mean; ``marks`` are the letters of the rows it is significantly better than."""

    text: str
    primary: bool
    marks: str
    marks_title: str


@dataclass(frozen=True)
class RowView:
    """One table row, every value already formatted."""

    rank: str
    key: str
    letter: str
    team: str
    run: str
    description: str
    baseline: bool
    scores: tuple[Score, ...]
    delta_best: str
    delta_baseline: str
    submitted: Moment | None
    disqualified: str = ""  # the public reason of a disqualified (unranked) row


def render_leaderboard_html(document: Mapping[str, Any], *, meta_link: str | None = None) -> str:
    """The leaderboard document as a complete, self-contained HTML page (no request context needed);
    ``meta_link``: where the task's measure advice is, shown to its organisers only."""
    return _environment().get_template("leaderboard.html").render(**_context(document), meta_link=meta_link)


@functools.cache
def _environment() -> Environment:
    """One Jinja2 environment for the package's templates, built on first use (autoescaping every value).

    The templates are the ``service`` package's (``service/web/templates``, shipped as its package data), found from
    this file, not with ``PackageLoader("service")``: under pytest ``tests/service`` (a package whose parent is
    not) is imported as ``service`` too, and that loader would look there.
    """
    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def _context(document: Mapping[str, Any]) -> dict[str, Any]:
    """The template's variables: the document's values formatted, significance letters and marks resolved."""
    task = _mapping(document.get("task"))
    phase = _mapping(document.get("phase")) if document.get("phase") is not None else None
    measures = [str(m) for m in document.get("measures") or ()]
    primary = str(document.get("primary") or (measures[0] if measures else ""))
    order = SortOrder.ASC if document.get("order") == SortOrder.ASC else SortOrder.DESC
    rows = [_mapping(r) for r in document.get("rows") or ()]
    significance = _mapping(document.get("significance")) if document.get("significance") is not None else None
    topics = document.get("topics") or ()
    pending = _integer(document.get("pending"))

    legend = _legend(significance) if significance is not None and len(rows) >= 2 else None
    tested_rows = [r for r in rows if not r.get("disqualified")]  # a disqualified row is in no test: no letter
    letters = {str(r.get("key")): row_letter(i) for i, r in enumerate(tested_rows)} if legend else {}
    views = [_row_view(r, measures, primary, letters) for r in rows]
    name = str(task.get("name") or task.get("id") or "Shared task")
    n_topics = len(topics) if isinstance(topics, Sequence) else 0
    pairs = document.get("pairs")
    marks = [s.marks for v in views for s in v.scores if s.primary]
    # the engine tests pairs only over two topics or more; a document without "pairs" says nothing either way
    tested = (bool(pairs) or any(marks)) if pairs is not None else n_topics >= 2
    return {
        "title": f"{name} leaderboard",
        "task_name": name,
        "description": str(task.get("description") or ""),
        "phase": _phase_view(phase),
        "version": document.get("version"),
        "generated": _moment(document.get("generated_at")),
        "selection": document.get("selection"),
        "columns": [Column(m, m == primary) for m in measures],
        "primary": primary,
        "order": order,
        "n_topics": n_topics,
        "rows": views,
        "show_baseline": any(r.get("delta_baseline") is not None for r in rows),
        "legend": legend,
        "tested": tested,
        "any_marks": any(marks),
        "marks_width": max((len(m) for m in marks), default=0),
        "pending": pending,
    }


def _row_view(row: Mapping[str, Any], measures: Sequence[str], primary: str, letters: Mapping[str, str]) -> RowView:
    """Format one leaderboard row; only the primary score carries significance marks."""
    extra = _mapping(row.get("extra"))
    raw_scores = _mapping(row.get("scores"))
    beaten = [letters[str(k)] for k in row.get("better_than") or () if str(k) in letters]
    beaten.sort(key=lambda letter: (len(letter), letter))  # row order: a … z, aa …
    separator = "" if all(len(letter) == 1 for letter in beaten) else ","
    marks = separator.join(beaten)
    title = f"significantly better than row{'s' if len(beaten) > 1 else ''} {', '.join(beaten)}" if beaten else ""
    scores = tuple(
        Score(_number(raw_scores.get(m)), m == primary, marks if m == primary else "", title if m == primary else "")
        for m in measures
    )
    label = str(row.get("label") or "")
    return RowView(
        rank=str(row.get("rank") if row.get("rank") is not None else MISSING),
        key=str(row.get("key") or ""),
        letter=letters.get(str(row.get("key")), ""),
        team=str(extra.get("team") or label or MISSING),
        run=str(extra.get("run") or ""),
        description=str(extra.get("description") or ""),
        baseline=bool(row.get("baseline")),
        scores=scores,
        delta_best=_delta(row.get("delta_best")),
        delta_baseline=_delta(row.get("delta_baseline")),
        submitted=_moment(extra.get("submitted_at")),
        disqualified=_disqualified(row.get("disqualified")),
    )


def _disqualified(mark: Any) -> str:
    """A disqualified row's public reason ("" for a ranked row)."""
    if not mark:
        return ""
    return str(_mapping(mark).get("reason") or "disqualified")


def _phase_view(phase: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The phase's name and its window (either end may be open)."""
    if phase is None:
        return None
    return {"name": str(phase.get("name") or ""), "opens": _moment(phase.get("opens_at")),
            "closes": _moment(phase.get("closes_at"))}


def _legend(significance: Mapping[str, Any]) -> str:
    """The sentence under the table naming the test, its correction and alpha (TREC-paper style)."""
    test = str(significance.get("test") or "")
    parts = [TEST_NAMES.get(test, f"{test} test" if test else "pairwise test")]
    resamples = significance.get("resamples")
    if test in STOCHASTIC_TESTS and isinstance(resamples, int) and not isinstance(resamples, bool):
        parts[0] += f" ({resamples:,} resamples)"
    correction = significance.get("correction")
    if correction:
        parts.append(CORRECTION_NAMES.get(str(correction), f"{correction} correction"))
    elif test == "tukey":
        parts.append("family-wise error controlled by the test")
    else:
        parts.append("no multiple-comparison correction")
    alpha = significance.get("alpha")
    if isinstance(alpha, (int, float)) and not isinstance(alpha, bool):
        parts.append(f"α = {alpha:g}")
    return "a superscript letter marks a significant improvement over that row: " + ", ".join(parts)


def _finite(value: Any) -> float | None:
    """A JSON number as a finite float; None for null, NaN, infinities and non-numbers."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _number(value: Any) -> str:
    """A score with four decimals; missing values as a dash."""
    number = _finite(value)
    return MISSING if number is None else f"{number:.4f}"


def _delta(value: Any) -> str:
    """A signed difference with four decimals (a true minus sign; no sign on zero)."""
    number = _finite(value)
    if number is None:
        return MISSING
    text = f"{abs(number):.4f}"
    if text == f"{0:.4f}":
        return text
    return ("+" if number > 0 else MINUS) + text


def _moment(value: Any) -> Moment | None:
    """An ISO 8601 timestamp in UTC (naive values are taken as UTC); unparsable text is shown as given."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return Moment(value, value)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    parsed = parsed.astimezone(timezone.utc)
    return Moment(parsed.isoformat(), parsed.strftime("%Y-%m-%d %H:%M UTC"))


def _mapping(value: Any) -> Mapping[str, Any]:
    """The value if it is a mapping, else an empty one (tolerates missing parts of the document)."""
    return value if isinstance(value, Mapping) else {}


def _integer(value: Any) -> int:
    """A count from the document; anything else counts as zero."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
