"""Parsing measure names: ir_measures syntax ``Name(param=value,...)@cutoff`` (spec 1.7), plus trec_eval's
spellings (``P_10``, ``ndcg_cut_20``, ``map``) for people arriving from it.

Values are taken literally (numbers, words, colon tables such as ``1:2:3``); nothing is evaluated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evaluation.measures.base import MeasureError

_NAME = re.compile(
    r"""^\s*(?P<name>[A-Za-z_][A-Za-z0-9_\-]*)\s*
        (?:\(\s*(?P<params>[^()]*)\)\s*)?
        (?:@\s*(?P<cutoff>[^\s]+)\s*)?$""",
    re.VERBOSE,
)
_PARAM = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([A-Za-z0-9_.+\-:]+)\s*$")

#: trec_eval measure names -> our canonical spelling (``{}`` takes trec_eval's cutoff suffix).
TREC_EVAL_NAMES: dict[str, str] = {
    "map": "AP",
    "recip_rank": "RR",
    "bpref": "Bpref",
    "Rprec": "Rprec",
    "ndcg": "nDCG",
    "P_{}": "P@{}",
    "recall_{}": "R@{}",
    "ndcg_cut_{}": "nDCG@{}",
    "map_cut_{}": "AP@{}",
    "success_{}": "Success@{}",
}


@dataclass(frozen=True)
class ParsedName:
    """The pieces of a measure name before it is checked against the registry."""

    name: str
    params: tuple[tuple[str, str], ...]
    cutoff: int | None


def parse_name(text: str) -> ParsedName:
    """Split ``Name(a=1,b=x)@10`` into its pieces; syntax errors share one message shape."""
    translated = _from_trec_eval(text.strip())
    match = _NAME.match(translated)
    if not match:
        raise MeasureError(f"cannot read measure name {text!r}: expected Name, Name@k or Name(param=value,...)@k")
    params: list[tuple[str, str]] = []
    if match["params"] is not None and match["params"].strip():
        for piece in match["params"].split(","):
            pm = _PARAM.match(piece)
            if not pm:
                raise MeasureError(f"cannot read parameter {piece.strip()!r} in {text!r}: expected param=value")
            if any(k == pm[1] for k, _ in params):
                raise MeasureError(f"parameter {pm[1]} is given twice in {text!r}")
            params.append((pm[1], pm[2]))
    cutoff: int | None = None
    if match["cutoff"] is not None:
        try:
            cutoff = int(match["cutoff"])
        except ValueError:
            raise MeasureError(f"the cutoff in {text!r} must be a positive integer") from None
        if cutoff < 1:
            raise MeasureError(f"the cutoff in {text!r} must be a positive integer")
    return ParsedName(match["name"], tuple(params), cutoff)


def _from_trec_eval(text: str) -> str:
    for pattern, target in TREC_EVAL_NAMES.items():
        if "{}" not in pattern:
            if text == pattern:
                return target
            continue
        prefix = pattern.replace("{}", "")
        rest = text[len(prefix) :]
        if text.startswith(prefix) and rest.isdigit():
            return target.format(rest)
    return text
