"""Leaderboards of shared-task submissions: ranking with significance marks, rendered as JSON, CSV and LaTeX."""

from evaluation.leaderboard.ranking import (
    Entry,
    Leaderboard,
    PairMark,
    Row,
    SignificanceSettings,
    rank_entries,
    takes_rank,
)
from evaluation.leaderboard.render import to_csv, to_json, to_latex

__all__ = [
    "Entry",
    "Leaderboard",
    "PairMark",
    "Row",
    "SignificanceSettings",
    "rank_entries",
    "takes_rank",
    "to_csv",
    "to_json",
    "to_latex",
]
