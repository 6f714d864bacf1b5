"""``gdeval`` as a drop-in (spec Appendix E.1): the TREC Web Track ad hoc evaluator's file reading, ordering,
topic rules and CSV output, byte for byte, with the registry's ``nDCG(gain=exp)@k`` and ``ERR(gmax=4)@k``
doing the scoring.

What gdeval.pl 1.3 does, and so this does:

- qrels ``topic 0 docno grade`` with grades up to 4 (negative ones allowed; only grades above 0 count); runs
  ``topic Q0 docno rank score tag``. A topic may carry a prefix ending in ``-`` (``wt09-151``). The run id is
  the last line's tag.
- order: score descending (scores read as Perl reads numbers), then docno descending; the rank column is
  checked, not used.
- one row per run topic that has a relevant document, in numeric order; ``amean`` divides by their number, or
  with ``complete`` (``-c``) by the number of qrels topics with a relevant document -- topics without one are
  left out of the mean either way (``evalserve evaluate`` keeps its own documented convention).
- risk-sensitive evaluation (``-baseline``): each value minus the baseline's, losses weighted by 1 + riskAlpha.

Where gdeval would silently count something twice or mix topics up, this refuses with a problem instead: a
document judged relevant twice for a topic, a docno twice in a run topic, one topic number spelled two ways
(``7`` and ``007``), a NaN score, an empty run.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import partial

from evaluation.drop_in._common import (
    Judgment,
    c_fixed,
    field_column,
    lines_of,
    perl_number,
    read_every_file,
    refuse,
    score_rankings,
    surrogate,
)
from evaluation.problems import InputError, Problem, ProblemLog

#: gdeval.pl's version line (``-version``), a fact of the release this reproduces
VERSION = "version 1.3 (Mon Apr 29 20:50:24 EDT 2013)"
MAX_GRADE = 4  # gdeval's grade scale: ERR's satisfaction is (2^g - 1) / 2^4
DEFAULT_K = 20
_DIGITS = re.compile(rb"[0-9]+\Z")
_INTEGER = re.compile(rb"-?[0-9]+\Z")


@dataclass(frozen=True)
class Options:
    """gdeval's command-line settings: ``-c``, ``-k``, ``-riskAlpha`` (``risk_alpha_text`` is printed in the run
    label exactly as given)."""

    complete: bool = False
    k: int = DEFAULT_K
    risk_alpha: float = 0.0
    risk_alpha_text: str = "0"


@dataclass(frozen=True)
class GdevalQrels:
    """The relevant judgments (grade above 0) and the topics that have one, spelled as in the file."""

    judgments: tuple[Judgment, ...]
    topics: frozenset[str]


@dataclass(frozen=True)
class GdevalRun:
    """A run as gdeval ranks it: its id (the last line's tag) and each topic's docnos, topics in numeric order."""

    name: str
    runid: str
    rankings: dict[str, list[bytes]]


@dataclass(frozen=True)
class Report:
    """gdeval's output: header depth, run label, rows (``topic``, nDCG, ERR) ending with ``amean``; warnings."""

    k: int
    label: str
    rows: list[tuple[str, float, float]]
    warnings: list[Problem] = field(default_factory=list)

    def render(self) -> str:
        """The CSV exactly as gdeval prints it (5 decimals)."""
        lines = [f"runid,topic,ndcg@{self.k},err@{self.k}"]
        lines += [f"{self.label},{topic},{c_fixed(n, 5)},{c_fixed(e, 5)}" for topic, n, e in self.rows]
        return "\n".join(lines) + "\n"


def strip_prefix(text: bytes) -> bytes:
    """gdeval's topic: everything up to the last '-' removed."""
    return text.rpartition(b"-")[2]


def parse_qrels(data: bytes, name: str) -> GdevalQrels:
    """Read gdeval's qrels; an ``InputError`` listing every line gdeval would refuse (and double judgments)."""
    log = ProblemLog(name)
    relevant: dict[tuple[str, bytes], int] = {}  # (topic, docno) -> first line
    judgments: list[Judgment] = []
    for number, line in lines_of(data.replace(b"\r", b"")):
        fields = line.split()
        if len(fields) < 4:
            log.add("wrong-column-count", f"{len(fields)} fields; gdeval qrels lines are 'topic 0 docno grade'",
                    line=number, column=1)
            continue
        topic, grade = strip_prefix(fields[0]), fields[3]
        bad = False
        if not _DIGITS.match(topic):
            bad = True
            log.add("topic-not-number", f"topic {surrogate(fields[0])!r} is not a topic number (digits, or digits"
                    " after a prefix ending in '-')", line=number, column=1)
        if perl_number(fields[1]) != 0:
            bad = True
            log.add("intent-not-zero", f"second field {surrogate(fields[1])!r} is not 0: gdeval reads ad hoc"
                    " qrels 'topic 0 docno grade' (per-subtopic judgments: evalserve ndeval)", line=number,
                    column=field_column(line, 1))
        if not _INTEGER.match(grade):
            bad = True
            log.add("grade-not-integer", f"grade {surrogate(grade)!r} is not an integer", line=number,
                    column=field_column(line, 3))
        elif int(grade) > MAX_GRADE:
            bad = True
            log.add("grade-too-large", f"grade {int(grade)} is above {MAX_GRADE}, the top of gdeval's scale",
                    line=number, column=field_column(line, 3))
        if bad or int(grade) <= 0:
            continue
        label, key = surrogate(topic), (surrogate(topic), fields[2])
        if key in relevant:
            log.add("repeated-judgment", f"document {surrogate(fields[2])!r} is judged relevant again for topic"
                    f" {label} (first on line {relevant[key]}); gdeval would count it twice in the ideal ranking:"
                    " keep one line", line=number, column=field_column(line, 2))
            continue
        relevant[key] = number
        judgments.append(Judgment(label, "0", fields[2], int(grade)))
    refuse(log)
    return GdevalQrels(tuple(judgments), frozenset(j.topic for j in judgments))


def parse_run(data: bytes, name: str) -> GdevalRun:
    """Read and order a run as gdeval does; an ``InputError`` listing every line gdeval would refuse (and the
    inputs it would silently miscount)."""
    log = ProblemLog(name)
    by_topic: dict[str, list[tuple[float, bytes, int]]] = {}
    runid = b""
    lines = 0
    for number, line in lines_of(data.replace(b"\r", b"")):
        lines += 1
        fields = line.split()
        if len(fields) < 6:
            log.add("wrong-column-count", f"{len(fields)} fields; gdeval run lines are 'topic Q0 docno rank score"
                    " tag'", line=number, column=1)
            continue
        topic = strip_prefix(fields[0])
        problems = []
        if not _DIGITS.match(topic):
            problems.append(("topic-not-number", f"topic {surrogate(fields[0])!r} is not a topic number (digits,"
                             " or digits after a prefix ending in '-')", 0))
        if fields[1] != b"Q0":
            problems.append(("q0-field", f"second field {surrogate(fields[1])!r} is not Q0, which gdeval"
                             " requires", 1))
        if not _DIGITS.match(fields[3]):
            problems.append(("rank-not-integer", f"rank {surrogate(fields[3])!r} is not a whole number", 3))
        if fields[5] == b"0":
            problems.append(("run-tag", "the run tag is '0', which gdeval refuses (Perl reads it as false)", 5))
        score = perl_number(fields[4])
        if math.isnan(score):
            problems.append(("score-nan", f"score {surrogate(fields[4])!r} is not a number; gdeval orders by"
                             " score", 4))
        for code, message, index in problems:
            log.add(code, message, line=number, column=field_column(line, index))
        if problems:
            continue
        runid = fields[5]
        by_topic.setdefault(surrogate(topic), []).append((score, fields[2], number))
    if lines == 0:
        log.add("empty-run", "the run file is empty")
    rankings: dict[str, list[bytes]] = {}
    for label in sorted(by_topic, key=int):
        entries = by_topic[label]
        entries.sort(key=lambda e: e[1], reverse=True)  # docno descending, then (stable) score descending
        entries.sort(key=lambda e: e[0], reverse=True)
        seen: dict[bytes, int] = {}
        for _, docno, number in entries:
            if docno in seen:
                log.add("duplicate-docno", f"document {surrogate(docno)!r} appears twice in topic {label} (lines"
                        f" {min(seen[docno], number)} and {max(seen[docno], number)}); gdeval would count it"
                        " twice", line=max(seen[docno], number))
            seen.setdefault(docno, number)
        rankings[label] = [docno for _, docno, _ in entries]
    refuse(log)
    return GdevalRun(name, surrogate(runid), rankings)


def check_spellings(qrels: GdevalQrels, runs: list[GdevalRun]) -> None:
    """Refuse one topic number spelled two ways (``7``, ``007``): gdeval sorts them as one topic but looks
    judgments up by spelling, so it would score such a topic against no judgments."""
    spelled: dict[int, set[str]] = {}
    for topic in [*qrels.topics, *(t for run in runs for t in run.rankings)]:
        spelled.setdefault(int(topic), set()).add(topic)
    clashes = sorted((n, sorted(s)) for n, s in spelled.items() if len(s) > 1)
    if clashes:
        raise InputError([Problem(
            "topic-spelling",
            f"topic {n} is spelled {' and '.join(s)}; gdeval would not match its judgments: spell it one way in"
            " every file", "error", source=runs[0].name) for n, s in clashes])


def topic_values(qrels: GdevalQrels, run: GdevalRun, k: int) -> dict[str, tuple[float, float]]:
    """(nDCG, ERR) at ``k`` of each run topic that has a relevant document."""
    ndcg, err = f"nDCG(gain=exp)@{k}", f"ERR(gmax={MAX_GRADE})@{k}"
    scored = score_rankings(qrels.judgments, run.rankings, [ndcg, err], run.name)
    return {t: (scored[ndcg][t], scored[err][t]) for t in run.rankings if t in qrels.topics}


def risk_weighted(run: float, base: float, risk_alpha: float) -> float:
    """gdeval's risk-sensitive difference: gains as they are, losses weighted by 1 + risk_alpha."""
    return (1 + risk_alpha) * (run - base) if run < base else run - base


def evaluate(qrels: GdevalQrels, run: GdevalRun, options: Options, baseline: GdevalRun | None = None) -> Report:
    """gdeval's rows and mean for ``run`` (risk-sensitive against ``baseline`` when given)."""
    check_spellings(qrels, [run, *([baseline] if baseline else [])])
    values = topic_values(qrels, run, options.k)
    base = topic_values(qrels, baseline, options.k) if baseline is not None else None
    label = run.runid
    if baseline is not None:
        label = f"{run.runid} (rel to. {baseline.runid}; rs=1+a; a={options.risk_alpha_text})"
    rows: list[tuple[str, float, float]] = []

    def add(topic: str, ndcg: float, err: float) -> None:
        if base is not None:
            b_ndcg, b_err = base.get(topic, (0.0, 0.0))
            ndcg = risk_weighted(ndcg, b_ndcg, options.risk_alpha)
            err = risk_weighted(err, b_err, options.risk_alpha)
        rows.append((topic, ndcg, err))

    for topic, (ndcg, err) in values.items():
        add(topic, ndcg, err)
    count = len(rows)
    if options.complete:
        count = len(qrels.topics)
        if base is not None:  # the judged topics the run lacks score 0 against the baseline's value
            for topic in sorted(qrels.topics - set(run.rankings), key=int):
                add(topic, 0.0, 0.0)
    total_ndcg = total_err = 0.0
    for _, ndcg, err in rows:
        total_ndcg += ndcg
        total_err += err
    if count > 0:
        total_ndcg /= count
        total_err /= count
    warnings = []
    if not rows:
        warnings.append(Problem("no-topics-scored", "no topic of the run has a relevant judgment: gdeval's mean"
                                " is 0 by convention", "warning", source=run.name))
    rows.append(("amean", total_ndcg, total_err))
    return Report(options.k, label, rows, warnings)


def gdeval(qrels_data: bytes, run_data: bytes, options: Options, *, qrels_name: str = "qrels",
           run_name: str = "run", baseline: tuple[bytes, str] | None = None) -> Report:
    """Read qrels, run (and baseline) as gdeval does and return its report; an ``InputError`` with every
    problem of every file."""
    files = [(run_data, run_name), *([baseline] if baseline else [])]
    qrels, runs = read_every_file(partial(parse_qrels, qrels_data, qrels_name),
                                  [partial(parse_run, data, name) for data, name in files])
    return evaluate(qrels, runs[0], options, runs[1] if baseline else None)
