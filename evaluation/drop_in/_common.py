"""What the ndeval and gdeval drop-ins share: reading a file as bytes, numbers read the way C and Perl read
them, C's ``%.Nf``, and scoring already ordered rankings with the registry's measures (spec Appendix E)."""

from __future__ import annotations

import bz2
import contextlib
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from evaluation.formats.source import Blob, DecodeLimits, load
from evaluation.problems import InputError, Problem, ProblemLog

#: the longest number ndeval's ``naturalNumber`` accepts is 1000009: it refuses a digit once the value passed
#: this bound (a fact of ndeval 4.5)
NDEVAL_NUMBER_BOUND = 100_000
BZIP2_MAGIC = b"BZh"

_C_FLOAT = re.compile(
    rb"[+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
    rb"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan(?:\([0-9a-zA-Z_]*\))?)",
    re.IGNORECASE,
)
_PERL_NUMBER = re.compile(
    rb"\s*([+-]?)(?:((?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)|(inf(?:inity)?)|(nan))", re.IGNORECASE
)


def read_bytes(path: str, limits: DecodeLimits | None = None) -> bytes:
    """A file's bytes as the tools would read them (gzip and bzip2 are decompressed; '-' is standard input);
    an ``InputError`` saying why when it cannot be read."""
    blob: Blob = load(path, limits=limits or DecodeLimits.from_env())
    data = blob.data
    if data.startswith(BZIP2_MAGIC):
        with contextlib.suppress(OSError, ValueError):  # not bzip2 after all: read as text, as the tools do
            data = bz2.decompress(data)
    return data


def lines_of(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, line) for each line, as C's line reading sees them: a final newline ends the
    last line rather than starting an empty one."""
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    return enumerate(parts, start=1)


def field_column(line: bytes, index: int) -> int:
    """1-based column of whitespace-separated field ``index`` of ``line`` (for problem locations)."""
    spans = [m.start() for m in re.finditer(rb"\S+", line)]
    return spans[index] + 1 if index < len(spans) else len(line) + 1


def natural_number(text: bytes) -> int | None:
    """ndeval's reading of a topic, subtopic, rank or judgment: ASCII digits only, at most 1000009, else None."""
    if not text or not text.isdigit() or not text.isascii():
        return None
    value = 0
    for digit in text:
        if value > NDEVAL_NUMBER_BOUND:
            return None
        value = 10 * value + digit - 48
    return value


def c_number_prefix(text: bytes) -> float | None:
    """The number C's ``strtod`` (and ``sscanf %lf``) reads at the start of ``text``, or None when there is none."""
    match = _C_FLOAT.match(text)
    if match is None:
        return None
    token = match.group().lower()
    body = token.lstrip(b"+-")
    negative = token.startswith(b"-")
    if body.startswith(b"inf"):
        return -math.inf if negative else math.inf
    if body.startswith(b"nan"):
        return math.nan
    if body.startswith(b"0x"):
        mantissa = body if b"p" in body else body + b"p0"
        value = float.fromhex(mantissa.decode())
        return -value if negative else value
    return float(token)


def perl_number(text: bytes) -> float:
    """The number Perl makes of a string in numeric context: its leading number, 0 when it has none."""
    match = _PERL_NUMBER.match(text)
    if match is None:
        return 0.0
    sign = -1.0 if match.group(1) == b"-" else 1.0
    if match.group(2):
        return sign * float(match.group(2))
    if match.group(3):
        return sign * math.inf
    return math.nan


def c_fixed(value: float, digits: int) -> str:
    """C's ``printf("%.<digits>f")`` on glibc: NaN prints as ``-nan`` (0/0 on x86-64 has its sign bit set)."""
    if math.isnan(value):
        return "-nan"
    if math.isinf(value):
        return "-inf" if value < 0 else "inf"
    return f"{value:.{digits}f}"


def surrogate(text: bytes) -> str:
    """Bytes as text that encodes back to the same bytes (``surrogateescape``): run ids are printed verbatim."""
    return text.decode("utf-8", "surrogateescape")


def refuse(log: ProblemLog) -> None:
    """Raise an ``InputError`` with the log's errors when there are any."""
    if log.has_errors:
        raise InputError(log.sorted(), log.omitted_errors)


@dataclass(frozen=True)
class Judgment:
    """One judgment row handed to the engine: topic and intent labels, docno bytes, grade."""

    topic: str
    intent: str
    docno: bytes
    grade: int


def score_rankings(
    judgments: Sequence[Judgment],
    rankings: Mapping[str, Sequence[bytes]],
    measures: Iterable[str],
    name: str,
) -> dict[str, dict[str, float]]:
    """Per measure name, per topic label: the registry measure's value for ``rankings`` (topic -> docnos in the
    order the tool ranks them) against ``judgments``, over the topics in both. Docnos are renamed to tokens
    that sort as their bytes do, so any byte string a tool accepts is a docno here too."""
    from evaluation.evaluator import Evaluator
    from evaluation.formats import read_qrels, read_run

    names = list(measures)
    judged_topics = {j.topic for j in judgments}
    shown = {t: docs for t, docs in rankings.items() if t in judged_topics}
    if not shown:
        return {m: {} for m in names}
    vocabulary = sorted({j.docno for j in judgments}.union(*map(set, shown.values())))
    width = len(str(len(vocabulary)))
    token = {d: f"d{i:0{width}d}" for i, d in enumerate(vocabulary)}
    qrels_text = "".join(f"{j.topic} {j.intent} {token[j.docno]} {j.grade}\n" for j in judgments)
    run_text = "".join(
        f"{topic} Q0 {token[d]} {rank} 0 r\n" for topic, docs in shown.items() for rank, d in enumerate(docs, 1)
    )
    qrels = read_qrels(Blob.from_bytes(qrels_text.encode(), name=f"{name} (judgments)"))
    run = read_run(Blob.from_bytes(run_text.encode(), name=name))
    scores = Evaluator.from_names(qrels, names, ties="rank", topics="common").evaluate(run)
    return {m: scores.per_topic(m) for m in names}


def read_files(paths: Sequence[str]) -> list[bytes]:
    """Every file's bytes (``read_bytes``); one ``InputError`` naming every file that cannot be read."""
    found: list[bytes] = []
    problems: list[Problem] = []
    for path in paths:
        try:
            found.append(read_bytes(path))
        except InputError as exc:
            problems += exc.problems
    if problems:
        raise InputError(problems)
    return found


Judgments = TypeVar("Judgments")
Ranking = TypeVar("Ranking")


def read_every_file(read_qrels: Callable[[], Judgments],
                    read_runs: Sequence[Callable[[], Ranking]]) -> tuple[Judgments, list[Ranking]]:
    """The judgments and the runs, each read by its reader; every file is read even after one fails, so one
    ``InputError`` carries the problems of all of them (a user fixes every file in one go)."""
    problems: list[Problem] = []
    omitted = 0
    read: list[object] = []
    for reader in (read_qrels, *read_runs):
        try:
            read.append(reader())
        except InputError as exc:
            problems += exc.problems
            omitted += exc.omitted
    if problems:
        raise InputError(problems, omitted)
    return read[0], read[1:]  # type: ignore[return-value]
