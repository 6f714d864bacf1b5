"""The end-of-task report (issue 30): ``GET /v1/tasks/{id}/report?format=html|latex|zip``, built once by a worker
(``shared_tasks.report.build_report``) when an organiser first asks for it (202 until then), served as stored
(ETag, ``Evalserve-Stale`` after its inputs changed), organisers only, every name escaped; its LaTeX compiles in two
pdflatex passes without column-width warnings and its per-topic CSV is what the per-topic route serves."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import textwrap
import zipfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast

import pytest

from evalserve.service.shared_tasks import report as report_module
from evalserve.service.shared_tasks.report import build_report, report_status
from evalserve.service.shared_tasks.report_render import build_zip, render_html, render_latex
from evalserve.service.store.models import Phase, Task
from tests.latex import COMPILE_TIMEOUT, pdflatex  # noqa: F401 -- a fixture
from tests.service.test_api import _is_problem
from tests.service.test_tasks import TaskApi, _three_teams, api

__all__ = ["api"]  # the task tests' fixture, used here

ZIP_FILES = {"report.html", "report.tex", "report.json", "leaderboard.csv", "significance.csv", "per-topic.csv",
             "plots/distributions.png", "plots/distributions.svg", "plots/asl.png", "plots/asl.svg"}


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[list[object]]:
    """The build requests published (the Flask test client has no worker)."""
    published: list[list[object]] = []
    monkeypatch.setattr(report_module, "publish", lambda celery, task, args, **kw: published.append([task, *args]))
    return published


def _phase_id(api: TaskApi, task_id: str) -> str:
    with api.ctx.db.session() as s:
        return str(s.query(Phase).filter(Phase.task_id == task_id).one().id)


def _build(api: TaskApi, task_id: str) -> str:
    return build_report(api.ctx.db, api.ctx.blobs, task_id, _phase_id(api, task_id), 1)


def _zip(api: TaskApi, task_id: str) -> dict[str, bytes]:
    r = api.call("GET", f"/v1/tasks/{task_id}/report?format=zip", "alice")
    assert r.status_code == 200 and r.mimetype == "application/zip", r.get_data(as_text=True)[:300]
    with zipfile.ZipFile(io.BytesIO(r.data)) as z:
        return {name.removeprefix("report/"): z.read(name) for name in z.namelist()}


def test_the_first_request_asks_a_worker_once_and_the_report_is_then_served_as_stored(
        api: TaskApi, sent: list[list[object]]) -> None:
    task_id = _three_teams(api)
    first = api.call("GET", f"/v1/tasks/{task_id}/report", "alice")
    assert first.status_code == 202 and first.json["state"] == "building", first.get_data(as_text=True)
    assert int(first.headers["Retry-After"]) > 0
    assert sent == [["evalserve.build_report", task_id, _phase_id(api, task_id), 1]]
    assert api.call("GET", f"/v1/tasks/{task_id}/report?format=zip", "alice").status_code == 202
    assert len(sent) == 1, "asked for once"
    assert _build(api, task_id) == "built"
    assert _build(api, task_id) == "built before", "computed once"

    page = api.call("GET", f"/v1/tasks/{task_id}/report?format=html", "alice")
    assert page.status_code == 200 and page.mimetype == "text/html"
    text = page.get_data(as_text=True)
    for shown in ("team-bob", "team-carol", "team-dave", "Provisional results", "Significance matrices",
                  "Metric Unanimity", "Provenance", 'id="plot-distributions"', 'id="plot-asl"', "nDCG@10", "P@5"):
        assert shown in text, shown
    assert "inline" in page.headers["Content-Disposition"]
    tag = page.headers["ETag"]
    again = api.call("GET", f"/v1/tasks/{task_id}/report?format=html", "alice", headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.headers["ETag"] == tag
    latex = api.call("GET", f"/v1/tasks/{task_id}/report?format=latex", "alice")
    assert latex.status_code == 200 and latex.get_data(as_text=True).startswith("\\documentclass")
    assert latex.headers["ETag"] != tag and "attachment" in latex.headers["Content-Disposition"]
    files = _zip(api, task_id)
    assert set(files) == ZIP_FILES
    assert files["plots/distributions.png"].startswith(b"\x89PNG") and b"<svg" in files["plots/asl.svg"]
    assert files["report.html"].decode() == text
    assert len(sent) == 1


def test_a_changed_input_serves_the_stored_report_as_stale_while_a_new_one_is_built(
        api: TaskApi, sent: list[list[object]]) -> None:
    task_id = _three_teams(api)
    api.call("GET", f"/v1/tasks/{task_id}/report", "alice")
    _build(api, task_id)
    assert api.call("GET", f"/v1/tasks/{task_id}/report", "alice").headers.get("Evalserve-Stale") is None
    assert api.submit(task_id, "bob", "mid").status_code == 202
    api.work()
    stale = api.call("GET", f"/v1/tasks/{task_id}/report", "alice")
    assert stale.status_code == 200 and stale.headers["Evalserve-Stale"] == "true"
    assert len(sent) == 2, "a worker is asked to build the new one"
    assert _build(api, task_id) == "built"
    fresh = api.call("GET", f"/v1/tasks/{task_id}/report", "alice")
    assert fresh.headers.get("Evalserve-Stale") is None and fresh.headers["ETag"] != stale.headers["ETag"]
    per_topic = _zip(api, task_id)["per-topic.csv"].decode()
    assert per_topic.count("good.run") and per_topic.count("mid.run"), "every evaluated submission of the phase"


def test_only_organisers_read_reports_and_nobody_else_starts_a_build(api: TaskApi, sent: list[list[object]]) -> None:
    task_id = _three_teams(api)
    _is_problem(api.call("GET", f"/v1/tasks/{task_id}/report", "bob"), 403, "organisers-only")
    _is_problem(api.call("GET", f"/v1/tasks/{task_id}/report", "reader"), 403, "organisers-only")
    _is_problem(api.client.get(f"/v1/tasks/{task_id}/report"), 401, "unauthorized")
    private = _three_teams(api, visibility="private")
    _is_problem(api.call("GET", f"/v1/tasks/{private}/report", "reader"), 404, "not-found")
    assert sent == []
    _is_problem(api.call("GET", f"/v1/tasks/{task_id}/report?format=pdf", "alice"), 422, "invalid-request")
    _is_problem(api.call("GET", f"/v1/tasks/{task_id}/report?phase=nope", "alice"), 404, "not-found")
    empty = str(api.task()["id"])
    _is_problem(api.call("GET", f"/v1/tasks/{empty}/report", "alice"), 409, "too-few-submissions")
    assert sent == []


def test_the_per_topic_csv_is_what_the_per_topic_route_serves(api: TaskApi, sent: list[list[object]]) -> None:
    task_id = _three_teams(api)
    api.call("GET", f"/v1/tasks/{task_id}/report", "alice")
    _build(api, task_id)
    files = _zip(api, task_id)
    rows = list(csv.DictReader(io.StringIO(files["per-topic.csv"].decode())))
    subs = api.call("GET", f"/v1/tasks/{task_id}/submissions", "alice").json
    assert {r["submission"] for r in rows} == {s["id"] for s in subs}
    for sub in subs:
        served = api.call("GET", f"/v1/tasks/{task_id}/submissions/{sub['id']}/per-topic", "alice").json
        mine = {(r["measure"], r["topic"]): float(r["value"]) for r in rows
                if r["submission"] == sub["id"] and r["topic"] != "all"}
        assert mine == {(m, t): v for m, by in served["per_topic"].items() for t, v in by.items()}
        means = {r["measure"]: float(r["value"]) for r in rows if r["submission"] == sub["id"] and r["topic"] == "all"}
        assert means == served["scores"], "each measure's mean as topic 'all', as the offline CSV writes it"
    board = list(csv.DictReader(io.StringIO(files["leaderboard.csv"].decode())))
    keys = {s["id"] for s in subs}
    assert [r["team"] for r in board] == ["team-bob", "team-carol", "team-dave"]
    for r in board:  # better_than as submission keys on every measure
        for m in ("nDCG@10", "P@5", "AP"):
            assert set(r[f"better_than[{m}]"].split()) <= keys


def test_names_are_escaped_in_every_format(api: TaskApi, sent: list[list[object]], tmp_path: Path,
                                           pdflatex: str) -> None:  # noqa: F811
    evil = "<script>alert(1)</script> & \\input{/etc/passwd} $x^2$ %_#~ =HYPERLINK(\"x\")"
    task_id = str(api.task(name=f"Task {evil}", description=f"About {evil}")["id"])
    for who, run, team in (("bob", "good", evil), ("carol", "mid", "=cmd|' /C calc'!A0"), ("dave", "poor", "d")):
        assert api.register(task_id, who, team=team).status_code == 201
        assert api.submit(task_id, who, run).status_code == 202
    api.work()
    api.call("GET", f"/v1/tasks/{task_id}/report", "alice")
    _build(api, task_id)
    files = _zip(api, task_id)
    page = files["report.html"].decode()
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    tex = files["report.tex"].decode()
    assert "\\input{" not in tex and "\\textbackslash{}input\\{/etc/passwd\\}" in tex
    for name in ("leaderboard.csv", "per-topic.csv"):
        cells = [c for row in csv.reader(io.StringIO(files[name].decode())) for c in row]
        assert not any(c.startswith(("=", "+", "@")) for c in cells), name
    compile_twice(pdflatex, files, tmp_path / "evil", overfull=True)


def compile_twice(executable: str, files: dict[str, bytes], directory: Path, *, overfull: bool = False) -> str:
    """Unpack the report and run pdflatex twice; the second pass's log, asserted free of rerun warnings (and of
    column-width warnings from the first pass on, and of overfull boxes unless ``overfull``: a name of one long
    word may stick out of its column)."""
    for name, data in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_bytes(data)
    log = ""
    for number in (1, 2):
        done = subprocess.run([executable, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape",
                               "report.tex"], cwd=directory, capture_output=True, text=True, timeout=COMPILE_TIMEOUT)
        log = (directory / "report.log").read_text(errors="replace")
        assert done.returncode == 0, log[-3000:]
        # fixed column widths: the longtables' headers and bodies agree from the first pass on
        assert "Column widths have changed" not in log, f"pass {number}"
        assert overfull or "Overfull \\hbox" not in log, f"pass {number}: a column wider than its table"
    for warning in ("Column widths have changed", "Label(s) may have changed", "Rerun"):
        assert warning not in log, f"pass 2: {warning}"
    assert (directory / "report.pdf").read_bytes().startswith(b"%PDF")
    return log


def test_the_latex_compiles_in_two_passes_without_column_width_warnings(
        api: TaskApi, sent: list[list[object]], tmp_path: Path, pdflatex: str) -> None:  # noqa: F811
    task_id = _three_teams(api)
    api.call("GET", f"/v1/tasks/{task_id}/report", "alice")
    _build(api, task_id)
    files = _zip(api, task_id)
    assert "\\begin{longtable}" in files["report.tex"].decode()
    compile_twice(pdflatex, files, tmp_path / "report")


def _content(**changes: Any) -> dict[str, Any]:
    """A small report content (two submissions, one measure) for the typesetting alone."""
    row = {"rank": 1, "key": "s1", "label": "a", "baseline": False, "scores": {"AP": 0.5}, "extra": {"team": "a"}}
    other = {**row, "rank": 2, "key": "s2", "label": "b", "scores": {"AP": 0.25}, "extra": {"team": "b"}}
    content: dict[str, Any] = {
        "status": "provisional", "measures": ["AP"], "version": 1, "meta": None, "meta_note": "none",
        "task": {"id": "t1", "name": "T", "description": "", "primary_measure": "AP", "sort_order": "desc",
                 "ties": "trec", "topics": "complete"},
        "phase": {"name": "test", "opens_at": "2026-01-01T00:00:00+00:00", "closes_at": "2026-02-01T00:00:00+00:00"},
        "leaderboard": {"rows": [row, other], "order": "desc", "topics": ["1", "2"],
                        "significance": {"test": "t", "correction": "holm", "alpha": 0.05}},
        "significance": {"AP": {"better_than": {"s1": ["s2"]}, "pairs": [
            {"a": "s1", "b": "s2", "mean_difference": 0.25, "p_value": 0.01, "p_adjusted": 0.01,
             "significant": True}]}},
        "per_topic": [], "definitions": [{"name": "AP", "summary": "average precision", "reference": ""}],
        "provenance": {"evalserve_version": "0", "generated_at": "2026-02-02T00:00:00+00:00",
                       "task_created_at": "2026-01-01T00:00:00+00:00", "finalised_at": None, "collection": "c",
                       "judgments_sha256": "0" * 64, "runs": []},
    }
    content.update(changes)
    return content


def test_measure_advice_is_shown_when_the_meta_evaluation_carries_it(pdflatex: str,  # noqa: F811
                                                                     tmp_path: Path) -> None:
    meta = {"options": {"resamples": 1000, "alpha": 0.05}, "methods": {}}
    assert "Measure advice" not in render_html(_content(meta=meta), {})
    advised = {**meta, "advice": {"measures": {"AP": {"unanimity": 0.9, "discriminative_power": 0.5,
                                                      "tau_with_primary": 1.0, "axioms": {"x": "satisfied"}}},
                                  "sentences": ["AP <is> the measure to use & cite."]}}
    page = render_html(_content(meta=advised), {})
    assert 'id="advice"' in page and "AP &lt;is&gt; the measure to use &amp; cite." in page
    assert "0.9000" in page and "axioms" not in page
    tex = render_latex(_content(meta=advised), {})
    assert "Measure advice" in tex and "\\textless{}is\\textgreater{}" in tex
    formatted = {**meta, "advice": {"measures": {"AP": {"unanimity": 0.9}}, "sentences": ["Use AP."],
                                    "table": {"header": ["measure", "MU", "power"], "rows": [["AP", "0.9000", "50%"]]}}}
    page = render_html(_content(meta=formatted), {})
    assert "<th>MU</th>" in page and "<td>50%</td>" in page and "<p>Use AP.</p>" in page
    header = ["measure", "MU", "significant pairs", "power", "tau with primary", "relevance", "diversity"]
    wide = {**meta, "advice": {"sentences": ["Use AP."], "table": {"header": header, "rows": [
        ["alpha_nDCG@20", "0.9070", "27/45", "60.0%", "1.000", "5/7", "3/4"]]}}}
    compile_twice(pdflatex, {"report.tex": render_latex(_content(meta=wide), {}).encode()}, tmp_path / "advice")


def test_the_report_says_final_once_the_task_is_finalised() -> None:
    class Finalised:
        finalised_at = datetime(2026, 3, 1, tzinfo=timezone.utc)

    class Open:
        finalised_at = None

    assert report_status(cast(Task, Finalised())) == ("final", Finalised.finalised_at)
    assert report_status(cast(Task, Open())) == ("provisional", None)
    content = _content(status="final", provenance={**_content()["provenance"], "finalised_at": "2026-03-01"})
    assert "Final results (finalised 2026-03-01)" in render_html(content, {})
    assert "Provisional" in render_html(_content(), {})
    with zipfile.ZipFile(io.BytesIO(build_zip(_content(), {}))) as z:
        assert "report/report.tex" in z.namelist()


def test_the_api_process_never_draws_or_meta_evaluates_for_a_report(api: TaskApi, sent: list[list[object]],
                                                                    tmp_path: Path) -> None:
    """The views serve the stored zip (or ask a worker): matplotlib and the meta-evaluation methods stay out of the
    API process, before and after the report is built."""
    task_id = _three_teams(api)
    script = textwrap.dedent(f"""
        import json, sys
        import evalserve.service.shared_tasks.report as report
        from evalserve.service.core.config import Settings
        from evalserve.service.web.app import create_app
        report.publish = lambda *args, **kwargs: None
        app = create_app(Settings.from_env({{"EVALSERVE_DATA_DIR": {str(tmp_path)!r}}}), migrate=False)
        http, auth = app.test_client(), {{"Authorization": "Bearer {api.tokens['alice']}"}}
        answers = [http.get(f"/v1/tasks/{task_id}/report?format={{fmt}}", headers=auth).status_code
                   for fmt in ("html", "latex", "zip")]
        heavy = [m for m in ("matplotlib", "evaluation.meta.methods", "evaluation.meta.plots") if m in sys.modules]
        print(json.dumps({{"answers": answers, "heavy": heavy}}))
    """)

    def served() -> dict[str, Any]:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
        shown: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
        return shown

    assert served() == {"answers": [202, 202, 202], "heavy": []}
    assert _build(api, task_id) == "built"
    assert served() == {"answers": [200, 200, 200], "heavy": []}


def test_a_finalised_tasks_report_says_final_with_the_final_hash_and_an_unranked_baseline(
        api: TaskApi, sent: list[list[object]], tmp_path: Path, pdflatex: str) -> None:  # noqa: F811
    task_id = _three_teams(api)
    assert api.register(task_id, "alice", "organisers").status_code == 201
    assert api.submit(task_id, "alice", "good", baseline="true", description="BM25").status_code == 202
    api.work()
    api.call("GET", f"/v1/tasks/{task_id}/report", "alice")
    _build(api, task_id)
    provisional = _zip(api, task_id)
    assert b"Provisional results" in provisional["report.html"]
    final = api.call("POST", f"/v1/tasks/{task_id}/finalise", "alice")
    assert final.status_code == 200, final.get_data(as_text=True)
    stale = api.call("GET", f"/v1/tasks/{task_id}/report", "alice")
    assert stale.headers["Evalserve-Stale"] == "true", "finalising changes the report"
    assert _build(api, task_id) == "built"
    files = _zip(api, task_id)
    page = files["report.html"].decode()
    content = json.loads(files["report.json"])
    assert content["status"] == "final" and "Final results (finalised " in page
    assert content["provenance"]["final_hash"] == final.json["hash"] in page
    assert content["provenance"]["leaderboard_hash"] == final.json["hash"], "the leaderboard the route serves"
    board = list(csv.DictReader(io.StringIO(files["leaderboard.csv"].decode())))
    assert [(r["team"], r["rank"]) for r in board] == [("organisers", ""), ("team-bob", "1"), ("team-carol", "2"),
                                                       ("team-dave", "3")], "the baseline shown, unranked"
    assert not any(r[f"better_than[{m}]"] for r in board if r["baseline"] == "true" for m in ("nDCG@10", "AP"))
    compile_twice(pdflatex, files, tmp_path / "final")
