"""The side-input kinds and prepared-input kinds evalserve knows (see ``evaluation.side_inputs``).

To add one: declare its ``SideKind`` (reader) or ``Preparer`` in its own module and list it here; the CLI,
the pipeline, the evaluator and the service pick it up from these tables.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evaluation.docsim.side import DOC_TEXTS, FINGERPRINTS, SIMILARITY
from evaluation.formats.source import Blob
from evaluation.hierarchy.prepare import HIERARCHIES, HIERARCHY
from evaluation.measures.scored.inputs import ITEM_SCORES, SCORED
from evaluation.preference.side import PREFERENCE_JUDGMENTS, PREFERENCES, USER_PROFILES
from evaluation.problems import Parsed
from evaluation.side_inputs import Preparer, SideKind

#: every side-input kind (add new ones to this tuple)
_KINDS: tuple[SideKind, ...] = (
    FINGERPRINTS,
    DOC_TEXTS,
    ITEM_SCORES,
    HIERARCHY,
    PREFERENCE_JUDGMENTS,
    USER_PROFILES,
)
#: every prepared input beyond "adhoc" and "intents", which the evaluator builds itself (add new ones here)
_PREPARERS: tuple[Preparer, ...] = (
    SIMILARITY,
    SCORED,
    HIERARCHIES,
    PREFERENCES,
)

SIDE_KINDS: dict[str, SideKind] = {k.name: k for k in _KINDS}
PREPARERS: dict[str, Preparer] = {p.name: p for p in _PREPARERS}


def side_reader(kind: str) -> Callable[[Blob], Parsed[Any]]:
    """The reader of a side-input kind."""
    found = SIDE_KINDS.get(kind)
    if found is None:
        raise ValueError(f"unknown side input {kind!r}; known: {', '.join(SIDE_KINDS) or 'none'}")
    return found.reader
