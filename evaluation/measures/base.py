"""What a measure is: a declaration (name, parameters, inputs, reference, kernel) and a configured instance.

A ``MeasureDef`` is declared once per measure module; a ``Measure`` is a definition with parameter values and
an optional cutoff, whose canonical name (``nDCG(gain=exp)@20``) is its identity everywhere: in results, in
storage, over the API. Kernels are pure functions from a prepared input to one value per topic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from evaluation.params import Param, format_value
from evaluation.problems import MeasureError

CutoffRule = Literal["none", "optional", "required"]
#: How per-topic values become a run's value: the arithmetic mean, trec_eval's sum (counts such as num_ret),
#: or trec_eval's geometric mean with values floored at 1e-5 (gm_map).
Aggregate = Literal["mean", "sum", "geometric"]
#: Input kinds a measure may need; the evaluator prepares each once per (qrels, run): "adhoc", "intents", or a
#: prepared input of ``evaluation.side_registry.PREPARERS`` (item scores, hierarchies, similarity, preferences).
InputKind = str


Kernel = Callable[[Any, Mapping[str, Any], "int | None"], npt.NDArray[np.float64]]


@dataclass(frozen=True)
class MeasureDef:
    """The declaration of one measure: everything the registry, the catalogue and the evaluator need."""

    name: str
    family: str
    summary: str
    kernel: Kernel
    params: tuple[Param, ...] = ()
    cutoff: CutoffRule = "optional"
    inputs: tuple[InputKind, ...] = ("adhoc",)
    reference: str = ""
    formula: str = ""
    aliases: tuple[str, ...] = ()
    notes: str = ""
    #: the established tool whose numbers the parameter-free name reproduces (spec Appendix E), if any
    default_follows: str = ""
    aggregate: Aggregate = "mean"

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def instance(self, values: Mapping[str, Any] | None = None, cutoff: int | None = None) -> Measure:
        """A configured measure; ``values`` are already-typed parameter values (defaults filled in)."""
        given = dict(values or {})
        unknown = set(given) - {p.name for p in self.params}
        if unknown:
            raise MeasureError(f"{self.name} has no parameter {', '.join(sorted(unknown))}")
        missing = [p.name for p in self.params if p.required and p.name not in given]
        if missing:
            raise MeasureError(f"{self.name} needs {', '.join(missing)} (e.g. {self.example()})")
        if self.cutoff == "none" and cutoff is not None:
            raise MeasureError(f"{self.name} takes no cutoff")
        if self.cutoff == "required" and cutoff is None:
            raise MeasureError(f"{self.name} needs a cutoff, e.g. {self.name}@10")
        if cutoff is not None and cutoff < 1:
            raise MeasureError(f"the cutoff of {self.name} must be a positive integer")
        full = tuple((p.name, given.get(p.name, p.default)) for p in self.params)
        self._check_applicable(dict(full))
        return Measure(self, full, cutoff)

    def _check_applicable(self, values: Mapping[str, Any]) -> None:
        """Refuse a non-default value of a parameter that the other parameters make ineffective."""
        for p in self.params:
            if p.applies_when is None or values[p.name] == p.default:
                continue
            other, allowed = p.applies_when
            if values[other] not in allowed:
                needs = " or ".join(f"{other}={format_value(v)}" for v in allowed)
                raise MeasureError(
                    f"{self.name}: {p.name}={format_value(values[p.name])} has no effect with"
                    f" {other}={format_value(values[other])}; it applies with {needs}"
                )

    def example(self) -> str:
        req = [f"{p.name}={p.choices[0] if p.choices else 1}" for p in self.params if p.required]
        text = self.name + (f"({','.join(req)})" if req else "")
        return text + ("@10" if self.cutoff == "required" else "")


def required_cutoff(cutoff: int | None) -> int:
    """The cutoff a kernel of a ``cutoff="required"`` measure is given: ``MeasureDef.instance`` never leaves it
    None, so None here is a bug (a kernel called directly without one)."""
    if cutoff is None:
        # internal: MeasureDef.instance always sets the cutoff of these measures
        raise TypeError("this measure needs a cutoff")
    return cutoff


@dataclass(frozen=True)
class Measure:
    """A measure with all parameter values (in declaration order) and its cutoff; identity = canonical name.

    ``label`` is the name as the user wrote it (``P.10``, ``RBP(p=0.8)``): results are keyed by it.
    """

    definition: MeasureDef
    values: tuple[tuple[str, Any], ...]
    cutoff: int | None
    label: str = field(default="", compare=False)
    name: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", self._canonical())
        if not self.label:
            object.__setattr__(self, "label", self.name)

    def labelled(self, label: str) -> Measure:
        """The same measure, reported under ``label``."""
        return replace(self, label=label)

    def _canonical(self) -> str:
        shown = []
        for param, (key, value) in zip(self.definition.params, self.values):
            if param.required or value != param.default:
                shown.append(f"{key}={format_value(value)}")
        text = self.definition.name + (f"({','.join(shown)})" if shown else "")
        return text + (f"@{self.cutoff}" if self.cutoff is not None else "")

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.values)

    def compute(self, data: Any) -> npt.NDArray[np.float64]:
        """Per-topic values on a prepared input."""
        return self.definition.kernel(data, self.params, self.cutoff)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Measure({self.name!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Measure) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

