"""trec_eval 10.0 as a drop-in: its measure requests (``-m name[.params]``, nicknames), its options' effect on the
evaluation (``-c -l -M -J -N -q -n``) and its output text, byte for byte (spec Appendix E.1).

The numbers are evalserve's: every value line names a measure the registry resolves from trec_eval's own label
(``P_5``, ``iprec_at_recall_0.10``, ``utility``) or dotted request (``utility.2,-1,0,0``) through
``evaluation.measures.names``, so a measure added there is picked up here without a change. What is trec_eval's
and kept here: its measure table (order, output shape, default parameters), its nicknames, how it reads
parameters (``atol``/``atof``, sorted cut-offs, first request wins), and how it sums and prints (per-topic values
in ``%6.4f`` or as integers, means as sequential sums in topic order divided by the number of topics).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from evaluation.drop_in._common import c_fixed
from evaluation.formats.source import GZIP_MAGIC
from evaluation.measures.adhoc._shared import REL
from evaluation.measures.adhoc.iprec import c_lround
from evaluation.measures.base import Measure
from evaluation.measures.registry import default_registry
from evaluation.model import Qrels, Run
from evaluation.problems import EvaluationError, MeasureError

#: How a trec_eval measure turns its parameters into values and prints them (trec_eval's init/print routines).
Shape = Literal["runid", "num_q", "count", "float", "geometric", "cut_long", "cut_double", "params", "pairs",
                "relstring", "other_format"]

#: The version ``-v`` reports (trec_eval 10.0's own build says ``10.0-rc3``).
VERSION = "10.0-rc3"


@dataclass(frozen=True)
class TrecEvalMeasure:
    """One row of trec_eval's measure table: its name, output shape and default cut-offs or parameters."""

    name: str
    shape: Shape
    defaults: tuple[float, ...] = ()
    #: a ``*_avgjg`` measure: this trec_eval measure computed on each judgment group of ``-R qrels_jg``
    #: judgments, averaged over the topic's groups
    per_group: str = ""


_CUTS = (5.0, 10.0, 15.0, 20.0, 30.0, 100.0, 200.0, 500.0, 1000.0)
_ELEVEN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

#: trec_eval 10.0's measure table, in its order (measures.c): output lines follow this order, not ``-m``'s.
MEASURES: tuple[TrecEvalMeasure, ...] = (
    TrecEvalMeasure("runid", "runid"),
    TrecEvalMeasure("num_q", "num_q"),
    TrecEvalMeasure("num_ret", "count"),
    TrecEvalMeasure("num_rel", "count"),
    TrecEvalMeasure("num_rel_ret", "count"),
    TrecEvalMeasure("map", "float"),
    TrecEvalMeasure("gm_map", "geometric"),
    TrecEvalMeasure("Rprec", "float"),
    TrecEvalMeasure("bpref", "float"),
    TrecEvalMeasure("recip_rank", "float"),
    TrecEvalMeasure("iprec_at_recall", "cut_double", _ELEVEN),
    TrecEvalMeasure("P", "cut_long", _CUTS),
    TrecEvalMeasure("relstring", "relstring", (10.0,)),
    TrecEvalMeasure("recall", "cut_long", _CUTS),
    TrecEvalMeasure("infAP", "float"),
    TrecEvalMeasure("gm_bpref", "geometric"),
    TrecEvalMeasure("Rprec_mult", "cut_double", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    TrecEvalMeasure("utility", "params"),
    TrecEvalMeasure("11pt_avg", "params"),
    TrecEvalMeasure("binG", "float"),
    TrecEvalMeasure("G", "pairs"),
    TrecEvalMeasure("dcg", "pairs"),
    TrecEvalMeasure("ideal_dcg", "pairs"),
    TrecEvalMeasure("ndcg", "pairs"),
    TrecEvalMeasure("ndcg_rel", "pairs"),
    TrecEvalMeasure("Rndcg", "pairs"),
    TrecEvalMeasure("ndcg_cut", "cut_long", _CUTS),
    TrecEvalMeasure("map_cut", "cut_long", _CUTS),
    TrecEvalMeasure("relative_P", "cut_long", _CUTS),
    TrecEvalMeasure("success", "cut_long", (1.0, 5.0, 10.0)),
    TrecEvalMeasure("set_P", "float"),
    TrecEvalMeasure("set_relative_P", "float"),
    TrecEvalMeasure("set_recall", "float"),
    TrecEvalMeasure("set_map", "float"),
    TrecEvalMeasure("set_F", "params"),
    TrecEvalMeasure("num_nonrel_judged_ret", "count"),
    *(TrecEvalMeasure(f"prefs_{name}", "other_format") for name in (
        "num_prefs_poss", "num_prefs_ful", "num_prefs_ful_ret", "simp", "pair", "avgjg", "avgjg_Rnonrel",
        "simp_ret", "pair_ret", "avgjg_ret", "avgjg_Rnonrel_ret", "simp_imp", "pair_imp", "avgjg_imp")),
    TrecEvalMeasure("map_avgjg", "float", per_group="map"),
    TrecEvalMeasure("P_avgjg", "cut_long", _CUTS, per_group="P"),
    TrecEvalMeasure("Rprec_mult_avgjg", "cut_double", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
                    per_group="Rprec_mult"),
    TrecEvalMeasure("yaap", "float"),
    TrecEvalMeasure("rbp", "pairs"),
    TrecEvalMeasure("rbp_resid", "pairs"),
    TrecEvalMeasure("unj", "cut_long", (5.0, 10.0, 20.0)),
)
_BY_NAME = {m.name: m for m in MEASURES}

_PREFS = ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair",
          "prefs_avgjg")
