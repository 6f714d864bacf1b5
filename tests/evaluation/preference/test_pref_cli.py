"""The command-line path: ``evalserve evaluate --qrels Q --run R --preference-judgments P -m 'nPrf@10'``, simulated
preferences from ``--user-profiles``, and the errors a user sees."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evalserve.cli.main import main
from evaluation.formats import read_qrels
from evaluation.preference import UserProfiles, counts_table, nprf, simulate_topic_counts, topic_pool, topic_rng


def _means(out: str) -> dict[str, float]:
    return {name: float(found["mean"]) for name, found in json.loads(out)["runs"]["r.run"].items()}


def test_cli_with_preference_judgments(tv1_files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["evaluate", "--qrels", str(tv1_files["qrels"]), "--run", str(tv1_files["run"]),
                 "--preference-judgments", str(tv1_files["prefs"]), "-m", "nPrf@10", "nPrf@3", "Prf@3",
                 "nPrf(stop=rr,F=min)@4", "nPrf(stop=uniform)@4", "-q"])
    out, _ = capsys.readouterr()
    assert code == 0
    means = _means(out)
    assert means["nPrf@3"] == pytest.approx(0.836893, abs=1e-6)  # TV-PRF-1
    assert means["Prf@3"] == pytest.approx(0.574667, abs=1e-6)
    assert means["nPrf(stop=rr,F=min)@4"] == pytest.approx(0.909910, abs=1e-6)
    assert means["nPrf(stop=uniform)@4"] == pytest.approx(0.853659, abs=1e-6)
    # @10 with 4 retrieved documents: the run keeps the stopping mass of ranks 1-4, the ideal (5 documents with
    # estimates: p, r, q, s and d0, whose utility is 0) that of ranks 1-5
    u_run, u_ideal = [5 / 6, 0.25, 0.75, 0.25], [5 / 6, 0.75, 0.5, 0.25, 0.0]
    run = sum(u * (0.8**i - 0.8**4) for i, u in enumerate(u_run))
    ideal = sum(u * (0.8**i - 0.8**5) for i, u in enumerate(u_ideal))
    assert means["nPrf@10"] == pytest.approx(run / ideal, abs=1e-12)


def test_cli_with_user_profiles(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 a p 1\n1 b p 1\n1 a q 1\n1 c r 1\n1 a s 0\n1 b t 1\n1 c t 1\n")
    (tmp_path / "profiles.txt").write_text("1 A a\n1 B b c\n")
    (tmp_path / "r.run").write_text("1 Q0 q 1 5 x\n1 Q0 p 2 4 x\n1 Q0 s 3 3 x\n1 Q0 t 4 2 x\n")
    code = main(["evaluate", "--qrels", str(qrels), "--run", str(tmp_path / "r.run"), "--user-profiles",
                 str(tmp_path / "profiles.txt"), "-m", "nPrf@3", "nPrf(profile=2)@3", "nPrf(profile=trec)@3",
                 "nPrf(seed=5)@3", "-q"])
    out, _ = capsys.readouterr()
    assert code == 0
    means = _means(out)
    q = read_qrels(str(qrels))
    profiles = UserProfiles.from_mapping({"1": {"A": ["a"], "B": ["b", "c"]}})
    ranking = {"1": ["q", "p", "s"]}
    for name, chosen, profile, seed in (("nPrf@3", profiles, "all", 0), ("nPrf(profile=2)@3", profiles, 2, 0),
                                        ("nPrf(profile=trec)@3", UserProfiles.trec(q), "all", 0),
                                        ("nPrf(seed=5)@3", profiles, "all", 5)):
        counts = simulate_topic_counts(topic_pool(q, "1"), chosen.for_topic("1"), topic_rng(seed, "1"))
        expected = nprf(counts_table([counts], profile), ranking, cutoff=3)["1"]
        assert means[name] == pytest.approx(expected, abs=1e-12), name
    assert np.isfinite(list(means.values())).all()


def test_cli_errors(tv1_files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["evaluate", "--qrels", str(tv1_files["qrels"]), "--run", str(tv1_files["run"])]
    assert main([*base, "-m", "nPrf@10"]) == 2
    _, err = capsys.readouterr()
    assert "--preference-judgments FILE" in err and "--user-profiles FILE" in err
    bad = tmp_path / "bad.txt"
    bad.write_text("1 u p q r\n1 u p q\n")
    assert main([*base, "--preference-judgments", str(bad), "-m", "nPrf@10"]) == 2
    _, err = capsys.readouterr()
    assert "bad.txt:1:9: error:" in err and "[pref-winner]" in err and "bad.txt:2:1: error:" in err
    assert main([*base, "--preference-judgments", str(tv1_files["prefs"]), "-m", "nPrf(stop=uniform)"]) == 2
    _, err = capsys.readouterr()
    assert "needs a cutoff" in err
