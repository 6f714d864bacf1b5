"""Decompression bombs and binary or empty uploads, posted to real API processes on 127.0.0.1: each is refused
with a problem+json answer (413 past the decompressed cap, 422 for line caps, NUL bytes and files without
records) within seconds, the gunicorn workers' peak RSS stays small, and nothing is stored. The CLI refuses
the same bombs (exit 2) just as fast.

The bombs are built in the session's tmp dir with zlib streaming one block at a time (the plain data is never
held); level 1 keeps building fast (~2 s per GiB of zeros) at a compressed size that still fits an upload.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from evalserve.service.core.config import Settings
from evalserve.service.store.db import Database
from evalserve.service.store.models import BlobRow
from tests.service.live import ROOT, LiveService

MIB = 1 << 20
LINE = b"1 Q0 d1 1 1.0 tag\n"
QRELS = b"1 0 d1 1\n1 0 d2 0\n"
RSS_LIMIT_KB = 300 * 1024
ANSWER_WITHIN = 5.0  # seconds, generous: the refusals measured here take well under one


def _gzip(path: Path, block: bytes, total: int) -> Path:
    """``path``: ``total`` bytes of ``block`` repeated, gzipped (level 1) as it is produced."""
    packer = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    with open(path, "wb") as out:
        left = total
        while left > 0:
            piece = block if left >= len(block) else block[:left]
            out.write(packer.compress(piece))
            left -= len(piece)
        out.write(packer.flush())
    return path


@pytest.fixture(scope="session")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """zeros-1g / zeros-2g: 1 and 2 GiB of NUL bytes; lines-300m: 300 MB of run lines (16.7 M of them); blanks-1g:
    1 GiB of 1023-space lines, text within every line cap, only too large; long-field: one long docno among many
    lines (read padded, it would take gigabytes)."""
    home = tmp_path_factory.mktemp("bombs")
    zeros = bytes(MIB)
    lines = LINE * (MIB // len(LINE))
    blanks = (b" " * 1023 + b"\n") * 1024
    long_field = home / "long-field.run.gz"  # 5 MB: 200,000 lines, one with a 64 KiB docno (13 GB padded)
    lines_200k = [b"%d Q0 doc%d %d 1.0 tag\n" % (i // 1000, i, i % 1000) for i in range(200_000)]
    lines_200k[5] = b"0 Q0 " + b"x" * 65536 + b" 5 1.0 tag\n"
    _gzip(long_field, b"".join(lines_200k), len(b"".join(lines_200k)))
    return {
        "long-field": long_field,
        "zeros-1g": _gzip(home / "zeros-1g.run.gz", zeros, 1024 * MIB),
        "zeros-2g": _gzip(home / "zeros-2g.run.gz", zeros, 2048 * MIB),
        "lines-300m": _gzip(home / "lines-300m.run.gz", lines, 300 * 1000 * 1000),
        "blanks-1g": _gzip(home / "blanks-1g.run.gz", blanks, 1024 * MIB),
    }


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _peak_rss_kb(service: LiveService) -> int:
    """The largest peak resident set (VmHWM) of the API's gunicorn worker processes since they started."""
    assert service.api is not None
    peaks = []
    for pid in _children(service.api.pid):
        status = Path(f"/proc/{pid}/status").read_text()
        peaks += [int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")]
    assert peaks, "no gunicorn worker found"
    return max(peaks)


class Stored:
    """What a deployment holds: its runs and collections as the API lists them, and its blob rows."""

    def __init__(self, service: LiveService, client: httpx.Client) -> None:
        self.service, self.client = service, client
        self.before = self.now()

    def now(self) -> tuple[Any, Any, int]:
        db = Database(Settings.from_env(self.service.env).database_url)
        try:
            with db.session() as s:
                blobs = int(s.scalar(select(func.count()).select_from(BlobRow)) or 0)
        finally:
            db.dispose()
        return (self.client.get("/v1/runs?page_size=100").json(),
                self.client.get("/v1/collections?page_size=100").json(), blobs)

    def unchanged(self) -> bool:
        return self.now() == self.before


def _post(client: httpx.Client, route: str, path: Path, collection: str) -> tuple[httpx.Response, float]:
    """Post a bomb as a raw body (``raw``: ``/v1/runs``) or as the multipart file of ``route``."""
    started = time.monotonic()
    with open(path, "rb") as handle:
        if route == "raw":
            response = client.post(f"/v1/runs?collection={collection}&name={path.name}",
                                   content=handle, headers={"Content-Type": "application/octet-stream"})
        elif route == "/v1/runs":
            response = client.post(route, params={"collection": collection}, files={"run": (path.name, handle)})
        elif route == "/v1/submissions":
            response = client.post(route, data={"collection": collection, "measures": "AP"},
                                   files={"run": (path.name, handle)})
        else:
            response = client.post(route, data={"name": "bomb"}, files={"qrels": (path.name, handle)})
    return response, time.monotonic() - started


def _refused(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text[:2000]
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert code in [p["code"] for p in body["problems"]], body


@pytest.fixture(scope="module")
def collection(live: LiveService) -> Iterator[str]:
    with live.client() as client:
        made = client.post("/v1/collections", data={"name": "bombs"}, files={"qrels": ("q.txt", QRELS)})
        assert made.status_code == 201, made.text
        yield str(made.json()["id"])


CASES = [  # (bomb, route, status, code)
    ("zeros-1g", "raw", 422, "binary-input"),
    ("zeros-2g", "/v1/runs", 422, "binary-input"),
    ("lines-300m", "raw", 422, "too-many-lines"),
    ("lines-300m", "/v1/submissions", 422, "too-many-lines"),
    ("zeros-2g", "/v1/submissions", 422, "binary-input"),
    ("lines-300m", "/v1/collections", 422, "too-many-lines"),
    ("long-field", "raw", 422, "field-too-long"),
]


def test_gzip_bombs_are_refused_quickly_in_little_memory_and_nothing_is_stored(
        live: LiveService, collection: str, bombs: dict[str, Path]) -> None:
    with live.client() as client:
        stored = Stored(live, client)
        for bomb, route, status, code in CASES:
            response, took = _post(client, route, bombs[bomb], collection)
            _refused(response, status, code)
            assert took < ANSWER_WITHIN, f"{bomb} to {route} took {took:.1f}s"
        assert stored.unchanged(), "nothing stored"
    peak = _peak_rss_kb(live)
    assert peak < RSS_LIMIT_KB, f"an API worker peaked at {peak // 1024} MB"


def test_a_bomb_past_the_decompressed_cap_is_413(stack: Any, bombs: dict[str, Path]) -> None:
    """A 10 MB upload limit makes the cap 200 MiB (20 x); 1 GiB of valid text lines is refused past it."""
    service = stack("embedded", EVALSERVE_MAX_UPLOAD_MB="10")
    service.start_api()
    with service.client() as client:
        made = client.post("/v1/collections", data={"name": "c"}, files={"qrels": ("q.txt", QRELS)})
        stored = Stored(service, client)
        response, took = _post(client, "raw", bombs["blanks-1g"], made.json()["id"])
        assert response.status_code == 413, response.text
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["code"] == "decompressed-too-large"
        assert took < ANSWER_WITHIN, f"took {took:.1f}s"
        assert stored.unchanged()
    peak = _peak_rss_kb(service)
    assert peak < RSS_LIMIT_KB, f"an API worker peaked at {peak // 1024} MB"


def test_empty_and_binary_runs_are_refused(live: LiveService, collection: str) -> None:
    with live.client() as client:
        stored = Stored(live, client)
        url = f"/v1/runs?collection={collection}&name=x.run"
        octets = {"Content-Type": "application/octet-stream"}
        _refused(client.post(url, content=b"\0" * MIB, headers=octets), 422, "binary-input")  # head -c 1M /dev/zero
        _refused(client.post(url, content=b"# no results\n\n", headers=octets), 422, "empty-run")
        empty = client.post(url, content=b"", headers=octets)
        assert empty.status_code == 422 and empty.headers["content-type"] == "application/problem+json"
        _refused(client.post("/v1/runs", params={"collection": collection}, files={"run": ("e.run", b"\n")}),
                 422, "empty-run")
        assert stored.unchanged()
        curl_default = client.post(url, content=LINE, headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert curl_default.status_code == 201 and curl_default.json()["n_rows"] == 1, curl_default.text


@pytest.mark.parametrize(("bomb", "env", "code"), [
    ("zeros-2g", {}, "binary-input"),
    ("lines-300m", {}, "too-many-lines"),
    ("blanks-1g", {"EVALSERVE_MAX_DECOMPRESSED_MB": "100"}, "decompressed-too-large"),
])
def test_the_cli_refuses_a_bomb_quickly(bombs: dict[str, Path], tmp_path: Path, bomb: str, env: dict[str, str],
                                        code: str) -> None:
    qrels = tmp_path / "q.txt"
    qrels.write_bytes(QRELS)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "evalserve.cli.main", "evaluate", "--qrels", str(qrels),
                           "--run", str(bombs[bomb])], capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env})
    took = time.monotonic() - started
    assert done.returncode == 2, done.stderr
    assert f"[{code}]" in done.stderr and done.stdout == ""
    assert took < ANSWER_WITHIN + 3, f"took {took:.1f}s"  # plus the interpreter's start-up
