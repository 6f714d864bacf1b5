"""The end-of-task report typeset from its content (``shared_tasks.report.report_content``, a JSON-ready dict):
an HTML page with its plots embedded, a LaTeX document that ``pdflatex`` (Debian's ``texlive-latex-base``
alone) compiles in two passes without column-width warnings (every ``longtable`` has fixed ``p`` columns, so
its header and body agree from the first pass), CSVs, and the zip of them all with the plots as SVG and PNG.
Formatting only: no database, no Flask; matplotlib is imported by ``draw_plots`` alone, which only workers call.
Every name is escaped (HTML, LaTeX, CSV cells)."""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import math
import zipfile
from collections.abc import Mapping, Sequence
from typing import Any

from evalserve.service.shared_tasks.per_topic_rows import Exported, csv_pieces, long_rows
from evaluation.csvcells import safe_cell
from evaluation.latex import latex_escape
from evaluation.leaderboard.render import CORRECTION_NAMES, TEST_NAMES, row_letter

#: the plots of a report: file stem -> caption
PLOTS = {"distributions": "Per-topic score distributions of every submission on the leaderboard (box plots: median,"
                          " quartiles, whiskers; the mean marked).",
         "asl": "ASL curves: per measure, the achieved significance levels of every pair of submissions (paired"
                " bootstrap), sorted; a curve closer to the x axis discriminates more."}
PLOT_FORMATS = ("png", "svg")
#: measures per leaderboard table in LaTeX: wider boards are split so that each table fits the page
LATEX_MEASURES_PER_TABLE = 4


# --- plots (workers only) ------------------------------------------------------------------------------------

def draw_plots(content: Mapping[str, Any]) -> dict[str, dict[str, bytes]]:
    """The report's plots (``PLOTS`` that its content can draw) in every ``PLOT_FORMATS``: matplotlib, workers
    only."""
    from evaluation.meta import plots  # matplotlib on use
    from evaluation.meta.table import ScoreTable

    drawn: dict[str, dict[str, bytes]] = {}
    shown = [s for s in content["per_topic"] if s["shown"]]
    labels = [str(s["label"]) for s in shown]
    labels = [label if labels.count(label) == 1 else f"{label} ({s['run']})" for label, s in zip(labels, shown)]
    runs = {label: {m: {"mean": 0.0, "per_topic": s["scores"][m]} for m in content["measures"]}
            for label, s in zip(labels, shown)}
    if runs and content["measures"]:
        table = ScoreTable.from_document({"runs": runs}, list(content["measures"]))
        drawn["distributions"] = {fmt: plots.score_distributions(table, fmt) for fmt in PLOT_FORMATS}
    power = (content.get("meta") or {}).get("methods", {}).get("discriminative-power")
    if power:
        drawn["asl"] = {fmt: plots.asl_curves(power, fmt) for fmt in PLOT_FORMATS}
    return drawn


# --- CSV -----------------------------------------------------------------------------------------------------

def per_topic_csv(submissions: Sequence[Mapping[str, Any]], measures: Sequence[str]) -> str:
    """Every evaluated submission's stored per-topic scores and means in long format: the per-topic export's rows
    (``per_topic_rows``), the values ``evalserve evaluate --per-topic`` gives offline."""
    exported = (Exported(sub["submission"], sub["team"], sub["run"], bool(sub["baseline"]),
                         {m: sub["scores"][m] for m in measures}, {m: sub["means"][m] for m in measures})
                for sub in submissions)
    return "".join(csv_pieces(long_rows(exported, measures)))