#: trec_eval 10.0's measure nicknames (``-m official`` ...), each naming measures of ``MEASURES``.
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid", "infAP",
                 "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut",
                 "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P", "set_map",
                 "set_F", "num_nonrel_judged_ret"),
    "all_prefs": ("runid", "num_q", *_PREFS, "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret",
                  "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp",
                  "prefs_avgjg_imp"),
    "prefs": ("runid", "num_q", *_PREFS),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}


class TrecEvalUsageError(EvaluationError):
    """A trec_eval command line trec_eval itself refuses (code ``invalid-measure``); ``exit_code`` is trec_eval's
    (1 bad request, 2 a measure that cannot be initialised)."""

    code = "invalid-measure"

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True)
class Selection:
    """The measures a list of ``-m`` requests marks (trec_eval's order) and the parameter text of each: the
    first ``name.params`` request of a measure wins, as in trec_eval."""

    marked: tuple[str, ...]
    params: Mapping[str, str] = field(default_factory=dict)


def select(requests: Sequence[str]) -> Selection:
    """Mark measures as trec_eval's ``-m`` does (no request: ``official``); unknown names and empty parameter
    lists raise TrecEvalUsageError (trec_eval's exit 1)."""
    marked: set[str] = set()
    params: dict[str, str] = {}
    for request in requests or ("official",):
        name, dot, text = request.partition(".")
        if dot:
            if not text:
                raise TrecEvalUsageError(f"-m {request}: the parameter list after '.' is empty")
            params.setdefault(name, text)
        names = NICKNAMES.get(name, (name,))
        unknown = [n for n in names if n not in _BY_NAME]
        if unknown:
            raise TrecEvalUsageError(f"-m {request}: trec_eval has no measure or nickname {name!r}"
                                     f"{_suggestion(name)}")
        marked.update(names)
    return Selection(tuple(m.name for m in MEASURES if m.name in marked), params)


def _suggestion(name: str) -> str:
    import difflib

    close = difflib.get_close_matches(name, [*_BY_NAME, *NICKNAMES], n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(close)}?" if close else " (nicknames: " + ", ".join(NICKNAMES) + ")"


@dataclass(frozen=True)
class Slot:
    """One value a selected measure prints: its label, how it is printed and summed, and the spelling the
    registry is asked for (empty for ``runid``, ``num_q`` and ``relstring``, which this module computes)."""

    source: str  # the trec_eval measure
    label: str
    how: Literal["float", "count", "geometric", "runid", "num_q", "relstring"]
    spelling: str = ""  # what the registry is asked for
    length: int = 0  # relstring's
    per_group: bool = False  # computed per judgment group (``TrecEvalMeasure.per_group``)
    fallback: str = ""  # a second spelling for the registry (default: the label)


