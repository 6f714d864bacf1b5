"""Swagger UI served from the installed ``swagger-ui-bundle`` package (no CDN: ``/docs`` works on an intranet or
offline server) and ``/`` redirecting to ``/docs``."""

from __future__ import annotations

from flask import Blueprint, Response, redirect, send_from_directory
from swagger_ui_bundle import swagger_ui_path
from werkzeug.wrappers import Response as BaseResponse

#: where the Swagger UI page (flask-smorest's ``/docs``) loads its scripts and styles from
STATIC_URL = "/docs/static/"

blp = Blueprint("swagger_ui", __name__)


@blp.get("/")
def root() -> BaseResponse:
    """A person who opens the server's address lands on the API documentation."""
    return redirect("/docs", code=302)


@blp.get(STATIC_URL + "<path:filename>")
def static(filename: str) -> Response:
    """One file of swagger-ui-dist (Apache-2.0), as shipped by the ``swagger-ui-bundle`` package."""
    return send_from_directory(str(swagger_ui_path), filename, max_age=86400)
