"""The Docker image, built from the repository's Dockerfile and run (issue 18): podman builds it on a Debian base
made here (no Docker engine or Docker Hub needed; ``tests/deploy/image.py`` says how and what it caches), then the
image's own commands run inside it as its USER: ``evalserve migrate``, the default CMD (gunicorn) and ``evalserve
worker`` on the local PostgreSQL and Redis (the compose topology), and ``evalserve serve`` on the embedded default.
A run submitted over HTTP gets the offline ``evalserve evaluate`` numbers; SIGTERM to each main process ends it
and everything it started within 10 s. Skipped, with the reason, where podman and mmdebstrap cannot be had.
Slow (a few minutes on a first run: the base, the stand-in and the build; see docs/deploy.md)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.deploy import image as im
from tests.security.test_worker_faults import child_pids, collection, offline, submit, wait_jobs
from tests.service.live import (
    PG_ADMIN_URL,
    REDIS_TEST_URL,
    free_port,
    postgres_available,
    postgres_database,
    redis_available,
)

pytestmark = pytest.mark.slow

#: one tag per run: another checkout on the machine may be building its own image in the same cache
TAG = f"localhost/evalserve:test-{uuid.uuid4().hex[:8]}"
#: what ``docker stop`` waits by default before SIGKILL is 10 s; the issue asks for a clean stop within it
STOP_SECONDS = 10.0


@pytest.fixture(scope="module")
def podman() -> im.Podman:
    im.ensure_tools()
    return im.Podman(im.cache_dir())


@pytest.fixture(scope="module")
def built(podman: im.Podman) -> Iterator[dict[str, Any]]:
    """The image built from the Dockerfile (removed afterwards: only the base and the stand-in stay cached); its
    inspect data. The seconds the base and the build took go to the report."""
    base_seconds = im.ensure_base(podman)
    build_seconds = im.build_project_image(podman, TAG)
    inspected = podman.inspect(TAG)
    line = (f"evalserve image {TAG}: {inspected['Size'] / 1e6:.0f} MB; base+stand-in {base_seconds:.0f} s, "
              f"build {build_seconds:.0f} s (cache {podman.cache})")
    (podman.cache / "last-run.txt").write_text(f"{time.strftime('%Y-%m-%d %H:%M')}\n")
    report(line)
    try:
        yield inspected
    finally:
        podman.remove(TAG)


@pytest.fixture(scope="module")
def box(podman: im.Podman, built: dict[str, Any]) -> Iterator[im.Container]:
    with im.container(podman, built["Id"]) as made:
        yield made


@pytest.fixture(scope="module")
def trec(shared_data: Path) -> dict[str, Path]:
    base = shared_data / "trec_eval-test"
    return {"qrels": base / "qrels.test", "run": base / "results.test"}


def volume(tmp_path: Path, box: im.Container, name: str) -> Path:
    """A host directory for the container's /data (a named volume), owned by the image's user."""
    path = tmp_path / name
    path.mkdir()
    uid, gid = box.user
    os.chown(path, uid, gid)
    path.chmod(0o700)
    return path


def descendants(pid: int) -> list[int]:
    found: list[int] = []
    for child in child_pids(pid):
        found += [child, *descendants(child)]
    return found


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


@contextlib.contextmanager
def started(box: im.Container, argv: list[str], log: Path, **kwargs: Any) -> Iterator[subprocess.Popen[bytes]]:
    """A long-running command inside the image (its own session, so nothing outlives the test)."""
    with log.open("ab") as out:
        proc = subprocess.Popen(box.command(argv, **kwargs), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        yield proc
    finally:
        for pid in [*descendants(proc.pid), proc.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=30)


def stop_within(proc: subprocess.Popen[bytes], seconds: float, log: Path) -> float:
    """SIGTERM to the main process (what ``docker stop`` sends); the seconds until it and every process it
    started are gone, asserted below ``seconds``."""
    family = descendants(proc.pid)
    assert family, f"the main process started nothing:\n{log.read_text(errors='replace')[-3000:]}"
    began = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=seconds + 5)
    while any(running(pid) for pid in family) and time.monotonic() - began < seconds + 5:
        time.sleep(0.05)
    took = time.monotonic() - began
    left = [pid for pid in family if running(pid)]
    assert proc.returncode is not None and not left and took < seconds, (
        f"SIGTERM: exit {proc.returncode} after {took:.1f} s, still running {left}\n"
        f"{log.read_text(errors='replace')[-3000:]}")
    report(f"{log.stem}: stopped {took:.1f} s after SIGTERM (exit {proc.returncode}, {len(family)} processes)")
    return took


def report(line: str) -> None:
    """Print (``pytest -s``) and append to ``last-run.txt`` in the cache dir: the numbers docs/deploy.md quotes."""
    print(line)
    with (im.cache_dir() / "last-run.txt").open("a") as out:
        out.write(line + "\n")


def wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}"
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url + "/health", timeout=3).status_code == 200:
                return
        time.sleep(0.3)
    raise AssertionError(f"{url}/health not 200 within {timeout} s:\n{log.read_text(errors='replace')[-3000:]}")


def evaluate_over_http(url: str, token: str, trec: dict[str, Path]) -> tuple[str, dict[str, Any]]:
    """Submit the run against its qrels and wait for the job; its id and result document."""
    with httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {token}"}) as http:
        job_id = submit(http, collection(http, trec["qrels"]), trec["run"])
        job = wait_jobs(http, [job_id], timeout=120)[job_id]
        assert job["state"] == "succeeded", job
        result: dict[str, Any] = http.get(f"/v1/jobs/{job_id}/result").json()
        return job_id, result


def assert_offline_numbers(result: dict[str, Any], expected: dict[str, Any]) -> None:
    """The exact means first (the clearest failure), then the whole document (per-topic values included)."""
    def means(document: dict[str, Any]) -> dict[str, dict[str, float]]:
        return {run: {measure: value["mean"] for measure, value in measures.items()}
                for run, measures in document["runs"].items()}

    assert means(result) == means(expected)
    assert result == expected


def in_image(url: str) -> str:
    """A localhost URL as seen from inside the image (same network, but its /etc/hosts may not name localhost)."""
    return url.replace("@localhost", "@127.0.0.1").replace("//localhost", "//127.0.0.1")


# ---- the image's configuration ------------------------------------------------------------------------------


def test_the_image_runs_as_a_non_root_user_and_keeps_its_healthcheck(built: dict[str, Any],
                                                                     box: im.Container) -> None:
    assert built["ManifestType"] == "application/vnd.docker.distribution.manifest.v2+json"
    uid, _ = box.user
    assert built["Config"]["User"] == "evalserve" and uid != 0
    check = built["Healthcheck"]
    assert check["Test"][0] == "CMD" and "/health" in check["Test"][-1] and check["Retries"] == 3, check
    assert box.run(["id", "-u"]).stdout.strip() == str(uid)


def test_the_install_is_pinned_by_constraints_txt(box: im.Container) -> None:
    pins = {}
    for line in (im.ROOT / "constraints.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonical(name)] = version.strip()
    frozen = box.run(["pip", "freeze"])
    assert frozen.returncode == 0, frozen.stderr
    installed = dict(line.split("==", 1) for line in frozen.stdout.splitlines() if "==" in line)
    installed = {canonical(name): version for name, version in installed.items()}
    differing = {name: (version, pins[name]) for name, version in installed.items()
                 if name in pins and version != pins[name]}
    assert not differing, f"installed vs constraints.txt: {differing}"
    core = core_dependencies()
    wanted = {canonical(re.split(r"[\[<>=!~;\s]", spec, maxsplit=1)[0]) for spec in core}
    assert wanted <= set(installed), f"core dependencies missing from the image: {wanted - set(installed)}"
    assert wanted <= set(pins), f"core dependencies without a pin in constraints.txt: {wanted - set(pins)}"


def core_dependencies() -> list[str]:
    """pyproject.toml's [project] dependencies: what ``pip install .`` puts in the image."""
    tomllib = pytest.importorskip("tomllib")
    return list(tomllib.loads((im.ROOT / "pyproject.toml").read_text())["project"]["dependencies"])


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_plots_are_available_in_the_image(box: im.Container) -> None:
    """The API advertises plots (matplotlib): the image must be able to draw them."""
    imported = box.run(["python", "-c", "import matplotlib; print(matplotlib.__version__)"])
    core = core_dependencies()
    if imported.returncode != 0 and not any(spec.lower().startswith("matplotlib") for spec in core):
        pytest.xfail("matplotlib is not a core dependency yet (it is an extra), so the image has no plots: "
                     + imported.stderr.strip().splitlines()[-1])
    assert imported.returncode == 0, imported.stderr


