"""Per-topic scores in long format, one writer for every download that holds them (the per-topic export and the
end-of-task report's ``per-topic.csv``): one row per submission, measure and topic in the stored order, then the
measure's mean as topic ``all`` -- the rows ``evalserve evaluate --per-topic --format csv`` writes offline, text cells
escaped as it escapes them (``evaluation.csvcells``). No database, no Flask."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from evaluation.csvcells import safe_cell

#: the columns, in order (CSV header, JSON ``columns``, Parquet schema)
COLUMNS = ("submission", "team", "run", "baseline", "measure", "topic", "value")
#: the topic of a row holding a measure's mean over the topics (as the offline CLI's CSV and trec_eval write it)
MEAN_TOPIC = "all"
#: one long-format row
Row = tuple[str, str, str, bool, str, str, float]
#: bytes of CSV text gathered before a piece is handed on (streamed answers)
PIECE_BYTES = 64 * 1024


@dataclass(frozen=True)
class Exported:
    """One submission's stored scores: {measure: {topic: value}} and {measure: mean}."""

    submission: str
    team: str
    run: str
    baseline: bool
    per_topic: dict[str, dict[str, float]]
    means: dict[str, float]


def long_rows(submissions: Iterable[Exported], measures: Sequence[str]) -> Iterator[Row]:
    """Per submission, per measure, every topic in the stored order, then the mean."""
    for sub in submissions:
        for measure in measures:
            for topic, value in sub.per_topic[measure].items():
                yield sub.submission, sub.team, sub.run, sub.baseline, measure, topic, value
            yield sub.submission, sub.team, sub.run, sub.baseline, measure, MEAN_TOPIC, sub.means[measure]


def csv_pieces(rows: Iterable[Row]) -> Iterator[str]:
    """The CSV text of ``rows`` with its header, in pieces of about ``PIECE_BYTES`` (floats as ``repr``: exact;
    text cells that a spreadsheet would run escaped)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for submission, team, run, baseline, measure, topic, value in rows:
        writer.writerow([safe_cell(submission), safe_cell(team), safe_cell(run), baseline, safe_cell(measure),
                         safe_cell(topic), value])
        if buffer.tell() > PIECE_BYTES:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()
