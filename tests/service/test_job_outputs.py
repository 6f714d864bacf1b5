"""What a worker builds from a succeeded job (``jobrun.outputs``, table ``job_outputs``) and what the API does
with it: the report content is stored before the job is marked succeeded, its plot is drawn by a worker when first
asked for (``jobrun.drawing``: once, however many ask; asked again when the request's message was lost; a drawing
that fails is a 422, not a wait for ever); the result and plot views only stream or typeset what is stored -- an
API process answering ``?format=html`` and ``/plot`` of a finished job loads none of the report builder, the
meta-evaluation methods, the axioms, SciPy or matplotlib -- and a job that succeeded before outputs were stored
(none recorded) still gets the same report (built on demand) and a plot (drawn by a worker)."""

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
    for name in ("evaluation", "power"):
        assert not any(o.startswith("plot") for o in outputs(d, jobs[name]))  # none until asked for
    for job in jobs.values():
        d.plot(job)
    yield d, jobs, data
    d.ctx.db.dispose()


def outputs(d: Deployment, job: str) -> dict[str, str]:
    with d.ctx.db.session() as s:
        return dict(s.execute(select(JobOutput.name, JobOutput.blob_sha256).where(JobOutput.job_id == job)).all())


def test_the_worker_stores_the_report_and_the_plots_a_kind_offers(deployed: Any) -> None:
    d, jobs, _ = deployed
    reports = ["report", "report.html", "report.latex"]
    assert sorted(outputs(d, jobs["evaluation"])) == ["plot.png", "plot.requested", "plot.svg", *reports]
    assert sorted(outputs(d, jobs["power"])) == ["plot.png", "plot.requested", "plot.svg", *reports]
    assert sorted(outputs(d, jobs["significance"])) == ["plot.requested", "plot.unavailable", *reports]
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
    png = d.plot(legacy_eval)
    assert png.status_code == 200 and png.data.startswith(b"\x89PNG")
    document = d.get(f"/v1/jobs/{legacy}/result").json
    assert d.get(f"/v1/jobs/{legacy}/result?format=latex").get_data(as_text=True) == render_report(document, "latex")
    no_plot = d.plot(legacy)
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


def test_a_plot_is_asked_for_once_and_drawn_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Many first requests: one recorded request, one message; a worker draws it once (a second draw, as after a
    redelivery, finds it drawn); a request whose message was lost (older than REDRAW_SECONDS, nothing drawn) is
    sent again."""
    from evalserve.service.jobrun.drawing import draw_plots
    from evalserve.service.jobs import queries

    sent: list[list[object]] = []
    monkeypatch.setattr(queries, "publish", lambda celery, task, args, **kw: sent.append([task, *args]))
    d = Deployment(tmp_path)
    collection = d.post("/v1/collections", data={"name": "toy", "qrels": (io.BytesIO(qrels()), "q.txt")}).json["id"]
    job = d.finish(d.post("/v1/submissions", data={"collection": collection, "measures": "AP",
                                                  "run": [(io.BytesIO(run(1)), "a.txt")]}))
    answers = [d.get(f"/v1/jobs/{job}/plot?format={fmt}") for fmt in ("png", "svg", "png", "png")]
    assert [a.status_code for a in answers] == [202] * 4
    assert answers[0].json == {"state": "drawing", "detail": f"job {job}'s plot is being drawn; ask again after"
                                                             " Retry-After seconds"}
    assert sent == [["evalserve.draw_plots", job]]
    marker = outputs(d, job)["plot.requested"]
    with d.ctx.db.session() as s:  # its message lost a minute ago
        row = s.get(JobOutput, (job, "plot.requested"))
        assert row is not None
        row.blob_sha256 = d.ctx.blobs.put(s, json.dumps({"requested_at": "2020-01-01T00:00:00+00:00"}).encode())
    assert d.get(f"/v1/jobs/{job}/plot").status_code == 202
    assert sent == [["evalserve.draw_plots", job]] * 2 and outputs(d, job)["plot.requested"] != marker
    assert draw_plots(d.ctx, job) == "drawn"
    assert draw_plots(d.ctx, job) == "drawn before"
    assert d.get(f"/v1/jobs/{job}/plot").data.startswith(b"\x89PNG")
    assert len(sent) == 2
    d.ctx.db.dispose()


def test_a_plot_that_cannot_be_drawn_is_a_422_not_a_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import evaluation.meta.plots

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug in drawing")

    monkeypatch.setattr(evaluation.meta.plots, "score_distributions", broken)
    d = Deployment(tmp_path)
    collection = d.post("/v1/collections", data={"name": "toy", "qrels": (io.BytesIO(qrels()), "q.txt")}).json["id"]
    job = d.finish(d.post("/v1/submissions", data={"collection": collection, "measures": "AP",
                                                  "run": [(io.BytesIO(run(1)), "a.txt")]}))
    refused = d.plot(job)
    assert refused.status_code == 422 and refused.json["code"] == "plot-unavailable"
    assert refused.json["detail"] == "the plot could not be drawn (RuntimeError)"
    d.ctx.db.dispose()


def test_a_plot_of_an_unfinished_job_asks_nothing(tmp_path: Path) -> None:
    d = Deployment(tmp_path)
    collection = d.post("/v1/collections", data={"name": "toy", "qrels": (io.BytesIO(qrels()), "q.txt")}).json["id"]
    queued = d.post("/v1/submissions", data={"collection": collection, "measures": "AP",
                                             "run": [(io.BytesIO(run(1)), "a.txt")]}).json["id"]
    assert d.get(f"/v1/jobs/{queued}/plot").status_code == 409
    from evalserve.service.jobrun.drawing import draw_plots

    assert draw_plots(d.ctx, queued) == "skipped" and outputs(d, queued) == {}
    d.ctx.db.dispose()
