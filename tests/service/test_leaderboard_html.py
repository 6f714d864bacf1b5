"""The server-rendered leaderboard page: structure, formatting, significance letters, escaping of user input,
edge cases (empty board, nulls, no baseline), and the page as headless Chromium renders it."""

from __future__ import annotations

import copy
import functools
import http.server
import math
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalserve.service.web.leaderboard_html import render_leaderboard_html
from tests import browser
from tests.browser import Element, chromium, dump_dom, parse_html, screenshot  # noqa: F401 - chromium: fixture

ROOT = Path(__file__).resolve().parents[2]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MEASURES = ["alpha_nDCG@20", "ERR_IA@20", "P@10"]


def row(key: str, rank: int | None, team: str, primary: float | None, *, baseline: bool = False,
        better_than: tuple[str, ...] = (), delta_best: float | None = 0.0, delta_baseline: float | None = None,
        others: tuple[float | None, float | None] = (0.4, 0.3), **extra: Any) -> dict[str, Any]:
    """One leaderboard row as the engine writes it (``extra`` as the service fills it)."""
    return {
        "rank": rank, "key": key, "label": team, "baseline": baseline,
        "scores": dict(zip(MEASURES, (primary, *others))),
        "delta_best": delta_best, "delta_baseline": delta_baseline,
        "better_than": list(better_than), "worse_than": [], "n_topics": 50,
        "extra": {"submission": key, "participant": f"part_{team}", "team": team, "run": f"{team}-run",
                  "description": "", "submitted_at": "2026-11-20T10:00:00+00:00", **extra},
    }


def document(rows: list[dict[str, Any]], **changes: Any) -> dict[str, Any]:
    """A leaderboard document around ``rows`` (TREC Web 2012 diversity, test phase, paired t-test with Holm)."""
    out: dict[str, Any] = {
        "task": {"id": "task_1", "name": "TREC Web 2012 diversity", "description": "Diversify the ClueWeb09 runs."},
        "phase": {"name": "test", "opens_at": "2026-11-01T00:00:00+00:00", "closes_at": "2026-12-01T00:00:00+00:00"},
        "version": 2, "generated_at": "2026-11-22T09:00:00+00:00", "selection": "latest",
        "measures": list(MEASURES), "primary": MEASURES[0], "order": "desc",
        "significance": {"test": "t", "correction": "holm", "alpha": 0.05, "resamples": None, "seed": 0},
        "topics": [str(t) for t in range(151, 201)],
        "rows": rows, "pairs": [], "pending": 0,
    }
    out.update(changes)
    return out


def four_rows() -> list[dict[str, Any]]:
    """a beats c and d, b beats d (better_than deliberately out of row order); c, d beat nobody."""
    return [
        row("sub_a", 1, "team-a", 0.51, better_than=("sub_d", "sub_c")),
        row("sub_b", 2, "team-b", 0.47, better_than=("sub_d",), delta_best=-0.04),
        row("sub_c", 3, "team-c", 0.40, delta_best=-0.11),
        row("sub_d", 4, "team-d", 0.31, delta_best=-0.20),
    ]


