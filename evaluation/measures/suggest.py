"""Did-you-mean for measure names: the close spellings of an unknown name, written the way it was written.

A trec_eval spelling keeps its parameters and separator (``ncdg_cut.10`` -> ``ndcg_cut.10``, ``recal_10`` ->
``recall_10``), an ir_measures one its parameters and cutoff (``nDGC(gain=exp)@10`` -> ``nDCG(gain=exp)@10``).
Names are compared case-insensitively, so ``ndgc`` finds ``nDCG``. trec_eval's names come from
``names.TREC_EVAL_NAMES`` (read, never changed here), so every name it learns is suggested too (spec 1.7, and
Appendix E for trec_eval's names).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from evaluation.measures.names import TREC_EVAL_NAMES

#: trec_eval's ``name.params`` and ``name_params``: ``ndcg_cut.10``, ``P_5``, ``iprec_at_recall_0.10``, ``P.5,10``
_TREC_STYLE = re.compile(r"^(?P<base>[A-Za-z][A-Za-z_]*?)(?P<sep>[._])(?P<values>[0-9][0-9.]*(?:,[0-9.]+)*)$")
#: ir_measures' ``Name(params)@k``, every part but the name optional
_IR_STYLE = re.compile(r"^(?P<base>[A-Za-z_][A-Za-z0-9_\-]*)(?P<rest>\s*(?:\([^()]*\))?\s*(?:@\s*\S+)?)$")
CUTOFF = 0.6  # difflib's similarity ratio a suggestion needs (0.6, difflib's default, finds mpa -> map)


def close_names(text: str, names: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` known spellings close to ``text`` (closest first), completed with its parameters; ``names`` are
    the registry's names and aliases. Empty when nothing is close."""
    text = text.strip()
    trec = _TREC_STYLE.match(text)
    if trec is not None:
        families = [pattern.removesuffix("_{}") for pattern in TREC_EVAL_NAMES if pattern.endswith("_{}")]
        found = _closest(trec["base"], families, n)
        if found:
            return [f"{family}{trec['sep']}{trec['values']}" for family in found]
    ir = _IR_STYLE.match(text)
    if ir is None:
        return []
    plain = [pattern for pattern in TREC_EVAL_NAMES if "{}" not in pattern]
    if ir["rest"].strip():  # a cutoff or parameters: trec_eval's plain names take neither
        plain = []
    return [f"{name}{ir['rest']}" for name in _closest(ir["base"], [*names, *plain], n)]


def _closest(word: str, candidates: Iterable[str], n: int) -> list[str]:
    """The candidates closest to ``word`` ignoring case; of spellings equal but for case, the first given. None
    when ``word`` is a candidate: the name is known, what is wrong is elsewhere (a cutoff, a parameter)."""
    by_folded: dict[str, str] = {}
    for candidate in candidates:
        by_folded.setdefault(candidate.lower(), candidate)
    if word.lower() in by_folded:
        return []
    return [by_folded[f] for f in difflib.get_close_matches(word.lower(), list(by_folded), n=n, cutoff=CUTOFF)]


def did_you_mean(text: str, names: Iterable[str]) -> str:
    """The hint appended to an unknown name's message: ``; did you mean X or Y?`` or a pointer to the catalogue."""
    close = close_names(text, names)
    return f"; did you mean {' or '.join(close)}?" if close else "; `evalserve measures` lists them all"
