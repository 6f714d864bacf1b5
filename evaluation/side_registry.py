"""The side-input kinds and prepared-input kinds evalserve knows (see ``evaluation.side_inputs``).

To add one: write its reader or builder in its own module and declare its ``SideKind`` or ``Preparer`` here,
naming the function with ``OnDemand``; the CLI, the pipeline, the evaluator and the service pick it up from these
tables. The functions' modules (the hierarchy, similarity and preference code) are imported on first call, so an
evaluation that reads no side input and prepares nothing beyond the ranking imports none of them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evaluation.formats.source import Blob
from evaluation.problems import OptionError, Parsed
from evaluation.side_inputs import Preparer, SideKind


@dataclass(frozen=True)
class OnDemand:
    """A function named by module and attribute, imported when first called (the import is cached by Python)."""

    module: str
    name: str

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(self.module), self.name)(*args, **kwargs)


#: every side-input kind (add new ones to this tuple)
_KINDS: tuple[SideKind, ...] = (
    SideKind(
        "fingerprints",
        OnDemand("evaluation.docsim.readers", "parse_fingerprints"),
        "SimHash fingerprints, one 'docno fingerprint' per line (hex, or 0b binary; 64 bits unless a '#bits=N'"
        " line comes first); read by S_sim, D_sim and similarity-built intent hierarchies",
    ),
    SideKind(
        "doc_texts",
        OnDemand("evaluation.docsim.readers", "parse_doc_texts"),
        "document texts, 'docno<TAB>text' lines or JSON Lines {\"docno\", \"text\"}; fingerprinted with evalserve's"
        " SimHash recipe when no fingerprints are given, and the source of TF-IDF vectors",
    ),
    SideKind(
        "item_scores",
        OnDemand("evaluation.formats.item_scores", "parse_item_scores"),
        "true scores of the candidate items of each topic, 'instance item score' per line (instance = topic, item ="
        " docno, score >= 0); read by nDCG_phi",
    ),
    SideKind(
        "hierarchy",
        OnDemand("evaluation.hierarchy.jsonio", "parse_hierarchies"),
        "intent hierarchies as JSON: super-intents per topic for h=SUP, SUP+WI, SUP+WD, and/or hierarchies exported"
        " by evalserve (reused when their settings match the measure's h, delta, ...) or made by hand (h=given)",
    ),
    SideKind(
        "preference_judgments",
        OnDemand("evaluation.formats.pref_judgments", "parse_preference_judgments"),
        "preference judgments, 'topic user left right winner' (pairwise) or 'topic user top left right winner'"
        " (conditional on having read top) per line; read by Prf and nPrf",
    ),
    SideKind(
        "user_profiles",
        OnDemand("evaluation.formats.user_profiles", "parse_user_profiles"),
        "user profiles, 'topic profile intent [intent ...]' per line; Prf and nPrf simulate preferences from them and"
        " the per-intent qrels when no preference judgments are given",
    ),
)
#: every prepared input beyond "adhoc" and "intents", which the evaluator builds itself (add new ones here)
_PREPARERS: tuple[Preparer, ...] = (
    Preparer("similarity", OnDemand("evaluation.measures.similarity._prepare", "build_similarity")),
    Preparer("item_scores", OnDemand("evaluation.measures.scored.inputs", "build_scored")),
    Preparer("hierarchies", OnDemand("evaluation.hierarchy.prepare", "build_hierarchy_inputs")),
    Preparer("preferences", OnDemand("evaluation.measures.preference._prepare", "build_preferences")),
)

SIDE_KINDS: dict[str, SideKind] = {k.name: k for k in _KINDS}
PREPARERS: dict[str, Preparer] = {p.name: p for p in _PREPARERS}


def side_reader(kind: str) -> Callable[[Blob], Parsed[Any]]:
    """The reader of a side-input kind."""
    found = SIDE_KINDS.get(kind)
    if found is None:
        raise OptionError(f"unknown side input {kind!r}; known: {', '.join(SIDE_KINDS) or 'none'}")
    return found.reader
