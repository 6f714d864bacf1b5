"""Parsing measure names: ir_measures syntax ``Name(param=value,...)@cutoff`` (spec 1.7), plus trec_eval's
spellings (``P_10``, ``P.10``, ``ndcg_cut.10,20``, ``map``, ``iprec_at_recall_0.10``) for people arriving from it.

Values are taken literally (numbers, words, colon tables such as ``1:2:3``); nothing is evaluated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evaluation.problems import MeasureError

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
    "gm_map": "GMAP",
    "recip_rank": "RR",
    "bpref": "Bpref",
    "Rprec": "Rprec",
    "ndcg": "nDCG",
    "infAP": "infAP",
    "num_ret": "NumRet",
    "num_rel": "NumRel",
    "num_rel_ret": "NumRelRet",
    "set_P": "SetP",
    "set_recall": "SetR",
    "set_F": "SetF",
    "P_{}": "P@{}",
    "recall_{}": "R@{}",
    "ndcg_cut_{}": "nDCG@{}",
    "map_cut_{}": "AP@{}",
    "success_{}": "Success@{}",
    "iprec_at_recall_{}": "IPrec(recall={})",
}

#: trec_eval's own order of measures (its measure table, as in ``out.test.aq``): its ``-q`` output lists
#: measures in this order whatever order ``-m`` gave them in; ``--format trec_eval`` does the same.
TREC_EVAL_ORDER: tuple[str, ...] = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
    "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P", "set_relative_P",
    "set_recall", "set_map", "set_F", "num_nonrel_judged_ret",
)

_DOTTED = re.compile(r"^(?P<base>[A-Za-z_]+)\.(?P<values>[0-9.]+(?:,[0-9.]+)*)$")
_CUT = re.compile(r"^(?P<name>[A-Za-z]+)@(?P<k>[0-9]+)$")
_IPREC = re.compile(r"^IPrec\(recall=(?P<r>[0-9.]+)\)$")



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


def expand_name(text: str) -> list[str]:
    """trec_eval's parameter lists name several measures: ``ndcg_cut.10,20`` -> ``ndcg_cut.10``, ``ndcg_cut.20``.

    Any other name is returned alone; each piece is then parsed on its own and keyed by its own spelling.
    """
    match = _DOTTED.match(text.strip())
    if not match or f"{match['base']}_{{}}" not in TREC_EVAL_NAMES or "," not in match["values"]:
        return [text.strip()]
    return [f"{match['base']}.{value}" for value in match["values"].split(",")]


def trec_eval_label(canonical: str) -> str | None:
    """trec_eval's name of a measure given by its canonical name (``P@10`` -> ``P_10``), or None if trec_eval
    has no measure with the same number (parameters other than trec_eval's defaults have none)."""
    for pattern, target in TREC_EVAL_NAMES.items():
        if "{}" not in pattern and target == canonical:
            return pattern
    cut = _CUT.match(canonical)
    if cut:
        for pattern, target in TREC_EVAL_NAMES.items():
            if "{}" in pattern and target == f"{cut['name']}@{{}}":
                return pattern.format(cut["k"])
    iprec = _IPREC.match(canonical)
    if iprec:
        return f"iprec_at_recall_{float(iprec['r']):.2f}"
    return None


def trec_eval_rank(label: str) -> int:
    """Position of a trec_eval measure name in trec_eval's output order (other names after them)."""
    if label in TREC_EVAL_ORDER:
        return TREC_EVAL_ORDER.index(label)
    families = [f for f in TREC_EVAL_ORDER if label.startswith(f + "_")]
    if families:  # the longest family: map_cut_5 is map_cut's, not map's
        return TREC_EVAL_ORDER.index(max(families, key=len))
    return len(TREC_EVAL_ORDER)


def _from_trec_eval(text: str) -> str:
    dotted = _DOTTED.match(text)
    if dotted and f"{dotted['base']}_{{}}" in TREC_EVAL_NAMES:  # trec_eval -m P.10: the same as P_10
        text = f"{dotted['base']}_{dotted['values']}"
    for pattern, target in TREC_EVAL_NAMES.items():
        if "{}" not in pattern:
            if text == pattern:
                return target
            continue
        prefix = pattern.replace("{}", "")
        rest = text[len(prefix) :]
        if text.startswith(prefix) and (rest.isdigit() or (pattern.startswith("iprec") and _is_number(rest))):
            return target.format(rest)
    return text


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
