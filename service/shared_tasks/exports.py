"""The per-topic export of a task (issue 30): every submission a leaderboard shows (each participant's chosen or
latest one, or all of them; the latest baseline too) with its score on every topic under each official measure, in
long format -- one row per (submission, measure, topic), the mean as topic ``all`` as ``evalserve evaluate
--per-topic`` writes it offline -- read from the evaluations' stored results (nothing is computed per request).
Flask-free; who may export is decided in one place (``may_export``)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from evalserve.service.core.errors import ServiceError
from evalserve.service.core.etags import etag_of
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.shared_tasks.access import TaskAccess, task_access
from evalserve.service.shared_tasks.leaderboard import candidates, judgments_version, phase_named, shown
from evalserve.service.shared_tasks.per_topic_rows import COLUMNS, MEAN_TOPIC, Exported, Row, csv_pieces, long_rows
from evalserve.service.store.blobs import BlobStore
from evalserve.service.store.models import Token, as_utc, utcnow

FORMATS = ("csv", "json", "parquet")
MEDIA = {"csv": "text/csv", "json": "application/json", "parquet": "application/vnd.apache.parquet"}
INSTALL_PARQUET = "pip install 'evalserve[parquet]'"


def may_export(access: TaskAccess) -> None:
    """Who may download a task's per-topic scores: its organisers, and anyone who can see the task once it is
    finalised with ``per_topic: public``; 403 ``organisers-only`` otherwise."""
    final = access.task.final if access.task.finalised_at is not None else None
    if not access.organiser and not (final and final.get("per_topic") == "public"):
        raise ServiceError(403, ProblemCode.ORGANISERS_ONLY, f"only the organisers of task {access.task.id} may"
                           " export every submission's per-topic scores")


@dataclass(frozen=True)
class PerTopicExport:
    """A task's per-topic export: which board (phase, version, selection), its measures and submissions."""

    task: str
    phase: str | None
    version: int
    selection: str
    measures: list[str]
    submissions: list[Exported]
    tag: str

    def rows(self) -> Iterator[Row]:
        """The long-format rows (``per_topic_rows.long_rows``)."""
        return long_rows(self.submissions, self.measures)

    def csv_lines(self) -> Iterator[str]:
        """The CSV text, in pieces (streamed)."""
        return csv_pieces(self.rows())

    def json_text(self) -> str:
        """The JSON document: the board's context, ``columns`` and ``rows`` in long format."""
        return json.dumps({"task": self.task, "phase": self.phase, "version": self.version,
                           "selection": self.selection, "measures": self.measures, "mean_topic": MEAN_TOPIC,
                           "columns": list(COLUMNS), "rows": [list(row) for row in self.rows()]}) + "\n"

    def parquet_bytes(self) -> bytes:
        """A Parquet file of the rows (pyarrow, the ``[parquet]`` extra; 422 ``parquet-unavailable`` without)."""
        try:
            import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]
            import pyarrow.parquet as pq  # type: ignore[import-untyped,unused-ignore]
        except ImportError as exc:
            raise ServiceError(422, ProblemCode.PARQUET_UNAVAILABLE, "Parquet needs pyarrow, which this server does"
                               f" not have: its operator may install it ({INSTALL_PARQUET}); format=csv and"
                               " format=json need nothing") from exc
        columns = list(zip(*self.rows(), strict=True)) or [()] * len(COLUMNS)
        types = [pa.string(), pa.string(), pa.string(), pa.bool_(), pa.string(), pa.string(), pa.float64()]
        table = pa.table({name: pa.array(list(values), type=kind)
                          for name, values, kind in zip(COLUMNS, columns, types, strict=True)})
        sink = io.BytesIO()
        pq.write_table(table, sink)
        return sink.getvalue()


def per_topic_export(s: Session, blobs: BlobStore, token: Token | None, task_id: str, *, phase_name: str | None,
                     version: int | None, selection: str) -> PerTopicExport:
    """The per-topic scores of every submission the phase's leaderboard shows (``selection``), at a judgments
    version (default: current), from their stored results; refused by ``may_export``."""
    access = task_access(s, task_id, token)
    may_export(access)
    task = access.task
    version = judgments_version(task, version)
    phase = phase_named(s, task, phase_name, utcnow())
    picked = shown(candidates(s, task, phase, version), selection) if phase is not None else []
    measures = list(task.measures)
    exported = []
    for c in picked:
        assert c.job.result_sha256 is not None
        by_measure: dict[str, Any] = next(iter(json.loads(blobs.get(s, c.job.result_sha256))["runs"].values()))
        exported.append(Exported(c.submission.id, c.participant.team, c.run.name, c.submission.baseline,
                                 {m: dict(by_measure[m]["per_topic"]) for m in measures},
                                 {m: by_measure[m]["mean"] for m in measures}))
    tag = etag_of("per-topic", task.id, None if phase is None else phase.id, version, selection, measures,
                  [(c.submission.id, c.participant.team, c.run.name, c.submission.baseline, c.job.result_sha256,
                    as_utc(c.submission.submitted_at)) for c in picked])
    return PerTopicExport(task.id, None if phase is None else phase.name, version, selection, measures, exported, tag)
