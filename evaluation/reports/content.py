"""What a report says, independent of how it is typeset: built once from a result document and rendered as HTML
or LaTeX (``evaluation.reports``).

An evaluation document (``evaluation.report``) gives the runs' mean scores, paired t-tests with Holm's correction
between every pair of runs per measure (from its per-topic values, 2+ runs), the measures' definitions and
references from the registry and their axiomatic profiles (``evaluation.axioms``). A meta-evaluation document
(``evaluation.meta.methods``) gives its method's tables instead of scores, with the same measure sections.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from evaluation.axioms.constraints import CONSTRAINTS, NAMES
from evaluation.axioms.harness import profiles, resolve
from evaluation.measures.registry import default_registry
from evaluation.meta.render import Table as MetaTable
from evaluation.meta.render import meta_view
from evaluation.problems import EvaluationError, InputError, RequestError
from evaluation.reports.model import AxiomRow, MeasureInfo, ReportContent, Section, Table

if TYPE_CHECKING:  # numpy and scipy load when a report computes its tests
    from evaluation.meta.table import ScoreTable

#: the significance test of an evaluation report (spec 8.3): paired t, Holm's correction, alpha 0.05
SIGNIFICANCE = {"test": "t", "correction": "holm", "alpha": 0.05}


#: a report lists at most this many pairwise tests (rows of its significance tables, every measure together, about
#: 150 bytes of HTML each); above it, it shows one row per measure and says where to get every test (docs/api.md)
MAX_TEST_ROWS = 2000

#: constraint name -> its one-line summary, in the order of the profile table
CONSTRAINT_SUMMARIES: dict[str, str] = {c.name: c.summary for c in CONSTRAINTS}


def build(doc: Mapping[str, Any], *, axioms: bool = True) -> ReportContent:
    """The content of a report on an evaluation or a meta-evaluation document; ``axioms=False`` leaves the
    profiles out (each costs about a third of a second per measure)."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("meta"), Mapping):
        raise RequestError("not a result document: it has no meta object")
    if "method" in doc["meta"]:
        return _meta_content(doc, axioms)
    if not isinstance(doc.get("runs"), Mapping):
        raise RequestError("not a result document: it has no runs")
    return _evaluation_content(doc, axioms)


def _evaluation_content(doc: Mapping[str, Any], axioms: bool) -> ReportContent:
    meta = doc["meta"]
    runs: Mapping[str, Mapping[str, Any]] = doc["runs"]
    measures = list(next(iter(runs.values()), {}))
    canonical = {m: str(meta.get("measures", {}).get(m, m)) for m in measures}
    topics = _topic_count(runs)
    settings = [("runs", str(len(runs))), ("measures", ", ".join(measures)),
                ("topics", "-" if topics is None else str(topics)),
                ("ties", str(meta.get("ties", "-"))), ("topic policy", str(meta.get("topics", "-"))),
                ("evalserve", str(meta.get("evalserve_version", "-")))]
    settings += [(f"input {name}", f"sha256 {sha}") for name, sha in meta.get("inputs", {}).items()]
    means = {run: {m: by_measure[m].get("mean") for m in measures} for run, by_measure in runs.items()}
    return ReportContent(
        title="Evaluation report",
        settings=tuple(settings),
        warnings=tuple(_warning(w) for w in meta.get("warnings", ())),
        scores=Section("Scores", ("Mean over topics; the best run per measure is highlighted.",),
                       (_score_table(means, measures),)),
        results=None,
        significance=_significance(doc, measures, topics),
        measures=tuple(_info(m, canonical[m]) for m in measures),
        axioms=_axioms(canonical) if axioms else (),
        axioms_note=_AXIOMS_NOTE if axioms else "Axiomatic profiles were not computed for this report.",
        constraints=tuple(CONSTRAINT_SUMMARIES.items()),
    )


