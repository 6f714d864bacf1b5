"""The service state of the running Flask app (``app.extensions["evalserve"]``), for the views."""

from __future__ import annotations

from flask import current_app

from evalserve.service.core.state import ServiceState


def state() -> ServiceState:
    found: ServiceState = current_app.extensions["evalserve"]
    return found
