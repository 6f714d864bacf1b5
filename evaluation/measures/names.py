"""Parsing measure names: ir_measures syntax ``Name(param=value,...)@cutoff`` (spec 1.7), plus trec_eval 10.0's
spellings (``P_10``, ``P.10``, ``ndcg_cut.10,20``, ``map``, ``iprec_at_recall_0.10``, ``set_F.0.5``,
``utility_2,-1,0,0``, ``ndcg.1=3,2=9``) for people arriving from it; and back: trec_eval's label and output order of
a measure.

Values are taken literally (numbers, words, colon tables such as ``1:2:3``); nothing is evaluated.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from evaluation.problems import MeasureError

_NAME = re.compile(
    r"""^\s*(?P<name>[A-Za-z_][A-Za-z0-9_\-]*)\s*
        (?:\(\s*(?P<params>[^()]*)\)\s*)?
        (?:@\s*(?P<cutoff>[^\s]+)\s*)?$""",
    re.VERBOSE,
)
_PARAM = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([A-Za-z0-9_.+\-:]+)\s*$")

#: trec_eval measure names -> our canonical spelling (``{}`` takes trec_eval's cutoff suffix). The names give
#: trec_eval 10.0's numbers (spec Appendix E: the tool whose name is typed wins): ``rbp`` is RBP with p = 0.9 and
#: grades over the topic's highest grade, ``iprec_at_recall_r`` reaches r at relevant document lround(r * R).
TREC_EVAL_NAMES: dict[str, str] = {
    "map": "AP",
    "gm_map": "GMAP",
    "recip_rank": "RR",
    "bpref": "Bpref",
    "gm_bpref": "GMBpref",
    "Rprec": "Rprec",
    "ndcg": "nDCG",
    "ndcg_rel": "nDCGRel",
    "dcg": "DCG",
    "ideal_dcg": "IDCG",
    "yaap": "YAAP",
    "Rndcg": "RnDCG",
    "binG": "BinG",
    "G": "G",
    "infAP": "infAP",
    "num_ret": "NumRet",
    "num_rel": "NumRel",
    "num_rel_ret": "NumRelRet",
    "num_nonrel_judged_ret": "NumNonrelJudgedRet",
    "set_P": "SetP",
    "set_recall": "SetR",
    "set_F": "SetF",
    "set_map": "SetMAP",
    "set_relative_P": "SetRelativeP",
    "utility": "Utility",
    "11pt_avg": "IPrecAvg",
    "rbp": "RBP(p=0.9,rel=graded_topic)",
    "rbp_resid": "RBPResid",
    "P_{}": "P@{}",
    "recall_{}": "R@{}",
    "ndcg_cut_{}": "nDCG@{}",
    "map_cut_{}": "AP@{}",
    "success_{}": "Success@{}",
    "relative_P_{}": "RelativeP@{}",
    "unj_{}": "Unjudged@{}",
    "iprec_at_recall_{}": "IPrec(recall={},reach=rounded)",
    "Rprec_mult_{}": "RprecMult(mult={})",
}

#: trec_eval families whose suffix is a real number (the others take an integer cutoff)
_REAL_SUFFIX = ("iprec_at_recall_{}", "Rprec_mult_{}")

#: trec_eval measures whose parameters follow a dot (``-m set_F.0.5``) and which it prints with them after an
#: underscore (``set_F_0.5``); the parameters become ours in ``_parameterised``
_PARAMETERISED = re.compile(
    r"^(?P<base>set_F|utility|11pt_avg|rbp_resid|rbp|ndcg_rel|Rndcg|ndcg|ideal_dcg|dcg|G)[._](?P<params>.+)$"
)
#: trec_eval's gain maps (``ndcg.1=3,2=9``): grade=gain pairs, grades from 0
_GAIN_MAP = re.compile(r"^[0-9]+=[^,=]+(?:,[0-9]+=[^,=]+)*$")
#: measures that take a gain map: trec_eval name -> ours
_GAIN_MAPPED = {"ndcg": "nDCG", "ndcg_rel": "nDCGRel", "Rndcg": "RnDCG", "G": "G", "dcg": "DCG", "ideal_dcg": "IDCG"}

_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
#: the measures trec_eval's bare family names stand for (``-m P`` = P_5 ... P_1000): its default parameters
TREC_EVAL_FAMILIES: dict[str, tuple[str, ...]] = {
    "P": tuple(f"P_{k}" for k in _CUTOFFS),
    "recall": tuple(f"recall_{k}" for k in _CUTOFFS),
    "ndcg_cut": tuple(f"ndcg_cut_{k}" for k in _CUTOFFS),
    "map_cut": tuple(f"map_cut_{k}" for k in _CUTOFFS),
    "relative_P": tuple(f"relative_P_{k}" for k in _CUTOFFS),
    "success": ("success_1", "success_5", "success_10"),
    "unj": ("unj_5", "unj_10", "unj_20"),
    "iprec_at_recall": tuple(f"iprec_at_recall_{r / 10:.2f}" for r in range(11)),
    "Rprec_mult": tuple(f"Rprec_mult_{r / 10:.2f}" for r in range(2, 21, 2)),
}


#: trec_eval's measure table in its order (measures.c): ``-q`` output lists measures in this order whatever order
#: ``-m`` gave them in; ``--format trec_eval`` does the same.
TREC_EVAL_ORDER: tuple[str, ...] = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
    "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success",
    "set_P", "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "prefs_num_prefs_poss",
    "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg",
    "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "yaap",
    "rbp", "rbp_resid", "unj",
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
    """trec_eval 10.0's name of a measure given by its canonical name (``P@10`` -> ``P_10``, ``RBP(p=0.9,
    rel=graded_topic)`` -> ``rbp``), or None if trec_eval has no measure with the same number. A relevance
    threshold ``rel=N`` is trec_eval's ``-l N``, which does not change the name."""
    match = _CANONICAL.match(canonical)
    if not match:
        return None
    name, cutoff = match["name"], match["cutoff"]
    params = dict(piece.split("=", 1) for piece in match["params"].split(",")) if match["params"] else {}
    if name != "RBP" and params.get("rel", "").isdigit():
        del params["rel"]  # trec_eval -l
    if name == "Utility":
        params.pop("docs", None)  # trec_eval -N
    if cutoff is not None:
        if params:
            return None
        return next((pattern.format(cutoff) for pattern, target in TREC_EVAL_NAMES.items()
                     if "{}" in pattern and pattern not in _REAL_SUFFIX and target == f"{name}@{{}}"), None)
    special = _LABELS.get(name)
    if special is not None:
        return special(params)
    if params:
        return None
    return next((pattern for pattern, target in TREC_EVAL_NAMES.items()
                 if "{}" not in pattern and target == name), None)


