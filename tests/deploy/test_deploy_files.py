"""The Docker files, checked statically (no Docker engine is needed): the Dockerfile builds what ``pip install .``
needs and runs commands and modules that exist; docker-compose.yml parses, wires PostgreSQL and Redis into the
API, the workers and the migration, has health checks and volumes, and keeps the worker scalable."""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalserve.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
COMPOSE = ROOT / "docker-compose.yml"
DOCKERIGNORE = ROOT / ".dockerignore"
EVALSERVE_SERVICES = ("migrate", "api", "worker")


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined and comments dropped."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for line in DOCKERFILE.read_text().splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        pending += (" " if pending else "") + stripped.removesuffix("\\").strip()
        if stripped.endswith("\\"):
            continue
        keyword, _, rest = pending.partition(" ")
        instructions.append((keyword.upper(), rest.strip()))
        pending = ""
    assert not pending, "the Dockerfile ends inside a continued line"
    return instructions


def instruction(name: str) -> list[str]:
    return [args for keyword, args in dockerfile_instructions() if keyword == name]


def exec_form(args: str) -> list[str]:
    """A CMD/ENTRYPOINT/HEALTHCHECK CMD in exec (JSON) form: shell form would not get signals as PID 1."""
    value = json.loads(args)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), args
    return value


def compose() -> dict[str, Any]:
    loaded = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(loaded, dict)
    return loaded


def interpolate(text: str) -> str:
    """Compose's ``${VAR:-default}`` with every variable unset (``$$`` is a literal ``$``)."""
    text = re.sub(r"\$\{(\w+):?-([^}]*)\}", lambda m: m.group(2), text)
    assert not re.search(r"\$\{\w+\}", text), f"a variable without a default: {text}"
    return text.replace("$$", "$")


def command_of(service: dict[str, Any]) -> list[str]:
    command = service.get("command")
    if command is None:
        return exec_form(instruction("CMD")[-1])
    return [interpolate(c) for c in (command if isinstance(command, list) else shlex.split(command))]


def environment_of(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: interpolate(str(v)) for k, v in env.items()}


def check_evalserve_command(argv: list[str]) -> None:
    """``evalserve SUB ...`` must parse with the real CLI (the subcommand is registered, the options exist)."""
    assert argv[0] == "evalserve", argv
    args = build_parser().parse_args(argv[1:])
    assert callable(getattr(args, "handler", None)), argv


