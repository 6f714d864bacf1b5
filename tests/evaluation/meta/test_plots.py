"""Plots degrade gracefully (issue 28): a discriminative-power plot of two runs (one pair: no curve to draw) marks
its point and says in the plot that a curve needs at least three runs, instead of an empty chart; the per-topic
box plots have a legend telling the median from the mean (``evaluation/meta/plots.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalserve.cli.main import main
from evaluation.meta import plots
from evaluation.meta.table import ScoreTable

QRELS = "".join(f"{t} 0 d{t}{i} {i % 2}\n" for t in range(1, 9) for i in range(6))


def _run(path: Path, shift: int) -> Path:
    path.write_text("".join(f"{t} Q0 d{t}{(i + shift * t) % 6} {i + 1} {10 - i} r\n" for t in range(1, 9)
                            for i in range(6)))
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "qrels.txt").write_text(QRELS)
    return {"qrels": tmp_path / "qrels.txt", "a": _run(tmp_path / "a.run", 0), "b": _run(tmp_path / "b.run", 1),
            "c": _run(tmp_path / "c.run", 2)}


def _power(files: dict[str, Path], capsys: pytest.CaptureFixture[str], *runs: str) -> dict[str, Any]:
    args = ["meta", "discriminative-power", "--qrels", str(files["qrels"]), "-m", "AP", "P@5", "--resamples", "200"]
    for run in runs:
        args += ["--run", str(files[run])]
    capsys.readouterr()
    assert main(args) == 0
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return document


def _notes(fig: Any) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def test_two_runs_mark_their_pair_and_say_a_curve_needs_three(files: dict[str, Path],
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    plt = plots._pyplot()
    fig = plots.asl_figure(plt, _power(files, capsys, "a", "b"))
    assert _notes(fig) == ["2 runs, 1 run pair: an ASL curve needs at least 3 runs"]
    curves = [line for line in fig.axes[0].get_lines() if len(line.get_xdata()) == 1]  # not the alpha line
    assert len(curves) == 2 and all(line.get_marker() == "o" for line in curves), "each measure's one point shows"
    plt.close(fig)


def test_three_runs_draw_curves_without_a_note(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    plt = plots._pyplot()
    fig = plots.asl_figure(plt, _power(files, capsys, "a", "b", "c"))
    assert _notes(fig) == []
    plt.close(fig)


def test_the_plot_file_of_two_runs_is_written(files: dict[str, Path], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "power.png"
    assert main(["meta", "discriminative-power", "--qrels", str(files["qrels"]), "--run", str(files["a"]),
                 "--run", str(files["b"]), "-m", "AP", "--resamples", "100", "--plot", str(out)]) == 0
    assert out.read_bytes().startswith(b"\x89PNG")


def test_box_plots_tell_the_median_from_the_mean(files: dict[str, Path], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["evaluate", "--qrels", str(files["qrels"]), "--run", str(files["a"]), "--run", str(files["b"]),
                 "-m", "AP", "P@5", "--per-topic"]) == 0
    table = ScoreTable.from_document(json.loads(capsys.readouterr().out))
    plt = plots._pyplot()
    fig = plots.distribution_figure(plt, table)
    legend = fig.axes[0].get_legend()
    assert legend is not None and [t.get_text() for t in legend.get_texts()] == ["median", "mean"]
    assert all(ax.get_legend() is None for ax in fig.axes[1:]), "one legend, on the first panel"
    plt.close(fig)
