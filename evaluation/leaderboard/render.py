"""A leaderboard as JSON (the contract), CSV (full precision) and a LaTeX booktabs table for papers."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping
from datetime import date, datetime, time
from typing import Any

from evaluation.csvcells import safe_cell
from evaluation.latex import latex_escape as latex_escape  # the reports' strict rules
from evaluation.leaderboard.ranking import Leaderboard, SignificanceSettings

#: how the tests and corrections are named in notes and legends
TEST_NAMES = {
    "t": "paired t-test",
    "randomisation": "Fisher randomisation test",
    "bootstrap": "paired bootstrap test",
    "tukey": "randomised Tukey HSD test",
}
CORRECTION_NAMES = {
    "holm": "Holm correction",
    "bonferroni": "Bonferroni correction",
    "bh": "Benjamini–Hochberg correction",
}


def to_json(board: Leaderboard) -> str:
    """``board.as_dict()`` as indented JSON (dates and times in ``extra`` as ISO 8601 strings)."""
    return json.dumps(board.as_dict(), indent=2, default=_json_default) + "\n"


def to_csv(board: Leaderboard, *, constant: Mapping[str, str] | None = None) -> str:
    """One line per row: values in full precision (``repr``), an empty ``rank`` for a row shown unranked (a
    baseline), ``better_than`` as the space-separated keys of the rows it beats on the primary measure (keys, not
    ranks: ranks are ambiguous under ties); ``constant`` adds columns with the same value on every line (a final
    leaderboard's ``final_at`` and ``final_hash``)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    extra = dict(constant or {})
    writer.writerow(["rank", "key", "label", "baseline", *map(safe_cell, board.measures), "delta_best",
                     "delta_baseline", "better_than", *map(safe_cell, extra)])
    for r in board.rows:
        writer.writerow([
            "" if r.rank is None else r.rank,
            safe_cell(r.key),
            safe_cell(r.label),
            "true" if r.baseline else "false",
            *(repr(r.scores[m]) for m in board.measures),
            repr(r.delta_best),
            "" if r.delta_baseline is None else repr(r.delta_baseline),
            " ".join(safe_cell(k) for k in r.better_than),
            *(safe_cell(v) for v in extra.values()),
        ])
    return out.getvalue()


def to_latex(board: Leaderboard, *, digits: int = 4, caption: str | None = None, note: str | None = None) -> str:
    """A booktabs ``table``: rank (a dash for a row shown unranked), row letter (ranked rows only), system, one
    column per measure (primary in bold) and the distance to the leader; a primary score carries the letters of the
    rows it is significantly better than; ``note`` (plain text) is added under the significance note."""
    letter = {r.key: row_letter(i) for i, r in enumerate(r for r in board.rows if r.rank is not None)}
    header = ["Rank", "", "System"]
    header += [rf"\textbf{{{latex_escape(m)}}}" if m == board.primary else latex_escape(m) for m in board.measures]
    header.append(r"$\Delta$ best")
    lines = [
        r"\begin{table}",
        r"\centering",
        r"\begin{tabular}{rll" + "r" * len(board.measures) + "r}",
        r"\toprule",
        " & ".join(header) + r" \\",
        r"\midrule",
    ]
    for r in board.rows:
        cells = ["--" if r.rank is None else str(r.rank),
                 rf"\textsuperscript{{{letter[r.key]}}}" if r.key in letter else "",
                 rf"\textit{{{latex_escape(r.label)}}}" if r.baseline else latex_escape(r.label)]
        for m in board.measures:
            cell = _fixed(r.scores[m], digits)
            if m == board.primary and r.better_than:
                cell += rf"\textsuperscript{{{''.join(letter[k] for k in r.better_than)}}}"
            cells.append(cell)
        cells.append(_fixed(r.delta_best, digits))
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    lines.append(r"\par\smallskip{\footnotesize " + _significance_note(board) + "}")
    if note is not None:
        lines.append(r"\par{\footnotesize " + latex_escape(note) + "}")
    if caption is not None:
        lines.append(rf"\caption{{{latex_escape(caption)}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def _significance_note(board: Leaderboard) -> str:
    s: SignificanceSettings = board.significance
    correction = CORRECTION_NAMES[s.correction] if s.correction is not None else "no correction"
    note = (
        f"Superscripts: significantly better than the systems with those letters on {latex_escape(board.primary)}"
        f" ({TEST_NAMES[s.test]}, {correction}, $\\alpha = {s.alpha:g}$, {len(board.topics)} topics)."
    )
    if any(r.baseline for r in board.rows):
        note += " Baseline in italics, unranked and not tested."
    return note


def row_letter(index: int) -> str:
    """a, b, ..., z, aa, ab, ...: the row letters."""
    out = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        out = chr(ord("a") + rest) + out
    return out


def _fixed(value: float, digits: int) -> str:
    if not math.isfinite(value):
        return "--"
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0.0 else text


def _json_default(value: Any) -> Any:
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    # internal: the json.dumps default protocol (TypeError for what it cannot encode)
    raise TypeError(f"{type(value).__name__} in a leaderboard is not JSON serialisable")
