"""Meta-evaluation jobs (``POST /v1/meta-evaluations``) in the job model: of a succeeded evaluation job or of runs
evaluated first; the document equals the CLI's (``run_method`` on the same table); results as json or table;
plots; bad requests answered with problem+json. The runner is called directly (``test_end_to_end`` covers the
broker path)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalserve.service.access.tokens import create_token
from evalserve.service.core.config import Settings
from evalserve.service.jobrun.context import WorkerContext
from evalserve.service.jobrun.drawing import draw_plots
from evalserve.service.jobrun.runner import run_job
from evalserve.service.web.app import create_app
from evaluation.meta.methods import run_method
from evaluation.meta.table import ScoreTable

MEASURES = ["AP", "nDCG@10", "alpha_nDCG@20", "RBU"]


class Deployment:
    def __init__(self, tmp: Path) -> None:
        self.app = create_app(Settings.from_env({"EVALSERVE_DATA_DIR": str(tmp)}), migrate=True)
        st = self.app.extensions["evalserve"]
        self.ctx = WorkerContext(st.settings, st.db, st.blobs)
        self.auth = {"Authorization": f"Bearer {create_token(st.db, 't', ('read', 'submit'))[1]}"}
        self.http = self.app.test_client()

    def post(self, path: str, **kw: Any) -> Any:
        return self.http.post(path, headers=self.auth, **kw)

    def get(self, path: str, **kw: Any) -> Any:
        return self.http.get(path, headers=self.auth, **kw)

    def run(self, job_id: str) -> dict[str, Any]:
        assert run_job(self.ctx, job_id) in ("succeeded", "failed")
        job: dict[str, Any] = self.get(f"/v1/jobs/{job_id}").json
        return job

    def plot(self, job_id: str, fmt: str = "png") -> Any:
        """The job's plot as a client gets it: the first request asks a worker to draw it (202; the test client
        parks nothing), the worker draws it (called here), the next request gets it."""
        path = f"/v1/jobs/{job_id}/plot?format={fmt}"
        first = self.get(path)
        if first.status_code != 202:
            return first
        assert first.headers["Retry-After"] == "1" and first.json["state"] == "drawing", first.get_data(as_text=True)
        assert draw_plots(self.ctx, job_id) in ("drawn", "drawn before")
        return self.get(path)


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Iterator[tuple[Deployment, dict]]:
    d = Deployment(tmp_path_factory.mktemp("meta"))
    runs = shared_data / "trec-web-2012-runs" / "runs"
    qrels = (shared_data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt").read_bytes()
    collection = d.post("/v1/collections", data={"name": "web2012", "qrels": (io.BytesIO(qrels), "q.txt")}).json["id"]
    files = [(io.BytesIO(p.read_bytes()), p.name) for p in sorted(runs.iterdir())]
    job = d.post("/v1/submissions", data={"collection": collection, "measures": " ".join(MEASURES), "run": files})
    assert job.status_code == 202, job.get_data(as_text=True)
    done = d.run(job.json["id"])
    assert done["state"] == "succeeded"
    yield d, {"collection": collection, "evaluation": done["id"], "runs": done["runs"]}
    d.ctx.db.dispose()


def _table(d: Deployment, evaluation: str) -> ScoreTable:
    return ScoreTable.from_document(d.get(f"/v1/jobs/{evaluation}/result?per_topic=true").json)


@pytest.mark.parametrize(("method", "options"), [
    ("unanimity", {}), ("discriminative-power", {"resamples": 200, "seed": 7}),
    ("significance", {"test": "randomisation", "correction": "bh"}), ("correlation", {"method": "tau_ap_sym"}),
])
def test_a_meta_job_gives_the_cli_document(deployed: tuple[Deployment, dict], method: str,
                                           options: dict[str, Any]) -> None:
    d, ids = deployed
    job = d.post("/v1/meta-evaluations", json={"method": method, "options": options,
                                                "evaluation": ids["evaluation"]})
    assert job.status_code == 202, job.get_data(as_text=True)
    assert job.json["kind"] == "meta" and job.json["method"] == method
    done = d.run(job.json["id"])
    assert done["state"] == "succeeded", done
    served = d.get(f"/v1/jobs/{done['id']}/result").json
    expected = json.loads(json.dumps(run_method(method, _table(d, ids["evaluation"]), options)))
    assert served == expected
    text = d.get(f"/v1/jobs/{done['id']}/result?format=table").get_data(as_text=True)
    assert text.startswith(method) and "AP" in text


def test_a_meta_job_can_evaluate_runs_first(deployed: tuple[Deployment, dict]) -> None:
    d, ids = deployed
    job = d.post("/v1/meta-evaluations", json={"method": "unanimity", "collection": ids["collection"],
                                                "runs": ids["runs"], "measures": ["AP", "RBU"]})
    done = d.run(job.json["id"])
    assert done["state"] == "succeeded", done
    doc = d.get(f"/v1/jobs/{done['id']}/result").json
    full = run_method("unanimity", _table(d, ids["evaluation"]).select(["AP", "RBU"]))
    assert doc["unanimity"] == pytest.approx(full["unanimity"], abs=0)


def test_plots_of_jobs(deployed: tuple[Deployment, dict]) -> None:
    pytest.importorskip("matplotlib")
    d, ids = deployed
    png = d.plot(ids["evaluation"])
    assert png.status_code == 200 and png.mimetype == "image/png" and png.data.startswith(b"\x89PNG")
    job = d.post("/v1/meta-evaluations", json={"method": "discriminative-power", "options": {"resamples": 100},
                                                "evaluation": ids["evaluation"], "measures": ["AP"]})
    done = d.run(job.json["id"])
    svg = d.plot(done["id"], "svg")
    assert svg.status_code == 200 and svg.mimetype == "image/svg+xml" and b"<svg" in svg.data[:500]


def test_bad_meta_requests(deployed: tuple[Deployment, dict]) -> None:
    d, ids = deployed

    def problem(body: dict[str, Any], status: int, code: str) -> None:
        r = d.post("/v1/meta-evaluations", json=body)
        assert r.status_code == status and r.json["code"] == code, r.get_data(as_text=True)

    problem({"method": "vibes", "evaluation": ids["evaluation"]}, 422, "invalid-request")
    problem({"method": "unanimity", "options": {"resamples": 5}, "evaluation": ids["evaluation"]}, 422,
            "invalid-meta-request")
    problem({"method": "discriminative-power", "options": {"alpha": 3}, "evaluation": ids["evaluation"]}, 422,
            "invalid-meta-request")
    problem({"method": "unanimity", "evaluation": ids["evaluation"], "measures": ["ERR@20"]}, 422, "measure-missing")
    problem({"method": "unanimity"}, 422, "missing-inputs")
    problem({"method": "unanimity", "evaluation": "job_nope"}, 404, "not-found")
    problem({"method": "unanimity", "evaluation": ids["evaluation"], "collection": ids["collection"],
             "runs": ids["runs"]}, 422, "conflicting-inputs")
    problem({"method": "preference-agreement", "options": {"preferences": [{"topic": "151"}]},
             "evaluation": ids["evaluation"]}, 422, "invalid-meta-request")
    meta = d.post("/v1/meta-evaluations", json={"method": "correlation", "evaluation": ids["evaluation"]}).json
    d.run(meta["id"])
    tsv = d.get(f"/v1/jobs/{meta['id']}/result?format=tsv")
    assert tsv.status_code == 422 and tsv.json["code"] == "format-not-available"
    plot = d.plot(meta["id"])
    assert plot.status_code == 422 and plot.json["code"] == "plot-unavailable"
    problem({"method": "unanimity", "evaluation": meta["id"]}, 404, "not-found")  # a meta job is no evaluation


def test_preference_agreement_job(deployed: tuple[Deployment, dict]) -> None:
    d, ids = deployed
    runs = list(_table(d, ids["evaluation"]).runs)
    prefs = [{"topic": "151", "left": runs[0], "right": runs[1], "label": "=", "user": "u1"}]
    job = d.post("/v1/meta-evaluations", json={"method": "preference-agreement", "evaluation": ids["evaluation"],
                                                "options": {"preferences": prefs}})
    done = d.run(job.json["id"])
    assert done["state"] == "succeeded", done
    assert set(d.get(f"/v1/jobs/{done['id']}/result").json["preference_agreement"]) == set(MEASURES)


def test_a_collections_hierarchies_can_be_downloaded_and_reused(tmp_path: Path, shared_data: Path) -> None:
    """GET /v1/collections/{id}/hierarchies builds them from the collection's fingerprints, as
    `evalserve hierarchy build` does; without fingerprints the answer is 422 missing-inputs."""
    from evalserve.cli.main import main

    qrels_path = shared_data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt"
    fingerprints, offline = tmp_path / "fp.txt", tmp_path / "h.json"
    assert main(["hierarchy", "fingerprints", "--qrels", str(qrels_path), "-o", str(fingerprints)]) == 0
    assert main(["hierarchy", "build", "--qrels", str(qrels_path), "--fingerprints", str(fingerprints),
                 "--delta", "0.5", "-o", str(offline)]) == 0
    d = Deployment(tmp_path / "service")
    with_fp = d.post("/v1/collections", data={"name": "c", "qrels": (io.BytesIO(qrels_path.read_bytes()), "q.txt"),
                                              "fingerprints": (io.BytesIO(fingerprints.read_bytes()), "fp.txt")})
    assert with_fp.status_code == 201, with_fp.get_data(as_text=True)
    assert set(with_fp.json["side_inputs"]) == {"fingerprints"}
    served = d.get(f"/v1/collections/{with_fp.json['id']}/hierarchies?delta=0.5")
    assert served.status_code == 200 and served.mimetype == "application/json"
    assert served.json["topics"] == json.loads(offline.read_text())["topics"]
    bare = d.post("/v1/collections", data={"name": "c", "qrels": (io.BytesIO(qrels_path.read_bytes()), "q.txt")})
    missing = d.get(f"/v1/collections/{bare.json['id']}/hierarchies")
    assert missing.status_code == 422 and missing.json["code"] == "missing-inputs"
    assert "fingerprints" in missing.json["detail"]
    d.ctx.db.dispose()


def _cli_document(shared_data: Path, capsys: pytest.CaptureFixture[str], method: str, measures: list[str],
                  *options: str) -> dict[str, Any]:
    """The offline document of ``evalserve meta METHOD`` on the same judgments and runs."""
    from evalserve.cli.main import main

    runs = sorted((shared_data / "trec-web-2012-runs" / "runs").iterdir())
    capsys.readouterr()
    code = main(["meta", method, "--qrels", str(shared_data / "trec-web-2009-2014" / "2012" / "qrels-for-ndeval.txt"),
                 *(a for r in runs for a in ("--run", str(r))), "-m", *measures, *options])
    assert code == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


@pytest.mark.parametrize(("method", "measures", "options", "flags"), [
    ("scenarios", ["AP", "alpha_nDCG@20"], {"scenarios": ["graded_relevance", "short_lists"], "seed": 3},
     ["--scenarios", "graded_relevance", "short_lists", "--seed", "3"]),
    ("robustness", ["nPrf(profile=trec)@20"], {"sizes": [5, 30], "repetitions": 2, "seed": 4},
     ["--sizes", "5", "30", "--repetitions", "2", "--seed", "4"]),
])
def test_simulation_jobs_give_the_cli_document(deployed: tuple[Deployment, dict], shared_data: Path,
                                               capsys: pytest.CaptureFixture[str], method: str, measures: list[str],
                                               options: dict[str, Any], flags: list[str]) -> None:
    """scenarios and robustness evaluate perturbed copies of the runs: from runs, or from an evaluation job's
    own runs evaluated again (its results alone cannot be perturbed)."""
    d, ids = deployed
    expected = _cli_document(shared_data, capsys, method, measures, *flags)
    job = d.post("/v1/meta-evaluations", json={"method": method, "options": options, "collection": ids["collection"],
                                                "runs": ids["runs"], "measures": measures})
    assert job.status_code == 202, job.get_data(as_text=True)
    done = d.run(job.json["id"])
    assert done["state"] == "succeeded", done
    served = d.get(f"/v1/jobs/{done['id']}/result").json
    assert served == expected
    text = d.get(f"/v1/jobs/{done['id']}/result?format=table").get_data(as_text=True)
    assert text.startswith(method) and measures[0] in text
    if method == "scenarios":  # the evaluation job's measures (a subset here) on its runs
        again = d.post("/v1/meta-evaluations", json={"method": method, "options": options,
                                                      "evaluation": ids["evaluation"], "measures": ["AP"]})
        assert again.status_code == 202, again.get_data(as_text=True)
        assert again.json["evaluation"] is None and again.json["runs"] == ids["runs"]
        redone = d.run(again.json["id"])
        assert redone["state"] == "succeeded", redone
        assert d.get(f"/v1/jobs/{redone['id']}/result").json == _cli_document(shared_data, capsys, method, ["AP"],
                                                                               *flags)


def test_bad_simulation_requests(deployed: tuple[Deployment, dict]) -> None:
    d, ids = deployed
    for options in ({"scenarios": ["vibes"]}, {"scenarios": "short_lists"}, {"seed": -1}, {"resamples": 5}):
        r = d.post("/v1/meta-evaluations", json={"method": "scenarios", "options": options,
                                                  "evaluation": ids["evaluation"]})
        assert r.status_code == 422 and r.json["code"] == "invalid-meta-request", r.get_data(as_text=True)
    for options in ({"sizes": [0]}, {"sizes": []}, {"sizes": ["ten"]}, {"repetitions": 0}, {"tau": "tau_ap"},
                    {"per_triplet": 101}):
        r = d.post("/v1/meta-evaluations", json={"method": "robustness", "options": options,
                                                  "collection": ids["collection"], "runs": ids["runs"],
                                                  "measures": ["nPrf(profile=trec)@20"]})
        assert r.status_code == 422 and r.json["code"] == "invalid-meta-request", r.get_data(as_text=True)
    job = d.post("/v1/meta-evaluations", json={"method": "robustness", "evaluation": ids["evaluation"]})
    assert job.status_code == 202
    failed = d.run(job.json["id"])  # the evaluation's measures are no preference measures
    assert failed["state"] == "failed" and failed["error"]["code"] == "invalid-request"
    assert "Prf and nPrf, not AP" in failed["error"]["message"]
