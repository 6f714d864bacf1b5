"""The canonical in-memory model: judgments, runs and intent weights as flat numpy arrays with interned ids.

Every reader produces these; every measure consumes views derived from them (spec section 1.1). Rows are
kept in flat arrays (one element per judgment or per retrieved document) so measures can work on all topics
at once instead of looping over topics in Python.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
#: row, topic or entry numbers used as indices: int32 where they fit (half the memory of int64 on runs of millions
#: of rows), int64 otherwise
IndexArray = npt.NDArray[np.signedinteger[Any]]

#: key in ``Run.derived``: the readers' hashes of the (read-only) docnos, reused by the join with the qrels
DOCNO_HASHES = "docno_hashes"
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class Qrels:
    """Graded judgments ``(topic, intent, docno) -> grade``; ad hoc qrels have a single intent per topic.

    Rows are sorted by (topic, docno, intent) and unique on that key. ``docnos`` is the sorted vocabulary
    of judged documents (byte strings), ``topics`` and ``intents`` are sorted label vocabularies.
    """

    topics: tuple[str, ...]
    intents: tuple[str, ...]
    docnos: np.ndarray  # S dtype, sorted unique
    topic: IntArray
    intent: IntArray
    doc: IntArray
    grade: IntArray
    name: str = "<qrels>"
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return int(self.grade.size)

    @cached_property
    def topic_index(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.topics)}

    @cached_property
    def adhoc(self) -> AdhocJudgments:
        """Single-aspect view: each judged (topic, doc) with its maximum grade over intents (spec 1.6)."""
        key = self.topic * np.int64(max(1, self.docnos.size)) + self.doc
        if key.size == 0:
            empty = np.zeros(0, dtype=np.int64)
            return AdhocJudgments(empty, empty, empty, np.zeros(len(self.topics) + 1, dtype=np.int64), empty)
        boundary = np.flatnonzero(np.diff(key)) + 1
        starts = np.concatenate(([0], boundary)).astype(np.int64)
        grade = np.maximum.reduceat(self.grade, starts)
        ukey = key[starts]
        topic = self.topic[starts]
        offsets = np.searchsorted(topic, np.arange(len(self.topics) + 1)).astype(np.int64)
        return AdhocJudgments(ukey, topic, grade.astype(np.int64), offsets, starts)

    @cached_property
    def max_grade(self) -> int:
        return int(self.grade.max()) if self.grade.size else 0


@dataclass(frozen=True, eq=False)
class AdhocJudgments:
    """Per (topic, doc) judgments sorted by key = topic * n_docnos + doc; ``offsets`` delimit topics."""

    key: IntArray
    topic: IntArray
    grade: IntArray
    offsets: IntArray
    row_start: IntArray  # first qrels row of each entry (rows of one entry = its per-intent judgments)

    @cached_property
    def ideal_grades(self) -> IntArray:
        """Each topic's judged grades sorted descending (topic segments as in ``offsets``): counted -- how many
        judgments of each grade each topic has, in order -- when topics and grades span few values (always, for
        topic numbers), else one packed sort."""
        if self.grade.size == 0:
            return self.grade.copy()
        low, high = int(self.grade.min()), int(self.grade.max())
        first, last = int(self.topic[0]), int(self.topic[-1])  # topic is sorted
        levels = high - low + 1
        cells = (last - first + 1) * levels
        if cells <= 4 * self.grade.size + 1024:
            counts = np.bincount((self.topic - first) * levels + (high - self.grade), minlength=cells)
            descending = np.arange(high, low - 1, -1, dtype=self.grade.dtype)
            counted: IntArray = np.repeat(np.tile(descending, last - first + 1), counts)
            return counted
        grade_bits = (high - low).bit_length()
        if int(self.topic[-1]).bit_length() + grade_bits > 62:  # (topic is sorted: its last is its largest)
            return self.grade[np.lexsort((-self.grade, self.topic))]
        # only the values are returned, so one plain sort of (topic, grade descending) packed in a word does
        packed = self.topic << grade_bits
        packed |= high - self.grade
        packed.sort()
        packed &= (1 << grade_bits) - 1
        return high - packed


@dataclass(frozen=True, eq=False)
class Run:
    """One system's ranked results as read: rows in file order, scores, rank column and document ids."""

    name: str
    topics: tuple[str, ...]  # sorted unique topic labels of this run
    topic: IntArray  # per row, index into topics
    docno: np.ndarray  # S dtype, per row
    score: FloatArray
    rank: IntArray  # rank column (value 0 where it was not an integer)
    tags: tuple[str, ...] = ()
    ranks_valid: bool = True  # every rank field was an integer (needed by ties=rank)
    #: values computed from this immutable object and kept with it (e.g. docno hashes, join indexes)
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return int(self.score.size)


@dataclass(frozen=True, eq=False)
class IntentWeights:
    """Intent probabilities ``P(t|q)`` per (topic, intent); topics without an entry get uniform weights."""

    weights: dict[str, dict[str, float]]
    name: str = "<intent-weights>"

    def for_topic(self, topic: str) -> dict[str, float] | None:
        return self.weights.get(topic)


def derive(owner: Qrels | Run, key: str, make: Callable[[], Any]) -> Any:
    """A value computed once from an immutable Qrels or Run and cached on it (no module-level caches)."""
    if key not in owner.derived:
        owner.derived[key] = make()
    return owner.derived[key]
