"""Reports (``evaluation.reports``): the content against the engine's own numbers (means, paired t-tests with
Holm, the registry's texts, the axiomatic profiles), escaping of every string in HTML and LaTeX, meta-evaluation
documents, a LaTeX report compiled with pdflatex and the HTML report as headless Chromium renders it."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evaluation.api import evaluate
from evaluation.axioms import constraint_profile
from evaluation.measures.registry import default_registry
from evaluation.meta.methods import run_method
from evaluation.meta.table import ScoreTable
from evaluation.report import render_document as render_text
from evaluation.reports import ReportContent, build, latex_escape, render, render_document, render_report
from evaluation.reports.content import MAX_TEST_ROWS, SIGNIFICANCE
from evaluation.reports.html import render_html
from evaluation.reports.latex import render_latex
from tests.browser import chromium, dump_dom, parse_html, screenshot  # noqa: F401 - chromium: fixture
from tests.latex import compile_pdf, pdflatex  # noqa: F401 - pdflatex: fixture

MEASURES = ["AP", "P@5", "nDCG@10", "RBP(p=0.8)"]
#: run names that try to break out of HTML and LaTeX
NASTY = '<script>document.title="pwned"</script>'
TEX = r"50%_{x}#$&~^\input{secret}|<>--"
RUNS = {"bm25": 0, NASTY: 1, TEX: 2, "caf\u00e9-\u2264-run": 3}


def qrels() -> bytes:
    rng = random.Random(17)
    return "".join(f"{t} 0 d{d} {rng.choice((0, 0, 1, 2))}\n" for t in range(1, 9) for d in range(20)).encode()


def run(seed: int) -> bytes:
    rng = random.Random(seed)
    lines = []
    for t in range(1, 9):
        docs = rng.sample(range(20), 12)
        lines += [f"{t} Q0 d{d} {r + 1} {20 - r} tag{seed}\n" for r, d in enumerate(docs)]
    return "".join(lines).encode()


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return evaluate(qrels(), {name: run(seed) for name, seed in RUNS.items()}, MEASURES, per_topic=True)


def test_the_scores_table_holds_every_mean_and_marks_the_best(document: dict[str, Any]) -> None:
    content = build(document, axioms=False)
    assert content.scores is not None
    table = content.scores.tables[0]
    assert table.header == ("run", *MEASURES)
    for i, (name, by_measure) in enumerate(document["runs"].items()):
        assert table.rows[i][0] == name
        for j, m in enumerate(MEASURES, start=1):
            assert table.rows[i][j] == f"{by_measure[m]['mean']:.4f}"
            best = max(r[m]["mean"] for r in document["runs"].values())
            assert ((i, j) in table.marked) == (by_measure[m]["mean"] == best)


def test_ties_for_the_best_are_all_marked() -> None:
    doc = {"meta": {"measures": {"AP": "AP"}}, "runs": {
        "a": {"AP": {"mean": 0.5}}, "b": {"AP": {"mean": 0.5}}, "c": {"AP": {"mean": 0.1}}}}
    content = build(doc, axioms=False)
    assert content.scores is not None and content.scores.tables[0].marked == {(0, 1), (1, 1)}
    assert content.significance is not None and "per-topic" in content.significance.paragraphs[0]


def test_significance_is_the_paired_t_test_with_holm(document: dict[str, Any]) -> None:
    expected = run_method("significance", ScoreTable.from_document(document), SIGNIFICANCE)["significance"]
    assert SIGNIFICANCE == {"test": "t", "correction": "holm", "alpha": 0.05}
    content = build(document, axioms=False)
    assert content.significance is not None
    tables = {t.caption: t for t in content.significance.tables}
    assert list(tables) == MEASURES
    for m in MEASURES:
        pairs = expected[m]["pairs"]
        assert len(pairs) == len(RUNS) * (len(RUNS) - 1) // 2
        for row, pair in zip(tables[m].rows, pairs):
            assert row[:4] == (pair["a"], pair["b"], f"{pair['mean_difference']:.4f}", f"{pair['p_adjusted']:.4f}")
            assert (row[4] == "*") == pair["significant"]


def test_one_run_has_no_tests() -> None:
    doc = evaluate(qrels(), {"only": run(1)}, ["AP"], per_topic=True)
    content = build(doc, axioms=False)
    assert content.significance is not None and not content.significance.tables
    assert "One run" in content.significance.paragraphs[0]


def test_measures_carry_the_registry_definitions_and_references(document: dict[str, Any]) -> None:
    content = build(document, axioms=False)
    assert [m.name for m in content.measures] == MEASURES
    for info in content.measures:
        definition = default_registry().parse(info.name).definition
        assert (info.summary, info.formula, info.reference, info.follows) == (
            definition.summary, definition.formula, definition.reference, definition.default_follows)
    page = render_report(document, "html", axioms=False)
    for info in content.measures:
        assert info.summary.replace("'", "&#x27;") in page


def test_a_measure_the_registry_does_not_know_is_said_so() -> None:
    doc = {"meta": {"measures": {"old": "no_such_measure"}}, "runs": {"a": {"old": {"mean": 0.5}}}}
    content = build(doc)
    assert not content.measures[0].known
    assert content.axioms[0].statuses == {} and "not checked" in content.axioms[0].note
    assert "Not in this server" in render_report(doc, "html")
    assert "Not in this server" in render_report(doc, "latex")


def test_the_axiomatic_profile_is_that_of_each_measure_as_used(document: dict[str, Any]) -> None:
    content = build(document)
    assert [row.name for row in content.axioms] == MEASURES
    for row in content.axioms:
        canonical = document["meta"]["measures"][row.name]
        assert row.form == canonical
        assert dict(row.statuses) == constraint_profile(canonical)["constraints"]


def test_html_escapes_every_string(document: dict[str, Any]) -> None:
    page = render_report(document, "html")
    assert "<script" not in page
    assert "&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;" in page
    assert "Content-Security-Policy" in page
    assert not re.search(r"""<(link|img|iframe)\b|src=|href=["']?http""", page), "the page must be self-contained"
    tree = parse_html(page)
    assert tree.find("title").text() == "Evaluation report"
    assert NASTY in tree.find("section", id="scores").text()
    assert TEX in tree.find("section", id="scores").text()


