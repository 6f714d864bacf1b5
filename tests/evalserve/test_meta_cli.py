"""``evalserve meta``: each method from a results document or from qrels + runs, JSON keyed by method then
measure (the same document as ``evaluation.meta.methods.run_method``), tables, plots, and bad input (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalserve.cli.main import main
from evaluation.formats import load
from evaluation.meta.methods import METHODS, run_method
from evaluation.meta.table import ScoreTable
from evaluation.pipeline import load_inputs, run_evaluation
from evaluation.sources import Sources

MEASURES = ["AP", "nDCG@10", "RBU", "StRecall@20"]


@pytest.fixture(scope="module")
def web2012(shared_data: Path) -> dict[str, object]:
    runs = shared_data / "trec-web-2012-runs" / "runs"
    return {"qrels": str(shared_data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt"),
            "runs": [str(runs / n) for n in ("ql-results-cata.txt.gz", "ql-results-catb.txt.gz",
                                              "ql-results-cata-filtered.txt", "ql-results-catb-filtered.txt")]}


@pytest.fixture(scope="module")
def results(web2012: dict[str, object], tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("meta") / "results.json"
    runs = [a for r in web2012["runs"] for a in ("--run", r)]  # type: ignore[attr-defined]
    assert main(["evaluate", "--qrels", str(web2012["qrels"]), *runs, "-m", *MEASURES, "--per-topic", "-q",
                 "-o", str(path)]) == 0
    return path


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("method", [m for m, d in METHODS.items() if m != "preference-agreement"
                                    and not d.needs_inputs])
def test_each_method_prints_the_engine_document(method: str, results: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "meta", method, "--results", str(results))
    assert code == 0
    doc = json.loads(out)
    table = ScoreTable.from_document(json.loads(results.read_text()))
    assert doc == json.loads(json.dumps(run_method(method, table)))
    key = METHODS[method].key
    assert list(doc[key]) == MEASURES
    code, text, _ = cli(capsys, "meta", method, "--results", str(results), "--format", "table")
    assert code == 0 and all(m in text for m in MEASURES)


@pytest.mark.parametrize(("method", "expected"), [("tau_a", 2 / 3), ("tau_b", 1.0), ("tau_ap", 1.0)])
def test_correlation_diagonal_with_tied_runs(method: str, expected: float, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 17: runs a (0.5, 0.5), b (0.4, 0.6), c (0.2, 0.2); the diagonal equals M against its copy (8.5)."""
    values = {"a": (0.5, 0.5), "b": (0.4, 0.6), "c": (0.2, 0.2)}
    runs = {r: {m: {"mean": sum(v) / 2, "per_topic": {"1": v[0], "2": v[1]}} for m in ("M", "Mcopy")}
            for r, v in values.items()}
    path = tmp_path / "tied.json"
    path.write_text(json.dumps({"runs": runs}))
    code, out, _ = cli(capsys, "meta", "correlation", "--results", str(path), "--method", method)
    assert code == 0
    matrix = json.loads(out)["correlation"]
    assert matrix["M"]["M"] == matrix["Mcopy"]["Mcopy"] == matrix["M"]["Mcopy"]
    assert matrix["M"]["M"] == pytest.approx(expected, abs=1e-12)


