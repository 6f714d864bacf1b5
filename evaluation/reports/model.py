"""What a report shows, as plain data: built by ``evaluation.reports.content.build`` (which computes), stored as
JSON (``ReportContent.to_json`` / ``from_json``) and typeset by the renderers, which compute nothing.

Only the standard library here, so that rendering stored content loads neither numpy, scipy nor the axioms.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: the layout of ``ReportContent.to_json``; ``from_json`` refuses another
CONTENT_VERSION = 1


@dataclass(frozen=True)
class Table:
    """A table of strings; ``marked`` cells (row, column) are highlighted (the best score, a significant test)."""

    caption: str | None
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    marked: frozenset[tuple[int, int]] = frozenset()

    def numeric(self, column: int) -> bool:
        """Whether every cell of ``column`` is a number (or '-'): typeset right-aligned."""
        cells = [row[column] for row in self.rows]
        return bool(cells) and all(_is_number(c) for c in cells)

    def to_json(self) -> dict[str, Any]:
        return {"caption": self.caption, "header": list(self.header), "rows": [list(r) for r in self.rows],
                "marked": [list(cell) for cell in sorted(self.marked)]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Table:
        return cls(data["caption"], tuple(data["header"]), tuple(tuple(r) for r in data["rows"]),
                   frozenset((int(i), int(j)) for i, j in data["marked"]))


@dataclass(frozen=True)
class MeasureInfo:
    """One measure as the registry describes it; ``known`` is False for a name this server does not register."""

    name: str  # as requested (the result's key)
    canonical: str
    summary: str = ""
    formula: str = ""
    reference: str = ""
    notes: str = ""
    follows: str = ""
    known: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "canonical": self.canonical, "summary": self.summary, "formula": self.formula,
                "reference": self.reference, "notes": self.notes, "follows": self.follows, "known": self.known}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MeasureInfo:
        return cls(data["name"], data["canonical"], data["summary"], data["formula"], data["reference"],
                   data["notes"], data["follows"], bool(data["known"]))


@dataclass(frozen=True)
class AxiomRow:
    """The axiomatic profile of one measure as used: constraint -> status (satisfied, violated, not_applicable,
    not_evaluable), or empty with a note saying why none was computed."""

    name: str
    form: str
    statuses: Mapping[str, str] = field(default_factory=dict)
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "form": self.form, "statuses": dict(self.statuses), "note": self.note}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AxiomRow:
        return cls(data["name"], data["form"], dict(data["statuses"]), data["note"])


@dataclass(frozen=True)
class Section:
    """A titled part of the report: paragraphs then tables."""

    title: str
    paragraphs: tuple[str, ...] = ()
    tables: tuple[Table, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "paragraphs": list(self.paragraphs), "tables": [t.to_json() for t in self.tables]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Section:
        return cls(data["title"], tuple(data["paragraphs"]), tuple(Table.from_json(t) for t in data["tables"]))


@dataclass(frozen=True)
class ReportContent:
    """Everything a report shows, as plain strings (renderers escape them); ``constraints`` are the axiomatic
    constraints' (name, summary) in the order of the profile table."""

    title: str
    settings: tuple[tuple[str, str], ...]
    warnings: tuple[str, ...]
    scores: Section | None
    results: Section | None  # a meta-evaluation's own tables
    significance: Section | None
    measures: tuple[MeasureInfo, ...]
    axioms: tuple[AxiomRow, ...]
    axioms_note: str
    constraints: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """JSON-ready: a worker stores it and anyone renders it later (``from_json``) without computing."""
        return {
            "version": CONTENT_VERSION,
            "title": self.title,
            "settings": [list(kv) for kv in self.settings],
            "warnings": list(self.warnings),
            "scores": _section_json(self.scores),
            "results": _section_json(self.results),
            "significance": _section_json(self.significance),
            "measures": [m.to_json() for m in self.measures],
            "axioms": [a.to_json() for a in self.axioms],
            "axioms_note": self.axioms_note,
            "constraints": [list(c) for c in self.constraints],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReportContent:
        """The content ``to_json`` gave; ValueError for another layout version."""
        if not isinstance(data, Mapping) or data.get("version") != CONTENT_VERSION:
            raise ValueError(f"not report content of version {CONTENT_VERSION}")  # internal: stored by an older version
        return cls(
            title=data["title"],
            settings=tuple((str(k), str(v)) for k, v in data["settings"]),
            warnings=tuple(data["warnings"]),
            scores=_section(data["scores"]),
            results=_section(data["results"]),
            significance=_section(data["significance"]),
            measures=tuple(MeasureInfo.from_json(m) for m in data["measures"]),
            axioms=tuple(AxiomRow.from_json(a) for a in data["axioms"]),
            axioms_note=data["axioms_note"],
            constraints=tuple((str(n), str(s)) for n, s in data["constraints"]),
        )


def _section_json(section: Section | None) -> dict[str, Any] | None:
    return None if section is None else section.to_json()


def _section(data: Mapping[str, Any] | None) -> Section | None:
    return None if data is None else Section.from_json(data)


def _is_number(text: str) -> bool:
    if text == "-":
        return True
    try:
        float(text)
    except ValueError:
        return False
    return True
