"""``ndeval`` as a drop-in (spec Appendix E.2): the TREC Web Track diversity evaluator's file reading, ordering,
topic rules and CSV output, byte for byte, with the registry's intent-aware measures doing the scoring.

What ndeval 4.5 does, and so this does:

- qrels ``topic subtopic docno judgment`` (extra fields ignored): whole numbers, judgments above 1 count as 1;
  a subtopic without a relevant document is ignored. Runs ``topic Q0 docno rank score tag``: a topic may carry
  a prefix ending in ``-`` (``wt09-1``); the run id is the first line's tag.
- order: the rank column (two equal ranks in a topic are an error), or with ``traditional`` score descending
  then docno descending; ``depth`` (``-M``) keeps that many documents per topic.
- one row per run topic, in numeric order (topics the qrels lack score 0); ``amean`` divides the column sums by
  the number of run topics that are judged, or with ``complete`` (``-c``) by the number of qrels topics. A judged
  topic without any relevant document has no normaliser for nNRBP: ndeval prints ``-nan`` there (and in the
  mean), and so does this, with a warning.
- risk-sensitive evaluation (``-baseline``): each value minus the baseline's, losses weighted by 1 + riskAlpha.

Where ndeval's behaviour is undefined or silently wrong this refuses with a problem instead: negative judgments,
a judgment repeated for the same (topic, subtopic, docno) (ndeval counts it twice), unreadable scores under
``traditional``, and a mean over no topic at all (ndeval prints ``-nan`` everywhere).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial
from itertools import pairwise

from evaluation.drop_in._common import (
    Judgment,
    c_fixed,
    c_number_prefix,
    field_column,
    lines_of,
    natural_number,
    read_every_file,
    refuse,
    score_rankings,
    surrogate,
)
from evaluation.problems import NothingScored, Problem, ProblemLog

#: ndeval's version line (``-version``), a fact of the release this reproduces
VERSION = "version 4.5 (Mon 29 Apr 2013 20:51:02 EDT)"
#: the deepest rank ndeval reports at; alpha and beta default to 0.5
CUTOFFS = (5, 10, 20)
DEFAULT_ALPHA = DEFAULT_BETA = 0.5


def column_names(alpha: float, beta: float) -> tuple[tuple[str, str], ...]:
    """(ndeval's column, the registry measure printed there), in ndeval's order."""
    a = f"alpha={alpha!r}"
    columns: list[tuple[str, str]] = []
    for label, measure in (("ERR-IA", f"ERR_IA({a})"), ("nERR-IA", f"nERR_IA({a})"),
                           ("alpha-DCG", f"alpha_DCG({a})"), ("alpha-nDCG", f"alpha_nDCG({a})")):
        columns += [(f"{label}@{k}", f"{measure}@{k}") for k in CUTOFFS]
    columns += [("NRBP", f"NRBP({a},beta={beta!r})"), ("nNRBP", f"nNRBP({a},beta={beta!r})"), ("MAP-IA", "AP_IA")]
    columns += [(f"P-IA@{k}", f"P_IA@{k}") for k in CUTOFFS]
    columns += [(f"strec@{k}", f"StRecall@{k}") for k in CUTOFFS]
    return tuple(columns)


NNRBP_COLUMN = 13  # index of nNRBP among the columns


@dataclass(frozen=True)
class Options:
    """ndeval's command-line settings: ``-alpha``, ``-beta``, ``-traditional``, ``-c``, ``-M``, ``-riskAlpha``
    (``risk_alpha_text`` is printed in the run label exactly as given)."""

    alpha: float = DEFAULT_ALPHA
    beta: float = DEFAULT_BETA
    traditional: bool = False
    complete: bool = False
    depth: int = 0  # 0: no cut-off
    risk_alpha: float = 0.0
    risk_alpha_text: str = "0"


@dataclass(frozen=True)
class NdevalQrels:
    """Judgments as ndeval keeps them: rows (binarised), the qrels topics and which of them have a relevant
    document."""

    judgments: tuple[Judgment, ...]
    topics: frozenset[int]
    with_relevant: frozenset[int]


@dataclass(frozen=True)
class NdevalRun:
    """A run as ndeval ranks it: its id (the first line's tag) and each topic's docnos in order."""

    name: str
    runid: str
    rankings: dict[int, list[bytes]]


@dataclass(frozen=True)
class Report:
    """ndeval's output: the run label, one row per topic (``topic``, 21 values) and the ``amean`` row; warnings
    for standard error."""

    label: str
    rows: list[tuple[str, list[float]]]
    warnings: list[Problem] = field(default_factory=list)

    def render(self) -> str:
        """The CSV exactly as ndeval prints it (6 decimals)."""
        header = "runid,topic," + ",".join(name for name, _ in column_names(DEFAULT_ALPHA, DEFAULT_BETA))
        lines = [header]
        lines += [",".join([self.label, topic, *(c_fixed(v, 6) for v in values)]) for topic, values in self.rows]
        return "\n".join(lines) + "\n"


def parse_qrels(data: bytes, name: str) -> NdevalQrels:
    """Read ndeval's qrels; an ``InputError`` listing every line ndeval would refuse (and repeated judgments)."""
    log = ProblemLog(name)
    grades: dict[tuple[int, int, bytes], tuple[int, int]] = {}  # -> (judgment, first line)
    repeated: list[tuple[int, int, bytes]] = []
    lines = 0
    for number, line in lines_of(data):
        lines += 1
        fields = line.split()
        if len(fields) < 4:
            log.add("wrong-column-count", f"{len(fields)} fields; ndeval qrels lines are 'topic subtopic docno"
                    " judgment'", line=number, column=1)
            continue
        topic, subtopic, judgment = (natural_number(fields[i]) for i in (0, 1, 3))
        bad = False
        for value, index, what in ((topic, 0, "topic"), (subtopic, 1, "subtopic")):
            if value is None:
                bad = True
                log.add(f"{what}-not-number", f"{what} {surrogate(fields[index])!r} is not a whole number"
                        " (ndeval reads qrels topics and subtopics as digits only, up to 1000009)",
                        line=number, column=field_column(line, index))
        if judgment is None:
            bad = True
            text = surrogate(fields[3])
            negative = text.startswith("-") and text[1:].isdigit()
            log.add("grade-negative" if negative else "grade-not-integer",
                    f"judgment {text!r}: ndeval accepts judgments of 0 (not relevant) or more (relevant; above 1"
                    " counts as 1)" + ("; give a non-relevant document 0" if negative else ""),
                    line=number, column=field_column(line, 3))
        if bad:
            continue
        assert topic is not None and subtopic is not None and judgment is not None
        key = (topic, subtopic, fields[2])
        grade = min(judgment, 1)
        if key in grades:
            if max(grade, grades[key][0]) > 0:
                repeated.append(key)
                log.add("repeated-judgment", f"document {surrogate(fields[2])!r} is judged again for topic"
                        f" {topic} subtopic {subtopic} (first on line {grades[key][1]}); ndeval would count it"
                        " twice as relevant: keep one line", line=number, column=field_column(line, 2))
            continue
        grades[key] = (grade, number)
    if lines == 0:
        log.add("empty-qrels", "the qrels file is empty")
    refuse(log)
    judgments = tuple(Judgment(str(t), str(s), d, g) for (t, s, d), (g, _) in grades.items())
    topics = frozenset(t for t, _, _ in grades)
    return NdevalQrels(judgments, topics, frozenset(t for (t, _, _), (g, _) in grades.items() if g > 0))


def run_topic(text: bytes) -> int | None:
    """ndeval's reading of a run's topic field: a whole number, or one after a prefix ending in '-'."""
    if text[:1].isdigit():
        return natural_number(text)
    dash = text.find(b"-")
    return None if dash < 0 else natural_number(text[dash + 1:])


def parse_run(data: bytes, name: str, options: Options) -> NdevalRun:
    """Read and order a run as ndeval does; an ``InputError`` listing every problem ndeval would stop at."""
    log = ProblemLog(name)
    rows: list[tuple[int, int, float, bytes, int]] = []  # topic, rank, score, docno, line
    runid: bytes | None = None
    lines = 0
    for number, line in lines_of(data):
        lines += 1
        fields = line.split()
        if len(fields) < 6:
            log.add("wrong-column-count", f"{len(fields)} fields; ndeval run lines are 'topic Q0 docno rank score"
                    " tag'", line=number, column=1)
            continue
        topic, rank = run_topic(fields[0]), natural_number(fields[3])
        if topic is None:
            log.add("topic-not-number", f"topic {surrogate(fields[0])!r} is not a topic number (digits, or digits"
                    " after a prefix ending in '-' such as wt09-1)", line=number, column=1)
        if rank is None:
            log.add("rank-not-integer", f"rank {surrogate(fields[3])!r} is not a whole number from 0 to 1000009"
                    " (ndeval reads the rank column even with -traditional)", line=number,
                    column=field_column(line, 3))
        score = 0.0
        if options.traditional:
            parsed = c_number_prefix(fields[4])
            if parsed is None or math.isnan(parsed):
                log.add("score-nan" if parsed is not None else "score-not-numeric",
                        f"score {surrogate(fields[4])!r} is not a number; -traditional orders by score",
                        line=number, column=field_column(line, 4))
            else:
                score = parsed
        if topic is None or rank is None:
            continue
        if runid is None:
            runid = fields[5]
        rows.append((topic, rank, score, fields[2], number))
    if lines == 0:
        log.add("empty-run", "the run file is empty")
    refuse(log)
    by_topic: dict[int, list[tuple[int, float, bytes, int]]] = {}
    for topic, rank, score, docno, number in rows:
        by_topic.setdefault(topic, []).append((rank, score, docno, number))
    rankings: dict[int, list[bytes]] = {}
    for topic in sorted(by_topic):
        entries = by_topic[topic]
        if options.traditional:  # score descending, then docno descending (bytes)
            entries.sort(key=lambda e: e[2], reverse=True)
            entries.sort(key=lambda e: e[1], reverse=True)
        else:
            entries.sort(key=lambda e: e[0])
            for before, after in pairwise(entries):
                if before[0] == after[0]:
                    log.add("duplicate-rank", f"rank {after[0]} appears twice in topic {topic} (lines {before[3]}"
                            f" and {after[3]}); ndeval orders by the rank column: renumber, or pass -traditional"
                            " to order by score", line=after[3])
        if options.depth > 0:
            entries = entries[: options.depth]
        seen: dict[bytes, int] = {}
        for _, _, docno, number in entries:
            if docno in seen:
                log.add("duplicate-docno", f"document {surrogate(docno)!r} appears twice in topic {topic}"
                        f" (lines {seen[docno]} and {number})", line=number)
            seen.setdefault(docno, number)
        rankings[topic] = [docno for _, _, docno, _ in entries]
    refuse(log)
    assert runid is not None
    return NdevalRun(name, surrogate(runid), rankings)


def topic_values(qrels: NdevalQrels, run: NdevalRun, options: Options) -> dict[int, list[float]]:
    """Each run topic's 21 values: the registry's measures on judged topics, 0 on the others, and ``nan`` for
    nNRBP where ndeval divides 0 by 0: on a judged topic without a relevant document, and everywhere when
    ``nrbp_vanishes``."""
    columns = column_names(options.alpha, options.beta)
    scored = score_rankings(qrels.judgments, {str(t): docs for t, docs in run.rankings.items()},
                            [m for _, m in columns], run.name)
    values: dict[int, list[float]] = {}
    flat = nrbp_vanishes(options)
    for topic in run.rankings:
        if topic not in qrels.topics:
            values[topic] = [0.0] * len(columns)
            continue
        row = [scored[m][str(topic)] for _, m in columns]
        if topic not in qrels.with_relevant or flat:
            row[NNRBP_COLUMN] = math.nan
        values[topic] = row
    return values


def nrbp_vanishes(options: Options) -> bool:
    """Whether NRBP's factor 1 - (1 - alpha) beta is 0 (alpha 0, beta 1): every NRBP is then 0 and ndeval's
    nNRBP 0/0."""
    return 1.0 - (1.0 - options.alpha) * options.beta == 0.0


def risk_based(run: float, base: float, risk_alpha: float) -> float:
    """ndeval's risk-sensitive difference: gains as they are, losses weighted by 1 + risk_alpha (a NaN is a
    loss, as in C's comparison)."""
    return run - base if run >= base else (risk_alpha + 1) * (run - base)


def evaluate(qrels: NdevalQrels, run: NdevalRun, options: Options, baseline: NdevalRun | None = None) -> Report:
    """ndeval's rows and mean for ``run`` (risk-sensitive against ``baseline`` when given)."""
    values = topic_values(qrels, run, options)
    judged = sum(1 for t in run.rankings if t in qrels.topics)
    base = topic_values(qrels, baseline, options) if baseline is not None else {}
    label = run.runid
    if baseline is not None and base:
        label = f"{run.runid} (rel to. {baseline.runid}; rs=1+a; a={options.risk_alpha_text})"
    width = len(column_names(options.alpha, options.beta))
    zero = [0.0] * width
    topics = sorted(set(values) | (set(base) if options.complete else set()))
    rows: list[tuple[str, list[float]]] = []
    totals = [0.0] * width
    for topic in topics:
        mine, theirs = values.get(topic, zero), base.get(topic, zero)
        row = [risk_based(r, b, options.risk_alpha) for r, b in zip(mine, theirs)]
        totals = [t + v for t, v in zip(totals, row)]
        rows.append((str(topic), row))
    denominator = len(qrels.topics) if options.complete else judged
    if base:
        denominator = max(denominator, len(rows))
    if denominator == 0:
        raise NothingScored([Problem(
            "no-topics-scored",
            f"none of the run's topics ({', '.join(map(str, sorted(run.rankings)[:10]))}) is in the qrels, so there"
            " is nothing to average (ndeval would print -nan means); check the files, or pass -c to average over"
            " the qrels' topics",
            "error", source=run.name)])
    rows.append(("amean", [t / denominator for t in totals]))
    warnings = []
    no_relevant = sorted(t for t in run.rankings if t in qrels.topics and t not in qrels.with_relevant)
    if no_relevant:
        warnings.append(Problem(
            "topic-without-relevant",
            f"{'topics' if len(no_relevant) > 1 else 'topic'} {', '.join(map(str, no_relevant))} of the qrels"
            f" {'have' if len(no_relevant) > 1 else 'has'} no relevant document: nNRBP is 0/0 there, printed -nan"
            " as ndeval prints it, and so is its mean", "warning", source=run.name))
    if nrbp_vanishes(options):
        warnings.append(Problem("nrbp-vanishes", "with alpha 0 and beta 1 every NRBP is 0, so nNRBP is 0/0:"
                                " printed -nan as ndeval prints it", "warning", source=run.name))
    return Report(label, rows, warnings)


def ndeval(qrels_data: bytes, run_data: bytes, options: Options, *, qrels_name: str = "qrels",
           run_name: str = "run", baseline: tuple[bytes, str] | None = None) -> Report:
    """Read qrels, run (and baseline) as ndeval does and return its report; an ``InputError`` with every
    problem of every file."""
    files = [(run_data, run_name), *([baseline] if baseline else [])]
    qrels, runs = read_every_file(partial(parse_qrels, qrels_data, qrels_name),
                                  [partial(parse_run, data, name, options) for data, name in files])
    return evaluate(qrels, runs[0], options, runs[1] if baseline else None)
