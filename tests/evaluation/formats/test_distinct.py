"""``sorted_distinct`` is ``np.unique`` for integer and bytes arrays, and an evaluation never pays for
``numpy.ma`` (which NumPy's plain ``unique`` imports on its first call)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from evaluation.formats.distinct import sorted_distinct
from tests.evalserve.test_startup_imports import SAMPLES, run_cli


@given(st.lists(st.integers(-(2**40), 2**40), max_size=60))
def test_integers_as_numpy_unique(values: list[int]) -> None:
    a = np.array(values, dtype=np.int64)
    assert np.array_equal(sorted_distinct(a), np.unique(a)) and sorted_distinct(a).dtype == a.dtype


@given(st.lists(st.binary(max_size=9), max_size=40))
def test_bytes_as_numpy_unique(values: list[bytes]) -> None:
    a = np.array(values, dtype="S9")
    assert np.array_equal(sorted_distinct(a), np.unique(a))


def test_an_evaluation_does_not_import_numpy_ma(tmp_path: Path) -> None:
    for measures in (["P@10", "AP", "nDCG@10"], ["alpha_nDCG@10", "ERR_IA@20", "P_IA@5"]):
        found = run_cli(tmp_path, "evaluate", "--qrels", str(SAMPLES / "sample.qrels"), "--run",
                        str(SAMPLES / "bm25.run"), "-m", *measures)
        assert found["code"] == 0 and "numpy.ma" not in found["modules"], measures
