"""Fixtures of the preference tests: spec TV-PRF-1 as a utility table, as judgments that estimate it, and on disk."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from evaluation.preference import UtilityTable, table_from_estimates

NAN = float("nan")
DOCS = ["p", "q", "r", "s"]
#: U(d), spec 6.5 TV-PRF-1
UNCONDITIONAL = {"p": Fraction(5, 6), "q": Fraction(4, 6), "r": Fraction(2, 6), "s": Fraction(1, 6)}
#: U(row | top = column), spec 6.5 TV-PRF-1
CONDITIONAL = {
    ("p", "q"): Fraction(1, 4), ("p", "r"): Fraction(3, 4), ("p", "s"): Fraction(3, 4),
    ("q", "p"): Fraction(1, 4), ("q", "r"): Fraction(3, 4), ("q", "s"): Fraction(2, 4),
    ("r", "p"): Fraction(3, 4), ("r", "q"): Fraction(3, 4), ("r", "s"): Fraction(2, 4),
    ("s", "p"): Fraction(2, 4), ("s", "q"): Fraction(1, 4), ("s", "r"): Fraction(0),
}


def tv1_table() -> UtilityTable:
    matrix = np.full((4, 4), NAN)  # row = top, column = candidate
    for (doc, top), value in CONDITIONAL.items():
        matrix[DOCS.index(top), DOCS.index(doc)] = float(value)
    return table_from_estimates({"1": (DOCS, [float(UNCONDITIONAL[d]) for d in DOCS], matrix)})


def _lines(a: str, b: str, a_wins: int, b_wins: int, top: str | None = None) -> list[str]:
    head = "1 u1 " + (f"{top} " if top else "")
    return [f"{head}{a} {b} {a}"] * a_wins + [f"{head}{a} {b} {b}"] * b_wins


def tv1_judgments_text() -> str:
    """Judgments whose estimates are exactly TV-PRF-1's utilities. With top s the three candidates' target ratios
    (3/4, 2/4, 2/4) cannot come from comparisons among themselves alone (their wins would exceed the judgments), so
    a fifth document d0 loses two of them; it never wins, so its utility is 0 everywhere and, as the smallest
    docno, it never displaces s from the ideal's fourth place (ranks beyond 4 do not enter TV-PRF-1)."""
    lines = [
        *_lines("p", "q", 1, 1), *_lines("p", "r", 2, 0), *_lines("p", "s", 2, 0),
        *_lines("q", "r", 2, 0), *_lines("q", "s", 1, 1), *_lines("r", "s", 2, 0),
        *_lines("q", "r", 0, 2, "p"), *_lines("q", "s", 1, 1, "p"), *_lines("r", "s", 1, 1, "p"),
        *_lines("p", "r", 1, 3, "q"), *_lines("r", "s", 3, 1, "q"),
        *_lines("p", "q", 1, 1, "r"), *_lines("p", "s", 2, 0, "r"), *_lines("q", "s", 2, 0, "r"),
        *_lines("p", "q", 0, 1, "s"), *_lines("p", "r", 2, 0, "s"), *_lines("p", "d0", 1, 0, "s"),
        *_lines("q", "r", 0, 2, "s"), *_lines("q", "d0", 1, 0, "s"),
    ]
    return "\n".join(lines) + "\n"


TV_QRELS = "1 0 p 1\n1 0 q 1\n1 0 r 1\n1 0 s 1\n"
TV_RUN = "1 Q0 p 1 4 t\n1 Q0 q 2 3 t\n1 Q0 r 3 2 t\n1 Q0 s 4 1 t\n"


@pytest.fixture
def tv1() -> UtilityTable:
    """TV-PRF-1's utilities as a table."""
    return tv1_table()


@pytest.fixture
def tv1_judgments() -> str:
    """Judgment file text whose estimates are TV-PRF-1's utilities."""
    return tv1_judgments_text()


@pytest.fixture
def tv1_files(tmp_path: Path) -> dict[str, Path]:
    """TV-PRF-1 on disk: qrels (p, q, r, s judged), the run (p, q, r, s) and the judgments."""
    files = {"qrels": tmp_path / "q.txt", "run": tmp_path / "r.run", "prefs": tmp_path / "prefs.txt"}
    files["qrels"].write_text(TV_QRELS)
    files["run"].write_text(TV_RUN)
    files["prefs"].write_text(tv1_judgments_text())
    return files


@pytest.fixture
def tv1_utilities() -> tuple[dict[str, Fraction], dict[tuple[str, str], Fraction]]:
    """TV-PRF-1's U(d) and U(d | top), keyed by d and by (d, top)."""
    return dict(UNCONDITIONAL), dict(CONDITIONAL)