def _meta_content(doc: Mapping[str, Any], axioms: bool) -> ReportContent:
    meta = doc["meta"]
    summarised = "significance" in doc and _test_rows(doc["significance"]) > MAX_TEST_ROWS
    # too many tests to list: the view's heading and note without formatting every pair
    view = meta_view({**doc, "significance": {m: {**v, "pairs": []} for m, v in doc["significance"].items()}}
                     if summarised else doc)
    measures = [str(m) for m in meta.get("measures", ())]
    canonical = {m: _canonical(m) for m in measures}
    settings = [("method", str(meta["method"])), ("runs", str(meta.get("runs", "-"))),
                ("topics", str(meta.get("topics", "-"))), ("measures", ", ".join(measures))]
    if view.note:
        settings.append(("settings", view.note))
    scores = None
    significance = None
    tables = tuple(_from_meta(t) for t in view.tables)
    if "significance" in doc:  # its means are the runs' scores, its tables the significance section
        by_measure = doc["significance"]
        first: Mapping[str, Any] = next(iter(by_measure.values()), {})
        runs = list(first.get("means", {}))
        means = {r: {m: by_measure[m]["means"].get(r) for m in by_measure} for r in runs}
        scores = Section("Scores", ("Mean over topics; the best run per measure is highlighted.",),
                         (_score_table(means, list(by_measure)),))
        intro = (f"{doc['test']} test between every pair of runs, {doc['correction']} correction,"
                 f" alpha = {doc['alpha']}")
        significance = (Section("Significance tests", (intro + "; * marks a significant difference.",), tables)
                        if not summarised else Section(
                            "Significance tests", (intro + ".", _summary_note(_test_rows(by_measure), _META_FULL)),
                            (_summary_table(by_measure),)))
        tables = ()
    results = Section(f"Meta-evaluation: {meta['method']}", (view.heading,), tables) if tables else None
    return ReportContent(
        title=f"Meta-evaluation report: {meta['method']}",
        settings=tuple(settings),
        warnings=(),
        scores=scores,
        results=results,
        significance=significance,
        measures=tuple(_info(m, canonical[m]) for m in measures),
        axioms=_axioms(canonical) if axioms else (),
        axioms_note=_AXIOMS_NOTE if axioms else "Axiomatic profiles were not computed for this report.",
        constraints=tuple(CONSTRAINT_SUMMARIES.items()),
    )


_AXIOMS_NOTE = ("The ten formal constraints of Amigo, Spina and Carrillo-de-Albornoz (SIGIR 2018), checked on"
                " each measure as used here (its parameters and cutoff) on generated instances (spec section 7;"
                " docs/axioms.md).")


def _score_table(means: Mapping[str, Mapping[str, Any]], measures: Sequence[str]) -> Table:
    """Runs as rows, measures as columns, four decimals; the highest finite mean of each column is marked."""
    runs = list(means)
    marked: set[tuple[int, int]] = set()
    for j, m in enumerate(measures):
        values: list[float] = [means[r][m] for r in runs if _finite(means[r].get(m))]
        if values:
            best = max(values)
            marked |= {(i, j + 1) for i, r in enumerate(runs) if means[r].get(m) == best}
    rows = tuple((r, *(_fmt(means[r].get(m)) for m in measures)) for r in runs)
    return Table(None, ("run", *measures), rows, frozenset(marked))


def _significance(doc: Mapping[str, Any], measures: Sequence[str], topics: int | None) -> Section:
    """Paired t-tests (Holm) between every pair of runs, per measure, on the topics every run has."""
    from evaluation.meta.methods import run_method  # numpy/scipy: loaded when a report needs them
    from evaluation.meta.table import ScoreTable

    title = "Significance tests"
    if len(doc["runs"]) < 2:
        return Section(title, ("One run: there is no pair of runs to compare.",))
    if topics is None:
        return Section(title, ("The document has no per-topic values, which the tests need.",))
    try:
        table = ScoreTable.from_document(doc, list(measures))
        tests = len(table.runs) * (len(table.runs) - 1) // 2 * len(table.measures)
        tested = run_method("significance", table, SIGNIFICANCE) if tests <= MAX_TEST_ROWS else None
    except (InputError, EvaluationError) as exc:
        return Section(title, (f"No tests: {exc}",))
    intro = (f"Paired t-test between every pair of runs over the {len(table.topics)} topics they share, p-values"
             f" adjusted with Holm's correction per measure, alpha = {SIGNIFICANCE['alpha']}")
    if tested is None:  # the same tests, counted from their arrays rather than listed one record per pair
        return Section(title, (intro + ".", _summary_note(tests, _EVALUATION_FULL)), (_tested_summary(table),))
    return Section(title, (intro + "; * marks a significant difference, g is Hedges' effect size.",),
                   tuple(_from_meta(t) for t in meta_view(tested).tables))


def _tested_summary(table: ScoreTable) -> Table:
    """``_summary_table`` of ``run_method("significance", table, SIGNIFICANCE)``, from the tests' arrays."""
    import numpy as np

    from evaluation.meta.significance import compare_runs

    means = table.means()
    rows = []
    for k, m in enumerate(table.measures):
        tests = compare_runs(table, m, test=str(SIGNIFICANCE["test"]), correction=str(SIGNIFICANCE["correction"]),
                             alpha=cast(float, SIGNIFICANCE["alpha"]))
        finite = np.isfinite(means[k])
        best = int(np.argmax(np.where(finite, means[k], -np.inf))) if finite.any() else -1  # the first of a tie
        first, second = tests.pairs[:, 0], tests.pairs[:, 1]
        with np.errstate(invalid="ignore"):
            wins = tests.significant & (((first == best) & (tests.mean_difference > 0))
                                        | ((second == best) & (tests.mean_difference < 0)))
        rows.append((m, str(len(tests.pairs)), str(int(tests.significant.sum())),
                     table.runs[best] if best >= 0 else "-", str(int(wins.sum()))))
    return Table(None, _SUMMARY_HEADER, tuple(rows))