def slots(selection: Selection) -> list[Slot]:
    """Every value line of the selected measures, in trec_eval's order, with trec_eval's labels; parameters that
    trec_eval refuses raise TrecEvalUsageError (its exit 2, "Cannot initialize measure")."""
    out: list[Slot] = []
    for name in selection.marked:
        m = _BY_NAME[name]
        text = selection.params.get(name)
        if m.shape == "other_format":
            raise TrecEvalUsageError(f"measure {name} needs trec_eval's preference judgments (-R prefs, -R"
                                     " qrels_prefs), which evalserve trec_eval does not read; its preference"
                                     " measures are `evalserve evaluate` measures", 2)
        if m.shape in ("runid", "num_q"):
            out.append(Slot(name, name, m.shape))
        elif m.shape in ("count", "float", "geometric"):  # (parameters ignored, as by trec_eval)
            out.append(Slot(name, name, "count" if m.shape == "count" else m.shape, m.per_group or name,
                            per_group=bool(m.per_group)))
        elif m.shape == "cut_long":
            for k in _long_cutoffs(text, name) if text is not None else [int(v) for v in m.defaults]:
                out.append(Slot(name, f"{name}_{k}", "float", f"{m.per_group or name}_{k}",
                                per_group=bool(m.per_group)))
        elif m.shape == "cut_double":
            for v in _double_cutoffs(text, name) if text is not None else list(m.defaults):
                out.append(Slot(name, f"{name}_{v:3.2f}", "float", f"{m.per_group or name}_{v!r}",
                                per_group=bool(m.per_group), fallback=f"{m.per_group or name}_{v:3.2f}"))
        elif m.shape == "relstring":
            length = c_atof(text.split(",")[0]) if text is not None else m.defaults[0]
            label = name if text is None else f"{name}_{text}"
            out.append(Slot(name, label, "relstring", length=max(0, _c_long(length))))
        else:  # one value, parameters in its label
            if text is not None and m.shape == "pairs" and not _pairs_ok(text):
                raise TrecEvalUsageError(f"-m {name}.{text}: {name} takes name=value pairs, e.g. {name}.1=0.5,2=3",
                                         2)
            out.append(Slot(name, name if text is None else f"{name}_{text}", "float",
                            name if text is None else f"{name}.{text}"))
    return out


def _long_cutoffs(text: str, name: str) -> list[int]:
    values = sorted(c_atol(piece) for piece in text.split(","))
    if values[0] <= 0:
        raise TrecEvalUsageError(f"-m {name}.{text}: cut-offs must be positive integers", 2)
    if len(set(values)) < len(values):
        raise TrecEvalUsageError(f"-m {name}.{text}: a cut-off is given twice", 2)
    return values


def _double_cutoffs(text: str, name: str) -> list[float]:
    values = sorted(c_atof(piece) for piece in text.split(","))
    if len(set(values)) < len(values):
        raise TrecEvalUsageError(f"-m {name}.{text}: a cut-off is given twice", 2)
    return values


def _pairs_ok(text: str) -> bool:
    """trec_eval's check of ``a=x,b=y`` parameter lists (get_param_pairs)."""
    last = ","
    for ch in text:
        if ch in ",=":
            if ch == last:
                return False
            last = ch
    return last == "="


_LONG_PREFIX = re.compile(r"\s*[+-]?[0-9]+")
_FLOAT_PREFIX = re.compile(r"\s*[+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
                           r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan)", re.IGNORECASE)


def c_atol(text: str) -> int:
    """C ``atol``: the integer at the start of ``text`` (0 if none)."""
    match = _LONG_PREFIX.match(text)
    return int(match.group()) if match else 0


def c_atof(text: str) -> float:
    """C ``atof``: the number at the start of ``text`` (0.0 if none)."""
    from evaluation.formats.numbers import strtod_field

    match = _FLOAT_PREFIX.match(text)
    if not match:
        return 0.0
    value = strtod_field(match.group().strip().encode())
    return 0.0 if value is None else value


def _c_long(value: float) -> int:
    return int(value) if math.isfinite(value) else 0


@dataclass(frozen=True)
class Options:
    """The options of a trec_eval command line that change what is computed or printed."""

    per_topic: bool = False  # -q
    summary: bool = True  # not -n
    complete: bool = False  # -c
    level: int = 1  # -l
    max_per_topic: int | None = None  # -M
    judged_only: bool = False  # -J
    only_topic: str | None = None  # -D level.qid
    rel_format: Literal["qrels", "qrels_jg"] = "qrels"  # -R