@pytest.mark.parametrize(("text", "expected"), [
    ("a_b", r"a\_b"), ("50%", r"50\%"), ("R&D", r"R\&D"), ("#1", r"\#1"), ("$x$", r"\$x\$"), ("{a}", r"\{a\}"),
    ("~", r"\textasciitilde{}"), ("^", r"\textasciicircum{}"), ("\\", r"\textbackslash{}"),
    ("\\input{x}", r"\textbackslash{}input\{x\}"), ("a--b", "a-{}-{}b"),
    ("<>|", r"\textless{}\textgreater{}\textbar{}"),
    ("caf\u00e9", "cafe"), ("\u2264", "[U+2264]"), ("line\nbreak", "line break"),
    ("a\x01b\x7fc", "abc"), ("tab\tand\x0bform", "tab and form"),  # control characters: no RecursionError
])
def test_latex_escape(text: str, expected: str) -> None:
    assert latex_escape(text) == expected


def test_latex_has_no_unescaped_input(document: dict[str, Any]) -> None:
    source = render_report(document, "latex")
    assert source.isascii()
    assert r"\input" not in source and "\\textbackslash{}input\\{secret\\}" in source
    body = source.split("\\begin{document}", 1)[1]
    assert "50\\%\\_\\{x\\}\\#\\$\\&" in body