def _test_rows(by_measure: Mapping[str, Any]) -> int:
    """Pairwise tests of a significance result, every measure together: the rows listing them would take."""
    return sum(len(v.get("pairs", ())) for v in by_measure.values())


_EVALUATION_FULL = ("every test: evalserve meta significance --results RESULT.json (a significance"
                    " meta-evaluation job through the API); the per-topic scores they are computed from:"
                    " evalserve evaluate --per-topic --format csv, or the job's result with"
                    " ?format=csv&per_topic=true")
_META_FULL = "every test: the job's result as JSON (?format=json), or evalserve meta significance --format json"
_SUMMARY_HEADER = ("measure", "pairs", "significant", "best run", "significantly better than")


def _summary_note(tests: int, full: str) -> str:
    return (f"{tests} pairwise tests are more than a report lists ({MAX_TEST_ROWS}): per measure, the number of"
            " pairs that differ significantly, and the best run with the number of runs it is significantly better"
            f" than; {full}.")


def _summary_table(by_measure: Mapping[str, Any]) -> Table:
    """One row per measure of a significance result (``_summary_row``)."""
    return Table(None, _SUMMARY_HEADER, tuple(
        _summary_row(m, v.get("means", {}), [(p["a"], p["b"]) for p in v.get("pairs", ())],
                     [p["significant"] for p in v.get("pairs", ())],
                     [p["mean_difference"] for p in v.get("pairs", ())]) for m, v in by_measure.items()))


def _summary_row(measure: str, means: Mapping[str, Any], pairs: Sequence[tuple[str, str]],
                 significant: Sequence[bool], differences: Sequence[float | None]) -> tuple[str, ...]:
    """Pairs tested, pairs significant, the best run by mean (the first of a tie) and the runs it beats
    significantly (a significant pair in its favour)."""
    finite = {r: x for r, x in means.items() if _finite(x)}
    best = max(finite, key=lambda r: finite[r]) if finite else "-"
    beaten = sum(1 for (a, b), sig, diff in zip(pairs, significant, differences)
                 if sig and best in (a, b) and (diff or 0.0) * (1 if a == best else -1) > 0)
    return (measure, str(len(pairs)), str(sum(significant)), best, str(beaten))


def _from_meta(table: MetaTable) -> Table:
    """A meta-evaluation table for the report, its significant tests (``*`` under ``sig``) marked."""
    marked = frozenset((i, j) for i, row in enumerate(table.rows) for j, cell in enumerate(row)
                       if table.header[j] == "sig" and cell == "*")
    return Table(table.caption, table.header, table.rows, marked)


def _info(name: str, canonical: str) -> MeasureInfo:
    try:
        definition = default_registry().parse(canonical).definition
    except EvaluationError:
        return MeasureInfo(name, canonical, known=False)
    return MeasureInfo(name, canonical, definition.summary, definition.formula, definition.reference,
                       definition.notes, definition.default_follows)


def _canonical(name: str) -> str:
    try:
        return default_registry().parse(name).name
    except EvaluationError:
        return name


def _axioms(canonical: Mapping[str, str]) -> tuple[AxiomRow, ...]:
    """Each measure's profile as used (``profiles``: checked once per process, the instances drawn once for all
    the measures not checked yet)."""
    forms: dict[str, Any] = {}
    refused: dict[str, str] = {}
    for name, form in canonical.items():
        try:
            forms[name] = resolve(form)
        except EvaluationError as exc:
            refused[name] = f"not checked: {exc}"
    try:
        outcomes = profiles(list(forms.values()))
    except EvaluationError as exc:
        outcomes = {}
        refused |= {name: f"not checked: {exc}" for name in forms}
    rows = []
    for name, form in canonical.items():
        found = outcomes.get(forms[name].name) if name in forms else None
        if found is None:
            rows.append(AxiomRow(name, form, note=refused.get(name, "not checked")))
        else:
            rows.append(AxiomRow(name, forms[name].name, {c: found[c].status for c in NAMES}))
    return tuple(rows)


def _topic_count(runs: Mapping[str, Mapping[str, Any]]) -> int | None:
    """Topics of the first run's first measure, or None when the document has no per-topic values."""
    first: Mapping[str, Any] = next(iter(runs.values()), {})
    item: Any = next(iter(first.values()), {}) if isinstance(first, Mapping) else {}
    per_topic = item.get("per_topic") if isinstance(item, Mapping) else None
    return len(per_topic) if isinstance(per_topic, Mapping) else None


def _warning(problem: Any) -> str:
    if not isinstance(problem, Mapping):
        return str(problem)
    where = ":".join(str(problem[k]) for k in ("source", "line", "column") if problem.get(k) not in (None, ""))
    return f"{where + ': ' if where else ''}{problem.get('code', '')}: {problem.get('message', '')}"


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _fmt(value: Any) -> str:
    return f"{value:.4f}" if _finite(value) else "-"



__all__ = ["CONSTRAINT_SUMMARIES", "SIGNIFICANCE", "AxiomRow", "MeasureInfo", "ReportContent", "Section", "Table",
           "build"]
