"""The prepared input ``item_scores`` that nDCG_phi reads (declared, with the side input of the same name, in
``evaluation.side_registry``): the run's ranking joined with the items' true scores.

Imported only when the registry's preparer is first called (the side-input machinery imports the measures, not
the reverse).
"""

from __future__ import annotations

from evaluation.formats.item_scores import ItemScores
from evaluation.measures.scored.items import ItemPool, ScoredRanking, join_scores
from evaluation.measures.scored.ndcg_phi import INPUT
from evaluation.side_inputs import PrepareContext


def build_scored(ctx: PrepareContext) -> ScoredRanking:
    """Join the run's documents with their true scores; the pools of the evaluated topics (and the relevance
    functions fitted on them) are built once per evaluator and shared by every run."""
    table: ItemScores = ctx.side.get(INPUT, "nDCG_phi")
    key = (INPUT, id(table), ctx.docs.topics)
    pool = ctx.cache.get(key)
    if pool is None:
        pool = ctx.cache[key] = ItemPool.of(table, ctx.docs.topics)
    return join_scores(ctx.docs, ctx.docnos(), pool)

