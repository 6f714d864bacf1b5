"""The one registry of measures: built from the families' declarations, it resolves names to measures and
lists the catalogue. Nothing else in the code base keeps a list of measures; ``catalogue.NAMES`` only says which
family declares a name, so resolving ``AP`` imports the ad hoc family and not the hierarchy or preference code."""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from typing import Any

from evaluation.measures.base import Measure, MeasureDef
from evaluation.measures.catalogue import NAMES
from evaluation.measures.names import expand_name, parse_name
from evaluation.measures.suggest import did_you_mean
from evaluation.params import format_value
from evaluation.problems import MeasureError

#: ir_measures parameters with no counterpart of the same name here, and what to write instead.
IR_MEASURES_PARAMS: dict[str, str] = {
    "judged_only": "evalserve does not drop unjudged documents (ir_measures judged_only=True); Judged@k reports"
                   " how many of the top k are judged",
    "dcg": "nDCG's discount is fixed (log2, trec_eval); gains are chosen with gain=lin|exp",
    "min_rel": "use rel=N (the minimum grade that counts as relevant)",
}


#: The families shipped with evalserve (modules ``evaluation.measures.<family>``, each exposing ``DEFINITIONS``).
FAMILIES: tuple[str, ...] = tuple(NAMES)


class Registry:
    """Immutable name -> definition map (aliases included, case-sensitive with a case-insensitive fallback)."""

    def __init__(self, definitions: Iterable[MeasureDef]) -> None:
        self._defs: dict[str, MeasureDef] = {}
        self._lookup: dict[str, MeasureDef] = {}
        for d in definitions:
            if d.name in self._defs:
                # internal: a catalogue that declares a measure twice is a bug
                raise ValueError(f"measure {d.name} is declared twice")
            self._defs[d.name] = d
            for key in (d.name, *d.aliases):
                if key in self._lookup:
                    # internal: a catalogue that uses a name twice is a bug
                    raise ValueError(f"measure name {key} is used twice")
                self._lookup[key] = d
        self._folded = {k.lower(): v for k, v in self._lookup.items()}

    def __iter__(self) -> Iterator[MeasureDef]:
        return iter(self._defs.values())

    def __len__(self) -> int:
        return len(self._defs)

    def _find(self, name: str) -> MeasureDef | None:
        """The definition a name or alias gives, exactly or else case-insensitively; None if none does."""
        return self._lookup.get(name) or self._folded.get(name.lower())

    def _names(self) -> list[str]:
        """Every name and alias, the candidates for a did-you-mean."""
        return list(self._lookup)

    def definition(self, name: str, spelled: str | None = None) -> MeasureDef:
        """The definition of ``name``, or MeasureError suggesting close names completed as ``spelled`` (the whole
        name as written, parameters and cutoff included; ``suggest``)."""
        found = self._find(name)
        if found is None:
            raise MeasureError(f"unknown measure {name!r}{did_you_mean(spelled or name, self._names())}")
        return found

    def resolve(self, name: str) -> MeasureDef:
        """The definition named by a bare name, an alias or any spelling ``parse`` accepts (``ndcg_cut_10``)."""
        try:
            return self.definition(name)
        except MeasureError:
            try:
                return self.parse(expand_name(name)[0]).definition
            except MeasureError:
                pass
            raise

    def parse(self, text: str) -> Measure:
        """Resolve a name such as ``nDCG(gain=exp)@20`` into a configured measure, or raise MeasureError.

        The measure is labelled with ``text`` as written (stripped): results are keyed by the requested name.
        """
        try:
            parsed = parse_name(text)
        except MeasureError as exc:  # unreadable: a misspelt trec_eval name (ncdg_cut.10) is named as such
            hint = did_you_mean(text, self._names())
            if "did you mean" not in hint:
                raise
            raise MeasureError(f"unknown measure {text.strip()!r}{hint}") from exc
        definition = self.definition(parsed.name, text)
        values: dict[str, Any] = {}
        for key, raw in parsed.params:
            param = definition.param(key)
            if param is None and key in IR_MEASURES_PARAMS:
                raise MeasureError(f"{definition.name}: ir_measures' parameter {key!r} is not accepted:"
                                   f" {IR_MEASURES_PARAMS[key]}")
            if param is None:
                names = [p.name for p in definition.params]
                close = difflib.get_close_matches(key, names, n=2, cutoff=0.5)
                known = ", ".join(names) if names else "none"
                hint = f"; did you mean {' or '.join(close)}?" if close else f" (its parameters: {known})"
                raise MeasureError(f"{definition.name} has no parameter {key!r}{hint}")
            values[key] = param.convert(raw)
        return definition.instance(values, parsed.cutoff).labelled(text.strip())

    def parse_all(self, texts: Iterable[str | Measure]) -> list[Measure]:
        """Parse several names (trec_eval lists such as ``P.5,10`` name several), dropping repeats of a
        requested name and keeping the given order; every bad name is reported in one MeasureError."""
        seen: dict[str, Measure] = {}
        errors: list[str] = []
        for text in texts:
            for piece in [text] if isinstance(text, Measure) else expand_name(text):
                try:
                    m = piece if isinstance(piece, Measure) else self.parse(piece)
                except MeasureError as exc:
                    errors.append(str(exc))
                    continue
                seen.setdefault(m.label, m)
        if errors:
            raise MeasureError("; ".join(errors), errors)
        return list(seen.values())

    def catalogue(self) -> list[dict[str, Any]]:
        """Every measure with its parameters, defaults, inputs and reference, for the CLI and the API."""
        return [describe(d) for d in self]


