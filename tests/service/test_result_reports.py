"""Reports over HTTP and on the command line: ``GET /v1/jobs/{id}/result?format=html|latex`` of an evaluation job
and of meta-evaluation jobs is the engine's report on the stored document, with its media type; the CLI's
``--format html|latex`` of ``evalserve evaluate`` and ``evalserve meta`` gives the same text; the served LaTeX
compiles and the served HTML renders in headless Chromium."""

from __future__ import annotations

import io
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalserve.cli.main import main
from evalserve.service.jobrun.runner import run_job
from evaluation.reports import render_report
from tests.browser import chromium, dump_dom, parse_html  # noqa: F401 - chromium: fixture
from tests.latex import compile_pdf, pdflatex  # noqa: F401 - pdflatex: fixture
from tests.service.test_meta_jobs import Deployment as MetaDeployment

MEASURES = ["AP", "P@5", "nDCG@10"]
RUNS = {"bm25.run": 1, "dense<b>.run": 2, "50%_hybrid.run": 3}


def qrels() -> bytes:
    rng = random.Random(17)
    return "".join(f"{t} 0 d{d} {rng.choice((0, 0, 1, 2))}\n" for t in range(1, 9) for d in range(20)).encode()


def run(seed: int) -> bytes:
    rng = random.Random(seed)
    return "".join(f"{t} Q0 d{d} {r + 1} {20 - r} tag{seed}\n" for t in range(1, 9)
                   for r, d in enumerate(rng.sample(range(20), 12))).encode()


class Deployment(MetaDeployment):
    """The meta-job tests' deployment, plus a job that must succeed."""

    def finish(self, response: Any) -> str:
        assert response.status_code == 202, response.get_data(as_text=True)
        assert run_job(self.ctx, response.json["id"]) == "succeeded"
        return str(response.json["id"])


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Deployment, dict[str, str]]]:
    d = Deployment(tmp_path_factory.mktemp("reports"))
    collection = d.post("/v1/collections", data={"name": "toy", "qrels": (io.BytesIO(qrels()), "q.txt")}).json["id"]
    files = [(io.BytesIO(run(seed)), name) for name, seed in RUNS.items()]
    evaluation = d.finish(d.post("/v1/submissions", data={"collection": collection, "measures": " ".join(MEASURES),
                                                         "run": files}))
    jobs = {"evaluation": evaluation}
    for method in ("significance", "unanimity"):
        jobs[method] = d.finish(d.post("/v1/meta-evaluations", json={"method": method, "evaluation": evaluation}))
    yield d, jobs
    d.ctx.db.dispose()


def stored(d: Deployment, job: str) -> dict[str, Any]:
    """The job's result document as stored (per topic for an evaluation job)."""
    document: dict[str, Any] = d.get(f"/v1/jobs/{job}/result?per_topic=true").json
    return document


@pytest.mark.parametrize("job", ["evaluation", "significance", "unanimity"])
@pytest.mark.parametrize(("fmt", "media"), [("html", "text/html"), ("latex", "application/x-latex")])
def test_a_job_result_as_a_report(deployed: tuple[Deployment, dict[str, str]], job: str, fmt: str,
                                  media: str) -> None:
    d, jobs = deployed
    response = d.get(f"/v1/jobs/{jobs[job]}/result?format={fmt}")
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == media and response.headers["ETag"]
    text = response.get_data(as_text=True)
    assert text == render_report(stored(d, jobs[job]), fmt)
    again = d.http.get(f"/v1/jobs/{jobs[job]}/result?format={fmt}",
                       headers={**d.auth, "If-None-Match": response.headers["ETag"]})
    assert again.status_code == 304
    if job == "evaluation":
        assert ("dense&lt;b&gt;.run" if fmt == "html" else r"50\%\_hybrid.run") in text


def test_other_formats_are_still_refused(deployed: tuple[Deployment, dict[str, str]]) -> None:
    d, jobs = deployed
    response = d.get(f"/v1/jobs/{jobs['unanimity']}/result?format=tsv")
    assert response.status_code == 422
    assert "html or latex" in response.json["detail"]
    assert d.get(f"/v1/jobs/{jobs['evaluation']}/result?format=pdf").status_code in (400, 422)


def test_the_served_reports_compile_and_render(deployed: tuple[Deployment, dict[str, str]], pdflatex: str,  # noqa: F811
                                               chromium: str, tmp_path: Path) -> None:  # noqa: F811
    d, jobs = deployed
    latex = d.get(f"/v1/jobs/{jobs['evaluation']}/result?format=latex").get_data(as_text=True)
    assert compile_pdf(pdflatex, latex, tmp_path)[0].startswith(b"%PDF-")
    page = tmp_path / "meta.html"
    page.write_text(d.get(f"/v1/jobs/{jobs['significance']}/result?format=html").get_data(as_text=True))
    tree = parse_html(dump_dom(chromium, page.as_uri()))
    assert tree.find("h1").text() == "Meta-evaluation report: significance"
    assert [th.text() for th in tree.find("section", id="scores").find("tbody").find_all("th")] == list(RUNS)
    assert len(tree.find("section", id="significance").find_all("table")) == len(MEASURES)


def test_the_cli_gives_the_same_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "q.txt").write_bytes(qrels())
    args = ["evaluate", "--qrels", str(tmp_path / "q.txt"), "-m", *MEASURES, "-q"]
    for name, seed in RUNS.items():
        (tmp_path / name).write_bytes(run(seed))
        args += ["--run", str(tmp_path / name)]
    assert main([*args, "--per-topic", "-o", str(tmp_path / "results.json")]) == 0
    document = json.loads((tmp_path / "results.json").read_text())
    for fmt in ("html", "latex"):
        assert main([*args, "--format", fmt, "-o", str(tmp_path / f"report.{fmt}")]) == 0
        assert (tmp_path / f"report.{fmt}").read_text() == render_report(document, fmt)
        capsys.readouterr()
        assert main(["meta", "significance", "--results", str(tmp_path / "results.json"), "--format", fmt]) == 0
        shown = capsys.readouterr().out
        assert main(["meta", "significance", "--results", str(tmp_path / "results.json")]) == 0
        assert shown == render_report(json.loads(capsys.readouterr().out), fmt)
