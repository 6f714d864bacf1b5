"""One evaluation from raw inputs to a report: what the offline CLI and the service's workers both run, so the
two give the same numbers and the same JSON document for the same files.

Inputs are read first, all of them, and every problem of every file is reported together (spec 1.1); then the
evaluator is built once for the judgments and applied to each run, reporting progress between runs. A run none of
whose topics is judged is refused (``no-topics-scored``) rather than reported as a mean of 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import PurePath
from typing import Any

from evaluation.enums import StrEnum
from evaluation.evaluator import Evaluator, RunScores, shown_topics
from evaluation.formats import Blob, load, parse_evall, parse_intent_weights, parse_qrels
from evaluation.formats.run_formats import RUN_FORMATS as RUN_FORMATS  # run layouts: TREC, EvALL, PyEvALL
from evaluation.formats.run_formats import RunFormat as RunFormat
from evaluation.formats.run_formats import check_run_format, file_head, parse_run_as, resolve_run_format, text_head
from evaluation.formats.trec_run import RunFile, parse_run_file
from evaluation.measure_notes import measure_notes
from evaluation.measures.base import Measure
from evaluation.measures.registry import default_registry
from evaluation.model import IntentWeights, Qrels, Run
from evaluation.problems import FormatError, InputError, Parsed, Problem
from evaluation.problems import NothingScored as NothingScored  # defined there: light for the CLI to catch
from evaluation.report import Report
from evaluation.side_inputs import SideInputs
from evaluation.side_registry import side_reader
from evaluation.sources import Inputs  # defined below the pipeline and meta/: no import circle
from evaluation.task_pool import Pending, TaskPool, task_pool


class QrelsFormat(StrEnum):
    """A judgment file layout (members are the names ``--qrels-format`` and the API's ``qrels_format`` take)."""

    AUTO = "auto"  # tells EvALL's 5-column TSV from TREC/NTCIR qrels by the first line
    TREC = "trec"  # TREC/NTCIR qrels
    EVALL = "evall"  # an EvALL gold standard


#: Judgment file layouts: ``auto`` tells EvALL's 5-column TSV from TREC/NTCIR qrels by the first line.
QRELS_FORMATS: tuple[str, ...] = tuple(f.value for f in QrelsFormat)

#: An input as given to ``load_inputs``: its bytes, or the error met opening it (reported with the others).
Opened = Blob | InputError

#: ``on_judgments(qrels, intent_weights)``: called by ``load_inputs`` as soon as the judgments are read.
OnJudgments = Callable[[Qrels, "IntentWeights | None"], None]

#: An input ``load_inputs`` opens itself, when it reads it (on a reader thread, with ``threads`` > 1).
Opening = Callable[[], Opened]

#: ``progress(stage, fraction)``: called as the work advances; it may raise to stop the evaluation.
Progress = Callable[[str, float], None]


def file_label(blob: Blob) -> str:
    """The name under which an input appears in ``meta.inputs``: its file name (``<stdin>`` kept as is)."""
    return file_label_of(blob.name)


def file_label_of(name: str) -> str:
    return name if name.startswith("<") else PurePath(name).name


def looks_like_evall(blob: Blob) -> bool:
    """EvALL gold standards are tab-separated with five fields; TREC and NTCIR qrels are not."""
    first = next((line for line in blob.data[:4096].splitlines() if line.strip()), b"")
    return first.count(b"\t") == 4


def parse_judgments(blob: Blob, fmt: str = QrelsFormat.AUTO) -> Parsed[tuple[Qrels, IntentWeights | None]]:
    """Judgments, and the intent weights an EvALL gold standard carries (None for the other formats)."""
    if fmt not in QRELS_FORMATS:
        raise FormatError(f"unknown judgments format {fmt!r}; choose one of {', '.join(QRELS_FORMATS)}")
    if fmt == QrelsFormat.EVALL or (fmt == QrelsFormat.AUTO and looks_like_evall(blob)):
        return parse_evall(blob)  # type: ignore[return-value]
    parsed = parse_qrels(blob)
    value = (parsed.value, None) if parsed.value is not None else None
    return Parsed(value, parsed.problems, parsed.omitted_errors, parsed.omitted_warnings)


@dataclass(frozen=True)
class _Read:
    """What reading one input gave: its parse (``parsed``), or the value it already was (``value``), or why it
    could not be opened (``error``); ``file`` is (name in ``meta.inputs``, sha256) when it was a file."""

    parsed: Parsed[Any] | None = None
    value: Any = None
    error: InputError | None = None
    file: tuple[str, str] | None = None


def _read(source: Any, reader: Callable[[Blob], Parsed[Any]], pool: TaskPool | None = None) -> _Read:
    """Parse one input with ``reader``; a ``RunFile`` is read from its path (hashed on the way); an input
    already parsed (a ``Run``, ``IntentWeights`` ...) is taken as it is. Touches nothing shared, so inputs can
    be read on several threads (and a run file's chunks on those of ``pool``)."""
    if callable(source):
        source = source()
    if isinstance(source, InputError):
        return _Read(error=source)
    if isinstance(source, RunFile):
        parsed, sha256 = parse_run_file(source, pool)
        return _Read(parsed, file=(file_label_of(source.name), sha256) if sha256 is not None else None)
    if isinstance(source, _RunFileAs):
        try:
            source = load(source.file.path, limits=source.file.limits)
        except InputError as exc:
            return _Read(error=exc)
    if isinstance(source, Blob):
        return _Read(reader(source), file=(file_label(source), source.sha256))
    return _Read(value=source)


@dataclass(frozen=True)
class _RunFileAs:
    """A run file in a format other than TREC: read whole (``load``), then by that format's reader."""

    file: RunFile


def _run_source(source: Any, fmt: str) -> Any:
    """A ``RunFile`` stays on the TREC fast path when it is TREC (named, or detected from its first line)."""
    if isinstance(source, RunFile) and fmt != RunFormat.TREC:
        head = text_head(source.data) if source.data is not None else file_head(source.path)
        if resolve_run_format(fmt, head) != RunFormat.TREC:
            return _RunFileAs(source)
    return source


class _Collector:
    """Gathers the problems of several readers so that all of them are reported at once."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.omitted = 0
        self.files: dict[str, str] = {}

    def take(self, read: _Read) -> Any:
        """The input's value (None when it has errors), its problems and file hash recorded in input order."""
        if read.error is not None:
            self.problems.extend(read.error.problems)
            self.omitted += read.error.omitted
            return None
        if read.file is not None:
            self.files[read.file[0]] = read.file[1]
        if read.parsed is None:
            return read.value
        self.problems.extend(read.parsed.problems)
        self.omitted += read.parsed.omitted_errors
        return read.parsed.value

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]