def _rbp_label(params: dict[str, str]) -> str | None:
    if params.get("rel") != "graded_topic" or set(params) - {"p", "rel"}:
        return None
    p = params.get("p", "0.8")
    return "rbp" if float(p) == _TREC_EVAL_P else f"rbp_p={p}"


def _utility_label(params: dict[str, str]) -> str | None:
    if set(params) - set(_UTILITY_DEFAULTS):
        return None
    if not params:
        return "utility"
    values = [params.get(k, v) for k, v in _UTILITY_DEFAULTS.items()]
    return "utility_" + ",".join(values)


def _iprec_label(params: dict[str, str]) -> str | None:
    if params.get("reach") != "rounded" or set(params) != {"recall", "reach"}:
        return None
    return f"iprec_at_recall_{float(params['recall']):.2f}"


def _iprec_avg_label(params: dict[str, str]) -> str | None:
    if set(params) - {"levels"}:
        return None
    return "11pt_avg" + ("_" + params["levels"].replace(":", ",") if "levels" in params else "")


def _set_f_label(params: dict[str, str]) -> str | None:
    if set(params) - {"beta"}:
        return None
    return "set_F" + (f"_{float(params['beta']) ** 2:.12g}" if "beta" in params else "")


_TREC_EVAL_P = 0.9
_UTILITY_DEFAULTS = {"a": "1", "b": "-1", "c": "0", "d": "0"}
_CANONICAL = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:\((?P<params>[^()]*)\))?(?:@(?P<cutoff>\d+))?$")


def _rbp_resid_label(params: dict[str, str]) -> str | None:
    if set(params) - {"p"}:
        return None
    p = params.get("p", str(_TREC_EVAL_P))
    return "rbp_resid" if float(p) == _TREC_EVAL_P else f"rbp_resid_p={p}"