# ---- running it -----------------------------------------------------------------------------------------------


def test_evalserve_serve_on_the_embedded_default(box: im.Container, tmp_path: Path, trec: dict[str, Path],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    expected = offline(trec, capsys)
    data, log = volume(tmp_path, box, "data"), tmp_path / "serve.log"
    port = free_port()
    argv = ["evalserve", "serve", "--host", "127.0.0.1", "--port", str(port), "--concurrency", "1",
            "--api-workers", "1"]
    with started(box, argv, log, volume=data) as proc:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, proc, log)
        token = (data / "admin-token").read_text().strip()
        job_id, result = evaluate_over_http(url, token, trec)
        assert_offline_numbers(result, expected)
        # what the API advertises besides results: its docs (Swagger UI from the package) and plots
        assert httpx.get(url + "/docs", timeout=30).status_code == 200
        plot = httpx.get(f"{url}/v1/jobs/{job_id}/plot", params={"format": "svg"}, timeout=60,
                         headers={"Authorization": f"Bearer {token}"})
        if box.run(["python", "-c", "import matplotlib"]).returncode == 0:
            assert plot.status_code == 200 and plot.content.lstrip().startswith(b"<"), plot.text[:500]
        else:  # test_plots_are_available_in_the_image reports it; here: a clear answer, not a crash
            assert plot.status_code == 422 and "matplotlib" in plot.text, plot.text[:500]
        # HEALTHCHECK's own command, inside (with the port this test gave it)
        probe = box.run(["python", "-c", f"import urllib.request; print(urllib.request.urlopen("
                                         f"'http://127.0.0.1:{port}/health', timeout=4).status)"])
        assert probe.stdout.strip() == "200", probe.stderr
        stop_within(proc, STOP_SECONDS, log)


