"""Server-rendered HTML of a shared-task leaderboard: one self-contained page (inline CSS, no JavaScript, no
external assets) for people looking at a public leaderboard in a browser. It fits 1,280 px without a horizontal
scroll for up to eight measures, shows baselines (and any other unranked row) without a rank, lets the reader
choose the measure whose significance marks are shown (CSS-only radio buttons), and says when the results are
final.

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
from markupsafe import Markup, escape

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
    """One measure column of the table; ``marks_width``: the widest significance marks in it (characters)."""

    index: int
    name: str
    primary: bool
    marks_width: int = 0


@dataclass(frozen=True)
class Score:
    """One formatted mean; ``marks`` are the letters of the rows it is significantly better than on its
    measure (shown when the reader picks that measure's significance)."""

    text: str
    primary: bool
    marks: str
    marks_title: str
    index: int = 0


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
    unranked: str | None = None  # why the row has no rank ("baseline", a disqualification's reason, ...)


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
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["breakable"] = breakable
    return env


def breakable(name: str) -> Markup:
    """A measure name (escaped) that may wrap before ``@`` and after ``_`` (``alpha_nDCG@20``: "alpha_", "nDCG",
    "@20"), never inside a word: narrow measure columns keep their headers readable."""
    text = str(escape(name))
    return Markup(text.replace("@", "<wbr>@").replace("_", "_<wbr>"))


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

    ranked = [r for r in rows if r.get("rank") is not None]  # only ranked rows are tested and get letters
    legend = _legend(significance) if significance is not None and len(ranked) >= 2 else None
    letters = {str(r.get("key")): row_letter(i) for i, r in enumerate(ranked)} if legend else {}
    views = [_row_view(r, measures, primary, letters) for r in rows]
    name = str(task.get("name") or task.get("id") or "Shared task")
    n_topics = len(topics) if isinstance(topics, Sequence) else 0
    pairs = document.get("pairs")
    marks = [s.marks for v in views for s in v.scores if s.primary]
    # the engine tests pairs only over two topics or more; a document without "pairs" says nothing either way
    tested = (bool(pairs) or any(marks)) if pairs is not None else n_topics >= 2
    widths = [max((len(v.scores[i].marks) for v in views), default=0) for i in range(len(measures))]
    final = _final_view(_mapping(document.get("final"))) if document.get("final") is not None else None
    return {
        "title": f"{name} {'final ' if final else ''}leaderboard",
        "task_name": name,
        "description": str(task.get("description") or ""),
        "phase": _phase_view(phase),
        "version": document.get("version"),
        "generated": _moment(document.get("generated_at")),
        "selection": document.get("selection"),
        "columns": [Column(i, m, m == primary, widths[i]) for i, m in enumerate(measures)],
        "primary": primary,
        "primary_index": measures.index(primary) if primary in measures else 0,
        "order": order,
        "n_topics": n_topics,
        "rows": views,
        "show_baseline": any(r.get("delta_baseline") is not None for r in rows),
        "legend": legend,
        "tested": tested,
        "any_marks": any(s.marks for v in views for s in v.scores),
        "marks_width": max(widths, default=0),
        "any_unranked": any(v.unranked for v in views),
        "pending": pending,
        "final": final,
    }


def _final_view(final: Mapping[str, Any]) -> dict[str, Any]:
    """The banner of a final leaderboard: when, its content hash, the evalserve version, the judgments' digest
    and what each measure is."""
    measures = [_mapping(m) for m in final.get("measures") or ()]
    return {"at": _moment(final.get("at")), "hash": str(final.get("hash") or ""),
            "evalserve": str(final.get("evalserve") or ""), "judgments": str(final.get("judgments_sha256") or ""),
            "measures": [{"measure": str(m.get("measure") or m.get("name") or ""),
                          "summary": str(m.get("summary") or ""), "reference": str(m.get("reference") or "")}
                         for m in measures]}


def _marks(keys: Any, letters: Mapping[str, str]) -> tuple[str, str]:
    """The letters of the rows ``keys`` names (row order) and their tooltip."""
    beaten = [letters[str(k)] for k in keys or () if str(k) in letters]
    beaten.sort(key=lambda letter: (len(letter), letter))  # row order: a … z, aa …
    separator = "" if all(len(letter) == 1 for letter in beaten) else ","
    title = f"significantly better than row{'s' if len(beaten) > 1 else ''} {', '.join(beaten)}" if beaten else ""
    return separator.join(beaten), title


def _row_view(row: Mapping[str, Any], measures: Sequence[str], primary: str, letters: Mapping[str, str]) -> RowView:
    """Format one leaderboard row with its significance marks on every measure (the primary's from
    ``better_than``, the others' from ``better_than_by_measure``)."""
    extra = _mapping(row.get("extra"))
    raw_scores = _mapping(row.get("scores"))
    by_measure = _mapping(row.get("better_than_by_measure"))
    scores = []
    for i, m in enumerate(measures):
        keys = row.get("better_than") if m == primary else by_measure.get(m)
        marks, title = _marks(keys, letters)
        scores.append(Score(_number(raw_scores.get(m)), m == primary, marks, title, i))
    label = str(row.get("label") or "")
    baseline = bool(row.get("baseline"))
    unranked = None
    if row.get("rank") is None:
        unranked = str(extra.get("unranked") or ("baseline" if baseline else "unranked"))
    return RowView(
        rank=str(row.get("rank") if row.get("rank") is not None else MISSING),
        key=str(row.get("key") or ""),
        letter=letters.get(str(row.get("key")), ""),
        team=str(extra.get("team") or label or MISSING),
        run=str(extra.get("run") or ""),
        description=str(extra.get("description") or ""),
        baseline=baseline,
        scores=tuple(scores),
        delta_best=_delta(row.get("delta_best")),
        delta_baseline=_delta(row.get("delta_baseline")),
        submitted=_moment(extra.get("submitted_at")),
        unranked=unranked,
    )


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