def leaderboard_csv(content: Mapping[str, Any]) -> str:
    """The final (or provisional) leaderboard: means in full precision and, per measure, the submissions each row
    is significantly better than (submission keys, space-separated)."""
    measures = content["measures"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["rank", "submission", "team", "run", "baseline", *map(safe_cell, measures),
                     *(safe_cell(f"better_than[{m}]") for m in measures)])
    for row in content["leaderboard"]["rows"]:
        writer.writerow(["" if row["rank"] is None else row["rank"], safe_cell(row["key"]),
                         safe_cell(row["extra"].get("team", row["label"])),
                         safe_cell(row["extra"].get("run", "")), "true" if row["baseline"] else "false",
                         *("" if row["scores"][m] is None else repr(row["scores"][m]) for m in measures),
                         *(" ".join(content["significance"][m]["better_than"].get(row["key"], [])) for m in measures)])
    return out.getvalue()


def significance_csv(content: Mapping[str, Any]) -> str:
    """Every pair's test on every measure (``a`` ranked above or with ``b`` on that measure)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["measure", "a", "b", "mean_difference", "p_value", "p_adjusted", "significant"])
    for measure in content["measures"]:
        for p in content["significance"][measure]["pairs"]:
            writer.writerow([safe_cell(measure), safe_cell(p["a"]), safe_cell(p["b"]), _repr(p["mean_difference"]),
                             _repr(p["p_value"]), _repr(p["p_adjusted"]), "true" if p["significant"] else "false"])
    return out.getvalue()


def _repr(value: float | None) -> str:
    return "" if value is None else repr(value)


# --- shared wording ------------------------------------------------------------------------------------------

def _settings(content: Mapping[str, Any]) -> list[tuple[str, str]]:
    task, sig = content["task"], content["leaderboard"]["significance"]
    correction = CORRECTION_NAMES.get(sig["correction"], "no correction") if sig["correction"] else "no correction"
    phase = content["phase"]
    return [
        ("Task", f"{task['name']} ({task['id']})"),
        ("Status", content["status"]),
        ("Phase", "none" if phase is None else f"{phase['name']}: {phase['opens_at']} to {phase['closes_at']}"),
        ("Official measures", ", ".join(content["measures"])),
        ("Primary measure", task["primary_measure"]),
        ("Order", "higher is better" if task["sort_order"] == "desc" else "lower is better"),
        ("Significance", f"{TEST_NAMES.get(sig['test'], sig['test'])}, {correction}, alpha = {sig['alpha']:g},"
                         " every pair of submissions on every official measure"),
        ("Judgments version", str(content["version"])),
        ("Topics", f"{len(content['leaderboard']['topics'])} ({task['topics']}), ties: {task['ties']}"),
        ("Submissions", f"{len(content['leaderboard']['rows'])} on the leaderboard,"
                        f" {len(content['per_topic'])} evaluated in the phase"),
    ]


def _provenance(content: Mapping[str, Any]) -> list[tuple[str, str]]:
    p = content["provenance"]
    rows = [("evalserve version", p["evalserve_version"]), ("Report generated", p["generated_at"]),
            ("Task created", p["task_created_at"]), ("Finalised", p["finalised_at"] or "not finalised")]
    if p.get("final_hash"):
        rows.append(("Final leaderboard hash", f"SHA-256 {p['final_hash']}"))
    rows += [("Leaderboard content hash", f"SHA-256 {p.get('leaderboard_hash') or '--'}"),
             ("Judgments", f"collection {p['collection']}, qrels SHA-256 {p['judgments_sha256']}")]
    rows += [(f"Run {r['team']} / {r['run']}", f"submission {r['submission']}, submitted {r['submitted_at']},"
              f" SHA-256 {r['sha256']}") for r in p["runs"]]
    return rows


def _fixed(value: float | None, digits: int = 4) -> str:
    if value is None or not math.isfinite(value):
        return "--"
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0.0 else text


def _rank(row: Mapping[str, Any]) -> str:
    """A row's rank, or "--" for a row shown unranked (a baseline: at its score's place, never pushing a team
    down)."""
    return "--" if row["rank"] is None else str(row["rank"])


def _letters(content: Mapping[str, Any]) -> dict[str, str]:
    return {row["key"]: row_letter(i) for i, row in enumerate(content["leaderboard"]["rows"])}


def _status_line(content: Mapping[str, Any]) -> str:
    if content["status"] == "final":
        return f"Final results (finalised {content['provenance']['finalised_at']})."
    return "Provisional results: the task is not finalised, and the numbers may still change."


def _advice(meta: Mapping[str, Any] | None) -> tuple[list[str], list[list[str]], list[str]] | None:
    """The measure advice the task meta-evaluation carries (``advice``: its ``table`` as formatted, else per measure
    its figures; and ``sentences``), as a header, rows of strings and sentences; None when it carries none."""
    if not meta:
        return None
    advice = meta.get("advice") or (meta.get("methods") or {}).get("advice")
    if not advice:
        return None
    if isinstance(advice, Mapping):
        sentences = [str(s) for s in advice.get("sentences") or meta.get("sentences") or []]
        table = advice.get("table")
        if isinstance(table, Mapping) and table.get("header") and table.get("rows") is not None:  # as formatted
            return [str(h) for h in table["header"]], [[str(c) for c in row] for row in table["rows"]], sentences
        per_measure = advice.get("measures") or advice.get("advice") or advice.get("rows") or {}
    else:
        per_measure, sentences = advice, [str(s) for s in meta.get("sentences") or []]
    if isinstance(per_measure, Mapping):
        items = [{"measure": name, **(dict(v) if isinstance(v, Mapping) else {"value": v})}
                 for name, v in per_measure.items()]
    else:
        items = [dict(v) for v in per_measure if isinstance(v, Mapping)]
    header: list[str] = []
    for item in items:
        header += [k for k, v in item.items() if k not in header and not isinstance(v, (Mapping, list))]
    rows = [[_cell(item.get(k)) for k in header] for item in items]
    return [k.replace("_", " ") for k in header], rows, sentences


def _cell(value: Any) -> str:
    if value is None:
        return "--"
    if isinstance(value, float):
        return _fixed(value, 4)
    return str(value)


def _meta_tables(meta: Mapping[str, Any], measures: Sequence[str]) -> list[tuple[str, list[str], list[list[str]]]]:
    """The meta-evaluation's tables: caption, header, rows (strings)."""
    methods = meta.get("methods") or {}
    tables = []
    unanimity = (methods.get("unanimity") or {}).get("unanimity") or {}
    power = (methods.get("discriminative-power") or {}).get("discriminative_power") or {}
    rows = [[m, _cell(unanimity.get(m)), f"{power[m]['significant_pairs']}/{power[m]['pairs']}" if m in power else "--",
             _cell(power.get(m, {}).get("proportion")), _cell(power.get(m, {}).get("delta"))] for m in measures]
    options = meta.get("options") or {}
    tables.append(("Metric Unanimity and discriminative power (paired bootstrap, B = "
                   f"{options.get('resamples', '?')}, alpha = {options.get('alpha', '?')})",
                   ["measure", "MU", "significant pairs", "power", "delta"], rows))
    corr = methods.get("correlation") or {}
    matrix = corr.get("correlation") or {}
    if matrix:
        tables.append((f"Rank correlation of the official measures ({corr.get('method', '')})", ["", *measures],
                       [[m, *(_cell(matrix.get(m, {}).get(n)) for n in measures)] for m in measures]))
    return tables