@dataclass(frozen=True)
class Outcome:
    """What trec_eval would print and its exit code; ``missing``: selected trec_eval measures evalserve cannot
    compute yet (their lines are left out; the caller says so on standard error)."""

    text: str
    exit_code: int = 0
    error: str = ""
    missing: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # where trec_eval itself would fail and evalserve does not


def resolve(chosen: Sequence[Slot], level: int) -> tuple[dict[str, Measure], list[str]]:
    """The evalserve measure of each slot (keyed by label) at relevance level ``level``, and the trec_eval
    measures the registry cannot resolve (yet)."""
    registry = default_registry()
    found: dict[str, Measure] = {}
    missing: list[str] = []
    for slot in chosen:
        if not slot.spelling:
            continue
        measure = None
        for spelling in dict.fromkeys((slot.spelling, slot.fallback or slot.label)):  # the exact value first
            try:
                measure = registry.parse(spelling)
                if level != 1 and measure.definition.param("rel") == REL:  # -l: the relevance threshold only
                    measure = measure.definition.instance({**measure.params, "rel": level}, measure.cutoff)
                break
            except MeasureError:
                measure = None
        if measure is None:
            if slot.source not in missing:
                missing.append(slot.source)
            continue
        found[slot.label] = measure.labelled(slot.label)
    return found, missing


def restrict(run: Run, qrels: Qrels, options: Options) -> Run:
    """The run as trec_eval evaluates it: each topic cut to its best ``-M`` documents (trec_eval's order), then
    with ``-J`` only documents judged with a grade >= 0."""
    if options.max_per_topic is None and not options.judged_only:
        return run
    from evaluation.ranking import rank_run
    ranking = rank_run(run, "trec")
    keep = ranking.order
    if options.max_per_topic is not None:
        position = np.arange(keep.size) - np.repeat(ranking.offsets[:-1], np.diff(ranking.offsets))
        keep = keep[position < max(options.max_per_topic, 0)]
    if options.judged_only:
        keep = keep[grades_of(qrels, run, keep) >= 0]
    keep = np.sort(keep)
    return Run(run.name, run.topics, run.topic[keep], run.docno[keep], run.score[keep], run.rank[keep], run.tags,
               run.ranks_valid)


#: ``grades_of``'s grade of a document the topic's judgments do not name
NOT_JUDGED = -(1 << 62)


def grades_of(qrels: Qrels, run: Run, rows: np.ndarray) -> np.ndarray:
    """The judged grade (the highest over intents, as trec_eval's single-intent qrels hold it) of each of the
    run's ``rows``, ``NOT_JUDGED`` where the topic's judgments do not name the document."""
    adhoc = qrels.adhoc
    out = np.full(rows.size, NOT_JUDGED, dtype=np.int64)
    if rows.size == 0 or qrels.docnos.size == 0:
        return out
    qrels_topic = np.array([qrels.topic_index.get(t, -1) for t in run.topics], dtype=np.int64)[run.topic[rows]]
    docs = run.docno[rows]
    doc = np.minimum(np.searchsorted(qrels.docnos, docs), qrels.docnos.size - 1)
    named = (qrels_topic >= 0) & (qrels.docnos[doc] == docs)
    key = qrels_topic * np.int64(max(1, qrels.docnos.size)) + doc
    at = np.minimum(np.searchsorted(adhoc.key, key), max(adhoc.key.size - 1, 0))
    named &= adhoc.key[at] == key if adhoc.key.size else False
    out[named] = adhoc.grade[at[named]]
    return out


