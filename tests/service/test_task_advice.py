"""Measure advice for organisers (issue 30): ``GET /v1/tasks/{id}/meta`` adds the advice (a table and sentences)
to the task's meta-evaluation, typeset as HTML and LaTeX on request; every query option is honoured or refused,
never ignored; and a task's organiser (nobody else) may meta-evaluate the runs submitted to its task with
``POST /v1/meta-evaluations``, including the ``advice`` method."""

from __future__ import annotations

from pathlib import Path

from tests.browser import chromium  # noqa: F401
from tests.latex import compile_pdf, pdflatex  # noqa: F401
from tests.service.test_api import _file, _is_problem
from tests.service.test_tasks import QRELS, TaskApi, _three_teams, api

__all__ = ["api"]  # the task tests' fixture, used here


def test_the_task_meta_evaluation_carries_the_advice_of_its_methods(api: TaskApi) -> None:
    task_id = _three_teams(api)
    doc = api.call("GET", f"/v1/tasks/{task_id}/meta?resamples=200&seed=3", "alice").json
    advice = doc["advice"]
    task = api.call("GET", f"/v1/tasks/{task_id}", "alice").json
    assert advice["primary"] == task["primary_measure"] and list(advice["measures"]) == doc["measures"]
    power = doc["methods"]["discriminative-power"]["discriminative_power"]
    for m, row in advice["measures"].items():
        assert row["significant_pairs"] == power[m]["significant_pairs"] and row["pairs"] == 3
        assert row["unanimity"] == doc["methods"]["unanimity"]["unanimity"][m]
        assert row["tau_with_primary"] == doc["methods"]["correlation"]["correlation"][m][advice["primary"]]
        assert set(row["axioms"]) >= {"Pri", "Deep", "AspRel"}
    most = max(power[m]["significant_pairs"] for m in power)
    assert set(advice["best"]["discriminative_power"]) == {m for m in power if power[m]["significant_pairs"] == most}
    assert advice["sentences"] and len(advice["table"]["rows"]) == len(doc["measures"])
    assert (advice["alpha"], advice["resamples"], advice["runs"], advice["topics"]) == (0.05, 200, 3, doc["topics"])


def test_html_and_latex_typeset_the_advice_escaped(api: TaskApi, pdflatex: str,  # noqa: F811
                                                   tmp_path: Path) -> None:
    task_id = str(api.task(name="Web <b>2012</b> & 100% #1")["id"])
    for who, run in (("bob", "good"), ("carol", "mid")):
        assert api.register(task_id, who, team=f"{who} <script>alert(1)</script> $_\\").status_code == 201
        assert api.submit(task_id, who, run).status_code == 202
    api.work()
    doc = api.call("GET", f"/v1/tasks/{task_id}/meta", "alice").json
    r = api.call("GET", f"/v1/tasks/{task_id}/meta?format=html", "alice")
    assert r.status_code == 200 and r.mimetype == "text/html"
    page = r.get_data(as_text=True)
    assert "<script>" not in page and "&lt;script&gt;" in page and "Web &lt;b&gt;2012&lt;/b&gt;" in page
    assert "Recommendation table (significant: run pairs" in page and "Axiomatic profiles" in page
    from html import escape
    for sentence in doc["advice"]["sentences"]:
        assert escape(sentence, quote=True) in page
    r = api.call("GET", f"/v1/tasks/{task_id}/meta?format=latex", "alice")
    assert r.status_code == 200 and r.mimetype == "application/x-latex"
    pdf, log = compile_pdf(pdflatex, r.get_data(as_text=True), tmp_path)
    assert pdf.startswith(b"%PDF")
    assert "Overfull \\hbox" not in log, "every table fits the page"


def test_every_option_is_honoured_or_refused(api: TaskApi) -> None:
    task_id = _three_teams(api)
    for query, field in (("selection=everything", "selection"), ("format=csv", "format"), ("nope=1", "nope"),
                         ("per_topic=true", "per_topic"), ("resamples=5", "resamples")):
        r = api.call("GET", f"/v1/tasks/{task_id}/meta?{query}", "alice")
        body = _is_problem(r, 422, "invalid-request")
        assert field in r.get_data(as_text=True), (query, body)
    latest = api.call("GET", f"/v1/tasks/{task_id}/meta", "alice").json
    assert latest["selection"] == "latest" and len(latest["runs"]) == 3
    assert api.submit(task_id, "bob", "poor", description="second try").status_code == 202
    api.work()
    latest = api.call("GET", f"/v1/tasks/{task_id}/meta", "alice").json
    every = api.call("GET", f"/v1/tasks/{task_id}/meta?selection=all", "alice").json
    assert len(latest["runs"]) == 3 and len(every["runs"]) == 4 and every["selection"] == "all"
    assert len({r["label"] for r in every["runs"]}) == 4 and every["advice"]["runs"] == 4
    assert every["advice"]["measures"][every["measures"][0]]["pairs"] == 6
    page = api.call("GET", f"/v1/tasks/{task_id}/meta?selection=all&format=html", "alice").get_data(as_text=True)
    assert "all: " in page


def _submitted_runs(api: TaskApi, task_id: str) -> list[str]:
    subs = api.call("GET", f"/v1/tasks/{task_id}/submissions", "alice").json
    return [s["run"]["id"] for s in subs]


