"""trec_eval's ``relstring``: per topic, the judgments of the top documents as one character each (m_relstring.c)
-- the grade 0-9, ``>`` above 9, ``-`` not in the qrels, ``.`` a negative grade (in the pool, unjudged). A string,
not a number: it is no registered measure; ``evalserve trec_eval`` prints it as trec_eval does (``'0011-.'``)."""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from evaluation.judged_ranking import JudgedRanking, evaluated_topics, judge_ranking
from evaluation.model import Qrels, Run
from evaluation.ranking import rank_run

#: trec_eval's default depth (``-m relstring`` = ``-m relstring.10``)
DEFAULT_DEPTH = 10


def relstrings(data: JudgedRanking, depth: int = DEFAULT_DEPTH) -> list[str]:
    """Each evaluated topic's relstring over its first ``depth`` documents (empty for a topic with none)."""
    picked = data.top(max(depth, 0))
    grade, judged = data.grade[picked], data.judged[picked]
    codes = np.where(grade > 9, ord(">"), ord("0") + np.clip(grade, 0, 9)).astype(np.uint8)
    codes[judged & (grade < 0)] = ord(".")
    codes[~judged] = ord("-")
    text = codes.tobytes().decode("ascii")
    bounds = np.concatenate(([0], np.cumsum(np.minimum(np.diff(data.offsets), max(depth, 0))))).tolist()
    return [text[start:end] for start, end in pairwise(bounds)]


def run_relstrings(qrels: Qrels, run: Run, depth: int = DEFAULT_DEPTH, *, ties: str = "trec",
                   topics: str = "common") -> dict[str, str]:
    """topic -> relstring of a run, over the topics the policy evaluates, ranked by the tie policy."""
    chosen = evaluated_topics(qrels, run.topics, topics)
    data = judge_ranking(qrels, rank_run(run, ties), chosen)
    return dict(zip(chosen, relstrings(data, depth)))
