"""What a score table was evaluated from -- judgments, runs, intent weights, side inputs and the evaluation's
policies -- for the methods that evaluate perturbed copies of the inputs rather than read the table alone
(simulated scenarios, spec 8.2; robustness to incomplete judgments, 8.8)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from evaluation.evaluator import RunScores, evaluate
from evaluation.measures.base import Measure
from evaluation.model import IntentWeights, Qrels, Run
from evaluation.side_inputs import SideInputs

if TYPE_CHECKING:  # the pipeline reads files; only its type is needed here
    from evaluation.pipeline import Inputs


@dataclass(frozen=True, eq=False)
class Sources:
    """The parsed inputs of one evaluation and its tie and topic policies."""

    qrels: Qrels
    runs: tuple[Run, ...]
    intent_weights: IntentWeights | None = None
    side: SideInputs = field(default_factory=SideInputs)
    ties: str = "trec"
    topics: str = "common"

    @classmethod
    def of(cls, inputs: Inputs, *, ties: str = "trec", topics: str = "common") -> Sources:
        return cls(inputs.qrels, tuple(inputs.runs), inputs.intent_weights, inputs.side, ties, topics)

    def evaluate(self, measures: Sequence[str | Measure], *, qrels: Qrels | None = None,
                 runs: Sequence[Run] | None = None, intent_weights: IntentWeights | None = None,
                 side: SideInputs | None = None) -> list[RunScores]:
        """Every run scored with ``measures`` under these policies; each keyword replaces one input."""
        return evaluate(self.qrels if qrels is None else qrels, list(self.runs if runs is None else runs), measures,
                        ties=self.ties, topics=self.topics,
                        intent_weights=self.intent_weights if intent_weights is None else intent_weights,
                        side=self.side if side is None else side)
