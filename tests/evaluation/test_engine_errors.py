"""Typed engine errors: a user-facing failure raises an ``EvaluationError`` subclass whose ``code`` is the problem a
service answers with, its message as before; a bare ``ValueError``/``KeyError``/``TypeError`` is an internal
invariant (a bug) and says so with ``# internal: why`` on its line or the line before."""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import evaluation
from evalserve.cli.main import main
from evaluation.api import evaluate
from evaluation.measures.registry import default_registry
from evaluation.meta.methods import options_for, run_method
from evaluation.meta.table import ScoreTable
from evaluation.problems import (
    ERROR_CODES,
    EvaluationError,
    FormatError,
    MeasureError,
    MetaOptionError,
    OptionError,
    RequestError,
)
from evaluation.report import render_document
from evaluation.reports import render_report

ENGINE = Path(evaluation.__file__).parent
BARE = {"ValueError", "KeyError", "TypeError"}
MARKER = "# internal:"
QRELS = "1 0 d1 1\n1 0 d2 0\n2 0 d3 1\n"
RUNS = {"a.run": "1 Q0 d1 1 2.0 a\n1 Q0 d2 2 1.0 a\n2 Q0 d3 1 1.0 a\n",
        "b.run": "1 Q0 d2 1 2.0 b\n1 Q0 d1 2 1.0 b\n2 Q0 d4 1 1.0 b\n"}


def unmarked_raises(root: Path) -> list[str]:
    """``file:line`` of every ``raise ValueError/KeyError/TypeError`` under ``root`` without the internal marker."""
    found = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text()
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text, str(path))):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id in BARE:
                near = lines[node.lineno - 1] + (lines[node.lineno - 2] if node.lineno > 1 else "")
                if MARKER not in near:
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return found


def test_every_bare_raise_in_the_engine_is_an_internal_invariant() -> None:
    assert unmarked_raises(ENGINE) == [], "raise an EvaluationError subclass, or mark the invariant '# internal: why'"