def evaluate(qrels: Qrels, run: Run, runid: str, requests: Sequence[str], options: Options,
             zscores: ZScores | None = None) -> Outcome:
    """trec_eval's output for ``run`` against ``qrels`` (the run already read; ``runid``: the tag of its last
    line, which trec_eval prints), or the refusal trec_eval would give, said clearly; ``zscores``: ``-Z``'s
    table (``read_zscores``)."""
    chosen = slots(select(requests))
    if options.level < 1:
        raise TrecEvalUsageError(f"-l {options.level}: evalserve counts a grade as relevant from 1 up (-l 1 or"
                                 " more); grade 0 is not relevant in its measures")
    from evaluation.evaluator import GEOMETRIC_FLOOR, Evaluator

    grouped = options.rel_format == "qrels_jg"
    wrong = [s.source for s in chosen if s.how not in ("runid", "num_q") and s.per_group != grouped]
    if wrong:
        raise TrecEvalUsageError(f"measure {wrong[0]} " + ("reads -R qrels judgments; with -R qrels_jg only the"
                                 " *_avgjg measures (-m qrels_jg) are computed" if grouped else "averages over"
                                 " judgment groups: it needs -R qrels_jg judgments (the second qrels column names"
                                 " the group)"), 4)
    if not grouped:
        _check_single_judgments(qrels)
    measures, missing = resolve(chosen, options.level)
    original = run
    run = restrict(run, qrels, options) if not grouped else run
    order = sorted(qrels.topics, key=lambda t: t.encode())
    if options.only_topic is not None:
        order = [t for t in order if t == options.only_topic]
    present = set(run.topics)
    absent = [t for t in order if t not in present]
    if absent and not options.complete:
        return Outcome("", 4, f"topic {absent[0]!r} is judged but the run has no results for it (trec_eval stops"
                       " here with exit 4 and the message \"result qid not found in qrels\"); add -c to score such"
                       " topics 0, or remove them from the qrels")
    if not order:
        return Outcome("", 7, "no topic is both judged and in the run")
    if grouped:
        values = _per_group(qrels, original, order, list(measures.values()), options)
    else:
        scores = Evaluator(qrels, list(measures.values()), "trec", "complete").evaluate(run)
        index = {t: i for i, t in enumerate(scores.topics)}
        rows = [index[t] for t in order]
        values = {label: np.asarray(scores.values[label], dtype=np.float64)[rows] for label in measures}
    if absent:  # trec_eval scores a missing topic on a one-document ranking of an unjudged document
        _bogus(values, [i for i, t in enumerate(order) if t not in present], chosen)
    if not grouped:
        _empty_iprec(values, measures, qrels, run, order, options)
    strings = _relstrings(qrels, run, order, chosen)
    summed = {s.label: np.log(np.maximum(values[s.label], GEOMETRIC_FLOOR)) if s.how == "geometric"
              else values[s.label] for s in chosen if s.label in values}  # what trec_eval accumulates per topic
    z = ""
    if zscores is not None:  # -Z: every accumulated value becomes a z-score before it is printed or summed
        z = "Z"
        summed = {label: _zscores(v, label, order, zscores) for label, v in summed.items()}
        values = summed
    lines: list[str] = []
    printed = [s for s in chosen if s.how in ("float", "count", "relstring") and (s.label in measures or
                                                                                  s.how == "relstring")]
    shape = "float" if z else "count"  # with -Z, counts are printed as the z-scores they became
    if options.per_topic:
        for i, topic in enumerate(order):
            for slot in printed:
                if slot.how == "relstring":
                    lines.append(f"{slot.label:<22}\t{topic}\t'{strings[slot.label][i]}'\n")
                else:
                    lines.append(z + _line(slot.label, topic, values[slot.label][i],
                                           shape if slot.how == "count" else slot.how))
    if options.summary:
        n = len(order)
        for slot in chosen:
            if slot.how == "runid":
                lines.append(f"{'runid':<22}\tall\t{runid}\n")
            elif slot.how == "num_q":
                lines.append(z + _line("num_q", "all", n, shape))
            elif slot.how == "relstring" or slot.label not in measures:
                continue
            elif slot.how == "count":
                total = _num_rel_complete(qrels) if (slot.source == "num_rel" and options.complete) else \
                    sequential_sum(summed[slot.label])
                lines.append(z + _line(slot.label, "all", total, shape))
            elif slot.how == "geometric":
                lines.append(z + _line(slot.label, "all", math.exp(sequential_sum(summed[slot.label]) / n), "float"))
            else:
                lines.append(z + _line(slot.label, "all", sequential_sum(summed[slot.label]) / n, "float"))
    return Outcome("".join(lines), 0, "", tuple(missing), _negative_only(qrels, order))


