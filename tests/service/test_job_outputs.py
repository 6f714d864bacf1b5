"""What a worker builds from a succeeded job (``jobrun.outputs``, table ``job_outputs``) and what the API does
with it: the report content and the plots are stored before the job is marked succeeded, the result and plot
views only stream or typeset them -- an API process answering ``?format=html`` and ``/plot`` of a finished job
loads none of the report builder, the meta-evaluation methods, the axioms, SciPy or matplotlib -- and a job that
succeeded before outputs were stored (none recorded) still gets the same report and a plot, built on demand."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete, select

from evalserve.service.store.models import JobOutput
from evaluation.reports import render_report
from tests.service.test_result_reports import MEASURES, RUNS, Deployment, qrels, run

#: what the API process must not load to answer a finished job's report and plot
HEAVY = ("evaluation.reports.content", "evaluation.meta.methods", "evaluation.axioms", "scipy", "matplotlib")


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Deployment, dict[str, str], Path]]:
    data = tmp_path_factory.mktemp("outputs")
    d = Deployment(data)
    collection = d.post("/v1/collections", data={"name": "toy", "qrels": (io.BytesIO(qrels()), "q.txt")}).json["id"]
    files = [(io.BytesIO(run(seed)), name) for name, seed in RUNS.items()]
    evaluation = d.finish(d.post("/v1/submissions", data={"collection": collection, "measures": " ".join(MEASURES),
                                                         "run": files}))
    jobs = {"evaluation": evaluation}
    jobs["power"] = d.finish(d.post("/v1/meta-evaluations", json={
        "method": "discriminative-power", "options": {"resamples": 50}, "evaluation": evaluation}))
    jobs["significance"] = d.finish(d.post("/v1/meta-evaluations", json={"method": "significance",
                                                                         "evaluation": evaluation}))
    yield d, jobs, data
    d.ctx.db.dispose()


def outputs(d: Deployment, job: str) -> dict[str, str]:
    with d.ctx.db.session() as s:
        return dict(s.execute(select(JobOutput.name, JobOutput.blob_sha256).where(JobOutput.job_id == job)).all())


def test_the_worker_stores_the_report_and_the_plots_a_kind_offers(deployed: Any) -> None:
    d, jobs, _ = deployed
    reports = ["report", "report.html", "report.latex"]
    assert sorted(outputs(d, jobs["evaluation"])) == ["plot.png", "plot.svg", *reports]
    assert sorted(outputs(d, jobs["power"])) == ["plot.png", "plot.svg", *reports]
    assert sorted(outputs(d, jobs["significance"])) == ["plot.unavailable", *reports]
    with d.ctx.db.session() as s:
        report = json.loads(d.ctx.blobs.get(s, outputs(d, jobs["evaluation"])["report"]))
    from evaluation.reports import build

    document = d.get(f"/v1/jobs/{jobs['evaluation']}/result?per_topic=true").json
    assert report == json.loads(json.dumps(build(document).to_json()))


@pytest.mark.parametrize("job", ["evaluation", "power", "significance"])
def test_served_reports_are_the_engine_s_reports(deployed: Any, job: str) -> None:
    d, jobs, _ = deployed
    document = d.get(f"/v1/jobs/{jobs[job]}/result?per_topic=true").json
    for fmt in ("html", "latex"):
        assert d.get(f"/v1/jobs/{jobs[job]}/result?format={fmt}").get_data(as_text=True) == render_report(document,
                                                                                                           fmt)


def test_the_api_process_computes_nothing_for_a_report_or_a_plot(deployed: Any) -> None:
    d, jobs, data = deployed
    token = d.auth["Authorization"]
    script = textwrap.dedent(f"""
        import json, sys
        from evalserve.service.core.config import Settings
        from evalserve.service.web.app import create_app
        app = create_app(Settings.from_env({{"EVALSERVE_DATA_DIR": {str(data)!r}}}), migrate=False)
        http, auth = app.test_client(), {{"Authorization": {token!r}}}
        answers = []
        for job in {list(jobs.values())!r}:
            for path in ("result?format=html", "result?format=latex", "result", "plot", "plot?format=svg"):
                r = http.get(f"/v1/jobs/{{job}}/{{path}}", headers=auth)
                answers.append([path, r.status_code, len(r.data)])
        heavy = [m for m in {HEAVY!r} if m in sys.modules]
        print(json.dumps({{"answers": answers, "heavy": heavy}}))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    shown = json.loads(done.stdout.splitlines()[-1])
    assert shown["heavy"] == [], shown
    statuses = [status for path, status, _ in shown["answers"]]
    # the significance job draws no plot: 422 for both formats, from what its worker stored
    assert statuses == [200] * 5 + [200] * 5 + [200] * 3 + [422, 422], shown


