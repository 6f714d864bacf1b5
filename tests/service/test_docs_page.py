"""``/docs`` works offline: Swagger UI comes from the package (no CDN, no external URL in the page or what it
loads), headless Chromium renders the API's operations from it, and ``/`` redirects to it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.browser import chromium, dump_dom  # noqa: F401 - chromium: fixture
from tests.service.live import LiveService

ASSET = re.compile(r'(?:src|href)="([^"]+)"')
EXTERNAL = re.compile(r"https?://(?!127\.0\.0\.1|localhost)[a-z0-9.-]+", re.IGNORECASE)


@pytest.fixture
def api(stack: Callable[..., LiveService]) -> Iterator[LiveService]:
    """The API alone (the pages need no worker), on the embedded default."""
    service = stack("embedded")
    service.start_api(workers=1)
    yield service


def test_the_page_and_every_asset_it_references_come_from_the_server(api: LiveService) -> None:
    with httpx.Client(base_url=api.url, timeout=30) as http:
        root = http.get("/")
        assert root.status_code == 302 and root.headers["location"].endswith("/docs")
        page = http.get("/docs")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert not EXTERNAL.findall(page.text), "an external URL in /docs"
        assets = ASSET.findall(page.text)
        assert {a.rsplit("/", 1)[-1] for a in assets} == {"swagger-ui.css", "swagger-ui-bundle.js",
                                                          "swagger-ui-standalone-preset.js"}
        for asset in assets:
            assert asset.startswith("/"), asset  # this server, not another host
            response = http.get(asset)
            assert response.status_code == 200 and len(response.content) > 10_000, asset
        assert '"validatorUrl": null' in page.text  # Swagger UI would otherwise fetch a badge from its validator
        assert http.get("/docs/static/../app.py").status_code == 404


def test_chromium_shows_the_operations_without_a_network(api: LiveService, chromium: str) -> None:  # noqa: F811
    """The page's scripts run from the server alone and list the API's operations: every host name but
    127.0.0.1 fails to resolve, and virtual time lets Swagger UI fetch /openapi.json before the DOM is dumped."""
    offline = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"
    dom = dump_dom(chromium, f"{api.url}/docs", timeout=120, flags=(offline, "--virtual-time-budget=20000"))
    assert "swagger-ui" in dom
    for operation in ("/v1/collections", "/v1/submissions", "/v1/jobs/{job_id}", "/v1/tasks"):
        assert operation in dom, f"{operation} not rendered"