def realistic() -> dict[str, Any]:
    """Six submissions, one of them the organisers' baseline, significance marks, a missing score, user input
    that tries to run script, two submissions pending."""
    rows = [
        row("sub_1", 1, "uogTr", 0.5123, better_than=("sub_3", "sub_4", "sub_5", "sub_6"), delta_baseline=0.1401,
            others=(0.4410, 0.3520), run="uogTrA44xi", description="BM25 + xQuAD diversification over Wikipedia "
            "aspects", submitted_at="2026-11-20T10:00:00+00:00"),
        row("sub_2", 2, "ICTNET", 0.4987, better_than=("sub_5", "sub_6"), delta_best=-0.0136, delta_baseline=0.1265,
            others=(0.4302, 0.3400), run="ICTNET12ADR3", description="learning to rank, 42 features",
            submitted_at="2026-11-21T17:45:12+01:00"),
        row("sub_3", 3, "Hiei-lab", 0.4410, better_than=("sub_6",), delta_best=-0.0713, delta_baseline=0.0688,
            others=(None, 0.3020), run="qutwb", description=""),
        row("sub_4", 4, '<script>document.title="pwned"</script>', 0.4102, delta_best=-0.1021,
            delta_baseline=0.0380, others=(0.3511, 0.2960), run="x<b>bold</b>",
            description='<img src=x onerror="document.title=\'pwned\'">'),
        row("sub_5", None, "organisers", 0.3722, baseline=True, delta_best=-0.1401, delta_baseline=0.0,
            others=(0.3104, 0.2540), run="bm25-baseline", description="BM25, k1=0.9 b=0.4"),
        row("sub_6", 5, "DFalah", None, delta_best=None, delta_baseline=None, others=(0.1012, 0.1100),
            run="DFalah121A", description="failed on 3 topics"),
    ]
    return document(rows, pending=2)


def page(doc: dict[str, Any]) -> tuple[str, Element]:
    """The rendered markup and its parsed tree."""
    markup = render_leaderboard_html(doc)
    return markup, parse_html(markup)


def entries(tree: Element) -> list[Element]:
    return tree.find("table", id="leaderboard").find("tbody").find_all("tr", class_="entry")


def cells(tr: Element) -> list[Element]:
    return [c for c in tr.children if isinstance(c, Element) and c.tag in ("td", "th")]


def headers(tree: Element) -> list[str]:
    return [th.text() for th in tree.find("thead").find_all("th")]


# ---- the renderer ----------------------------------------------------------------------------------------------


def test_title_heading_phase_window_in_utc_version_and_generated_at() -> None:
    doc = document(four_rows(), phase={"name": "test", "opens_at": "2026-11-01T01:00:00+01:00", "closes_at": None},
                   generated_at="2026-11-22T09:00:00Z")
    _, tree = page(doc)
    assert tree.find("title").text() == "TREC Web 2012 diversity leaderboard"
    assert tree.find("h1").text() == "TREC Web 2012 diversity"
    assert tree.find("p", class_="description").text() == "Diversify the ClueWeb09 runs."
    facts = {div.find("dt").text(): div.find("dd").text() for div in tree.find("dl", class_="facts").find_all("div")}
    assert facts == {"Phase": "test (2026-11-01 00:00 UTC – open-ended)", "Judgments": "version 2",
                     "Generated at": "2026-11-22 09:00 UTC"}
    times = [t.attrs["datetime"] for t in tree.find("dl", class_="facts").find_all("time")]
    assert times == ["2026-11-01T00:00:00+00:00", "2026-11-22T09:00:00+00:00"]
    assert "Phase" not in page(document(four_rows(), phase=None))[1].find("dl", class_="facts").text()


def test_rows_in_document_order_with_ranks_teams_runs_and_four_decimals() -> None:
    _, tree = page(document(four_rows()))
    trs = entries(tree)
    assert [tr.attrs["data-key"] for tr in trs] == ["sub_a", "sub_b", "sub_c", "sub_d"]
    assert headers(tree) == ["Rank", "Team", "Run", "alpha_nDCG@20↑ (primary measure, higher is better)",
                             "ERR_IA@20", "P@10", "Δ best"]
    first = [c.text() for c in cells(trs[0])]
    assert first == ["1", "a team-a", "team-a-run2026-11-20 10:00 UTC", "0.5100cd", "0.4000", "0.3000", "0.0000"]
    assert [c.text() for c in cells(trs[1])][6] == "−0.0400"
    caption = tree.find("caption").text()
    assert caption == ("Ranked by alpha_nDCG@20 (higher is better), latest submission of each participant; "
                       "means over 50 topics.")


