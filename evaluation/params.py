"""A declared parameter -- its kind, default, description and accepted values -- shared by the measures (parsed from
the text of a measure name, ``Param.convert``) and the meta-evaluation methods (checked as JSON values,
``evaluation.meta.methods.options_for``), so both say what they accept in one way (spec 1.4)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Literal

from evaluation.problems import MeasureError

#: ``bool`` and ``list`` are meta-evaluation options' kinds (JSON values); measures use the others
ParamKind = Literal["float", "int", "choice", "table", "int_or_choice", "bool", "list"]


@dataclass(frozen=True)
class Param:
    """A parameter of a measure or a meta-evaluation method: kind, default (None = required), description and
    accepted values (choices, or a range)."""

    name: str
    kind: ParamKind
    default: Any
    description: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    min_exclusive: bool = False
    max_exclusive: bool = False
    #: (other parameter, its values) under which this parameter has an effect; a non-default value given
    #: under any other setting is refused when the measure is parsed, since it would silently change nothing
    applies_when: tuple[str, tuple[Any, ...]] | None = None

    @property
    def required(self) -> bool:
        return self.default is None

    def only_when(self, other: str, *values: Any) -> Param:
        """This parameter, declared to matter only when ``other`` takes one of ``values``."""
        return replace(self, applies_when=(other, values))

    def convert(self, text: str) -> Any:
        """Turn the text of a value into this parameter's type, or raise MeasureError."""
        raw = text.strip()
        try:
            if self.kind == "choice":
                return self._choice(raw)
            if self.kind == "int_or_choice":
                return self._choice(raw) if raw in self.choices else self._number(int(raw))
            if self.kind == "int":
                return self._number(int(raw))
            if self.kind == "float":
                return self._number(float(raw))
            if self.kind == "table":
                values = tuple(float(v) for v in raw.split(":"))
                if not values or any(v < 0 for v in values):
                    raise ValueError  # internal: control flow, caught below and reported as MeasureError
                return values
        except ValueError:
            pass
        raise MeasureError(f"parameter {self.name}: {raw!r} is not {self.expects()}")

    def value_problem(self, value: Any) -> str | None:
        """What is wrong with a JSON ``value`` of this parameter -- its type, or a value outside its choices --
        or None (a meta-evaluation option as the API and the CLI pass it; the range is ``range_problem``)."""
        if self.kind == "list":  # a list of choices, when declared with some (its items are checked by its method)
            if not isinstance(value, (list, tuple)):
                return f"{self.name} must be a list, not {value!r}"
            unknown = [v for v in value if v not in self.choices] if self.choices else []
            return f"{self.name} may list only {', '.join(self.choices)}, not {unknown[0]!r}" if unknown else None
        if self.choices and value not in self.choices:
            return f"{self.name} must be one of {', '.join(self.choices)}, not {value!r}"
        if self.kind in ("int", "float"):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return f"{self.name} must be a number, not {value!r}"
            if self.kind == "int" and value != int(value):
                return f"{self.name} must be an integer, not {value!r}"
        return None

    def range_problem(self, value: Any) -> str | None:
        """``{name} must be between {minimum} and {maximum}`` when a number falls outside the declared range."""
        if (self.minimum is None and self.maximum is None) or self.kind == "list":
            return None
        number = float(value)
        below = self.minimum is not None and (number < self.minimum or (self.min_exclusive and number == self.minimum))
        above = self.maximum is not None and (number > self.maximum or (self.max_exclusive and number == self.maximum))
        if (below or above) and (self.minimum is None or self.maximum is None):
            return f"{self.name} must be {self._bounds()}"
        if below or above:
            return f"{self.name} must be between {format_value(self.minimum)} and {format_value(self.maximum)}"
        return None

    def expects(self) -> str:
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind == "table":
            return "a colon-separated list of non-negative numbers (e.g. 1:2:3)"
        if self.kind in ("bool", "list"):
            return "true or false" if self.kind == "bool" else "a list"
        what = {"int": "an integer", "float": "a finite number", "int_or_choice": "an integer"}[self.kind]
        bounds = self._bounds()
        what += f" {bounds}" if bounds else ""
        if self.kind == "int_or_choice":
            what += " or one of " + ", ".join(self.choices)
        return what

    def _bounds(self) -> str:
        parts = []
        if self.minimum is not None:
            parts.append(f"{'>' if self.min_exclusive else '>='} {format_value(self.minimum)}")
        if self.maximum is not None:
            parts.append(f"{'<' if self.max_exclusive else '<='} {format_value(self.maximum)}")
        return " and ".join(parts)

    def _choice(self, raw: str) -> str:
        if raw not in self.choices:
            raise ValueError  # internal: control flow, convert reports it as MeasureError
        return raw

    def _number(self, value: float) -> Any:
        if not math.isfinite(value):
            raise ValueError  # internal: control flow, convert reports it as MeasureError
        if self.minimum is not None and (value < self.minimum or (self.min_exclusive and value == self.minimum)):
            raise ValueError  # internal: control flow, convert reports it as MeasureError
        if self.maximum is not None and (value > self.maximum or (self.max_exclusive and value == self.maximum)):
            raise ValueError  # internal: control flow, convert reports it as MeasureError
        return value


def format_value(value: Any) -> str:
    """Canonical text of a parameter value: numbers without trailing zeros, tables joined by colons."""
    if isinstance(value, tuple):
        return ":".join(format_value(v) for v in value)
    if isinstance(value, float):
        text = repr(value)
        return text[:-2] if text.endswith(".0") else text
    return str(value)