def describe(d: MeasureDef) -> dict[str, Any]:
    return {
        "name": d.name,
        "family": d.family,
        "summary": d.summary,
        "aliases": list(d.aliases),
        "cutoff": d.cutoff,
        "inputs": list(d.inputs),
        "parameters": [
            {
                "name": p.name,
                "kind": p.kind,
                "default": None if p.default is None else format_value(p.default),
                "required": p.required,
                "description": p.description,
                **({"choices": list(p.choices)} if p.choices else {}),
                **(
                    {"applies_when": {p.applies_when[0]: [format_value(v) for v in p.applies_when[1]]}}
                    if p.applies_when
                    else {}
                ),
            }
            for p in d.params
        ],
        "formula": d.formula,
        "reference": d.reference,
        "default_follows": d.default_follows or None,
        "notes": d.notes,
    }


class FamilyRegistry(Registry):
    """A registry over the shipped families that imports a family when one of its names is resolved, or all of
    them when the catalogue is listed; it answers exactly as ``Registry`` over every family would."""

    def __init__(self, names: Mapping[str, tuple[str, ...]]) -> None:
        super().__init__(())
        self._families = tuple(names)
        self._family_of = {key: family for family, keys in names.items() for key in keys}
        # the last spelling folding to a form wins, as in Registry._folded
        self._spelling = {key.lower(): key for key in self._family_of}

    def _find(self, name: str) -> MeasureDef | None:
        key = name if name in self._family_of else self._spelling.get(name.lower())
        if key is None:
            return None
        return family_registry(self._family_of[key])._find(key)

    def _names(self) -> list[str]:
        return list(self._family_of)

    def __iter__(self) -> Iterator[MeasureDef]:
        return iter(every_family(self._families))

    def __len__(self) -> int:
        return len(every_family(self._families))


@cache
def family_registry(family: str) -> Registry:
    """One shipped family's definitions, imported on first use; a family that declares other names than
    ``catalogue.NAMES`` lists for it is refused, so a stale catalogue fails loudly instead of hiding a measure."""
    definitions = tuple(importlib.import_module(f"evaluation.measures.{family}").DEFINITIONS)
    declared = tuple(key for d in definitions for key in (d.name, *d.aliases))
    if declared != NAMES[family]:
        raise RuntimeError(f"evaluation/measures/catalogue.py is out of date for the {family} family: it lists"
                           f" {NAMES[family]}, the family declares {declared}")
    return Registry(definitions)


@cache
def every_family(families: tuple[str, ...]) -> Registry:
    """Every definition of ``families``, in order, checked for names declared twice across families."""
    return Registry(d for family in families for d in family_registry(family))


@cache
def default_registry() -> Registry:
    """The registry of every family shipped with evalserve (built once; immutable; families load on demand)."""
    return FamilyRegistry(NAMES)


def parse_measure(text: str) -> Measure:
    """Resolve a measure name with the default registry."""
    return default_registry().parse(text)
