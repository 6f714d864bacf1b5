"""Warnings about what the requested measures mean on the given judgments, said once per evaluation (not per run)
in ``meta.warnings``, on the CLI's stderr and in a job's result alike.

``single-intent``: a diversity measure (one whose input is ``intents``: alpha-nDCG, ERR-IA, D#-nDCG, ...) over
judgments with one intent per topic -- ad hoc qrels -- sees no subtopics, so it scores relevance only: the
novelty-based ones (alpha-nDCG, NRBP, ...) become an nDCG-like measure whose gains shrink with each relevant
document ranked above, the intent-aware ones (-IA) their ad hoc measure (spec 4, the diversity measures). The
number is right and easy to mistake for a diversity score (issue 28: alpha_nDCG@20 = 0.994 with no word).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evaluation.formats.distinct import sorted_distinct
from evaluation.measures.base import Measure
from evaluation.model import Qrels
from evaluation.problems import Problem

SINGLE_INTENT = "single-intent"


def measure_notes(qrels: Qrels, measures: Sequence[Measure]) -> list[Problem]:
    """The warnings the measures call for on these judgments (none when every measure fits them)."""
    diversity = [m.label for m in measures if "intents" in m.definition.inputs]
    if not diversity or _most_intents(qrels) > 1:
        return []
    these = "this diversity measure sees no subtopics and scores" if len(diversity) == 1 else \
        "these diversity measures see no subtopics and score"
    return [Problem(
        SINGLE_INTENT,
        f"{', '.join(diversity)}: every topic of the judgments has one intent (ad hoc qrels), so {these}"
        " relevance only: alpha-nDCG and the other novelty-based measures become an"
        " nDCG-like measure whose gains shrink with each relevant document ranked above, the intent-aware ones"
        " (-IA) their ad hoc measure; judgments with subtopics (`qid intent docno grade`, as ndeval reads them)"
        " measure diversity",
        "warning",
        source=qrels.name,
    )]


def _most_intents(qrels: Qrels) -> int:
    """The largest number of distinct intents judged for one topic (0 without judgments)."""
    if len(qrels) == 0:
        return 0
    width = np.int64(max(1, len(qrels.intents)))
    pairs = sorted_distinct(qrels.topic * width + qrels.intent)  # not np.unique, which imports numpy.ma
    return int(np.bincount(pairs // width).max())
