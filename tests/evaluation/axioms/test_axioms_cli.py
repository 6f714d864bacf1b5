"""``evalserve axioms``: JSON and text output, exit codes."""

from __future__ import annotations

import json

import pytest

from evalserve.cli.main import main
from evaluation.axioms import NAMES


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "axioms", "-m", "RBU(e=0.05,p=0.99)", "-m", "AP", "--instances", "50")
    assert code == 0, err
    data = json.loads(out)
    assert list(data) == ["RBU(p=0.99,e=0.05)", "AP"]  # canonical names, in the given order
    for outcomes in data.values():
        assert list(outcomes) == list(NAMES)
        for o in outcomes.values():
            assert isinstance(o["satisfied"], bool) and "counterexample" in o
    assert all(o["satisfied"] and o["counterexample"] is None for o in data["RBU(p=0.99,e=0.05)"].values())
    pri = data["AP"]["Pri"]
    assert not pri["satisfied"] and pri["status"] == "violated"
    ce = pri["counterexample"]
    assert ce["higher"]["score"] <= ce["lower"]["score"] + 1e-12
    assert set(ce["higher"]["ranking"]) <= set(ce["judgments"]) and ce["intents"] == {"t1": 1.0}
    assert data["AP"]["Sat"] == {"satisfied": False, "status": "not_applicable", "counterexample": None,
                                 "instances": 0, "note": "AP is an ad hoc (single-aspect) measure"}


def test_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "axioms", "-m", "RBU(p=0.99,e=0.05)", "nDCG", "ERR(gmax=2)", "--format",
                             "text", "--instances", "50")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["measure", *NAMES]
    assert lines[1].split() == ["RBU(p=0.99,e=0.05)", *["Y"] * 10]
    assert lines[2].split() == ["nDCG", "Y", "Y", ".", "Y", ".", *["-"] * 5]
    assert lines[3].split() == ["ERR(gmax=2)", "?", "?", "Y", ".", "?", *["-"] * 5]
    assert "  DeepTh: n = 1000: A = (rel, non-rel x 1999)" in out
    assert "Pri: ERR(gmax=2) cannot be scored on Pri's instances" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["-m", "nDCGx"], "unknown measure 'nDCGx'"),
    (["-m", "RBU", "-m", "RBU(q=1)"], "RBU has no parameter 'q'"),
    (["-m", "P"], "P needs a cutoff"),
])
def test_bad_measure_exits_2(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, out, err = run_cli(capsys, "axioms", *argv)
    assert code == 2 and out == "" and message in err


def test_measure_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["axioms"])
    assert exc.value.code == 2
