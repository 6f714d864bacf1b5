"""Inputs beyond judgments and runs that some measures need (spec 2.9, 4, 5, 6): item scores, document
fingerprints or texts, intent hierarchies, preference judgments, user profiles.

Each *side-input kind* is a ``SideKind`` (name, reader, description) listed in ``evaluation.side_registry``;
the CLI derives its ``--<kind>`` options, the pipeline its reading, and the service its collection upload
fields from that table, so adding a kind touches no other module. A measure that needs one names a *prepared
input* (a ``Preparer``, also listed there) in ``MeasureDef.inputs``: a function from the run's judged ranking
and the side inputs to what the measure's kernel reads, built once per run and shared by the measures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evaluation.formats.source import Blob
from evaluation.judged_ranking import JudgedRanking
from evaluation.model import Qrels
from evaluation.problems import MeasureError, Parsed
from evaluation.ranking import Ranking


@dataclass(frozen=True)
class SideKind:
    """A kind of side input: its name (``item_scores``), how to read a file of it, and what it holds."""

    name: str
    reader: Callable[[Blob], Parsed[Any]]
    description: str

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class SideInputs:
    """The side inputs of one evaluation, parsed, keyed by kind."""

    values: Mapping[str, Any] = field(default_factory=dict)

    def get(self, kind: str, measure: str = "this measure") -> Any:
        """The parsed input of ``kind``; a MeasureError naming the missing file when it was not given."""
        if kind not in self.values:
            flag = "--" + kind.replace("_", "-")
            raise MeasureError(f"{measure} needs {kind.replace('_', ' ')} ({flag} FILE, or the collection's"
                               f" '{kind}' file)")
        return self.values[kind]

    def __contains__(self, kind: str) -> bool:
        return kind in self.values


@dataclass
class PrepareContext:
    """What a preparer may read: the run's judged ranking, the qrels, the side inputs, and a per-evaluator cache
    for run-independent work (e.g. hierarchies built from the qrels once for all runs)."""

    docs: JudgedRanking
    qrels: Qrels
    side: SideInputs
    cache: dict[object, Any]
    prepared: Callable[[str], Any]  # another prepared input of the same run (e.g. "intents")
    #: the run as ranked, for inputs keyed by docno that unjudged documents need too (see ``docnos``)
    ranking: Ranking | None = None

    def docnos(self) -> np.ndarray:
        """The docno (``S`` bytes) of every retrieved document of ``docs``, aligned with it: the ranking's rows
        of the evaluated topics, in order (``judge_ranking`` keeps them in the same order)."""
        if self.ranking is None:
            # internal: only preparers of inputs keyed by docno call it, given the ranking
            raise ValueError("this context was built without the run's ranking")
        run, order = self.ranking.run, self.ranking.order
        if self.docs.topics != run.topics:
            wanted = set(self.docs.topics)
            evaluated = np.array([t in wanted for t in run.topics], dtype=bool)
            order = order[evaluated[run.topic[order]]] if order.size else order
        return run.docno[order]


@dataclass(frozen=True)
class Preparer:
    """A prepared-input kind: its name (as measures list it in ``inputs``) and how to build it for one run."""

    name: str
    build: Callable[[PrepareContext], Any]
