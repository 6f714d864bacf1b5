"""Problems found in inputs: one record shape for every reader, the CLI and the API.

A problem is ``{line, column, code, message, severity}``; errors stop a load, warnings do not.
Readers collect all problems (capped) instead of stopping at the first, so a user fixes a file in one pass. The
same problem on consecutive lines is kept once, as a range: ``line`` is its first line, ``end_line`` its last, and
the message starts ``lines 3-102:`` (``ProblemLog.add``), so a comma-separated file gets one line, not a hundred.
The engine's exceptions live here too (``InputError``, ``NothingScored`` for inputs; ``EvaluationError`` and its
subclasses for a request the engine refuses, each with the problem ``code`` a service answers with): this module
imports no numpy, so the CLI catches them without loading the engine. A bare ``ValueError``/``KeyError`` from the
engine is a bug (an internal invariant), never a user's mistake.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

Severity = Literal["error", "warning"]
T = TypeVar("T")

#: Errors kept per load; the rest are counted, not listed.
MAX_PROBLEMS = 100


@dataclass(frozen=True)
class Problem:
    """One problem in one input, located by 1-based physical line and column (None when not line-bound)."""

    code: str
    message: str
    severity: Severity = "error"
    line: int | None = None
    column: int | None = None
    source: str | None = None
    end_line: int | None = None  # the last line of a range of lines with the same problem (None: one line)

    def as_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "column": self.column,
            "code": self.code,
            "message": self.message,
            "severity": self.severity,
            **({"source": self.source} if self.source is not None else {}),
            **({"end_line": self.end_line} if self.end_line is not None else {}),
        }

    def __str__(self) -> str:
        where = self.source or "<input>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.severity}: {self.message} [{self.code}]"


@dataclass
class ProblemLog:
    """Collects problems for one input, keeping at most ``limit`` of each severity and counting the rest. A
    problem identical to the one added just before (code, message, severity) on the next line extends it to a
    range of lines instead of being listed again."""

    source: str | None = None
    limit: int = MAX_PROBLEMS
    problems: list[Problem] = field(default_factory=list)
    omitted_errors: int = 0
    omitted_warnings: int = 0
    _last_message: str | None = field(default=None, init=False, repr=False)  # the last message, before any range

    def add(
        self,
        code: str,
        message: str,
        *,
        severity: Severity = "error",
        line: int | None = None,
        column: int | None = None,
        end_line: int | None = None,
    ) -> None:
        """Add a problem on ``line`` (through ``end_line`` when it is the same on every line of a range)."""
        if self._extends(code, message, severity, line, end_line or line):
            return
        kept = sum(1 for p in self.problems if p.severity == severity)
        if kept >= self.limit:
            if severity == "error":
                self.omitted_errors += 1
            else:
                self.omitted_warnings += 1
            return
        last = end_line if end_line is not None and line is not None and end_line > line else None
        text = f"lines {line}-{last}: {message}" if last is not None else message
        self.problems.append(Problem(code, text, severity, line, column, self.source, end_line=last))
        self._last_message = message

    def _extends(self, code: str, message: str, severity: Severity, line: int | None, end: int | None) -> bool:
        """Whether the problem repeats the last one added, from the line after it on; then that one now covers it."""
        if not self.problems or line is None or end is None or message != self._last_message:
            return False
        last = self.problems[-1]
        if last.line is None or (last.code, last.severity) != (code, severity):
            return False
        if line != (last.end_line or last.line) + 1:
            return False
        self.problems[-1] = Problem(code, f"lines {last.line}-{end}: {message}", severity, last.line, last.column,
                                    self.source, end_line=end)
        return True

    def room(self, severity: Severity = "error") -> int:
        """How many more problems of this severity would still be listed."""
        return max(0, self.limit - sum(1 for p in self.problems if p.severity == severity))

    def count_omitted(self, n: int, severity: Severity = "error") -> None:
        if severity == "error":
            self.omitted_errors += n
        else:
            self.omitted_warnings += n

    @property
    def has_errors(self) -> bool:
        return self.omitted_errors > 0 or any(p.severity == "error" for p in self.problems)

    def sorted(self) -> list[Problem]:
        return sorted(self.problems, key=lambda p: (p.line or 0, p.column or 0, p.code))


class InputError(Exception):
    """Raised when inputs have errors; carries every problem found (capped) and the count of the rest."""

    def __init__(self, problems: Iterable[Problem], omitted: int = 0) -> None:
        self.problems = list(problems)
        self.omitted = omitted
        first = self.problems[0] if self.problems else None
        more = len(self.problems) - 1 + omitted
        text = str(first) if first else "invalid input"
        super().__init__(text + (f" (and {more} more)" if more > 0 else ""))

    @classmethod
    def single(cls, code: str, message: str, source: str | None = None) -> InputError:
        return cls([Problem(code, message, "error", source=source)])

    def as_dicts(self) -> list[dict[str, Any]]:
        return [p.as_dict() for p in self.problems]


class NothingScored(InputError):
    """Raised when a run has no judged topic: its means would be a silent 0 (usually the wrong judgments, or topic
    ids spelled differently in the two files). Carries one ``no-topics-scored`` problem per such run."""


#: The problem codes of ``EvaluationError`` and its subclasses (``code``): what a service answers with.
#: ``invalid-measure``: a measure name, parameter or input the measure needs; ``invalid-meta-request``: a
#: meta-evaluation method or option refused when the request is checked (``options_for``); ``invalid-request``:
#: every other request the engine refuses (a bad option, an unknown format, what the results cannot satisfy).
ERROR_CODES = ("invalid-measure", "invalid-meta-request", "invalid-request")


class EvaluationError(ValueError):
    """A request the engine cannot carry out as asked; the message says what would be accepted. ``messages`` holds
    one message per problem when several were found together (``Registry.parse_all``). A ``ValueError`` so that
    older ``except ValueError`` callers still catch it; raised as one of its subclasses, each with its ``code``."""

    code: str = "invalid-request"

    def __init__(self, message: str, messages: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.messages = list(messages) or [message]


class MeasureError(EvaluationError):
    """An unknown measure, parameter or value, or a measure whose inputs were not given: ``invalid-measure``."""

    code = "invalid-measure"


class OptionError(EvaluationError):
    """A bad option, parameter or policy value (an unknown ties policy, scenario or test, a number out of range, a
    setting that lacks what it needs): ``invalid-request``, as the service answers for a bad field."""

    code = "invalid-request"


class FormatError(OptionError):
    """An unknown output, report, run or judgments format name: ``invalid-request`` (a bad option)."""


class MetaOptionError(OptionError):
    """A meta-evaluation method or option ``options_for`` refuses (an unknown method or option, a value out of its
    choices or range): ``invalid-meta-request``, the service's answer to such a submission."""

    code = "invalid-meta-request"


class RequestError(EvaluationError):
    """A request the given data cannot satisfy (a measure or run the results lack, measures of the wrong kind for
    a method, a document that is not a result, records that contradict themselves): ``invalid-request``, as the
    service answered for the ``KeyError``/``ValueError`` these were before."""

    code = "invalid-request"


@dataclass(frozen=True)
class Parsed(Generic[T]):
    """A reader's outcome: the value (None when there were errors) and every problem found."""

    value: T | None
    problems: tuple[Problem, ...]
    omitted_errors: int = 0
    omitted_warnings: int = 0

    @property
    def ok(self) -> bool:
        return self.value is not None

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    def unwrap(self) -> T:
        """The value, or InputError with every error."""
        if self.value is None:
            raise InputError(self.errors, self.omitted_errors)
        return self.value

    def __iter__(self) -> Iterator[Problem]:
        return iter(self.problems)

    @classmethod
    def from_log(cls, value: T | None, log: ProblemLog) -> Parsed[T]:
        return cls(
            None if log.has_errors else value,
            tuple(log.sorted()),
            log.omitted_errors,
            log.omitted_warnings,
        )
