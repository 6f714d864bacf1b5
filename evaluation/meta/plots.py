"""Plots of meta-evaluation results (matplotlib, a dependency of every install, imported on use): ASL
curves (spec 8.4) and per-topic score distributions per run. PNG or SVG, chosen by the file name."""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evaluation.meta.table import ScoreTable
from evaluation.problems import InputError

FORMATS = ("png", "svg")


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError.single("plots-unavailable", "plots need matplotlib: pip install matplotlib") from None
    return plt


#: an ASL curve is a line through the run pairs' ASL values: it needs two pairs, three runs (C(3, 2) = 3 pairs)
CURVE_RUNS = 3


def asl_curves(doc: Mapping[str, Any], fmt: str = "png") -> bytes:
    """One curve per measure: its per-pair ASL values sorted ascending against the pair's position, with the
    significance level as a horizontal line (a curve closer to the x axis discriminates more)."""
    plt = _pyplot()
    return _save(plt, asl_figure(plt, doc), fmt)


def asl_figure(plt: Any, doc: Mapping[str, Any]) -> Any:
    """The figure of ``asl_curves``. Every pair is marked, so one pair (two runs) still shows its point, and the
    plot says in words when there are too few runs for a curve (issue 28: two runs drew an empty chart)."""
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    pairs = 0
    for measure, found in doc["discriminative_power"].items():
        asl = [v if v is not None else float("nan") for v in found["asl"]]
        pairs = max(pairs, len(asl))
        ax.plot(range(1, len(asl) + 1), asl, marker="o", markersize=3,
                label=f"{measure} ({_power(found['proportion'])})")
    ax.axhline(doc["alpha"], color="grey", linestyle="--", linewidth=0.8)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("run pairs, sorted by ASL")
    ax.set_ylabel("achieved significance level")
    ax.set_title(f"ASL curves (paired bootstrap, B = {doc['resamples']}, {doc['topics']} topics)")
    if pairs < 2:
        ax.set_xticks(range(1, pairs + 1))
        ax.set_xlim(0, 2)
        runs = len(doc.get("runs") or ()) or (2 if pairs else 1)
        ax.text(0.5, 0.5, f"{runs} runs, {pairs} run pair{'' if pairs == 1 else 's'}: an ASL curve needs at least"
                f" {CURVE_RUNS} runs", transform=ax.transAxes, ha="center", va="center", fontsize="medium",
                color="dimgrey", wrap=True)
    if doc["discriminative_power"]:
        ax.legend(fontsize="small", title="measure (power)")
    return fig


def _power(proportion: float | None) -> str:
    return "n/a" if proportion is None else f"{proportion:.2f}"


#: a score-distribution plot draws at most this many measures (the first ones): one panel each, and a panel of
#: 100 runs is already a large image (200 panels would take minutes and gigabytes to draw)
MAX_PLOTTED_MEASURES = 8


def score_distributions(table: ScoreTable, fmt: str = "png") -> bytes:
    """Per measure (the first ``MAX_PLOTTED_MEASURES``), a box plot of each run's per-topic scores."""
    plt = _pyplot()
    return _save(plt, distribution_figure(plt, table), fmt)


def distribution_figure(plt: Any, table: ScoreTable) -> Any:
    """The figure of ``score_distributions``: boxes (median line, quartiles, whiskers) with the mean marked, and
    a legend saying which mark is which (issue 28: mean and median were told apart by nothing)."""
    shown = ""
    if len(table.measures) > MAX_PLOTTED_MEASURES:
        shown = f", the first {MAX_PLOTTED_MEASURES} of {len(table.measures)} measures"
        table = table.select(list(table.measures[:MAX_PLOTTED_MEASURES]))
    n = len(table.measures)
    fig, axes = plt.subplots(n, 1, figsize=(max(6, 0.6 * len(table.runs) + 2), 2.8 * n), dpi=110, squeeze=False)
    for i, measure in enumerate(table.measures):
        ax = axes[i][0]
        drawn = ax.boxplot([row for row in table.values[i]], showmeans=True)
        ax.set_xticks(range(1, len(table.runs) + 1), table.runs, rotation=30, ha="right", fontsize="small")
        ax.set_ylabel(measure)
        if i == 0 and drawn["medians"] and drawn["means"]:
            ax.legend([drawn["medians"][0], drawn["means"][0]], ["median", "mean"], fontsize="small",
                      loc="best", framealpha=0.8)
    fig.suptitle(f"per-topic scores ({len(table.topics)} topics{shown})")
    return fig


def _save(plt: Any, fig: Any, fmt: str) -> bytes:
    if fmt not in FORMATS:
        raise InputError.single("plot-format", f"plots are {' or '.join(FORMATS)}, not {fmt!r}")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt)
    plt.close(fig)
    return buffer.getvalue()


def plot_document(doc: Mapping[str, Any], table: ScoreTable | None, path: Path) -> None:
    """Draw what suits the document (ASL curves for discriminative power, score distributions otherwise) to a
    file whose extension gives the format."""
    fmt = path.suffix.lstrip(".").lower() or "png"
    if "discriminative_power" in doc:
        data = asl_curves(doc, fmt)
    elif table is not None:
        data = score_distributions(table, fmt)
    else:
        raise InputError.single("plot-unavailable", "this result has no plot")
    path.write_bytes(data)
