"""Did-you-mean for every near-miss measure name (issue 28: ``ncdg_cut.10`` got no suggestion while other typos
did): trec_eval spellings keep their parameters and separator, ir_measures spellings their parameters and
cutoff, case is ignored (``evaluation/measures/suggest.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalserve.cli.main import main
from evaluation.measures.registry import default_registry
from evaluation.measures.suggest import close_names
from evaluation.problems import MeasureError


def _message(name: str) -> str:
    with pytest.raises(MeasureError) as info:
        default_registry().parse_all([name])
    return str(info.value)


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("ncdg_cut.10", "ndcg_cut.10"),  # the issue's case: unreadable before, now a suggestion
        ("ncdg_cut_10", "ndcg_cut_10"),
        ("ncdg_cut.5,10", "ndcg_cut.5,10"),
        ("recal_10", "recall_10"),
        ("succes_1", "success_1"),
        ("map_cit.100", "map_cut.100"),
        ("iprec_at_recal_0.10", "iprec_at_recall_0.10"),
        ("recip_rnk", "recip_rank"),
        ("ndgc", "nDCG"),  # case ignored
        ("nDGC@10", "nDCG@10"),
        ("nDGC(gain=exp)@10", "nDCG(gain=exp)@10"),
        ("alpha_nDGC@20", "alpha_nDCG@20"),
        ("Presicion@5", "Precision@5"),
    ],
)
def test_a_near_miss_gets_the_name_as_it_would_be_written(typo: str, meant: str) -> None:
    message = _message(typo)
    assert "did you mean" in message, message
    assert meant in message.split("did you mean ", 1)[1].removesuffix("?").split(" or "), message
    default_registry().parse_all([meant])  # and the suggestion is accepted as written


def test_the_issue_example_reads() -> None:
    assert _message("ncdg_cut.10") == "unknown measure 'ncdg_cut.10'; did you mean ndcg_cut.10?"


def test_nothing_close_points_to_the_catalogue() -> None:
    assert close_names("Zzyzx@10", default_registry()._names()) == []
    assert _message("Zzyzx@10") == "unknown measure 'Zzyzx'; `evalserve measures` lists them all"


@pytest.mark.parametrize("name", ["nDCG(gain=exp@10", "P@0", "P@x", "ndcg_cut.x"])
def test_a_known_name_misspelt_elsewhere_gets_no_suggestion(name: str) -> None:
    assert "did you mean" not in _message(name)


def test_evaluate_prints_the_suggestion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n")
    (tmp_path / "a.run").write_text("1 Q0 d1 1 1.0 a\n")
    code = main(["evaluate", "--qrels", str(tmp_path / "qrels.txt"), "--run", str(tmp_path / "a.run"),
                 "-m", "ncdg_cut.10"])
    assert code == 2
    assert "did you mean ndcg_cut.10?" in capsys.readouterr().err
