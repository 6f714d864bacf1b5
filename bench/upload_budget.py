"""Large legal uploads in flight (issue 29), measured by hand: three users post at once a TREC run that
inflates to about 2 GB (10 million 205-byte lines with 170-byte docnos, gzipped at level 1 to ~50 MB: within
every cap) as a raw body to ``POST /v1/runs`` of a live deployment (``tests/service/live.py``: gunicorn with two
API processes, the embedded default or ``--backend redis-postgres``, every setting at its default unless given
as ``NAME=VALUE``). Prints each answer (status, Retry-After, seconds), the API processes' RSS before and their
peak (VmHWM from /proc/<pid>/status) after, and what is stored.

``--factor``: instead, the memory factor of validation in this process: peak RSS above the baseline while
``inputs.uploads`` validates a 1,000,000-line gzip input of each shape, per inflated byte.

Usage: ``python3 bench/upload_budget.py [--backend embedded] [--lines 10000000] [NAME=VALUE ...]`` or
``python3 bench/upload_budget.py --factor SHAPE`` (one process per shape: longdoc, longtag, short, qrels).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

SHAPES: dict[str, Callable[[int, bytes], bytes]] = {
    "longdoc": lambda i, tag: b"%d Q0 %s-%012d %d %d %s\n" % (i // 10000, b"x" * 170, i, i % 10000 + 1,
                                                             10000 - i % 10000, tag),
    "longtag": lambda i, tag: b"%d Q0 doc%d %d 1.0 %s%s\n" % (i // 1000, i, i % 1000, tag, b"t" * 170),
    "short": lambda i, tag: b"%d Q0 doc%d %d 1.0 %s\n" % (i // 1000, i, i % 1000, tag),
    "qrels": lambda i, tag: b"%d 0 %s-%012d %d\n" % (i // 1000, b"x" * 170, i, i % 3),
}


def gzipped(shape: str, lines: int, tag: bytes, out: Any) -> int:
    """Write ``lines`` lines of ``shape`` gzipped (level 1) to ``out`` as they are made; the inflated size."""
    packer, size = zlib.compressobj(1, zlib.DEFLATED, 31), 0
    for lo in range(0, lines, 100_000):
        text = b"".join(SHAPES[shape](i, tag) for i in range(lo, min(lines, lo + 100_000)))
        size += len(text)
        out.write(packer.compress(text))
    out.write(packer.flush())
    return size


def _status_mb(pid: int | str, field: str) -> int:
    text = Path(f"/proc/{pid}/status").read_text()
    return next(int(line.split()[1]) for line in text.splitlines() if line.startswith(field + ":")) >> 10


def factor(shape: str, lines: int = 1_000_000) -> None:
    import io

    from evalserve.service.core.config import Settings
    from evalserve.service.inputs.uploads import check_runs, to_blob
    from evaluation.pipeline import parse_judgments

    buffer = io.BytesIO()
    size = gzipped(shape, lines, b"tag", buffer)
    data = buffer.getvalue()
    del buffer
    limits = Settings.from_env({"EVALSERVE_DATA_DIR": tempfile.mkdtemp()}).decode_limits
    base = _status_mb("self", "VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # peak RSS from here
    began = time.monotonic()
    if shape == "qrels":
        assert parse_judgments(to_blob(data, "q.txt.gz", limits), "trec").value is not None
    else:
        assert len(check_runs([("r.run.gz", data)], limits)[0].run) == lines
    extra = _status_mb("self", "VmHWM") - base
    print(f"{shape}: {lines} lines, {size / 2**20:.0f} MiB inflated ({len(data) / 2**20:.1f} MiB gzip): baseline"
          f" {base} MB, +{extra} MB at peak, {extra / (size / 2**20):.2f} per inflated byte,"
          f" {time.monotonic() - began:.1f} s")


def storm(backend: str, lines: int, env: dict[str, str]) -> None:
    import httpx

    from tests.security.test_upload_bombs import _children
    from tests.service.live import LiveService, postgres_database, service_env

    home = Path(tempfile.mkdtemp(prefix="upload-budget-"))
    files = []
    for i in range(3):
        path = home / f"big{i}.run.gz"
        with open(path, "wb") as out:
            size = gzipped("longdoc", lines, b"tag%d" % i, out)
        files.append(path)
    print(f"3 runs of {size / 1e9:.2f} GB inflated, {[p.stat().st_size >> 20 for p in files]} MiB gzipped",
          flush=True)
    with ExitStack() as cleanup:
        url = cleanup.enter_context(postgres_database()) if backend == "redis-postgres" else None
        service = LiveService(service_env(home, backend, url, **env), logs=home)
        service.setup()
        cleanup.callback(service.stop)
        service.start_api(workers=2)
        with service.client() as client:
            collection = client.post("/v1/collections", data={"name": "c"},
                                     files={"qrels": ("q.txt", b"0 0 d 1\n")}).json()["id"]
        assert service.api is not None
        pids = _children(service.api.pid)
        print("API RSS before:", [_status_mb(p, "VmRSS") for p in pids], "MB", flush=True)
        tokens = [service.user_token(f"user{i}") for i in range(3)]
        start, answers = threading.Barrier(3), []

        def post(token: str, path: Path) -> None:
            data = path.read_bytes()
            with httpx.Client(base_url=service.url, timeout=1800,
                              headers={"Authorization": f"Bearer {token}"}) as client:
                start.wait()
                began = time.monotonic()
                response = client.post(f"/v1/runs?collection={collection}&name={path.name}", content=data,
                                       headers={"Content-Type": "application/octet-stream"})
                answers.append((path.name, response.status_code, response.headers.get("Retry-After"),
                                round(time.monotonic() - began, 2), response.text[:200]))

        threads = [threading.Thread(target=post, args=pair) for pair in zip(tokens, files, strict=True)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for answer in sorted(answers, key=lambda a: a[3]):
            print(answer, flush=True)
        print("API peak RSS:", [_status_mb(p, "VmHWM") for p in pids], "MB; now",
              [_status_mb(p, "VmRSS") for p in pids], "MB")
        with service.client() as client:
            print("runs stored:", [(r["name"], r["n_rows"]) for r in client.get("/v1/runs?page_size=100").json()])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--factor", choices=sorted(SHAPES))
    parser.add_argument("--backend", default="embedded", choices=["embedded", "redis-postgres"])
    parser.add_argument("--lines", type=int, default=10_000_000)
    parser.add_argument("env", nargs="*", help="NAME=VALUE settings of the deployment")
    args = parser.parse_args()
    if args.factor:
        factor(args.factor)
    else:
        storm(args.backend, args.lines, dict(item.split("=", 1) for item in args.env))


if __name__ == "__main__":
    main()