def check_gunicorn_command(argv: list[str], tmp_path: Path) -> None:
    """gunicorn's options are known to gunicorn, its worker is the ASGI one (long-polls hold no thread), and its app
    (``module:variable``) imports and is the ASGI app around the Flask app."""
    from gunicorn.config import Config

    parser = Config().parser()
    options = parser.parse_args(argv[1:])
    assert options.bind == ["0.0.0.0:8000"], "bind on every interface inside the container, port 8000"
    module, _, variable = options.args[0].partition(":")
    assert (module, variable) == ("evalserve.service.web.asgi", "app") and options.worker_class == "asgi"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(EVALSERVE_DATA_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    code = (f"import {module} as m; app = m.{variable}; assert callable(app) and app.flask.wsgi_app;"
            " print(app.flask.name)")
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "evalserve", done.stderr


# --- Dockerfile ---------------------------------------------------------------------------------------------------


def test_dockerfile_base_image_and_user() -> None:
    assert instruction("FROM") == ["python:3.11-slim"]
    users = instruction("USER")
    assert users and users[-1] not in ("root", "0", "0:0"), "the container must not run as root"
    assert any("useradd" in run and users[-1] in run for run in instruction("RUN")), "the user is created"


def test_dockerfile_installs_the_project_with_what_pip_needs() -> None:
    runs = " && ".join(instruction("RUN"))
    assert re.search(r"pip install (--\S+ )*\.(\s|$)", runs), "the image installs the project with `pip install .`"
    copied = {source for args in instruction("COPY") for source in args.split()[:-1]
              if not source.startswith("--")}
    tomllib = pytest.importorskip("tomllib")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    needed = {"pyproject.toml", pyproject["project"]["readme"],
              *(pattern.rstrip("*") for pattern in pyproject["tool"]["setuptools"]["packages"]["find"]["include"])}
    assert needed <= copied, f"not copied into the image: {sorted(needed - copied)}"
    for source in copied:
        assert (ROOT / source).exists(), source


def test_dockerignore_keeps_the_build_inputs_and_drops_the_rest() -> None:
    patterns = [line.strip() for line in DOCKERIGNORE.read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    assert not any(p.startswith("!") for p in patterns)

    def ignored(path: str) -> bool:
        parts = path.split("/")
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        for pattern in patterns:
            bare = pattern.removeprefix("**/")
            if any(fnmatch.fnmatch(p, pattern) for p in prefixes):
                return True
            if pattern.startswith("**/") and any(fnmatch.fnmatch(part, bare) for part in parts):
                return True
        return False

    for args in instruction("COPY"):
        for source in args.split()[:-1]:
            assert not ignored(source), f".dockerignore excludes {source}, which the Dockerfile copies"
            base = ROOT / source
            if base.is_dir():
                kept = [f for f in base.rglob("*.py") if "__pycache__" not in f.parts]
                assert kept and not any(ignored(str(f.relative_to(ROOT))) for f in kept), source
    for private in (".git", "tests", "evalserve.db", "data/evalserve.db", "data/admin-token", ".env"):
        assert ignored(private), f"{private} should not be sent to the Docker build"


def test_dockerfile_runs_the_api_with_gunicorn(tmp_path: Path) -> None:
    assert "8000" in " ".join(instruction("EXPOSE")).split()
    assert not instruction("ENTRYPOINT"), "the command is replaced whole for workers: no entrypoint"
    cmd = exec_form(instruction("CMD")[-1])
    assert cmd[0] == "gunicorn"
    check_gunicorn_command(cmd, tmp_path)


def test_dockerfile_health_check_asks_the_api() -> None:
    (check,) = instruction("HEALTHCHECK")
    options, _, command = check.partition("CMD ")
    assert "--interval" in options and "--timeout" in options
    argv = exec_form(command)
    assert argv[0] == "python" and "http://127.0.0.1:8000/health" in argv[-1]
    compile(argv[-1], "healthcheck", "exec")


def test_dockerfile_environment_names_are_settings() -> None:
    env = " ".join(instruction("ENV"))
    assert "EVALSERVE_DATA_DIR=/data" in env
    documented = set(re.findall(r"``([A-Z_]+)``", (ROOT / "service" / "core" / "config.py").read_text()))
    for name in re.findall(r"\b(EVALSERVE_[A-Z_]+)=", env):
        assert name in documented, f"{name} is not a setting of service/core/config.py"


# --- docker-compose.yml -------------------------------------------------------------------------------------------


def test_compose_has_the_services() -> None:
    services = compose()["services"]
    assert {"postgres", "redis", "migrate", "api", "worker"} <= set(services)
    assert services["postgres"]["image"].startswith("postgres:")
    assert services["redis"]["image"].startswith("redis:")
    for name in EVALSERVE_SERVICES:
        assert services[name]["build"] == "." and services[name]["image"] == services["api"]["image"], name


def test_compose_wires_postgres_and_redis_into_every_evalserve_service() -> None:
    services = compose()["services"]
    postgres = environment_of(services["postgres"])
    for name in EVALSERVE_SERVICES:
        env = environment_of(services[name])
        database, broker = env["DATABASE_URL"], env["REDIS_URL"]
        assert database == (f"postgresql://{postgres['POSTGRES_USER']}:{postgres['POSTGRES_PASSWORD']}"
                            f"@postgres:5432/{postgres['POSTGRES_DB']}"), name
        assert broker.startswith("redis://redis:6379/"), name
        from evalserve.service.core.config import Settings

        settings = Settings.from_env(env)
        assert settings.database_url.startswith("postgresql+psycopg://") and not settings.embedded_broker
    documented = set(re.findall(r"``([A-Z_]+)``", (ROOT / "service" / "core" / "config.py").read_text()))
    for name in EVALSERVE_SERVICES:
        unknown = {k for k in environment_of(services[name]) if k.startswith("EVALSERVE_")} - documented
        assert not unknown, f"{name}: not settings of service/core/config.py: {unknown}"


def test_compose_commands_exist(tmp_path: Path) -> None:
    services = compose()["services"]
    assert command_of(services["migrate"])[:2] == ["evalserve", "migrate"]
    assert command_of(services["worker"])[:2] == ["evalserve", "worker"]
    for name in ("migrate", "worker"):
        check_evalserve_command(command_of(services[name]))
    api = command_of(services["api"])
    assert api[0] == "gunicorn"
    check_gunicorn_command(api, tmp_path)


def test_compose_start_order_and_health_checks() -> None:
    services = compose()["services"]
    for name in ("postgres", "redis", "api", "worker"):
        assert services[name]["healthcheck"]["test"], name
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert services["migrate"].get("restart") in (None, "no")
    for name in ("api", "worker"):
        depends = services[name]["depends_on"]
        assert depends["migrate"]["condition"] == "service_completed_successfully", name
        assert depends["redis"]["condition"] == "service_healthy", name
        assert depends["postgres"]["condition"] == "service_healthy", name
    api_check = services["api"]["healthcheck"]["test"]
    assert "http://127.0.0.1:8000/health" in api_check[-1]
    worker_check = interpolate(services["worker"]["healthcheck"]["test"][-1])
    assert "celery -A evalserve.workers.tasks inspect ping" in worker_check and "$HOSTNAME" in worker_check
    assert importlib.util.find_spec("evalserve.workers.tasks") is not None  # the module the worker's check names


def test_compose_worker_scales_and_data_persists() -> None:
    loaded = compose()
    services = loaded["services"]
    worker = services["worker"]
    assert "container_name" not in worker and "ports" not in worker, "--scale worker=N needs both absent"
    assert services["api"]["ports"] and interpolate(services["api"]["ports"][0]).endswith(":8000")
    for name in ("postgres", "redis"):
        assert "ports" not in services[name], f"{name} should not be published on the host"
    declared = set(loaded["volumes"])
    mounted = {v.split(":")[0] for s in services.values() for v in s.get("volumes", [])}
    assert {"postgres-data", "redis-data"} <= declared and mounted <= declared | {"."}
    assert any(v.endswith(":/var/lib/postgresql/data") for v in services["postgres"]["volumes"])
    assert "--appendonly" in services["redis"]["command"]


def test_compose_file_is_valid_for_docker_compose() -> None:
    """When a Compose implementation is installed, let it validate the file too."""
    for candidate in (["docker", "compose"], ["docker-compose"]):
        try:
            probe = subprocess.run([*candidate, "version"], capture_output=True, text=True, timeout=30)
        except OSError:
            continue
        if probe.returncode == 0:
            done = subprocess.run([*candidate, "-f", str(COMPOSE), "config", "--quiet"], capture_output=True,
                                  text=True, timeout=60, cwd=ROOT)
            assert done.returncode == 0, done.stderr
            return
    pytest.skip("no docker compose / docker-compose here; the file was checked statically above")


# --- the guides keep up ---------------------------------------------------------------------------------------------


def test_deploy_guide_documents_every_setting() -> None:
    settings = set(re.findall(r"``([A-Z_]+)``", (ROOT / "service" / "core" / "config.py").read_text()))
    assert {"DATABASE_URL", "REDIS_URL", "EVALSERVE_QUEUE"} <= settings  # the pattern still finds them
    guide = (ROOT / "docs" / "deploy.md").read_text()
    missing = sorted(name for name in settings if f"`{name}`" not in guide)
    assert not missing, f"docs/deploy.md does not document: {missing}"


def test_api_guide_covers_every_operation() -> None:
    """Every operation of the OpenAPI document is described in docs/api.md (as ``GET /v1/runs[/{id}]`` or so)."""
    document = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    guide = (ROOT / "docs" / "api.md").read_text()
    described = set()
    for method, path in re.findall(r"`((?:GET|POST|DELETE|PUT|PATCH)) (/[^`\s?]*)", guide):
        for variant in (path.replace("[", "").replace("]", ""), re.sub(r"\[.*?\]", "", path)):
            described.add((method, re.sub(r"\{\w+\}", "{}", variant)))
    missing = [f"{method.upper()} {path}" for path, operations in document["paths"].items() for method in operations
               if method in ("get", "post", "put", "patch", "delete")
               and (method.upper(), re.sub(r"\{\w+\}", "{}", path)) not in described]
    assert not missing, f"docs/api.md does not describe: {missing}"


def test_the_deploy_guide_gives_the_stand_in_recipe_the_image_test_uses() -> None:
    """docs/deploy.md's recipe for building without Docker Hub is the one tests/deploy/test_image.py verifies."""
    from tests.deploy.image import BASE_PACKAGES, STANDIN_CONTAINERFILE

    guide = (ROOT / "docs" / "deploy.md").read_text()
    assert f"--include={BASE_PACKAGES}" in guide
    body = [line for line in STANDIN_CONTAINERFILE.splitlines() if not line.startswith(("FROM", "CMD"))]
    assert "\n".join(body) in guide
