"""One page of a query's rows for a paginated list (flask-smorest's ``?page=&page_size=``), Flask-free: the
routes pass their pagination parameters through and the services that own the query call it."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session


def page_of(session: Session, query: Select[Any], order_by: Any, pagination: Any) -> list[Any]:
    """One page of ``query``'s rows, newest first, counting them for ``X-Pagination``. A page past the end is empty
    without asking the database for it (a huge ``page`` would overflow the SQL ``OFFSET``: a 500)."""
    pagination.item_count = session.execute(select(func.count()).select_from(query.subquery())).scalar()
    if pagination.first_item >= pagination.item_count:
        return []
    return list(session.execute(query.order_by(order_by).offset(pagination.first_item)
                                .limit(pagination.page_size)).scalars())
