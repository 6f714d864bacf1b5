"""Run files named on ``evalserve evaluate``'s command line are hashed from the start, on their own threads
(``evalserve.cli.early_digests``, ``evaluation.file_digest``), and the reader takes that digest instead of
hashing what it parses: same SHA-256 in ``meta.inputs``, same run, nothing timed here."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from evalserve.cli.early_digests import run_paths, start
from evalserve.cli.main import main
from evaluation.file_digest import digest_files
from evaluation.formats.trec_run import RunFile, parse_run_file

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "evalserve" / "samples"
RUN = SAMPLES / "bm25.run"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_file_digest_is_hashlibs(tmp_path: Path) -> None:
    big = tmp_path / "big.run"
    big.write_bytes(RUN.read_bytes() * 40)  # several read blocks
    digests = digest_files([str(big), str(tmp_path / "missing.run"), str(big)])
    assert list(digests) == [str(big), str(tmp_path / "missing.run")]
    assert digests[str(big)].result() == sha256(big)
    assert digests[str(tmp_path / "missing.run")].result() is None


def test_run_paths_are_the_regular_files_after_run(tmp_path: Path) -> None:
    other = tmp_path / "other.run"
    other.write_bytes(RUN.read_bytes())
    argv = ["evaluate", "--qrels", str(SAMPLES / "sample.qrels"), "--run", str(RUN), f"--run={other}",
            "--run", "-", "--run", str(tmp_path), "--run", str(RUN), "--run-format", "trec", "--run"]
    assert run_paths(argv) == [str(RUN), str(other)]  # stdin, a folder and a repeat left out; no value at the end
    assert {p: d.result() for p, d in start(argv).items()} == {str(RUN): sha256(RUN), str(other): sha256(other)}


def test_the_reader_takes_a_given_digest_and_reads_the_same_run(tmp_path: Path) -> None:
    gz = tmp_path / "bm25.run.gz"
    gz.write_bytes(gzip.compress(RUN.read_bytes()))
    for path in (RUN, gz):
        hashed, own = parse_run_file(RunFile(str(path)))
        given, digest = parse_run_file(RunFile(str(path), digest=digest_files([str(path)])[str(path)]))
        assert own == digest == sha256(path)  # the bytes as stored (compressed for gzip)
        assert hashed.value is not None and given.value is not None
        for column in ("topic", "docno", "score", "rank"):
            assert np.array_equal(getattr(hashed.value, column), getattr(given.value, column))
        assert hashed.problems == given.problems


def test_a_digest_that_failed_sends_the_run_to_the_general_reader(tmp_path: Path) -> None:
    """The file could not be hashed to its end (it vanished in between): the run is read again, whole, and the
    digest is that of the bytes read then."""
    failed = digest_files([str(tmp_path / "missing.run")])[str(tmp_path / "missing.run")]
    parsed, digest = parse_run_file(RunFile(str(RUN), digest=failed))
    assert digest == sha256(RUN)
    assert parsed.value is not None and len(parsed.value) == len(RUN.read_text().splitlines())


def test_meta_inputs_report_the_early_digests(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    assert main(["evaluate", "--qrels", str(SAMPLES / "sample.qrels"), "--run", str(RUN), "-m", "AP",
                 "-o", str(out)]) == 0
    inputs = json.loads(out.read_text())["meta"]["inputs"]
    assert inputs["bm25.run"] == sha256(RUN)


#: records, for every call of digest_files, whether NumPy was loaded at that moment
PROBE = """
import contextlib, io, json, sys
import evaluation.file_digest as fd
seen = []
start = fd.digest_files
def recording(paths):
    seen.append("numpy" in sys.modules)
    return start(paths)
fd.digest_files = recording
from evalserve.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[2:])
json.dump({"code": code, "numpy_loaded_when_started": seen}, open(sys.argv[1], "w"))
"""


def test_hashing_starts_before_numpy_is_imported(tmp_path: Path) -> None:
    out = tmp_path / "probe.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", PROBE, str(out), "evaluate", "--qrels", str(SAMPLES / "sample.qrels"),
                           "--run", str(RUN), "-m", "AP", "-o", str(tmp_path / "r.json")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text()) == {"code": 0, "numpy_loaded_when_started": [False]}
