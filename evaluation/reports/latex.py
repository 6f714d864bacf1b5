"""A report as a LaTeX document that ``pdflatex`` compiles with Debian's ``texlive-latex-base`` alone (article,
geometry, longtable, array): every string escaped, wide score tables split into several."""

from __future__ import annotations

from evaluation.latex import latex_escape as latex_escape  # one set of rules, shared with the leaderboard
from evaluation.reports.model import AxiomRow, MeasureInfo, ReportContent, Section, Table

#: measures per score table: wider tables are split so that each fits the page
COLUMNS_PER_TABLE = 6
#: how a constraint's status is typeset (symbols of the default fonts only)
STATUS_MARKS = {"satisfied": "Y", "violated": "x", "not_applicable": "-", "not_evaluable": "?"}

PREAMBLE = r"""\documentclass[10pt,a4paper]{article}
\usepackage[margin=2cm]{geometry}
\usepackage{longtable}
\usepackage{array}
\setlength{\parindent}{0pt}
\setlength{\parskip}{0.5em}
\setlength{\LTpre}{0.3em}
\setlength{\LTpost}{0.6em}
\renewcommand{\arraystretch}{1.15}
\sloppy
"""


def render_latex(content: ReportContent) -> str:
    """The report as a complete LaTeX document."""
    parts = [PREAMBLE, f"\\title{{{latex_escape(content.title)}}}\n\\author{{evalserve}}\n\\date{{}}\n",
             "\\begin{document}\n\\maketitle\n", _settings(content)]
    if content.warnings:
        items = "".join(f"  \\item {latex_escape(w)}\n" for w in content.warnings)
        parts.append(f"\\section*{{Warnings}}\n\\begin{{itemize}}\n{items}\\end{{itemize}}\n")
    if content.scores is not None:
        parts.append(_section(_split(content.scores)))
    for section in (content.results, content.significance):
        if section is not None:
            parts.append(_section(section))
    parts.append(_measures(content.measures))
    parts.append(_axioms(content.axioms, content.axioms_note, dict(content.constraints)))
    parts.append("\\end{document}\n")
    return "".join(parts)


def _settings(content: ReportContent) -> str:
    rows = "".join(f"{latex_escape(k)} & {latex_escape(v)} \\\\\n" for k, v in content.settings)
    return ("\\section*{Settings}\n\\begin{longtable}{@{}>{\\raggedright}p{0.22\\textwidth}"
            f">{{\\raggedright\\arraybackslash}}p{{0.72\\textwidth}}@{{}}}}\n{rows}\\end{{longtable}}\n")


def _split(section: Section) -> Section:
    """A score table with more measures than fit a page, as several tables of ``COLUMNS_PER_TABLE`` measures."""
    tables: list[Table] = []
    for table in section.tables:
        width = len(table.header) - 1
        for start in range(1, width + 1, COLUMNS_PER_TABLE) if width > COLUMNS_PER_TABLE else (1,):
            stop = start + COLUMNS_PER_TABLE if width > COLUMNS_PER_TABLE else len(table.header)
            keep = [0, *range(start, min(stop, len(table.header)))]
            marked = frozenset((i, keep.index(j)) for i, j in table.marked if j in keep)
            tables.append(Table(table.caption, tuple(table.header[j] for j in keep),
                                tuple(tuple(row[j] for j in keep) for row in table.rows), marked))
    return Section(section.title, section.paragraphs, tuple(tables))


def _section(section: Section) -> str:
    out = [f"\\section*{{{latex_escape(section.title)}}}\n"]
    out += [f"{latex_escape(p)}\n\n" for p in section.paragraphs]
    out += [_table(t) for t in section.tables]
    return "".join(out)


def _table(table: Table) -> str:
    columns = "".join("r" if j and table.numeric(j) else "l" for j in range(len(table.header)))
    head = " & ".join(f"\\textbf{{{latex_escape(h)}}}" for h in table.header) + " \\\\\n\\hline\n"
    rows = []
    for i, row in enumerate(table.rows):
        cells = [f"\\textbf{{{latex_escape(c)}}}" if (i, j) in table.marked else latex_escape(c)
                 for j, c in enumerate(row)]
        rows.append(" & ".join(cells) + " \\\\\n")
    caption = f"\\subsection*{{{latex_escape(table.caption)}}}\n" if table.caption is not None else ""
    return (f"{caption}{{\\small\n\\begin{{longtable}}{{{columns}}}\n\\hline\n{head}\\endhead\n"
            f"{''.join(rows)}\\hline\n\\end{{longtable}}}}\n")


def _measures(measures: tuple[MeasureInfo, ...]) -> str:
    out = ["\\section*{Measures}\n"]
    for m in measures:
        name = latex_escape(m.name) + (f" (\\texttt{{{latex_escape(m.canonical)}}})" if m.canonical != m.name else "")
        out.append(f"\\subsection*{{{name}}}\n")
        if not m.known:
            out.append("Not in this server's measure catalogue.\n\n")
            continue
        fields = [("Definition", latex_escape(m.summary)),
                  ("Formula", f"\\texttt{{{latex_escape(m.formula)}}}" if m.formula else ""),
                  ("Reference", latex_escape(m.reference)), ("Notes", latex_escape(m.notes)),
                  ("Reproduces", latex_escape(m.follows))]
        items = "".join(f"  \\item[{{{k}}}] {v}\n" for k, v in fields if v)
        out.append(f"\\begin{{description}}\n{items}\\end{{description}}\n" if items else "")
    return "".join(out)


def _axioms(rows: tuple[AxiomRow, ...], note: str, summaries: dict[str, str]) -> str:
    out = [f"\\section*{{Axiomatic profiles}}\n{latex_escape(note)}\n\n"]
    if not rows:
        return "".join(out)
    names = list(summaries)
    head = " & ".join(["\\textbf{measure}", *(f"\\textbf{{{latex_escape(n)}}}" for n in names)]) + " \\\\\n\\hline\n"
    body = []
    for row in rows:
        label = latex_escape(row.name if row.form == row.name else f"{row.name} ({row.form})")
        if row.statuses:
            cells = [STATUS_MARKS.get(row.statuses.get(n, ""), "") for n in names]
            body.append(" & ".join([label, *(latex_escape(c) for c in cells)]) + " \\\\\n")
        else:
            body.append(f"{label} & \\multicolumn{{{len(names)}}}{{p{{0.6\\textwidth}}}}"
                        f"{{{latex_escape(row.note)}}} \\\\\n")
    out.append(f"{{\\small\n\\begin{{longtable}}{{l{'c' * len(names)}}}\n\\hline\n{head}\\endhead\n"
               f"{''.join(body)}\\hline\n\\end{{longtable}}}}\n")
    words = {"satisfied": "satisfied", "violated": "violated", "not_applicable": "not applicable",
             "not_evaluable": "not evaluable"}
    legend = ", ".join(f"{latex_escape(STATUS_MARKS[s])} {w}" for s, w in words.items())
    items = "".join(f"  \\item[{{{latex_escape(n)}}}] {latex_escape(s)}\n" for n, s in summaries.items())
    out.append(f"{legend}.\n\\begin{{description}}\n{items}\\end{{description}}\n")
    return "".join(out)
