"""The service state of the running Flask app (``app.extensions["evalserve"]``) and the request's unit of work,
for the views."""

from __future__ import annotations

from flask import current_app, g
from sqlalchemy.orm import Session

from evalserve.service.core.state import ServiceState
from evalserve.service.store.unit_of_work import UnitOfWork


def state() -> ServiceState:
    found: ServiceState = current_app.extensions["evalserve"]
    return found


def unit_of_work() -> UnitOfWork:
    """The request's unit of work, made on first use; ``app`` commits it once the view has answered without an
    error (before the response is sent) and rolls it back otherwise."""
    unit: UnitOfWork | None = g.get("_unit_of_work")
    if unit is None:
        unit = g._unit_of_work = state().db.new_unit_of_work()
    return unit


def session() -> Session:
    """The request's database session (one transaction per request), opened on first use."""
    return unit_of_work().session


def end_unit_of_work(succeeded: bool) -> None:
    """Commit the request's unit of work (then run its after-commit actions) if the request ``succeeded``, else
    roll it back; either way close it. Nothing to do when the request never used the database."""
    unit: UnitOfWork | None = g.pop("_unit_of_work", None)
    if unit is None:
        return
    try:
        if succeeded:
            unit.commit()
        else:
            unit.rollback()
    finally:
        unit.close()
