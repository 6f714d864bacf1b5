"""What one evaluation reads, parsed (``Inputs``), and what a score table was evaluated from (``Sources``).

Below both the pipeline (which builds ``Inputs``) and the meta-evaluation methods (which re-evaluate ``Sources``),
so neither has to import the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from evaluation.evaluator import RunScores, evaluate
from evaluation.measures.base import Measure
from evaluation.model import IntentWeights, Qrels, Run
from evaluation.problems import Problem
from evaluation.side_inputs import SideInputs


@dataclass
class Inputs:
    """Everything one evaluation reads, parsed and checked: judgments, optional intent weights, runs."""

    qrels: Qrels
    runs: list[Run]
    intent_weights: IntentWeights | None = None
    side: SideInputs = field(default_factory=SideInputs)
    files: dict[str, str] = field(default_factory=dict)  # file name as results show it -> sha256
    warnings: list[Problem] = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class Sources:
    """The parsed inputs of one evaluation and its tie and topic policies: what the methods that evaluate
    perturbed copies of the inputs (simulated scenarios, spec 8.2; robustness, 8.8) start from."""

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