def test_primary_measure_is_bold_and_carries_the_order_arrow() -> None:
    _, tree = page(document(four_rows()))
    primary = tree.find("thead").find_all("th", class_="primary")
    assert len(primary) == 1 and primary[0].attrs["aria-sort"] == "descending"
    assert primary[0].find("span", class_="arrow").text() == "↑"
    for tr in entries(tree):
        scores = [c for c in cells(tr) if "num" in c.classes][:3]
        assert "primary" in scores[0].classes
        assert scores[0].find("strong").text() + scores[0].find("sup").text() == scores[0].text()
        assert all(not c.find_all("strong") and "primary" not in c.classes for c in scores[1:])

    _, ascending = page(document(four_rows(), order="asc"))
    th = ascending.find("thead").find("th", class_="primary")
    assert th.attrs["aria-sort"] == "ascending" and th.find("span", class_="arrow").text() == "↓"
    assert "(lower is better)" in ascending.find("caption").text()


def test_significance_letters_and_superscripts() -> None:
    rows = four_rows()
    rows[2]["better_than"] = ["sub_unknown"]  # a key not on the board marks nothing
    _, tree = page(document(rows))
    trs = entries(tree)
    assert [tr.find("span", class_="letter").text() for tr in trs] == ["a", "b", "c", "d"]
    marks = [tr.find("td", class_="primary").find("sup", class_="sig").text() for tr in trs]
    assert marks == ["cd", "d", "", ""]
    assert trs[0].find("sup", class_="sig").attrs["title"] == "significantly better than rows c, d"
    assert trs[1].find("sup", class_="sig").attrs["title"] == "significantly better than row d"
    # every measure has its marks (shown one measure at a time: the primary's unless the reader picks another)
    assert all(len(tr.find_all("sup")) == len(MEASURES) for tr in trs)
    radios = tree.find("div", class_="board").find_all("input", class_="sig-radio")
    assert [(r.attrs["value"], "checked" in r.attrs) for r in radios] == [
        ("alpha_nDCG@20", True), ("ERR_IA@20", False), ("P@10", False)]
    assert [label.text() for label in tree.find("div", class_="sig-controls").find_all("label")] == MEASURES
    legend = tree.find("p", class_="legend").text()
    assert ("a superscript letter marks a significant improvement over that row: paired t-test, Holm correction, "
            "α = 0.05") in legend


def test_letters_past_z_are_separated() -> None:
    rows = [row(f"sub_{i:02d}", i + 1, f"team-{i}", 0.9 - i / 100) for i in range(28)]
    rows[0]["better_than"] = ["sub_27", "sub_26", "sub_01"]
    _, tree = page(document(rows))
    trs = entries(tree)
    assert [trs[i].find("span", class_="letter").text() for i in (0, 25, 26, 27)] == ["a", "z", "aa", "ab"]
    assert trs[0].find("sup", class_="sig").text() == "b,aa,ab"


@pytest.mark.parametrize(("significance", "expected"), [
    ({"test": "randomisation", "correction": "bonferroni", "alpha": 0.01, "resamples": 10000, "seed": 0},
     "Fisher randomisation test (10,000 resamples), Bonferroni correction, α = 0.01"),
    ({"test": "bootstrap", "correction": "bh", "alpha": 0.05, "resamples": None, "seed": 0},
     "paired bootstrap test, Benjamini–Hochberg correction, α = 0.05"),
    ({"test": "tukey", "correction": None, "alpha": 0.05, "resamples": 1000, "seed": 0},
     "randomised Tukey HSD test (1,000 resamples), family-wise error controlled by the test, α = 0.05"),
    ({"test": "t", "correction": None, "alpha": 0.1, "resamples": None, "seed": 0},
     "paired t-test, no multiple-comparison correction, α = 0.1"),
])
def test_legend_names_the_test_correction_and_alpha(significance: dict[str, Any], expected: str) -> None:
    _, tree = page(document(four_rows(), significance=significance))
    assert f"over that row: {expected}." in tree.find("p", class_="legend").text()


def test_no_letters_or_legend_without_significance_or_with_one_row() -> None:
    for doc in (document(four_rows(), significance=None), document(four_rows()[:1])):
        markup, tree = page(doc)
        assert not tree.find_all("span", class_="letter") and not tree.find_all("sup")
        assert not tree.find_all("p", class_="legend") and "superscript" not in markup