def test_discriminative_power_document_shape(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = cli(capsys, "meta", "discriminative-power", "--results", str(results), "--resamples", "200",
                    "--seed", "3")
    doc = json.loads(out)
    ap = doc["discriminative_power"]["AP"]
    assert ap["pairs"] == 6 and len(ap["asl"]) == 6 and ap["asl"] == sorted(ap["asl"])
    assert ap["proportion"] == ap["significant_pairs"] / 6
    assert doc["resamples"] == 200 and doc["seed"] == 3


def test_qrels_and_runs_give_the_same_as_a_results_document(web2012: dict[str, object], results: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    runs = [a for r in web2012["runs"] for a in ("--run", r)]  # type: ignore[attr-defined]
    _, direct, _ = cli(capsys, "meta", "unanimity", "--qrels", str(web2012["qrels"]), *runs, "-m", *MEASURES)
    _, via, _ = cli(capsys, "meta", "unanimity", "--results", str(results))
    assert json.loads(direct) == json.loads(via)


def test_plots(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    png, svg = tmp_path / "asl.png", tmp_path / "scores.svg"
    assert cli(capsys, "meta", "discriminative-power", "--results", str(results), "--resamples", "100",
               "--plot", str(png))[0] == 0
    assert png.read_bytes().startswith(b"\x89PNG")
    assert cli(capsys, "meta", "significance", "--results", str(results), "-m", "AP", "--plot", str(svg))[0] == 0
    assert b"<svg" in svg.read_bytes()[:500]


def test_preference_agreement(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(results.read_text())
    ap = doc["runs"]
    a, b = "ql-results-cata.txt", "ql-results-catb.txt"
    topics = list(ap[a]["AP"]["per_topic"])[:6]
    lines = []
    for t in topics:  # user 1 agrees with AP everywhere, user 2 always says "="
        x, y = ap[a]["AP"]["per_topic"][t], ap[b]["AP"]["per_topic"][t]
        lines.append(f"{t} {a} {b} {'>' if x > y else '<' if x < y else '='} u1")
        lines.append(f"{t} {a} {b} = u2")
    prefs = tmp_path / "prefs.txt"
    prefs.write_text("# topic left right label user\n" + "\n".join(lines) + "\n")
    code, out, _ = cli(capsys, "meta", "preference-agreement", "--results", str(results), "-m", "AP",
                       "--preferences", str(prefs))
    assert code == 0
    found = json.loads(out)["preference_agreement"]["AP"]
    assert found["u1"] == 1.0 and found["u2"] == -1.0 and found["average"] == 0.0


def test_bad_inputs_exit_2_with_the_problem(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    means_only = tmp_path / "means.json"
    doc = json.loads(results.read_text())
    for run in doc["runs"].values():
        for item in run.values():
            item.pop("per_topic")
    means_only.write_text(json.dumps(doc))
    code, _, err = cli(capsys, "meta", "unanimity", "--results", str(means_only))
    assert code == 2 and "[per-topic-missing]" in err and "--per-topic" in err
    code, _, err = cli(capsys, "meta", "unanimity", "--results", str(results), "-m", "nope")
    assert code == 2 and "[measure-missing]" in err
    bad = tmp_path / "bad.txt"
    bad.write_text("1 a b maybe\n1 a a >\n2 a\n")
    code, _, err = cli(capsys, "meta", "preference-agreement", "--results", str(results), "--preferences", str(bad))
    assert code == 2
    assert [c for c in ("preference-label", "preference-same-run", "preference-fields") if f"[{c}]" in err] == [
        "preference-label", "preference-same-run", "preference-fields"]
    code, _, err = cli(capsys, "meta", "unanimity")
    assert code == 2 and "[missing-inputs]" in err
    code, _, err = cli(capsys, "meta", "discriminative-power", "--results", str(results), "--alpha", "2")
    assert code == 2 and "alpha must be between 0 and 1" in err


def _engine_document(web2012: dict[str, object], method: str, measures: list[str],
                     options: dict[str, object]) -> dict[str, object]:
    """``run_method`` on the table and sources the CLI builds from the same files."""
    inputs = load_inputs(load(str(web2012["qrels"])),
                         [load(r) for r in web2012["runs"]])  # type: ignore[attr-defined]
    table = ScoreTable.from_run_scores(run_evaluation(inputs, measures).scores)
    doc: dict[str, object] = json.loads(json.dumps(run_method(method, table, options, sources=Sources.of(inputs))))
    return doc


def test_scenarios(web2012: dict[str, object], results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = [a for r in web2012["runs"] for a in ("--run", r)]  # type: ignore[attr-defined]
    code, out, _ = cli(capsys, "meta", "scenarios", "--qrels", str(web2012["qrels"]), *runs, "-m", *MEASURES,
                       "--scenarios", "short_lists", "random_truncation", "--seed", "5")
    assert code == 0
    doc = json.loads(out)
    assert doc == _engine_document(web2012, "scenarios", MEASURES,
                                   {"scenarios": ["short_lists", "random_truncation"], "seed": 5})
    assert list(doc["scenarios"]) == MEASURES and list(doc["scenarios"]["AP"]) == ["official", "short_lists",
                                                                                     "random_truncation"]
    _, unanimity, _ = cli(capsys, "meta", "unanimity", "--results", str(results))
    assert {m: v["official"] for m, v in doc["scenarios"].items()} == json.loads(unanimity)["unanimity"]
    code, text, _ = cli(capsys, "meta", "scenarios", "--qrels", str(web2012["qrels"]), *runs, "-m", "AP",
                        "--scenarios", "aspect_weights", "--format", "table")
    assert code == 0 and "aspect_weights" in text and "AP" in text


def test_robustness(web2012: dict[str, object], capsys: pytest.CaptureFixture[str]) -> None:
    runs = [a for r in web2012["runs"] for a in ("--run", r)]  # type: ignore[attr-defined]
    measures = ["nPrf(profile=trec)@20", "Prf(profile=trec,stop=rr)"]
    code, out, _ = cli(capsys, "meta", "robustness", "--qrels", str(web2012["qrels"]), *runs, "-m", *measures,
                       "--sizes", "5", "40", "--repetitions", "2", "--seed", "1")
    assert code == 0
    doc = json.loads(out)
    assert doc == _engine_document(web2012, "robustness", measures, {"sizes": [5, 40], "repetitions": 2, "seed": 1})
    assert list(doc["robustness"]) == measures and list(doc["robustness"][measures[0]]) == ["5", "40"]
    assert doc["sampled_from"] == {m: "trec" for m in measures}
    code, text, _ = cli(capsys, "meta", "robustness", "--qrels", str(web2012["qrels"]), *runs, "-m", measures[0],
                        "--sizes", "5", "--repetitions", "1", "--format", "table")
    assert code == 0 and "N=5" in text


def test_simulation_methods_refuse_what_they_cannot_use(web2012: dict[str, object], results: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    runs = [a for r in web2012["runs"] for a in ("--run", r)]  # type: ignore[attr-defined]
    for method in ("scenarios", "robustness"):  # a results document cannot be perturbed
        code, out, err = cli(capsys, "meta", method, "--results", str(results))
        assert code == 2 and out == "" and "[invalid-meta-request]" in err and "perturbed" in err
    code, _, err = cli(capsys, "meta", "robustness", "--qrels", str(web2012["qrels"]), *runs, "-m", "AP")
    assert code == 2 and "[invalid-meta-request]" in err and "Prf and nPrf, not AP" in err
    code, _, err = cli(capsys, "meta", "robustness", "--qrels", str(web2012["qrels"]), *runs,
                       "-m", "nPrf(profile=trec)@20", "--sizes", "0")
    assert code == 2 and "[invalid-meta-request]" in err and "sizes must list" in err
    with pytest.raises(SystemExit) as bad_choice:  # argparse knows the scenario names
        cli(capsys, "meta", "scenarios", "--results", str(results), "--scenarios", "vibes")
    assert bad_choice.value.code == 2


def test_the_catalogue_shows_constraint_profiles_on_request(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "measures", "nDCG", "--axioms", "--format", "json")
    assert code == 0
    axioms = json.loads(out)["measures"][0]["axioms"]
    assert axioms["Pri"] == "satisfied" and axioms["AspDiv"] == "not_applicable"
    code, out, _ = cli(capsys, "measures", "nDCG", "--axioms")
    assert "axioms: Pri yes" in out


def test_preference_label_problems_point_at_the_field() -> None:
    from evaluation.formats import Blob
    from evaluation.formats.preferences import parse_preferences

    parsed = parse_preferences(Blob.from_bytes(b"# c\n1 runL runR L u\n1 a b maybe\n2 a a >\n3 x\n", "p"))
    assert [(p.code, p.line, p.column) for p in parsed.problems] == [
        ("preference-label", 3, 7), ("preference-same-run", 4, 5), ("preference-fields", 5, 1)]