def load_inputs(
    qrels: Opened | Opening | Qrels,
    runs: Sequence[Opened | Run | RunFile],
    *,
    qrels_format: str = QrelsFormat.AUTO,
    run_format: str = RunFormat.AUTO,
    intent_weights: Opened | IntentWeights | None = None,
    side: Mapping[str, Opened] | None = None,
    progress: Progress | None = None,
    threads: int = 1,
    on_judgments: OnJudgments | None = None,
) -> Inputs:
    """Parse every input; if any has an error, raise InputError with every problem of every file (warnings
    included, in file order, so that one pass shows everything to fix). Inputs already parsed are taken as they
    are (they have no file hash in ``files``); a ``RunFile`` is read from its path in bounded memory. With
    ``threads`` > 1 the inputs are read at the same time (``task_pool``); the result is the same.
    ``on_judgments`` is called with judgments read from a file as soon as they are read, so work that needs
    only them (``Evaluator.warm_up``) is done while the runs are still being read. ``run_format`` is the layout
    of every run file (``RUN_FORMATS``; ``auto``: each run's own, detected from its first line)."""
    check_run_format(run_format)
    read_run = partial(parse_run_as, fmt=run_format)
    found = _Collector()
    with task_pool(threads) as pool:
        judging = None if isinstance(qrels, Qrels) else pool.submit(
            lambda: _read(qrels, lambda blob: _judgments(blob, qrels_format, on_judgments)))
        weighing = None if intent_weights is None else pool.submit(
            lambda: _read(intent_weights, parse_intent_weights))
        siding = {kind: pool.submit(partial(_read, source, side_reader(kind))) for kind, source in (side or {}).items()}
        # ``runs`` may fetch each item as it is asked for (a worker's stored runs): it is iterated once, and with
        # one thread each run is fetched and parsed only when the loop below reaches it (one run held at a time)
        ahead = list(runs) if pool.parallel else None
        reading = [pool.submit(partial(_read, _run_source(source, run_format), read_run, pool))
                   for source in ahead or ()]
        judged: tuple[Qrels, IntentWeights | None] | None = (
            (qrels, None) if judging is None else found.take(judging.result()))  # type: ignore[assignment]
        weights = judged[1] if judged else None
        if weighing is not None:
            weights = found.take(weighing.result())
        side_values = {kind: found.take(pending.result()) for kind, pending in siding.items()}
        parsed_runs: list[Run] = []
        for i, source in enumerate(runs if ahead is None else ahead):
            if progress is not None:
                name = source.name if isinstance(source, (Blob, Run, RunFile)) else "?"
                progress(f"reading run {i + 1} of {len(runs)}: {file_label_of(name)}", i / max(1, len(runs)))
            parsed_runs.append(found.take(_read(_run_source(source, run_format), read_run) if ahead is None
                                          else reading[i].result()))
    if found.errors or found.omitted:
        raise InputError(found.problems, found.omitted)
    check_run_names(parsed_runs)
    assert judged is not None  # no errors were reported, so every reader produced its value
    return Inputs(judged[0], parsed_runs, weights, SideInputs(side_values), found.files, found.warnings)