def test_an_organiser_meta_evaluates_its_tasks_runs_and_nobody_else_gains_access(api: TaskApi) -> None:
    task_id = _three_teams(api)
    task = api.call("GET", f"/v1/tasks/{task_id}", "alice").json
    runs = _submitted_runs(api, task_id)
    body = {"method": "advice", "collection": task["collection"], "runs": runs, "measures": task["measures"],
            "options": {"resamples": 200, "primary": task["primary_measure"]}}
    r = api.call("POST", "/v1/meta-evaluations", "alice", json=body)
    assert r.status_code == 202, r.get_data(as_text=True)
    api.work()
    job = api.call("GET", f"/v1/jobs/{r.json['id']}", "alice").json
    assert job["state"] == "succeeded", job
    result = api.call("GET", f"/v1/jobs/{r.json['id']}/result?format=json", "alice").json
    assert list(result["advice"]) == task["measures"] and result["sentences"]
    assert result["primary"] == task["primary_measure"]
    # a participant of the task may not meta-evaluate the other teams' runs, nor may an outsider
    for who in ("bob", "carol"):
        _is_problem(api.call("POST", "/v1/meta-evaluations", who, json=body), 404, "not-found")
    # the organiser of another task gains nothing over this one's runs, with its own collection or this one's
    from evalserve.service.access.tokens import create_token

    api.tokens["erin"] = create_token(api.app.extensions["evalserve"].db, "erin", ("read", "submit"))[1]
    created = api.call("POST", "/v1/collections", "erin", data={"name": "own", "qrels": (_file(QRELS), "q")})
    own = created.json["id"]
    other = api.call("POST", "/v1/tasks", "erin", json={"name": "another", "collection": own,
                                                         "measures": ["AP"]})
    assert other.status_code == 201, other.get_data(as_text=True)
    for collection in (own, task["collection"]):
        _is_problem(api.call("POST", "/v1/meta-evaluations", "erin", json={**body, "collection": collection}),
                    404, "not-found")


def test_the_tasks_advice_equals_evalserve_meta_advice_offline(shared_data: Path, tmp_path: Path) -> None:
    """On the real TREC Web 2012 runs of three teams: the served advice is the CLI's for the same runs and seed."""
    from tests.service.test_task_meta import _offline, _web2012_task

    made = TaskApi(tmp_path / "service")
    try:
        task_id = _web2012_task(made, shared_data)
        served = made.call("GET", f"/v1/tasks/{task_id}/meta?seed=5", "alice").json["advice"]
    finally:
        made.app.extensions["evalserve"].db.dispose()
    offline = _offline("advice", shared_data, tmp_path, "--seed", "5", "--primary", "nDCG@20")
    assert served["measures"] == offline["advice"]
    for key in ("primary", "table", "sentences", "best", "worst", "runs", "topics", "alpha", "resamples"):
        assert served[key] == offline[key], key


def test_the_advice_page_fits_a_normal_window(shared_data: Path, tmp_path: Path,
                                              chromium: str) -> None:  # noqa: F811
    """At 1,280 px nothing of the page scrolls sideways: neither the page nor any of its tables."""
    from tests.browser import dump_dom
    from tests.service.test_task_meta import _web2012_task

    made = TaskApi(tmp_path / "service")
    try:
        task_id = _web2012_task(made, shared_data)
        page = made.call("GET", f"/v1/tasks/{task_id}/meta?format=html", "alice").get_data(as_text=True)
    finally:
        made.app.extensions["evalserve"].db.dispose()
    probe = ("<script>window.addEventListener('load', () => { const wide = [document.documentElement,"
             " ...document.querySelectorAll('.scroll')].filter(e => e.scrollWidth > e.clientWidth).length;"
             " document.body.setAttribute('data-wide', String(wide)); });</script>")
    measured = page.replace('<meta http-equiv="Content-Security-Policy"', '<meta name="csp-removed"')
    path = tmp_path / "advice.html"
    path.write_text(measured.replace("</body>", probe + "</body>"))
    dom = dump_dom(chromium, path.as_uri(), flags=("--window-size=1280,900", "--virtual-time-budget=2000"))
    assert 'data-wide="0"' in dom, "something scrolls sideways at 1280 px"


def test_meta_evaluations_refuse_policies_an_evaluation_job_would_ignore(api: TaskApi) -> None:
    """``ties``/``topics`` apply to runs evaluated first; with an evaluation job they are its own, or refused."""
    task_id = _three_teams(api)
    sub = api.call("GET", f"/v1/tasks/{task_id}/submissions", "alice").json[0]
    job = api.call("GET", f"/v1/tasks/{task_id}/submissions/{sub['id']}", "alice").json["evaluations"][0]["job"]
    own = api.call("GET", f"/v1/jobs/{job}", "alice").json["request"]
    other = "rank" if own["ties"] != "rank" else "trec"
    body = {"method": "unanimity", "evaluation": job}
    refused = _is_problem(api.call("POST", "/v1/meta-evaluations", "alice", json={**body, "ties": other}), 422,
                          "conflicting-inputs")
    assert f"ties={own['ties']}" in refused["detail"]
    for given in ({}, {"ties": own["ties"], "topics": own["topics"]}):
        assert api.call("POST", "/v1/meta-evaluations", "alice", json={**body, **given}).status_code == 202