def _rprec_mult_label(params: dict[str, str]) -> str | None:
    return f"Rprec_mult_{float(params['mult']):.2f}" if set(params) == {"mult"} else None


def _gain_map_label(name: str) -> Callable[[dict[str, str]], str | None]:
    """The labeller of a measure that takes trec_eval's gain map (``ndcg_1=3,2=9``)."""

    def label(params: dict[str, str]) -> str | None:
        if set(params) - {"gains"}:
            return None
        pairs = ",".join(f"{level}={gain}" for level, gain in enumerate(params.get("gains", "").split(":"))
                         if "gains" in params and float(gain) != level)
        return name + (f"_{pairs}" if pairs else "")

    return label


#: our measures whose trec_eval name depends on their parameters -> the function that names them
_LABELS: dict[str, Callable[[dict[str, str]], str | None]] = {
    **{ours: _gain_map_label(theirs) for theirs, ours in _GAIN_MAPPED.items()},
    "RBP": _rbp_label,
    "RBPResid": _rbp_resid_label,
    "Utility": _utility_label,
    "IPrec": _iprec_label,
    "IPrecAvg": _iprec_avg_label,
    "SetF": _set_f_label,
    "RprecMult": _rprec_mult_label,
}


def trec_eval_rank(label: str) -> int:
    """Position of a trec_eval measure name in trec_eval's output order (other names after them)."""
    if label in TREC_EVAL_ORDER:
        return TREC_EVAL_ORDER.index(label)
    families = [f for f in TREC_EVAL_ORDER if label.startswith(f + "_")]
    if families:  # the longest family: map_cut_5 is map_cut's, not map's
        return TREC_EVAL_ORDER.index(max(families, key=len))
    return len(TREC_EVAL_ORDER)


def _from_trec_eval(text: str) -> str:
    parameterised = _PARAMETERISED.match(text)
    if parameterised and text not in TREC_EVAL_NAMES:
        ours = _parameterised(parameterised["base"], parameterised["params"], text)
        if ours != text:
            return ours
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
        if not text.startswith(prefix):
            continue
        if pattern in _REAL_SUFFIX and is_number(rest):
            return target.format(rest)
        whole = _LEADING_DIGITS.match(rest)
        if pattern not in _REAL_SUFFIX and whole:  # trec_eval reads a cutoff as atol does: ndcg_cut.23.4 = 23
            return target.format(whole[1])
    return text


_LEADING_DIGITS = re.compile(r"^([0-9]+)(?:\.[0-9]*)?$")


def _parameterised(base: str, params: str, text: str) -> str:
    """Our spelling of trec_eval's parameterised measures (``set_F.0.5``, ``utility.2,-1,0,0``,
    ``11pt_avg..25,.5``, ``rbp.p=0.95``, ``rbp_resid.p=0.95``); a malformed one is left for the parser to refuse."""
    values = params.split(",")
    if base == "set_F" and len(values) == 1 and is_number(values[0]) and float(values[0]) > 0:
        return f"SetF(beta={math.sqrt(float(values[0]))!r})"
    if base == "utility" and len(values) == 4 and all(is_number(v) for v in values):
        return "Utility(" + ",".join(f"{k}={v}" for k, v in zip(_UTILITY_DEFAULTS, values)) + ")"
    if base == "11pt_avg" and all(is_number(v) for v in values):
        return f"IPrecAvg(levels={':'.join(values)})"
    if base in ("rbp", "rbp_resid") and len(values) == 1 and values[0].startswith("p="):
        p = values[0][2:]
        return f"RBP(p={p},rel=graded_topic)" if base == "rbp" else f"RBPResid(p={p})"
    if base in _GAIN_MAPPED and _GAIN_MAP.match(params):
        pairs = dict(pair.split("=") for pair in values)
        if all(is_number(g) for g in pairs.values()):
            top = max(int(level) for level in pairs)
            given = {int(level): g for level, g in pairs.items()}
            table = [given.get(level, str(level)) for level in range(top + 1)]
            return f"{_GAIN_MAPPED[base]}(gains={':'.join(table)})"
    return text


def is_number(text: str) -> bool:
    """Whether Python reads ``text`` as a float (a trec_eval parameter; also the run sniffer's score column)."""
    try:
        float(text)
    except ValueError:
        return False
    return True