def test_the_scan_finds_an_unmarked_raise(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("def f(x):\n    if x:\n        raise ValueError('x')\n"
                                           "    # internal: never None\n    raise KeyError(x)\n")
    assert unmarked_raises(tmp_path / "pkg") == ["pkg/m.py:3"]


def test_the_engine_raises_no_bare_evaluation_error() -> None:
    """The base class carries no specific code: the engine raises one of its subclasses."""
    bare = [f"{p.relative_to(ENGINE.parent)}:{n.lineno}" for p in sorted(ENGINE.rglob("*.py"))
            for n in ast.walk(ast.parse(p.read_text())) if isinstance(n, ast.Raise) and isinstance(n.exc, ast.Call)
            and isinstance(n.exc.func, ast.Name) and n.exc.func.id == "EvaluationError"]
    assert bare == []


def _subclasses(cls: type) -> Iterator[type]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def test_every_evaluation_error_has_a_documented_code() -> None:
    for module in pkgutil.walk_packages(evaluation.__path__, "evaluation."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)  # every subclass the engine defines
    found = {cls.__name__: cls for cls in _subclasses(EvaluationError)}
    assert {"MeasureError", "OptionError", "FormatError", "MetaOptionError", "RequestError"} <= set(found)
    for cls in (EvaluationError, *found.values()):
        assert issubclass(cls, ValueError) and cls.code in ERROR_CODES, cls
        assert cls is EvaluationError or cls.code in (cls.__doc__ or ""), f"{cls.__name__}: say its code"
    assert {c: found[c].code for c in ("MeasureError", "MetaOptionError", "OptionError", "FormatError",
                                       "RequestError")} == {
        "MeasureError": "invalid-measure", "MetaOptionError": "invalid-meta-request", "OptionError": "invalid-request",
        "FormatError": "invalid-request", "RequestError": "invalid-request"}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("engine-errors")
    (root / "qrels.txt").write_text(QRELS)
    for name, text in RUNS.items():
        (root / name).write_text(text)
    return {"qrels": str(root / "qrels.txt"), **{name: str(root / name) for name in RUNS}}


@pytest.fixture(scope="module")
def document(files: dict[str, str]) -> dict[str, Any]:
    return evaluate(files["qrels"], [files["a.run"], files["b.run"]], ["AP", "P@1"], per_topic=True)


def _refused(cls: type[EvaluationError], code: str, message: str, call: Any) -> EvaluationError:
    with pytest.raises(cls) as refused:
        call()
    assert type(refused.value) is cls and refused.value.code == code and str(refused.value) == message
    return refused.value


def test_bad_ties_and_topics_policies(files: dict[str, str]) -> None:
    _refused(OptionError, "invalid-request", "unknown ties policy 'random'; choose one of trec, rank, file",
             lambda: evaluate(files["qrels"], [files["a.run"]], ["AP"], ties="random"))
    _refused(OptionError, "invalid-request", "unknown topics policy 'some'; choose one of common, complete",
             lambda: evaluate(files["qrels"], [files["a.run"]], ["AP"], topics="some"))


def test_unknown_measure(files: dict[str, str]) -> None:
    _refused(MeasureError, "invalid-measure", "unknown measure 'nDGC'; did you mean nDCG@10 or RnDCG@10 or D_nDCG@10?",
             lambda: evaluate(files["qrels"], [files["a.run"]], ["nDGC@10"]))
    _refused(MeasureError, "invalid-measure", "parameter gain: 'foo' is not one of lin, exp",
             lambda: default_registry().parse("nDCG(gain=foo)@10"))


def test_unknown_meta_evaluation_method_or_option() -> None:
    _refused(MetaOptionError, "invalid-meta-request", "unknown meta-evaluation method 'vibes'; choose one of"
             " unanimity, discriminative-power, significance, correlation, advice, preference-agreement,"
             " scenarios, robustness", lambda: options_for("vibes", {}))
    _refused(MetaOptionError, "invalid-meta-request", "unanimity has no option resamples; it takes against, strict",
             lambda: options_for("unanimity", {"resamples": 5}))
    _refused(MetaOptionError, "invalid-meta-request", "discriminative-power: alpha must be between 0 and 1",
             lambda: options_for("discriminative-power", {"alpha": 3}))
    _refused(MetaOptionError, "invalid-meta-request", "robustness: sizes must list 1 to 50 whole numbers of"
             " triplets per topic, each from 1 to 100000", lambda: options_for("robustness", {"sizes": [0]}))


def test_a_meta_evaluation_asking_for_what_the_table_lacks(document: dict[str, Any]) -> None:
    table = ScoreTable.from_document(document)
    missing = _refused(RequestError, "invalid-request", "unknown measure(s): ERR@20",
                       lambda: run_method("unanimity", table, {"against": ["ERR@20"]}))
    assert str(missing) == str(KeyError("unknown measure(s): ERR@20")).strip("'\"")  # as the service answered it
    _refused(RequestError, "invalid-request", "unknown run(s): zzz", lambda: table.select(runs=["zzz"]))
    _refused(RequestError, "invalid-request", "robustness evaluates perturbed judgments and runs: give the"
             " judgments, runs and measures to evaluate, not results already evaluated",
             lambda: run_method("robustness", table))
    from evaluation.meta.robustness import sampled_measures

    _refused(RequestError, "invalid-request", "robustness samples preference judgments: it takes the preference"
             " measures Prf and nPrf, not AP", lambda: sampled_measures(["AP"]))


def test_unknown_report_or_result_format(document: dict[str, Any]) -> None:
    _refused(FormatError, "invalid-request", "unknown report format 'pdf'; choose one of html, latex",
             lambda: render_report(document, "pdf"))
    _refused(FormatError, "invalid-request", "unknown format 'xml'; choose one of json, tsv, csv, trec_eval, html,"
             " latex", lambda: render_document(document, "xml"))
    _refused(RequestError, "invalid-request", "not a result document: it has no meta object",
             lambda: render_report({}, "html"))


def test_the_cli_reports_a_refused_meta_request_and_shows_a_bug(document: dict[str, Any], tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    results = tmp_path / "results.json"
    results.write_text(json.dumps(document))
    capsys.readouterr()
    code = main(["meta", "unanimity", "--results", str(results), "--against", "ERR@20"])
    assert code == 2 and capsys.readouterr().err == \
        "<input>: error: unknown measure(s): ERR@20 [invalid-meta-request]\n"

    def bug(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("a bug")  # not an engine refusal: the CLI must not call it the user's mistake

    monkeypatch.setattr("evalserve.cli.meta.run_method", bug)
    with pytest.raises(ValueError, match=r"^a bug$"):
        main(["meta", "unanimity", "--results", str(results)])