def _per_group(qrels: Qrels, run: Run, order: Sequence[str], measures: Sequence[Measure],
               options: Options) -> dict[str, np.ndarray]:
    """``-R qrels_jg``: each measure on each judgment group's judgments alone (the qrels' second column; the run
    cut by ``-M``/``-J`` against that group), then per topic the mean over the groups judging it (trec_eval's
    ``*_avgjg``: a topic's sum is divided only when it has more than one group)."""
    from evaluation.evaluator import Evaluator

    totals = {m.label: np.zeros(len(order)) for m in measures}
    groups = np.zeros(len(order))
    position = {t: i for i, t in enumerate(order)}
    for g in range(len(qrels.intents)):
        rows = qrels.intent == g
        if not rows.any():
            continue
        part = Qrels(qrels.topics, (qrels.intents[g],), qrels.docnos, qrels.topic[rows],
                     np.zeros(int(rows.sum()), dtype=np.int64), qrels.doc[rows], qrels.grade[rows], qrels.name)
        scores = Evaluator(part, list(measures), "trec", "complete").evaluate(restrict(run, part, options))
        judged = {qrels.topics[t] for t in np.unique(part.topic).tolist()}
        for i, topic in enumerate(scores.topics):
            if topic in judged and topic in position:
                groups[position[topic]] += 1
                for m in measures:
                    totals[m.label][position[topic]] += float(scores.values[m.label][i])
    return {label: np.where(groups > 1, total / np.maximum(groups, 1), total) for label, total in totals.items()}


#: ``-Z``'s table: (topic, value label) -> (mean, standard deviation)
ZScores = Mapping[tuple[str, str], tuple[float, float]]

#: the value trec_eval gives a z-score it has no mean and deviation for
MISSING_ZSCORE = -1000000.0


def read_zscores(data: bytes) -> ZScores:
    """``-Z``'s file: ``qid measure mean stddev`` lines (trec_eval reads the numbers with ``atof``); a line of
    another shape raises TrecEvalUsageError naming it (trec_eval: "Malformed line")."""
    table: dict[tuple[str, str], tuple[float, float]] = {}
    text = data.decode("utf-8", "replace")
    if not text:
        raise TrecEvalUsageError("-Z file: it is empty", 2)
    for number, line in enumerate(text.removesuffix("\n").split("\n"), 1):
        fields = line.split()
        if len(fields) != 4:
            raise TrecEvalUsageError(f"-Z file, line {number}: expected 'qid measure mean stddev', got {line!r}", 2)
        table.setdefault((fields[0], fields[1]), (c_atof(fields[2]), c_atof(fields[3])))
    return table


def _zscores(values: np.ndarray, label: str, order: Sequence[str], table: ZScores) -> np.ndarray:
    """trec_eval's conversion of one value's per-topic values (convert_zscores.c): (v - mean) / stddev; a
    topic or value the table lacks, or a zero deviation with v != mean, gives ``MISSING_ZSCORE``."""
    known_topics = {topic for topic, _ in table}
    out = np.empty_like(values)
    for i, topic in enumerate(order):
        found = table.get((topic, label)) if topic in known_topics else None
        if found is None:
            out[i] = MISSING_ZSCORE
            continue
        mean, stddev = found
        v = float(values[i])
        out[i] = (v - mean) / stddev if stddev else (0.0 if v == mean else MISSING_ZSCORE)
    return out


def _check_single_judgments(qrels: Qrels) -> None:
    """trec_eval ignores the qrels' second column, so a document judged on two of its lines is judged twice
    (trec_eval stops with "duplicate docs", exit 4); evalserve would read diversity qrels. Refused, clearly."""
    adhoc = qrels.adhoc
    if adhoc.key.size == qrels.grade.size:
        return
    rows = np.diff(np.append(adhoc.row_start, qrels.grade.size))
    first = int(np.flatnonzero(rows > 1)[0])
    n = max(1, qrels.docnos.size)
    doc = bytes(qrels.docnos[int(adhoc.key[first]) % n]).decode("utf-8", "replace")
    raise TrecEvalUsageError(f"document {doc!r} of topic {qrels.topics[int(adhoc.topic[first])]!r} is judged on more"
                             " than one line of the qrels; trec_eval ignores the second column (it is not an intent"
                             " there) and stops on such duplicates; `evalserve evaluate` reads them as intents", 2)


def _negative_only(qrels: Qrels, order: Sequence[str]) -> tuple[str, ...]:
    """A note for each evaluated topic whose judgments are all negative: trec_eval 10.0 stops on those (exit 4,
    "Can't calculate measure"); here they are scored as topics with no relevant document."""
    adhoc = qrels.adhoc
    best = np.full(len(qrels.topics), -1, dtype=np.int64)
    np.maximum.at(best, adhoc.topic, np.maximum(adhoc.grade, -1))
    low = set(order) & {qrels.topics[i] for i in np.flatnonzero(best < 0).tolist()}
    return tuple(f"topic {t!r} has only negative judgments: trec_eval 10.0 stops there (exit 4); it is scored here"
                 " as a topic without relevant documents" for t in sorted(low, key=lambda t: t.encode()))