def test_legend_says_when_nothing_differs_or_nothing_was_tested() -> None:
    rows = four_rows()
    for r in rows:
        r["better_than"] = []
    pairs = [{"a": "sub_a", "b": "sub_b", "mean_difference": 0.04, "p_value": 0.2, "p_adjusted": 0.6,
              "significant": False}]
    _, tree = page(document(rows, pairs=pairs))
    assert "No pair of rows differs significantly." in tree.find("p", class_="legend").text()
    _, untested = page(document(rows, topics=["151"], pairs=[]))
    assert untested.find("p", class_="legend").text() == "No significance tests: they need at least two topics."


def test_user_input_is_escaped() -> None:
    attack = '<script>alert("x")</script>'
    rows = [row('sub_"><script>', 1, attack, 0.5, run=attack, description=f"{attack} & more",
                submitted_at="<b>yesterday</b>")]
    doc = document(rows, task={"id": "t", "name": f"{attack} task", "description": attack},
                   phase={"name": attack, "opens_at": None, "closes_at": None}, measures=[attack, *MEASURES[1:]],
                   primary=attack)
    rows[0]["scores"] = {attack: 0.5, "ERR_IA@20": 0.4, "P@10": 0.3}
    markup, tree = page(doc)
    assert "<script" not in markup.lower() and "<b>" not in markup
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in markup
    assert not tree.find_all("script") and not tree.find_all("b")
    tr = entries(tree)[0]
    assert tr.attrs["data-key"] == 'sub_"><script>'
    assert tr.find("th", class_="team").find("span", class_="name").text() == attack
    assert tr.find("td", class_="run").text() == f"{attack}{attack} & more<b>yesterday</b>"
    assert tree.find("title").text() == f"{attack} task leaderboard"
    assert tree.find("thead").find("th", class_="primary").text().startswith(attack)
    assert "<b>yesterday</b>" in tr.find("td", class_="run").find("small", class_="when").text()


def test_page_is_self_contained() -> None:
    markup, tree = page(realistic())
    assert not tree.find_all("script") and not tree.find_all("link") and not tree.find_all("img")
    assert "http://" not in markup and "https://" not in markup and "@import" not in markup
    assert len(tree.find_all("style")) == 1
    assert "overflow-x: auto" in tree.find("style").text()
    assert tree.find("html").attrs["lang"] == "en"


def test_accessible_markup() -> None:
    _, tree = page(realistic())
    table = tree.find("table", id="leaderboard")
    assert table.find("caption").text()
    assert all(th.attrs.get("scope") == "col" for th in table.find("thead").find_all("th"))
    assert all(tr.find("th").attrs.get("scope") == "row" for tr in entries(tree))
    assert tree.find("p", class_="pending").attrs["role"] == "status"


def test_empty_leaderboard_has_a_friendly_row() -> None:
    _, tree = page(document([], topics=[], pending=3))
    assert not entries(tree)
    empty = tree.find("tbody").find("tr", class_="empty")
    assert empty.text() == "No evaluated submissions yet."
    assert int(empty.find("td").attrs["colspan"]) == len(headers(tree))
    assert tree.find("p", class_="pending").text() == "3 submissions still being evaluated."
    assert not tree.find_all("p", class_="legend")
    assert "means over" not in tree.find("caption").text()


def test_pending_notice_only_when_something_is_pending() -> None:
    assert not page(document(four_rows()))[1].find_all("p", class_="pending")
    assert page(document(four_rows(), pending=1))[1].find("p", class_="pending").text() == (
        "1 submission still being evaluated.")


def test_null_and_nan_values_are_dashes() -> None:
    rows = four_rows()
    rows[3]["scores"] = {"alpha_nDCG@20": None, "ERR_IA@20": math.nan, "P@10": None}
    rows[3]["delta_best"] = None
    rows[3]["extra"] = {}
    _, tree = page(document(rows, generated_at=None, version=None))
    assert [c.text() for c in cells(entries(tree)[3])] == ["4", "d team-d", "–", "–", "–", "–", "–"]
    facts = tree.find("dl", class_="facts").text()
    assert "Generated" not in facts and "Judgments" not in facts


