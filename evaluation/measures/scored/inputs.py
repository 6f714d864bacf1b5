"""The ``item_scores`` side input (listed in ``evaluation.side_registry``) and the prepared input of the same
name that nDCG_phi reads: the run's ranking joined with the items' true scores.

Imported only by the side-input registry (the side-input machinery imports the measures, not the reverse).
"""

from __future__ import annotations

from evaluation.formats.item_scores import ItemScores, parse_item_scores
from evaluation.measures.scored.items import ItemPool, ScoredRanking, join_scores
from evaluation.measures.scored.ndcg_phi import INPUT
from evaluation.side_inputs import PrepareContext, Preparer, SideKind

ITEM_SCORES = SideKind(
    "item_scores",
    parse_item_scores,
    "true scores of the candidate items of each topic, 'instance item score' per line (instance = topic, item ="
    " docno, score >= 0); read by nDCG_phi",
)


def build_scored(ctx: PrepareContext) -> ScoredRanking:
    """Join the run's documents with their true scores; the pools of the evaluated topics (and the relevance
    functions fitted on them) are built once per evaluator and shared by every run."""
    table: ItemScores = ctx.side.get(ITEM_SCORES.name, "nDCG_phi")
    key = (INPUT, id(table), ctx.docs.topics)
    pool = ctx.cache.get(key)
    if pool is None:
        pool = ctx.cache[key] = ItemPool.of(table, ctx.docs.topics)
    return join_scores(ctx.docs, ctx.docnos(), pool)


SCORED = Preparer(INPUT, build_scored)