def _judgments(blob: Blob, fmt: str, then: OnJudgments | None) -> Parsed[tuple[Qrels, IntentWeights | None]]:
    """``parse_judgments``, then ``then`` on what it read (on this reader thread)."""
    parsed = parse_judgments(blob, fmt)
    if then is not None and parsed.value is not None:
        then(*parsed.value)
    return parsed


def check_run_names(runs: Sequence[Run]) -> None:
    """Results are keyed by run name, so two runs may not share one."""
    names = [r.name for r in runs]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise InputError.single("duplicate-run-name", f"two runs would both be named {clash[0]}; rename one file")


def check_scored(qrels: Qrels, runs: Sequence[Run]) -> None:
    """Refuse, naming every such run at once, runs that share no topic with the judgments."""
    problems = [_nothing_scored(qrels, run) for run in runs if not any(t in qrels.topic_index for t in run.topics)]
    if problems:
        raise NothingScored(problems)


def _nothing_scored(qrels: Qrels, run: Run) -> Problem:
    return Problem(
        "no-topics-scored",
        f"no topic of run {run.name} is judged, so nothing can be scored: its {len(run.topics)} topic(s)"
        f" ({shown_topics(run.topics)}) and the {len(qrels.topics)} judged topic(s) ({shown_topics(qrels.topics)})"
        " do not overlap; are the run and the judgments for the same topics?",
        "error",
        source=run.name,
    )


def build_evaluator(inputs: Inputs, measures: Sequence[str | Measure], *, ties: str = "trec",
                    topics: str = "common") -> Evaluator:
    """The evaluator for ``inputs``: measures parsed (every bad name reported) and every run checked to have a
    judged topic (``NothingScored``) before any run is evaluated."""
    parsed = default_registry().parse_all(measures)
    check_scored(inputs.qrels, inputs.runs)
    return Evaluator(inputs.qrels, parsed, ties=ties, topics=topics, intent_weights=inputs.intent_weights,
                     side=inputs.side)


def run_evaluation(
    inputs: Inputs,
    measures: Sequence[str | Measure],
    *,
    ties: str = "trec",
    topics: str = "common",
    progress: Progress | None = None,
    threads: int = 1,
    evaluator: Evaluator | None = None,
    release: bool = False,
) -> Report:
    """Evaluate every run of ``inputs`` with the measures and policies; progress is reported after each run.
    With ``threads`` > 1 the runs after the first are evaluated at the same time (``task_pool``); the report
    is the same. ``evaluator``: one already built (and warmed up) for these judgments, measures and policies.
    ``release``: the caller needs ``inputs.runs`` no more -- they are taken out of it, so that each run's columns
    are freed once it is judged (peak memory: ``evalserve evaluate``)."""
    if evaluator is None or evaluator.qrels is not inputs.qrels:
        evaluator = build_evaluator(inputs, measures, ties=ties, topics=topics)
    else:
        check_scored(inputs.qrels, inputs.runs)
    runs: list[Run | None] = list(inputs.runs)
    names = [r.name for r in inputs.runs]
    tags = {r.name: r.tags[0] for r in inputs.runs if len(r.tags) == 1}
    if release:
        inputs.runs.clear()
    scores: list[RunScores] = []
    with task_pool(threads) as pool:
        # the first run is evaluated alone: it builds what the runs share (join index, ideal lists, greedy
        # ideals), so the others, evaluated together, find it built instead of each building it
        rest: list[Pending[RunScores]] = []
        for i, name in enumerate(names):
            if progress is not None:
                progress(f"evaluating run {i + 1} of {len(names)}: {name}", i / max(1, len(names)))
            if i == 0:  # alone: its join blocks and measures go to the pool instead
                scores.append(evaluator.evaluate(_take(runs, 0, release), pool if pool.parallel else None))
                rest = [pool.submit(partial(evaluator.evaluate, _take(runs, j, release)))
                        for j in range(1, len(runs))]
            else:
                scores.append(rest[i - 1].take())
    notes = measure_notes(inputs.qrels, evaluator.measures)  # once per evaluation, before each run's own
    warnings = list(inputs.warnings) + notes + [w for s in scores for w in s.warnings]
    if progress is not None:
        progress("evaluated", 1.0)
    return Report(scores, [m.label for m in evaluator.measures], ties, topics, inputs.files, warnings,
                  canonical={m.label: m.name for m in evaluator.measures}, tags=tags)


def _take(runs: list[Run | None], i: int, release: bool) -> Run:
    """``runs[i]``; with ``release``, no longer held by the list."""
    run = runs[i]
    assert run is not None
    if release:
        runs[i] = None
    return run