def test_baseline_column_only_when_some_row_has_a_baseline_delta() -> None:
    _, without = page(document(four_rows()))
    assert "Δ baseline" not in headers(without)
    assert all(len(cells(tr)) == len(headers(without)) for tr in entries(without))
    assert not without.find_all("tr", class_="baseline") and not without.find_all("span", class_="badge")

    _, tree = page(realistic())
    assert headers(tree)[-2:] == ["Δ best", "Δ baseline"]
    trs = entries(tree)
    assert all(len(cells(tr)) == len(headers(tree)) for tr in trs)
    assert [tr.attrs["data-key"] for tr in trs if "baseline" in tr.classes] == ["sub_5"]
    assert trs[4].find("span", class_="badge").text() == "baseline"
    assert [cells(tr)[-1].text() for tr in trs] == ["+0.1401", "+0.1265", "+0.0688", "+0.0380", "0.0000", "–"]
    assert [cells(tr)[0].text() for tr in trs] == ["1", "2", "3", "4", "–", "5"], "the baseline takes no rank"
    assert cells(trs[4])[0].attrs["title"] == "not ranked: baseline" and not trs[4].find_all("span", class_="letter")


def test_submitted_times_are_shown_in_utc() -> None:
    _, tree = page(realistic())
    assert entries(tree)[1].find("small", class_="when").text() == "2026-11-21 16:45 UTC"
    assert entries(tree)[1].find("time").attrs["datetime"] == "2026-11-21T16:45:12+00:00"


def test_document_is_not_modified() -> None:
    doc = realistic()
    before = copy.deepcopy(doc)
    render_leaderboard_html(doc)
    assert doc == before


def test_template_ships_as_package_data() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "templates/*" in config["tool"]["setuptools"]["package-data"]["evalserve.service.web"]
    assert (ROOT / "service" / "web" / "templates" / "leaderboard.html").is_file()


def test_without_a_browser_the_fixture_skips_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(browser, "chromium_path", lambda: None)
    monkeypatch.setattr(browser, "_can_install", lambda: False)
    with pytest.raises(pytest.skip.Exception, match="Chromium is not installed"):
        browser.ensure_chromium()
    monkeypatch.setattr(browser, "_can_install", lambda: True)
    monkeypatch.setattr(browser, "_install_chromium", lambda: "apt-get update exited with 100: no network")
    with pytest.raises(pytest.skip.Exception, match="installing it with apt-get failed: apt-get update exited"):
        browser.ensure_chromium()


def test_a_failing_browser_run_raises_with_its_stderr(tmp_path: Path) -> None:
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\necho 'cannot open display' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(browser.BrowserError, match=r"exited with 3(.|\n)*cannot open display"):
        dump_dom(str(fake), "http://127.0.0.1:9/")
    with pytest.raises(browser.BrowserError, match="timed out after 1 s"):
        fake.write_text("#!/bin/sh\nsleep 30\n")
        screenshot(str(fake), "http://127.0.0.1:9/", tmp_path / "x.png", timeout=1)