def test_the_cli_formats_render_the_same_report(document: dict[str, Any]) -> None:
    """``evaluation.reports.render_document`` writes every result format; ``evaluation.report``'s only the text
    ones (it does not import the reports, which compute)."""
    assert render_document(document, "html") == render_report(document, "html")
    assert render_document(document, "latex") == render_report(document, "latex")
    for fmt in ("json", "tsv", "csv", "trec_eval"):
        assert render_document(document, fmt, True) == render_text(document, fmt, True)
    with pytest.raises(ValueError, match=r"evaluation\.reports\.render_document"):
        render_text(document, "html")


def meta_documents(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    table = ScoreTable.from_document(document)
    return {method: json.loads(json.dumps(run_method(method, table, options))) for method, options in (
        ("unanimity", {}), ("discriminative-power", {"resamples": 50}), ("significance", {}),
        ("correlation", {"method": "tau_b"}))}


def test_meta_documents_render_their_tables_and_measures(document: dict[str, Any]) -> None:
    for method, doc in meta_documents(document).items():
        content = build(doc, axioms=False)
        assert content.title == f"Meta-evaluation report: {method}"
        assert [m.name for m in content.measures] == MEASURES
        page = render_report(doc, "html", axioms=False)
        assert f"Meta-evaluation report: {method}" in page and "<script" not in page
        if method == "significance":  # its means are the scores, its tables the tests
            assert content.scores is not None and content.significance is not None and content.results is None
            scores = content.scores.tables[0]
            assert [r[0] for r in scores.rows] == list(RUNS)
            assert scores.rows[0][1] == f"{document['runs']['bm25']['AP']['mean']:.4f}"
            assert "&lt;script&gt;" in page
        else:
            assert content.results is not None and content.results.tables
        assert "\\begin{document}" in render_report(doc, "latex", axioms=False)


def test_not_a_result_document() -> None:
    with pytest.raises(ValueError, match="not a result document"):
        build({"runs": {}})
    with pytest.raises(ValueError, match="unknown report format"):
        render_report({"meta": {}, "runs": {}}, "pdf")


def test_a_latex_report_compiles(pdflatex: str, document: dict[str, Any], tmp_path: Path) -> None:  # noqa: F811
    many = evaluate(qrels(), {name: run(seed) for name, seed in RUNS.items()},
                    [*MEASURES, "Rprec", "RR", "Bpref", "P@10", "nDCG", "ERR@20"], per_topic=True)
    pdf, log = compile_pdf(pdflatex, render_report(many, "latex"), tmp_path)
    assert pdf.startswith(b"%PDF-")
    assert "Output written on report.pdf" in log
    for i, doc in enumerate(meta_documents(document).values()):
        folder = tmp_path / f"meta{i}"
        folder.mkdir()
        assert compile_pdf(pdflatex, render_report(doc, "latex"), folder)[0].startswith(b"%PDF-")


def test_the_html_report_in_chromium(chromium: str, document: dict[str, Any], tmp_path: Path) -> None:  # noqa: F811
    page = tmp_path / "report.html"
    page.write_text(render_report(document, "html"), encoding="utf-8")
    tree = parse_html(dump_dom(chromium, page.as_uri()))
    assert tree.find("title").text() == "Evaluation report", "no script ran"
    assert not tree.find_all("script")
    scores = tree.find("section", id="scores").find("table")
    header = [th.text() for th in scores.find("thead").find_all("th")]
    assert header == ["run", *MEASURES]
    best = scores.find_all("td", class_="best")
    assert len(best) >= len(MEASURES)
    rows = scores.find("tbody").find_all("tr")
    assert [r.find("th").text() for r in rows] == list(RUNS)
    assert len(tree.find("section", id="significance").find_all("table")) == len(MEASURES)
    assert len(tree.find("section", id="measures").find_all("article", class_="measure")) == len(MEASURES)
    axioms = tree.find("table", class_="axioms")
    assert len(axioms.find("tbody").find_all("tr")) == len(MEASURES)
    assert axioms.find_all("td", class_="ok") and axioms.find_all("td", class_="fail")
    png = tmp_path / "report.png"
    screenshot(chromium, page.as_uri(), png, width=1200, height=2000)
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def stored(content: ReportContent) -> ReportContent:
    """Content as a worker stores it and a reader gets it back: through JSON text."""
    return ReportContent.from_json(json.loads(json.dumps(content.to_json())))


def test_content_renders_the_same_after_a_json_round_trip(document: dict[str, Any]) -> None:
    one_run = evaluate(qrels(), {"only": run(1)}, ["AP", "P@5"], per_topic=True)
    docs = {"evaluation": document, "one run": one_run, **meta_documents(document)}
    for name, doc in docs.items():
        for axioms in (True, False) if name == "evaluation" else (False,):
            content = build(doc, axioms=axioms)
            again = stored(content)
            assert again == content, name
            assert render_html(again) == render_html(content), name
            assert render_latex(again) == render_latex(content), name
            assert render(again, "html") == render_report(doc, "html", axioms=axioms), name
    with pytest.raises(ValueError, match="report content"):
        ReportContent.from_json({"version": 0})


def test_the_renderers_load_no_statistics_and_no_axioms() -> None:
    """Rendering stored content computes nothing: no meta-evaluation methods, no scipy, no axioms, no numpy."""
    probe = ("import sys, evaluation.reports.html, evaluation.reports.latex, evaluation.reports\n"
             "print(sorted(m for m in sys.modules if m.startswith(('evaluation.meta', 'evaluation.axioms', 'scipy',"
             " 'numpy', 'evaluation.measures'))))\n")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def wide_document(runs: int, measures: int, topics: int = 6) -> dict[str, Any]:
    rng = random.Random(runs * 1000 + measures)
    names = [f"P@{k + 1}" for k in range(measures)]
    by_run = {f"r{i:02d}": {m: {"per_topic": {f"t{t}": rng.random() * (1 + i) / (1 + runs) for t in range(topics)}}
                            for m in names} for i in range(runs)}
    for by_measure in by_run.values():
        for item in by_measure.values():
            item["mean"] = sum(item["per_topic"].values()) / topics
    return {"meta": {"measures": {m: m for m in names}}, "runs": by_run}


def test_a_report_with_too_many_tests_to_list_summarises_them() -> None:
    listed = wide_document(21, MAX_TEST_ROWS // 210)  # 210 pairs per measure: exactly the most listed
    content = build(listed, axioms=False)
    assert content.significance is not None and len(content.significance.tables) == MAX_TEST_ROWS // 210
    doc = wide_document(21, MAX_TEST_ROWS // 210 + 1)
    content = build(doc, axioms=False)
    assert content.significance is not None and len(content.significance.paragraphs) == 2
    assert f"more than a report lists ({MAX_TEST_ROWS})" in content.significance.paragraphs[1]
    assert "?format=csv&per_topic=true" in content.significance.paragraphs[1]
    (summary,) = content.significance.tables
    tested = run_method("significance", ScoreTable.from_document(doc), SIGNIFICANCE)
    assert len(summary.rows) == len(tested["significance"])
    for row, (m, found) in zip(summary.rows, tested["significance"].items()):
        best = max(found["means"], key=lambda r: found["means"][r])
        wins = sum(1 for p in found["pairs"] if p["significant"] and (
            (p["a"] == best and p["mean_difference"] > 0) or (p["b"] == best and p["mean_difference"] < 0)))
        assert row == (m, "210", str(sum(p["significant"] for p in found["pairs"])), best, str(wins))
    assert any(int(row[2]) for row in summary.rows)
    # a significance meta-evaluation document of the same table: the same summary, computed from its records
    meta = build(json.loads(json.dumps(tested)), axioms=False)
    assert meta.significance is not None and meta.significance.tables == (summary,)
    assert len(render_html(content)) < 60_000
