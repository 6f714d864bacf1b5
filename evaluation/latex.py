"""LaTeX text escaping shared by the reports (``evaluation.reports.latex``) and the leaderboard tables
(``evaluation.leaderboard.render``): one set of rules, the strict one, so no label can inject commands."""

from __future__ import annotations

import unicodedata

_SPECIAL = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#", "%": r"\%", "_": r"\_",
    "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}",
    "|": r"\textbar{}", "-": "-{}", "\"": "''",
}


def latex_escape(text: str) -> str:
    """``text`` as literal LaTeX text: the special characters as commands, ``--`` kept as two hyphens, white space
    as a space, other control characters dropped, letters outside ASCII reduced to their base letter (``e`` for
    ``e`` with an accent) or written as ``[U+XXXX]``, so no input can inject commands or stop the compile."""
    out = []
    for ch in text:
        if ch in _SPECIAL:
            out.append(_SPECIAL[ch])
        elif " " <= ch <= "~":
            out.append(ch)
        elif ch.isspace():
            out.append(" ")
        elif unicodedata.category(ch) == "Cc":
            continue
        else:
            base = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode("ascii")
            out.append(latex_escape(base) if base else f"[U+{ord(ch):04X}]")
    return "".join(out)