@pytest.fixture
def pg_redis() -> Iterator[str]:
    if not postgres_available():
        pytest.skip(f"PostgreSQL not reachable at {PG_ADMIN_URL} (set EVALSERVE_TEST_PG)")
    if not redis_available():
        pytest.skip(f"Redis not reachable at {REDIS_TEST_URL} (set EVALSERVE_TEST_REDIS)")
    with postgres_database() as url:
        yield url


def test_migrate_gunicorn_and_worker_on_postgres_and_redis(box: im.Container, built: dict[str, Any],
                                                           tmp_path: Path, pg_redis: str, trec: dict[str, Path],
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    expected = offline(trec, capsys)
    data = volume(tmp_path, box, "data")
    env = {"DATABASE_URL": in_image(pg_redis), "REDIS_URL": in_image(REDIS_TEST_URL),
           "EVALSERVE_QUEUE": f"evalserve-image-{os.getpid()}-{time.monotonic_ns()}"}

    migrated = box.run(["evalserve", "migrate"], env=env, volume=data)
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    created = box.run(["evalserve", "tokens", "create", "--name", "image test", "--scopes", "admin,read,submit"],
                      env=env, volume=data)
    assert created.returncode == 0, created.stderr
    token = created.stdout.splitlines()[0].strip()

    # the default CMD, as `docker run -p PORT:8000` would expose it: only the bind address differs, since this
    # process shares the machine's network instead of having its own
    port = free_port()
    cmd = list(built["Config"]["Cmd"])
    assert cmd[0] == "gunicorn" and cmd[cmd.index("--bind") + 1] == "0.0.0.0:8000", cmd
    cmd[cmd.index("--bind") + 1] = f"127.0.0.1:{port}"
    api_log, worker_log = tmp_path / "api.log", tmp_path / "worker.log"
    with started(box, cmd, api_log, env=env, volume=data) as api, \
            started(box, ["evalserve", "worker", "--concurrency", "1"], worker_log, env=env, volume=data) as worker:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, api, api_log)
        assert_offline_numbers(evaluate_over_http(url, token, trec)[1], expected)
        stop_within(worker, STOP_SECONDS, worker_log)
        # a client long-polling a job nobody runs now (GET ?wait=30) must not hold the API past docker's 10 s
        with httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {token}"}) as http, \
                ThreadPoolExecutor(1) as pool:
            queued = submit(http, collection(http, trec["qrels"]), trec["run"])
            polling = pool.submit(long_poll, url, token, queued)
            time.sleep(1.0)
            assert not polling.done(), polling.result()
            stop_within(api, STOP_SECONDS, api_log)


def long_poll(url: str, token: str, job_id: str) -> str:
    """``GET /v1/jobs/{id}?wait=30``: how it ended (a status code, or the error when the server went away)."""
    try:
        return str(httpx.get(f"{url}/v1/jobs/{job_id}", params={"wait": 30}, timeout=60,
                             headers={"Authorization": f"Bearer {token}"}).status_code)
    except httpx.HTTPError as error:
        return type(error).__name__
