"""The end-of-task report of a small realistic campaign (TREC Web 2012 diversity: three teams and a baseline,
``test_tasks_live.campaign``) on real processes, both backends (issue 30's done-when): the organiser's first
request has a worker build the zip; its HTML renders in headless Chromium with every plot loaded, its LaTeX
compiles with pdflatex in two passes without column-width or label warnings, and its per-topic CSV equals
``evalserve evaluate --per-topic`` offline for every submission, exactly."""

from __future__ import annotations

import csv
import io
import json
import time
import zipfile
from pathlib import Path

import httpx
import pytest

from evalserve.cli.main import main as cli_main
from tests.browser import chromium, dump_dom, parse_html, screenshot  # noqa: F401 -- chromium is a fixture
from tests.latex import pdflatex  # noqa: F401 -- a fixture
from tests.service.test_task_report import ZIP_FILES, compile_twice
from tests.service.test_tasks_live import BASELINE, LIVE_ENV, MEASURES, TEAMS, Campaign, campaign  # noqa: F401

# LIVE_ENV (imported): the live fixture reads it from this module, for the campaign's webhook receiver

#: reports the page's images after load: id, naturalWidth, naturalHeight
PROBE = ("<script>window.addEventListener('load', () => document.body.setAttribute('data-images',"
         " JSON.stringify([...document.images].map(i => [i.id, i.naturalWidth, i.naturalHeight]))));</script>")


def _report(http: httpx.Client, task: str, fmt: str, timeout: float = 240) -> tuple[httpx.Response, int]:
    """The report, asked again after Retry-After while a worker builds it; and how many 202s came first."""
    deadline = time.monotonic() + timeout
    waited = 0
    while True:
        r = http.get(f"/v1/tasks/{task}/report", params={"format": fmt}, timeout=60)
        if r.status_code != 202 or time.monotonic() > deadline:
            return r, waited
        assert r.json()["state"] == "building" and int(r.headers["Retry-After"]) > 0
        waited += 1
        time.sleep(int(r.headers["Retry-After"]))


def test_the_end_of_task_zip_renders_compiles_and_equals_the_offline_per_topic_scores(
        campaign: Campaign, chromium: str, pdflatex: str, tmp_path: Path,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    with campaign.http("alice") as alice, campaign.http("bob") as bob, campaign.http(None) as anonymous:
        assert bob.get(f"/v1/tasks/{campaign.task}/report").status_code == 403
        assert anonymous.get(f"/v1/tasks/{campaign.task}/report").status_code == 401
        started = time.monotonic()
        r, waited = _report(alice, campaign.task, "zip")
        took = time.monotonic() - started
        assert r.status_code == 200, f"{r.status_code} {r.text[:500]}\n{campaign.live.log('worker')[-3000:]}"
        print(f"report built and served in {took:.1f} s")
        assert waited == 0 or took > 29, "the first request waits (parked) for the worker, up to 30 s"
        assert r.headers["content-type"] == "application/zip"
        again = alice.get(f"/v1/tasks/{campaign.task}/report", params={"format": "zip"},
                          headers={"If-None-Match": r.headers["ETag"]})
        assert again.status_code == 304, "built once, served as stored"
        html_page = alice.get(f"/v1/tasks/{campaign.task}/report", params={"format": "html"})
        assert html_page.status_code == 200 and html_page.headers["content-type"].startswith("text/html")
    with zipfile.ZipFile(io.BytesIO(r.content)) as z:
        files = {name.removeprefix("report/"): z.read(name) for name in z.namelist()}
    assert set(files) == ZIP_FILES
    assert files["report.html"] == html_page.content

    # the HTML in headless Chromium: every plot loaded and drawn
    page = tmp_path / "html" / "report.html"
    page.parent.mkdir()
    page.write_text(files["report.html"].decode().replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = parse_html(dump_dom(chromium, page.as_uri(), flags=("--virtual-time-budget=5000",)))
    images = json.loads(dom.find("body").attrs["data-images"])
    assert [i[0] for i in images] == ["plot-distributions", "plot-asl"], images
    assert all(width > 0 and height > 0 for _, width, height in images), images
    shot = tmp_path / "report.png"
    screenshot(chromium, page.as_uri(), shot, width=1280, height=5000)
    assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 50_000
    text = dom.text()
    for shown in ("team-bob", "team-carol", "team-dave", "organisers", "Provisional results", *MEASURES):
        assert shown in text, shown

    # the LaTeX: two pdflatex passes, no column-width or label warnings after the second
    compile_twice(pdflatex, files, tmp_path / "latex")

    # the per-topic CSV: exactly evalserve evaluate --per-topic offline, for every submission
    rows = list(csv.DictReader(io.StringIO(files["per-topic.csv"].decode())))
    runs = campaign.data / "trec-web-2012-runs" / "runs"
    qrels = campaign.data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt"
    submitted = {**TEAMS, "alice": BASELINE}
    assert {r["submission"] for r in rows} == set(campaign.submissions.values())
    for who, submission in campaign.submissions.items():
        out = tmp_path / f"{who}.json"
        capsys.readouterr()
        assert cli_main(["evaluate", "--qrels", str(qrels), "--run", str(runs / submitted[who]), "-m", *MEASURES,
                         "--per-topic", "--topics", "complete", "--format", "json", "-o", str(out)]) == 0
        offline = next(iter(json.loads(out.read_text())["runs"].values()))
        expected = {(m, topic): value for m in MEASURES for topic, value in offline[m]["per_topic"].items()}
        expected |= {(m, "all"): offline[m]["mean"] for m in MEASURES}
        mine = {(r["measure"], r["topic"]): float(r["value"]) for r in rows if r["submission"] == submission}
        assert mine == expected, who