# ---- in a real browser -----------------------------------------------------------------------------------------


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No access log on stderr."""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A directory served over HTTP on 127.0.0.1 and its base URL."""
    site = tmp_path / "site"
    site.mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(_QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_leaderboard_page_in_chromium(chromium: str, served: tuple[Path, str], tmp_path: Path) -> None:  # noqa: F811
    site, base = served
    doc = realistic()
    (site / "leaderboard.html").write_text(render_leaderboard_html(doc), encoding="utf-8")
    url = f"{base}/leaderboard.html"

    started = time.monotonic()
    for name, width, height in (("leaderboard.png", 1280, 900), ("leaderboard-narrow.png", 390, 844)):
        png = tmp_path / name
        screenshot(chromium, url, png, width=width, height=height)
        data = png.read_bytes()
        assert data.startswith(PNG_SIGNATURE)
        assert len(data) > 10_000, f"{png} is only {len(data)} bytes"
        assert int.from_bytes(data[16:20], "big") == width and int.from_bytes(data[20:24], "big") == height

    tree = parse_html(dump_dom(chromium, url))
    elapsed = time.monotonic() - started
    trs = entries(tree)
    assert [tr.attrs["data-key"] for tr in trs] == [r["key"] for r in doc["rows"]]
    assert len(trs) == 6
    # the would-be script in a team name stayed text: it neither ran nor became an element
    assert tree.find("title").text() == "TREC Web 2012 diversity leaderboard"
    assert not tree.find_all("script") and not tree.find_all("img")
    assert trs[3].find("th", class_="team").text() == 'd <script>document.title="pwned"</script>'
    assert trs[0].find("td", class_="primary").text() == "0.5123cde", "the baseline has no letter: not tested"
    assert trs[4].find("th", class_="team").text() == "organisers baseline"
    assert elapsed < 60, f"three chromium runs took {elapsed:.1f} s"


# ---- the layout at desktop widths (issue 30) --------------------------------------------------------------------

#: eight official measures of a diversity task, as TREC Web 2012's organisers reported them
EIGHT = ["alpha_nDCG@20", "ERR_IA@20", "NRBP", "nDCG@20", "P_IA@20", "MAP_IA", "ERR@20", "P@10"]
#: TREC Web 2012 teams and run names (the organisers' baselines: the real, long ``ql-results-*`` names)
WEB2012_RUNS = [
    ("uogTr", "uogTrA44xi", "xQuAD over Wikipedia-mined aspects, learned interpolation with the ad hoc ranking"),
    ("ICTNET", "ICTNET12ADR3", "learning to rank, 42 features, diversification by query intent mining"),
    ("QUT_Para", "QUTparaBline", "baseline: BM25F with spam filtering (Waterloo fusion, percentile 70)"),
    ("srchvrs", "srchvrs12c09", "Search Overview: proximity, anchor text, PageRank prior"),
    ("udel", "UDInfoWebENT", "entity-based query expansion with Freebase types"),
    ("organisers", "ql-results-catb-filtered", "query likelihood on ClueWeb09 category B, spam-filtered"),
    ("DFalah", "DFalah121A", "divergence from randomness, PL2 with query-independent features"),
    ("utwente", "utw2012fc1", "federated search over vertical indexes; category-aware fusion"),
    ("irra", "irra12c", "language model with Dirichlet prior (mu 2500), spam-filtered"),
    ("autoSTA", "autoSTA", "automatic structured queries"),
    ("lcm", "lcm4res", "latent concept models over result snippets"),
    ("Hiei-lab Kyoto University", "HieiLabKU12diversityFinal", "subtopic mining from query logs and Wikipedia"),
]


def eight_measures_document() -> dict[str, Any]:
    """A final board of twelve submissions (one baseline) over eight measures, with marks on every measure."""
    rows = []
    ranked = [key for key, (team, _, _) in zip((f"sub_{i:02d}" for i in range(12)), WEB2012_RUNS)
              if team != "organisers"]
    for i, (team, run, description) in enumerate(WEB2012_RUNS):
        baseline = team == "organisers"
        key = f"sub_{i:02d}"
        position = ranked.index(key) if key in ranked else None
        beaten = ranked[(position or 0) + 3:] if position is not None else []
        values = [round(0.61 - 0.037 * i - 0.011 * k, 4) for k in range(len(EIGHT))]
        rows.append({
            "rank": None if baseline else (position or 0) + 1, "key": key, "label": team, "baseline": baseline,
            "scores": dict(zip(EIGHT, values)), "delta_best": round(values[0] - 0.61, 4),
            "delta_baseline": round(values[0] - (0.61 - 0.037 * 5), 4), "better_than": list(beaten),
            "worse_than": [], "n_topics": 50, "better_than_by_measure": {m: list(beaten) for m in EIGHT},
            "extra": {"submission": key, "team": team, "run": run, "description": description,
                      "submitted_at": f"2026-11-{20 + i % 5}T1{i % 10}:0{i % 6}:00+00:00",
                      "unranked": "baseline" if baseline else None},
        })
    doc = document(rows, measures=list(EIGHT), primary=EIGHT[0])
    doc["task"] = {"id": "task_web2012", "name": "TREC 2012 Web track, diversity task (ClueWeb09)",
                   "description": "Ten teams, 26 submissions; official measures as in the track overview."}
    doc["final"] = {"at": "2026-11-27T21:00:00+00:00", "hash": "9f2c" * 16, "evalserve": "0.1.0",
                    "judgments_sha256": "3a7b" * 16, "measures": [
                        {"measure": m, "summary": "a diversity measure", "reference": "Clarke et al."} for m in EIGHT]}
    return doc


MEASURE_SCRIPT = """
document.getElementById('board').addEventListener('load', function () {
  var d = this.contentDocument, root = d.documentElement, wrap = d.querySelector('.table-wrap');
  var lines = function (el) {
    var style = d.defaultView.getComputedStyle(el);
    return Math.round(el.getBoundingClientRect().height / parseFloat(style.lineHeight));
  };
  var out = document.createElement('pre');
  out.id = 'result';
  out.textContent = JSON.stringify({
    scrollWidth: root.scrollWidth, clientWidth: root.clientWidth,
    wrapScrollWidth: wrap.scrollWidth, wrapClientWidth: wrap.clientWidth,
    runLines: Array.prototype.map.call(d.querySelectorAll('td.run code'), lines),
    teamLines: Array.prototype.map.call(d.querySelectorAll('th.team .name'), lines),
    lastColumnRight: d.querySelector('thead th:last-child').getBoundingClientRect().right
  });
  document.body.appendChild(out);
});
"""


@pytest.mark.parametrize("width", [1280, 1440])
def test_eight_measures_fit_without_horizontal_scroll(chromium: str, served: tuple[Path, str],  # noqa: F811
                                                     tmp_path: Path, width: int) -> None:
    """At 1,280 and 1,440 px, a final board of twelve TREC Web 2012 runs over eight measures has no horizontal
    scroll (neither the page nor the table's own), run names stay on one line and team names on two at most.
    ``EVALSERVE_UPDATE_SCREENSHOTS=1`` writes the screenshots docs/api.md shows to docs/img."""
    import json

    site, base = served
    (site / "leaderboard.html").write_text(render_leaderboard_html(eight_measures_document()), encoding="utf-8")
    (site / "harness.html").write_text(
        '<!DOCTYPE html><html><body style="margin:0">'
        f'<iframe id="board" src="leaderboard.html" style="border:0;width:{width}px;height:1400px"></iframe>'
        f"<script>{MEASURE_SCRIPT}</script></body></html>", encoding="utf-8")
    dom = dump_dom(chromium, f"{base}/harness.html",
                   flags=(f"--window-size={width + 40},1100", "--virtual-time-budget=10000"))
    found = parse_html(dom).find("pre", id="result").text()
    result = json.loads(found)
    assert result["clientWidth"] == width
    assert result["scrollWidth"] <= result["clientWidth"], result
    assert result["wrapScrollWidth"] <= result["wrapClientWidth"], "the table scrolls inside its frame"
    assert result["lastColumnRight"] <= width, "the delta columns are not clipped"
    assert max(result["runLines"]) == 1 and len(result["runLines"]) == 12, result
    assert max(result["teamLines"]) <= 2, result
    png = tmp_path / f"leaderboard-{width}.png"
    screenshot(chromium, f"{base}/leaderboard.html", png, width=width, height=1400)
    assert png.read_bytes().startswith(PNG_SIGNATURE)
    if os.environ.get("EVALSERVE_UPDATE_SCREENSHOTS") == "1":
        (ROOT / "docs" / "img").mkdir(exist_ok=True)
        (ROOT / "docs" / "img" / png.name).write_bytes(png.read_bytes())
