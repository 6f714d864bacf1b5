"""``openapi.yaml`` in the repository is the document the API serves, and the interactive docs are served.

No processes: the app is built with ``create_app`` on a temporary data directory and called with Flask's test
client.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from flask import Flask

from evalserve.cli.openapi import render
from evalserve.service.core.config import Settings
from evalserve.service.web.app import create_app

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "openapi.yaml"
REGENERATE = ("openapi.yaml is out of date with the document the API serves; regenerate it from the repository root"
              " with: evalserve openapi -o openapi.yaml")


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    built = create_app(Settings.from_env({"EVALSERVE_DATA_DIR": str(tmp_path_factory.mktemp("openapi"))}))
    yield built
    built.extensions["evalserve"].db.dispose()


@pytest.fixture(scope="module")
def served(app: Flask) -> dict[str, Any]:
    with app.test_client() as client:
        response = client.get("/openapi.json")
    assert response.status_code == 200
    document: dict[str, Any] = response.get_json()
    return document


def test_committed_document_is_the_served_one(served: dict[str, Any]) -> None:
    committed = yaml.safe_load(COMMITTED.read_text())
    assert committed == served, REGENERATE
    assert COMMITTED.read_text() == render(served, "yaml"), REGENERATE + " (same content, different layout)"


def test_document_describes_every_route(app: Flask, served: dict[str, Any]) -> None:
    """Every API route of the app is in the document (a resource added without flask-smorest would be missing)."""
    documented = set(served["paths"])
    routes = {re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule) for rule in app.url_map.iter_rules()
              if rule.rule.startswith(("/v1", "/health"))}
    assert routes == documented
    assert served["openapi"].startswith("3.") and served["info"]["title"] == "evalserve"


def test_interactive_docs_are_served(app: Flask) -> None:
    with app.test_client() as client:
        page = client.get("/docs")
    assert page.status_code == 200
    assert page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    assert "swagger-ui" in html and "openapi.json" in html


def _texts(node: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """Every (key, string) pair under ``node``."""
    if isinstance(node, dict):
        for k, value in node.items():
            yield from _texts(value, k)
    elif isinstance(node, list):
        for item in node:
            yield from _texts(item, key)
    elif isinstance(node, str):
        yield key, node


def test_the_text_swagger_ui_shows_is_markdown(served: dict[str, Any]) -> None:
    """Swagger UI renders Markdown: no reStructuredText ````code```` from the views' docstrings (``/docs`` showed
    literal double backticks, issue 28), and every summary on one line."""
    texts = [(key, text) for key, text in _texts(served) if key in ("summary", "description")]
    assert texts and not [text for _, text in texts if "``" in text]
    assert not [text for key, text in texts if key == "summary" and "\n" in text]
    summary = served["paths"]["/v1/jobs/{job_id}"]["get"]["summary"]
    assert "`?wait=SECONDS`" in summary and "`If-None-Match`" in summary, summary
