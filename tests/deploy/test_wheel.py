"""``pip install .`` puts exactly ``evalserve`` and ``evaluation`` into site-packages: the service and the workers
install inside ``evalserve`` (docs/architecture.md, "Why the installed names"), with their package data."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_holds_only_evalserve_and_the_engine(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(ROOT)],
                   check=True, capture_output=True, text=True, timeout=600)
    [wheel] = tmp_path.glob("evalserve-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"evalserve", "evaluation"}
    for needed in ("evalserve/service/__init__.py", "evalserve/service/web/wsgi.py",
                   "evalserve/service/web/templates/leaderboard.html",
                   "evalserve/service/store/migrations/script.py.mako",
                   "evalserve/service/store/migrations/versions/0001_initial_schema.py",
                   "evalserve/workers/tasks.py", "evalserve/samples/sample.qrels"):
        assert needed in names, needed
