"""The side-input extension point: a prepared input is built once per run from the judged ranking and the side
inputs, shared by the measures that read it; a missing side input is a MeasureError naming the option."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from evaluation import evaluator as evaluator_module
from evaluation.evaluator import Evaluator
from evaluation.formats import Blob, parse_qrels, parse_run
from evaluation.measures.base import MeasureDef
from evaluation.problems import MeasureError
from evaluation.side_inputs import PrepareContext, Preparer, SideInputs

QRELS = parse_qrels(Blob.from_bytes(b"1 0 d1 1\n1 0 d2 0\n2 0 d3 2\n", "q")).unwrap()
RUN = parse_run(Blob.from_bytes(b"1 Q0 d1 1 2 t\n1 Q0 d2 2 1 t\n2 Q0 d3 1 1 t\n", "r")).unwrap()


def test_a_prepared_input_is_built_once_per_run_and_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []

    def build(ctx: PrepareContext) -> Any:
        built.append(1)
        boost = float(ctx.side.get("boost", "Boosted"))
        ctx.cache.setdefault("run-independent", boost)
        return ctx.docs.segment_sum(ctx.docs.grade.astype(np.float64)) * boost

    monkeypatch.setitem(evaluator_module.PREPARERS, "boosted", Preparer("boosted", build))
    one = MeasureDef("Boosted", "test", "x", lambda data, p, k: data, inputs=("boosted",), formula="x",
                     reference="test")
    two = MeasureDef("Twice", "test", "x", lambda data, p, k: 2 * data, inputs=("boosted",), formula="x",
                     reference="test")
    scores = Evaluator(QRELS, [one.instance(), two.instance()], side=SideInputs({"boost": 10})).evaluate(RUN)
    assert scores.values["Boosted"].tolist() == [10.0, 20.0] and scores.values["Twice"].tolist() == [20.0, 40.0]
    assert built == [1], "built once for both measures"
    with pytest.raises(MeasureError, match=r"Boosted needs boost \(--boost FILE"):
        Evaluator(QRELS, [one.instance()]).evaluate(RUN)


def test_an_unknown_input_kind_is_refused() -> None:
    odd = MeasureDef("Odd", "test", "x", lambda data, p, k: data, inputs=("nothing-like-it",), formula="x",
                     reference="test")
    with pytest.raises(MeasureError, match="input kind evalserve does not know"):
        Evaluator(QRELS, [odd.instance()])
