"""The preference side-input kinds (listed in ``evaluation.side_registry``): ``preference_judgments`` and
``user_profiles``; and the ``preferences`` prepared input of Prf and nPrf
(``evaluation.measures.preference._prepare``).

Kept out of ``evaluation.preference``'s package imports so the estimation layer does not import the evaluator's
side-input machinery.
"""

from __future__ import annotations

from evaluation.formats.pref_judgments import parse_preference_judgments
from evaluation.formats.user_profiles import parse_user_profiles
from evaluation.measures.preference._prepare import JUDGMENTS, NAME, PROFILES, build_preferences
from evaluation.side_inputs import Preparer, SideKind

PREFERENCE_JUDGMENTS = SideKind(
    JUDGMENTS,
    parse_preference_judgments,
    "preference judgments, 'topic user left right winner' (pairwise) or 'topic user top left right winner'"
    " (conditional on having read top) per line; read by Prf and nPrf",
)

USER_PROFILES = SideKind(
    PROFILES,
    parse_user_profiles,
    "user profiles, 'topic profile intent [intent ...]' per line; Prf and nPrf simulate preferences from them and"
    " the per-intent qrels when no preference judgments are given",
)

PREFERENCES = Preparer(NAME, build_preferences)