def _bogus(values: dict[str, np.ndarray], rows: list[int], chosen: Sequence[Slot]) -> None:
    """Topics the run lacks, under ``-c``: trec_eval scores them on a stand-in ranking of one unjudged document,
    then zeroes num_ret, utility, unj and rbp_resid; evalserve's complete policy scores them on an empty ranking,
    which gives the same values but for those, set to trec_eval's 0 here."""
    for slot in chosen:
        if slot.label in values and slot.source in ("num_ret", "utility", "rbp_resid", "unj"):
            values[slot.label][rows] = 0.0


def _empty_iprec(values: dict[str, np.ndarray], measures: Mapping[str, Measure], qrels: Qrels, run: Run,
                 order: Sequence[str], options: Options) -> None:
    """A topic left with no document (``-M 0``, or ``-J`` dropping every one, also -c's stand-in document of a
    topic the run lacks, which is unjudged): trec_eval 10.0's
    iprec_at_recall and 11pt_avg start from precision 0/0 and so print NaN at each recall level whose
    relevant-document count lround(r * R) is 0 (m_iprec_at_recall.c, m_11pt_avg.c); the registry gives 0."""
    kept = np.bincount(run.topic, minlength=len(run.topics)) if run.topics else np.zeros(0, dtype=np.int64)
    count = dict(zip(run.topics, kept.tolist()))
    stand_in_dropped = options.judged_only or (options.max_per_topic is not None and options.max_per_topic <= 0)
    empty = [i for i, t in enumerate(order) if count.get(t, 0 if stand_in_dropped else 1) == 0]
    if not empty:
        return
    adhoc = qrels.adhoc
    relevant = np.bincount(adhoc.topic[adhoc.grade >= options.level], minlength=len(qrels.topics))
    judged = {t: int(relevant[i]) for i, t in enumerate(qrels.topics)}
    for label, measure in measures.items():
        if measure.definition.name not in ("IPrec", "IPrecAvg") or measure.params.get("reach") != "rounded":
            continue
        levels = (measure.params["recall"],) if "recall" in measure.params else \
            tuple(measure.params["levels"])  # 11pt_avg sums every level: one NaN makes it NaN
        for i in empty:
            if any(c_lround(np.array([float(r) * judged.get(order[i], 0)]))[0] == 0 for r in levels):
                values[label][i] = math.nan


def _num_rel_complete(qrels: Qrels) -> int:
    """trec_eval's ``num_rel`` summary under ``-c``: judgments with a grade above 0 over every judged topic,
    whatever ``-l`` says (m_num_rel.c's average)."""
    return int((qrels.adhoc.grade > 0).sum())


def _relstrings(qrels: Qrels, run: Run, order: Sequence[str], chosen: Sequence[Slot]) -> dict[str, list[str]]:
    """``relstring``: each topic's first n grades as characters (0-9, '>' above 9, '-' unjudged, '.' a negative
    grade, which trec_eval reads as judged-but-unassessed)."""
    wanted = [s for s in chosen if s.how == "relstring"]
    if not wanted:
        return {}
    from evaluation.ranking import rank_run

    ranking = rank_run(run, "trec")
    longest = max(s.length for s in wanted)
    first = np.concatenate([ranking.order[ranking.offsets[t]: min(ranking.offsets[t + 1], ranking.offsets[t] + longest)]
                            for t in range(len(run.topics))] or [np.zeros(0, dtype=np.int64)])
    grades = grades_of(qrels, run, first).tolist()
    by_topic: dict[str, list[int]] = {}
    for row, grade in zip(first.tolist(), grades):
        by_topic.setdefault(run.topics[int(run.topic[row])], []).append(grade)
    out: dict[str, list[str]] = {}
    for slot in wanted:
        out[slot.label] = ["".join(_rel_char(g) for g in by_topic.get(t, [])[: slot.length]) for t in order]
    return out


def _rel_char(grade: int) -> str:
    if grade == NOT_JUDGED:
        return "-"
    if grade < 0:
        return "."
    return ">" if grade > 9 else str(grade)


def sequential_sum(values: Iterable[float]) -> float:
    """Left-to-right double sum, as trec_eval accumulates (not numpy's pairwise nor Python 3.12's compensated
    ``sum``): the last element of a running ``np.cumsum``."""
    array = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=np.float64)
    return float(np.cumsum(array)[-1]) if array.size else 0.0


