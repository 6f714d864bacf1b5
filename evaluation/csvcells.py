"""CSV cells that a spreadsheet will not run: a text cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return is a formula to Excel and LibreOffice, so it is written with a leading ``'``. Numbers (``-0.25``,
``-1e-05``) stay numbers."""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip() == text


def safe_cell(value: object) -> str:
    """``value`` as a CSV cell, escaped with a leading ``'`` when a spreadsheet would read it as a formula."""
    text = str(value)
    if text.startswith(FORMULA_STARTS) and not _is_number(text):
        return "'" + text
    return text
