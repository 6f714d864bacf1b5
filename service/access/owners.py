"""Who may see which stored row, Flask-free: a caller's own jobs and runs (an admin's: everyone's), every collection
but others' hidden ones. A row the caller may not see is reported as missing (404), never as forbidden."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy import Select, or_
from sqlalchemy.orm import Session

from evalserve.service.core.errors import ServiceError
from evalserve.service.store.models import Base, Collection, Token

M = TypeVar("M", bound=Base)


def sees_everything(token: Token) -> bool:
    """Does the caller see every row (an admin)?"""
    return "admin" in token.scope_set


def visible_row(session: Session, model: type[M], ident: str, what: str, token: Token, *, owned: bool = True) -> M:
    """The row, if it exists and the caller may see it (others' private rows are reported as missing)."""
    row = session.get(model, ident)
    private = owned or getattr(row, "hidden", False)  # a hidden collection is private to its owner
    if row is None or (private and not sees_everything(token) and getattr(row, "owner_id", None) != token.id):
        raise ServiceError(404, "not-found", f"no {what} {ident}")
    return row


def readable_collections(query: Select[Any], token: Token) -> Select[Any]:
    """Restrict a collection query to those the caller may read: every collection but others' hidden ones."""
    if sees_everything(token):
        return query
    return query.where(or_(Collection.hidden.is_(False), Collection.owner_id == token.id))


def visible(query: Select[Any], model: Any, token: Token) -> Select[Any]:
    """Restrict a query to the caller's rows unless the caller is an admin."""
    return query if sees_everything(token) else query.where(model.owner_id == token.id)