def test_the_views_never_build_when_outputs_are_stored(deployed: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    d, jobs, _ = deployed
    import evaluation.reports.content

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("computed in the API")

    import evaluation.meta.plots

    monkeypatch.setattr(evaluation.reports.content, "build", refuse)
    monkeypatch.setattr(evaluation.meta.plots, "score_distributions", refuse)
    monkeypatch.setattr(evaluation.meta.plots, "asl_curves", refuse)
    assert d.get(f"/v1/jobs/{jobs['evaluation']}/result?format=html").status_code == 200
    png = d.get(f"/v1/jobs/{jobs['evaluation']}/plot")
    assert png.status_code == 200 and png.data.startswith(b"\x89PNG")
    assert d.get(f"/v1/jobs/{jobs['power']}/plot?format=svg").mimetype == "image/svg+xml"
    no_plot = d.get(f"/v1/jobs/{jobs['significance']}/plot")
    assert no_plot.status_code == 422 and no_plot.json["code"] == "plot-unavailable"
    assert "discriminative-power jobs" in no_plot.json["detail"]


def test_a_report_is_typeset_from_stored_content_without_its_typeset_output(deployed: Any) -> None:
    d, jobs, _ = deployed
    job = d.finish(d.post("/v1/meta-evaluations", json={"method": "unanimity", "evaluation": jobs["evaluation"]}))
    expected = d.get(f"/v1/jobs/{job}/result?format=html").get_data(as_text=True)
    with d.ctx.db.session() as s:
        s.execute(delete(JobOutput).where(JobOutput.job_id == job, JobOutput.name == "report.html"))
    assert d.get(f"/v1/jobs/{job}/result?format=html").get_data(as_text=True) == expected


def test_a_job_that_succeeded_before_outputs_is_built_on_demand(deployed: Any) -> None:
    d, jobs, _ = deployed
    legacy = d.finish(d.post("/v1/meta-evaluations", json={"method": "significance",
                                                           "evaluation": jobs["evaluation"]}))
    legacy_eval = jobs["evaluation"]
    stored_html = d.get(f"/v1/jobs/{legacy_eval}/result?format=html").get_data(as_text=True)
    with d.ctx.db.session() as s:
        s.execute(delete(JobOutput).where(JobOutput.job_id.in_([legacy, legacy_eval])))
    assert d.get(f"/v1/jobs/{legacy_eval}/result?format=html").get_data(as_text=True) == stored_html
    png = d.get(f"/v1/jobs/{legacy_eval}/plot")
    assert png.status_code == 200 and png.data.startswith(b"\x89PNG")
    document = d.get(f"/v1/jobs/{legacy}/result").json
    assert d.get(f"/v1/jobs/{legacy}/result?format=latex").get_data(as_text=True) == render_report(document, "latex")
    no_plot = d.get(f"/v1/jobs/{legacy}/plot")
    assert no_plot.status_code == 422 and no_plot.json["code"] == "plot-unavailable"


def test_the_job_document_shows_the_kind_s_request(deployed: Any) -> None:
    d, jobs, _ = deployed
    shown = d.get(f"/v1/jobs/{jobs['power']}").json
    assert shown["request"] == {"method": "discriminative-power", "options": shown["request"]["options"],
                                "evaluation": jobs["evaluation"], "measures": []}
    assert shown["method"] == "discriminative-power" and shown["per_topic"] is False and shown["ties"] == "trec"
    evaluation = d.get(f"/v1/jobs/{jobs['evaluation']}").json
    assert evaluation["request"]["runs"] == evaluation["runs"] and evaluation["method"] is None
    from evalserve.service.web.schemas import REQUEST_SCHEMAS

    for job in jobs.values():
        shown = d.get(f"/v1/jobs/{job}").json
        assert REQUEST_SCHEMAS[shown["kind"]]().validate(shown["request"]) == {}, shown["request"]