def _line(label: str, topic: str, value: float, how: str) -> str:
    shown = str(_c_long(value)) if how == "count" else f"{c_fixed(value, 4):>6}"
    return f"{label:<22}\t{topic}\t{shown}\n"


def last_run_tag(data: bytes) -> str:
    """The run tag trec_eval prints as ``runid``: the sixth field of the file's last line that is neither blank
    nor a ``#`` comment (trec_eval keeps the last line's, whatever the others say)."""
    return _last_tag(data, whole=True) or ""


def last_run_tag_of_file(path: str) -> str | None:
    """``last_run_tag`` of a plain file, read from its end (a few kilobytes, not the whole run); None when the file
    cannot be read so (a gzip file, a pipe, an error): then the caller reads it whole."""
    try:
        with open(path, "rb") as f:
            if f.read(2) == GZIP_MAGIC:
                return None
            size = f.seek(0, 2)
            block = 1 << 14
            while True:
                start = max(0, size - block)
                f.seek(start)
                tag = _last_tag(f.read(size - start), whole=start == 0)
                if tag is not None or start == 0:
                    return tag or ""
                block *= 4
    except OSError:
        return None


def _last_tag(data: bytes, whole: bool) -> str | None:
    """The tag of ``data``'s last line that is neither blank nor a comment; None when there is none (``whole``:
    ``data`` is the whole file; else its first line may be cut, and is not read)."""
    floor = 0 if whole else data.find(b"\n") + 1
    if not whole and floor == 0:
        return None
    end = len(data)
    while end > floor:
        start = data.rfind(b"\n", 0, end - 1) + 1 if data[end - 1:end] == b"\n" else data.rfind(b"\n", 0, end) + 1
        start = max(start, floor)
        line = data[start:end].strip()
        end = start
        if line and not line.startswith(b"#"):
            fields = line.split()
            return fields[5].decode("utf-8", "replace") if len(fields) > 5 else ""
    return None


def expand_request(text: str) -> list[str]:
    """The measure names one requested name stands for, for ``evaluate -m`` and the API's ``measures``: what
    ``names.expand_name`` gives when the registry reads all of it (``P.5,10`` -> ``P.5``, ``P.10``); otherwise a
    trec_eval nickname (``official``, ``all_trec``, ``set``: the value labels of its measures that evalserve
    computes, ``runid``/``num_q``/``relstring`` left out) or a trec_eval measure with its default or given
    parameters (``P`` -> ``P_5`` ... ``P_1000``; ``iprec_at_recall..25,.5``); else the name alone, to be refused
    with the registry's message. A bare trec_eval cut-off family is always trec_eval's (spec Appendix E):
    ``recall`` gives ``recall_5`` ... ``recall_1000`` although the registry reads ``recall`` as ``R``."""
    from evaluation.measures.names import expand_name

    pieces = expand_name(text)
    family = _BY_NAME.get(text.strip())
    cut_family = family is not None and family.shape in ("cut_long", "cut_double") and not family.per_group
    if all(_parses(piece) for piece in pieces) and not cut_family:  # (`recall` is trec_eval's, not R's)
        return pieces
    name, dot, _ = text.strip().partition(".")
    if (name not in NICKNAMES or dot) and name not in _BY_NAME:  # (a nickname takes no parameters)
        return pieces
    try:
        chosen = slots(select([text.strip()]))
    except TrecEvalUsageError:
        return pieces
    labels = [s.label if _parses(s.label) else s.spelling for s in chosen if s.spelling]
    if name in NICKNAMES:  # a nickname names the measures evalserve has
        return [label for label in labels if _parses(label)]
    return labels


def _parses(name: str) -> bool:
    try:
        default_registry().parse(name)
    except MeasureError:
        return False
    return True


def table_rank(label: str) -> int:
    """Position of a trec_eval value label (``P_10``, ``map_cut_5``, ``iprec_at_recall_0.10``) in trec_eval's
    output order (its measure table); labels of no trec_eval measure come after all of them."""
    if label in _RANK:
        return _RANK[label]
    families = [name for name in _RANK if label.startswith(name + "_")]
    return _RANK[max(families, key=len)] if families else len(MEASURES)


_RANK = {m.name: i for i, m in enumerate(MEASURES)}
