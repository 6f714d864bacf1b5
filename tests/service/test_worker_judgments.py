"""A worker keeps a collection's parsed judgments between jobs (``jobrun.judgments``): the second job on the same
judgments parses none and its result is the first's (the judgments' warnings included, first); judgments with
errors are never kept (every job reports them), a changed collection is parsed anew, and at most ``ENTRIES`` are
kept."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from evalserve.service.jobrun import judgments
from evaluation.formats import Blob
from tests.service.test_meta_jobs import Deployment

QRELS = b"1 0 d1 1\n1 0 d1 1\n1 0 d2 0\n2 0 d4 2\n2 0 d5 1\n"  # line 2 repeats line 1: a warning
RUN = b"1 Q0 d1 1 3.0 r\n1 Q0 d2 2 2.0 r\n2 Q0 d5 1 2.0 r\n2 Q0 d4 2 1.0 r\n"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The judgments the workers parse, by name."""
    seen: list[str] = []
    real = judgments.parse_judgments

    def counted(blob: Blob, fmt: str) -> Any:
        seen.append(blob.name)
        return real(blob, fmt)

    monkeypatch.setattr(judgments, "parse_judgments", counted)
    return seen


def _job(d: Deployment, collection: str) -> dict[str, Any]:
    job = d.post("/v1/submissions", data={"collection": collection, "measures": "AP nDCG@10", "per_topic": "true",
                                          "run": [(io.BytesIO(RUN), "run.txt")]}).json["id"]
    assert d.run(job)["state"] == "succeeded"
    document: dict[str, Any] = d.get(f"/v1/jobs/{job}/result").json
    return document


def test_the_second_job_on_the_same_judgments_parses_none_and_gets_the_same_result(tmp_path: Path,
                                                                                    parses: list[str]) -> None:
    d = Deployment(tmp_path)
    collection = d.post("/v1/collections", data={"name": "c", "qrels": (io.BytesIO(QRELS), "q.txt")}).json["id"]
    first, second = _job(d, collection), _job(d, collection)
    assert parses == ["q.txt"]
    assert first == second
    assert [(w["code"], w["source"]) for w in first["meta"]["warnings"]] == [("duplicate-judgment", "q.txt")]
    other = d.post("/v1/collections", data={"name": "c2", "qrels": (io.BytesIO(QRELS + b"2 0 d6 1\n"),
                                                                    "q2.txt")}).json["id"]
    _job(d, other)
    same_bytes = d.post("/v1/collections", data={"name": "c3", "qrels": (io.BytesIO(QRELS), "q3.txt")}).json["id"]
    assert [w["source"] for w in _job(d, same_bytes)["meta"]["warnings"]] == ["q3.txt"]
    assert parses == ["q.txt", "q2.txt", "q3.txt"]
    d.ctx.db.dispose()


def test_judgments_with_errors_or_too_large_are_not_kept() -> None:
    cache = judgments.JudgmentsCache(entries=2, max_text_bytes=100)
    assert cache.parsed(Blob.from_bytes(b"1 0 d1 x\n", "bad.txt"), "auto") is None
    assert cache.parsed(Blob.from_bytes(QRELS * 10, "big.txt"), "auto") is None
    kept = [cache.parsed(Blob.from_bytes(QRELS + f"3 0 d{i} 1\n".encode(), f"q{i}.txt"), "auto") for i in range(3)]
    assert all(k is not None for k in kept)
    assert cache.parsed(Blob.from_bytes(QRELS + b"3 0 d2 1\n", "q2.txt"), "auto") is kept[2]
    assert cache.parsed(Blob.from_bytes(QRELS + b"3 0 d0 1\n", "q0.txt"), "auto") is not kept[0]  # dropped