# --- HTML ----------------------------------------------------------------------------------------------------

_CSS = """body{font-family:system-ui,sans-serif;max-width:1200px;margin:1.5em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:0.6em 0}td,th{border:1px solid #ccc;padding:0.2em 0.5em;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}.baseline{font-style:italic}sup{color:#b35900}
.status{padding:0.4em 0.8em;border-radius:4px;display:inline-block;font-weight:bold}
.final{background:#e2f3e2}.provisional{background:#fff2cc}img{max-width:100%;height:auto}
.matrix td{text-align:center;min-width:1.6em}"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _html_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, left: int = 1, caption: str = "") -> str:
    head = "".join(f'<th class="l">{_e(h)}</th>' if i < left else f"<th>{_e(h)}</th>" for i, h in enumerate(header))
    body = "".join("<tr>" + "".join(f'<td class="l">{_e(c)}</td>' if i < left else f"<td>{_e(c)}</td>"
                                    for i, c in enumerate(row)) + "</tr>\n" for row in rows)
    cap = f"<caption>{_e(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>\n{body}</tbody></table>\n"


def render_html(content: Mapping[str, Any], plots: Mapping[str, Mapping[str, bytes]]) -> str:
    """The report as one self-contained HTML page (plots embedded as PNG data URIs)."""
    task, measures = content["task"], content["measures"]
    letters = _letters(content)
    parts = ["<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
             f"<title>{_e(task['name'])}: end-of-task report ({_e(content['status'])})</title>",
             f"<style>{_CSS}</style></head><body>\n",
             f"<h1>{_e(task['name'])}: end-of-task report</h1>\n",
             f'<p class="status {_e(content["status"])}" id="status">{_e(_status_line(content))}</p>\n']
    if task["description"]:
        parts.append(f"<p>{_e(task['description'])}</p>\n")
    parts.append("<h2>Settings</h2>\n" + _html_table(["setting", "value"], _settings(content), left=2))
    parts.append("<h2>Leaderboard</h2>\n<p>Ranked by the primary measure. A superscript lists the rows (by letter)"
                 " a submission is significantly better than on that measure. Baselines in italics, unranked"
                 " (--) and not tested.</p>\n")
    head = "".join(f"<th>{_e(m)}</th>" for m in measures)
    rows = []
    for row in content["leaderboard"]["rows"]:
        cells = []
        for m in measures:
            beaten = "".join(letters[k] for k in content["significance"][m]["better_than"].get(row["key"], []))
            cells.append(f"<td>{_e(_fixed(row['scores'][m]))}" + (f"<sup>{_e(beaten)}</sup>" if beaten else "")
                         + "</td>")
        klass = ' class="baseline"' if row["baseline"] else ""
        rows.append(f"<tr{klass}><td>{_e(_rank(row))}</td><td class=\"l\">{letters[row['key']]}</td>"
                    f"<td class=\"l\">{_e(row['label'])}</td>{''.join(cells)}</tr>\n")
    parts.append(f'<table id="leaderboard"><thead><tr><th>rank</th><th class="l"></th><th class="l">submission</th>'
                 f"{head}</tr></thead><tbody>\n{''.join(rows)}</tbody></table>\n")
    parts.append("<h2>Significance matrices</h2>\n<p>Row against column: <b>+</b> significantly better, <b>&minus;</b>"
                 " significantly worse, &middot; no significant difference (adjusted p-value on hover).</p>\n")
    for m in measures:
        parts.append(f"<h3>{_e(m)}</h3>\n" + _html_matrix(content, m, letters))
    parts.append("<h2>Per-topic distributions and ASL curves</h2>\n")
    for name, caption in PLOTS.items():
        if name in plots:
            data = base64.b64encode(plots[name]["png"]).decode()
            parts.append(f'<figure><img id="plot-{name}" src="data:image/png;base64,{data}" alt="{_e(caption)}">'
                         f"<figcaption>{_e(caption)}</figcaption></figure>\n")
    parts.append(_html_meta(content))
    parts.append("<h2>Provenance</h2>\n" + _html_table(["what", "value"], _provenance(content), left=2))
    parts.append("<h3>Measure definitions</h3>\n<dl>" + "".join(
        f"<dt>{_e(d['name'])}</dt><dd>{_e(d['summary'] or 'no definition registered')}"
        + (f" <code>{_e(d['formula'])}</code>" if d.get("formula") else "")
        + (f" <i>{_e(d['reference'])}</i>" if d["reference"] else "") + "</dd>" for d in content["definitions"])
        + "</dl>\n")
    parts.append("</body></html>\n")
    return "".join(parts)


def _html_matrix(content: Mapping[str, Any], measure: str, letters: Mapping[str, str]) -> str:
    rows = content["leaderboard"]["rows"]
    marks = _marks(content, measure)
    head = "".join(f"<th>{_e(letters[r['key']])}</th>" for r in rows)
    body = []
    for a in rows:
        cells = []
        for b in rows:
            mark, p = marks.get((a["key"], b["key"]), ("", None))
            title = "" if p is None else f' title="p = {_e(_fixed(p))}"'
            cells.append(f"<td{title}>{'&minus;' if mark == '-' else _e(mark)}</td>")
        body.append(f'<tr><th class="l">{_e(letters[a["key"]])} {_e(a["label"])}</th>{"".join(cells)}</tr>\n')
    return f'<table class="matrix"><thead><tr><th></th>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>\n'


def _marks(content: Mapping[str, Any], measure: str) -> dict[tuple[str, str], tuple[str, float | None]]:
    """(row, column) -> "+" (row significantly better), "-" (worse) or "·", with the adjusted p-value."""
    order = content["leaderboard"]["order"]
    out: dict[tuple[str, str], tuple[str, float | None]] = {}
    for p in content["significance"][measure]["pairs"]:
        diff = p["mean_difference"] or 0.0
        a_better = (diff > 0) == (order == "desc") and diff != 0
        if p["significant"]:
            out[(p["a"], p["b"])] = ("+" if a_better else "-", p["p_adjusted"])
            out[(p["b"], p["a"])] = ("-" if a_better else "+", p["p_adjusted"])
        else:
            out[(p["a"], p["b"])] = out[(p["b"], p["a"])] = ("\u00b7", p["p_adjusted"])
    return out


def _html_meta(content: Mapping[str, Any]) -> str:
    meta = content.get("meta")
    parts = ["<h2>Meta-evaluation of the official measures</h2>\n"]
    if not meta:
        parts.append(f"<p>{_e(content.get('meta_note') or 'No meta-evaluation.')}</p>\n")
        return "".join(parts)
    for caption, header, rows in _meta_tables(meta, content["measures"]):
        parts.append(_html_table(header, rows, caption=caption))
    advice = _advice(meta)
    if advice is not None:
        header, rows, sentences = advice
        parts.append('<h3 id="advice">Measure advice</h3>\n' + _html_table(header, rows))
        parts.append("".join(f"<p>{_e(s)}</p>\n" for s in sentences))
    return "".join(parts)


# --- LaTeX ---------------------------------------------------------------------------------------------------

PREAMBLE = r"""\documentclass[10pt,a4paper]{article}
\usepackage[margin=2cm]{geometry}
\usepackage{longtable}
\usepackage{array}
\usepackage{graphicx}
\setlength{\parindent}{0pt}
\setlength{\parskip}{0.5em}
\setlength{\LTpre}{0.3em}
\setlength{\LTpost}{0.6em}
\renewcommand{\arraystretch}{1.15}
\setlength{\tabcolsep}{4pt}
\newcolumntype{L}[1]{>{\raggedright\arraybackslash}p{\dimexpr#1\textwidth-2\tabcolsep\relax}}
\newcolumntype{R}[1]{>{\raggedleft\arraybackslash}p{\dimexpr#1\textwidth-2\tabcolsep\relax}}
\newcolumntype{C}[1]{>{\centering\arraybackslash}p{\dimexpr#1\textwidth-2\tabcolsep\relax}}
\sloppy
"""


def _longtable(columns: str, header: str, rows: Sequence[str], *, size: str = r"\small") -> str:
    """A ``longtable`` of fixed-width columns, its header repeated on every page: ``p`` columns have the same
    width in every chunk, so the first pass already aligns header and body and the second has nothing to fix."""
    return (f"{{{size}\n\\begin{{longtable}}{{{columns}}}\n\\hline\n{header} \\\\\n\\hline\n\\endfirsthead\n"
            f"\\hline\n{header} \\\\\n\\hline\n\\endhead\n\\hline\n\\endfoot\n"
            + "".join(f"{r} \\\\\n" for r in rows) + "\\end{longtable}}\n")


def _latex_pairs(rows: Sequence[tuple[str, str]]) -> str:
    return _longtable("@{}L{0.24}L{0.70}@{}", r"\textbf{What} & \textbf{Value}",
                      [f"{latex_escape(k)} & {latex_escape(v)}" for k, v in rows])


def _latex_plain_table(header: Sequence[str], rows: Sequence[Sequence[str]], first: float = 0.22) -> str:
    rest = (0.94 - first) / max(1, len(header) - 1)
    columns = f"@{{}}L{{{first:.3f}}}" + "".join(f"R{{{rest:.3f}}}" for _ in header[1:]) + "@{}"
    return _longtable(columns, " & ".join(latex_escape(h) for h in header),
                      [" & ".join(latex_escape(c) for c in row) for row in rows])


def render_latex(content: Mapping[str, Any], plot_files: Mapping[str, str]) -> str:
    """The report as a complete LaTeX document; ``plot_files``: plot name -> the PNG's path in the zip."""
    task, measures = content["task"], content["measures"]
    letters = _letters(content)
    out = [PREAMBLE, f"\\title{{{latex_escape(task['name'])}: end-of-task report}}\n\\author{{evalserve}}\n"
           f"\\date{{{latex_escape(content['provenance']['generated_at'])}}}\n\\begin{{document}}\n\\maketitle\n",
           f"\\textbf{{{latex_escape(_status_line(content))}}}\n\n"]
    if task["description"]:
        out.append(latex_escape(task["description"]) + "\n\n")
    out.append("\\section*{Settings}\n" + _latex_pairs(_settings(content)))
    out.append("\\section*{Leaderboard}\nRanked by the primary measure. Superscripts: the rows (by letter) a"
               " submission is significantly better than on that measure. Baselines in italics, unranked (--) and not"
               " tested.\n\n")
    for start in range(0, max(1, len(measures)), LATEX_MEASURES_PER_TABLE):
        group = measures[start:start + LATEX_MEASURES_PER_TABLE]
        width = 0.60 / max(1, len(group))
        columns = ("@{}R{0.065}L{0.04}L{0.255}"
                   + "".join(f"R{{{width:.3f}}}" for _ in group) + "@{}")
        header = "Rank & & System & " + " & ".join(
            f"\\textbf{{{latex_escape(m)}}}" if m == task["primary_measure"] else latex_escape(m) for m in group)
        rows = []
        for row in content["leaderboard"]["rows"]:
            label = latex_escape(row["label"])
            cells = [latex_escape(_rank(row)), letters[row["key"]],
                     f"\\textit{{{label}}}" if row["baseline"] else label]
            for m in group:
                beaten = "".join(letters[k] for k in content["significance"][m]["better_than"].get(row["key"], []))
                cells.append(_fixed(row["scores"][m]) + (f"\\textsuperscript{{{beaten}}}" if beaten else ""))
            rows.append(" & ".join(cells))
        out.append(_longtable(columns, header, rows))
    out.append("\\section*{Significance matrices}\nRow against column: + significantly better, $-$ significantly"
               " worse, $\\cdot$ no significant difference.\n\n")
    board = content["leaderboard"]["rows"]
    n = len(board)
    cell = min(0.06, 0.70 / max(1, n))
    for m in measures:
        marks = _marks(content, m)
        columns = "@{}L{0.26}" + "".join(f"C{{{cell:.3f}}}" for _ in board) + "@{}"
        header = latex_escape(m) + " & " + " & ".join(letters[r["key"]] for r in board)
        rows = []
        for a in board:
            marked = [{"+": "+", "-": "$-$", "\u00b7": "$\\cdot$"}.get(marks.get((a["key"], b["key"]), ("",))[0], "")
                      for b in board]
            rows.append(f"{letters[a['key']]} {latex_escape(a['label'])} & " + " & ".join(marked))
        out.append(_longtable(columns, header, rows, size=r"\footnotesize\setlength{\tabcolsep}{1pt}"))
    if plot_files:
        out.append("\\section*{Per-topic distributions and ASL curves}\n")
        for name, path in plot_files.items():
            out.append(f"\\begin{{center}}\n\\includegraphics[width=0.9\\textwidth,height=0.55\\textheight,"
                       f"keepaspectratio]{{{path}}}\n\\par {{\\small {latex_escape(PLOTS[name])}}}\n\\end{{center}}\n")
    out.append(_latex_meta(content))
    out.append("\\section*{Provenance}\n" + _latex_pairs(_provenance(content)))
    out.append("\\subsection*{Measure definitions}\n" + _latex_pairs(
        [(d["name"], (d["summary"] or "no definition registered") + (f" {d['formula']}" if d.get("formula") else "")
          + (f" ({d['reference']})" if d["reference"] else "")) for d in content["definitions"]]))
    out.append("\\end{document}\n")
    return "".join(out)


def _latex_meta(content: Mapping[str, Any]) -> str:
    meta = content.get("meta")
    out = ["\\section*{Meta-evaluation of the official measures}\n"]
    if not meta:
        out.append(latex_escape(content.get("meta_note") or "No meta-evaluation.") + "\n\n")
        return "".join(out)
    for caption, header, rows in _meta_tables(meta, content["measures"]):
        out.append(latex_escape(caption) + "\n" + _latex_plain_table(header, rows))
    advice = _advice(meta)
    if advice is not None:
        header, rows, sentences = advice
        out.append("\\subsection*{Measure advice}\n" + _latex_plain_table(header, rows, first=0.16))
        out.append("".join(latex_escape(s) + "\n\n" for s in sentences))
    return "".join(out)


# --- the zip -------------------------------------------------------------------------------------------------

def build_zip(content: Mapping[str, Any], plots: Mapping[str, Mapping[str, bytes]]) -> bytes:
    """The report's zip: ``report.html`` (plots embedded), ``report.tex`` with ``plots/*.png`` beside it, the CSVs,
    ``plots/*.svg`` and ``report.json`` (the content)."""
    files: dict[str, bytes] = {
        "report.html": render_html(content, plots).encode(),
        "report.tex": render_latex(content, {name: f"plots/{name}.png" for name in plots}).encode(),
        "leaderboard.csv": leaderboard_csv(content).encode(),
        "significance.csv": significance_csv(content).encode(),
        "per-topic.csv": per_topic_csv(content["per_topic"], content["measures"]).encode(),
        "report.json": (json.dumps(content, indent=2) + "\n").encode(),
    }
    for name, drawn in plots.items():
        for fmt, data in drawn.items():
            files[f"plots/{name}.{fmt}"] = data
    buffer = io.BytesIO()
    stamp = _zip_time(content["provenance"]["generated_at"])
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(f"report/{name}", date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[name])
    return buffer.getvalue()


def _zip_time(iso: str) -> tuple[int, int, int, int, int, int]:
    from datetime import datetime

    at = datetime.fromisoformat(iso)
    return (max(at.year, 1980), at.month, at.day, at.hour, at.minute, at.second)


def member(archive: bytes, name: str) -> bytes:
    """One file of a report zip (``report.html``, ``report.tex``...)."""
    with zipfile.ZipFile(io.BytesIO(archive)) as z:
        return z.read(f"report/{name}")
