"""Whose budget a request spends (rate limits, quotas, caps on waits, uploads and deliveries in flight), Flask-free.

A budget belongs to the user who owns the token, so a user with several tokens gets one budget. Every per-caller
cap asks ``budget_owner`` (a key for counters) or ``budget_tokens`` (the tokens whose rows a quota counts).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, select

from evalserve.service.store.models import Token


def budget_owner(token: Token) -> str:
    """The key every per-caller limit is counted under: ``user:<id>`` of the user who owns the token."""
    return f"user:{token.user_id}"


def budget_tokens(token_id: str) -> Select[Any]:
    """The ids of every token whose rows count against the same budget as ``token_id`` (its user's tokens, revoked
    ones included: what they stored still takes room), as a subquery."""
    user = select(Token.user_id).where(Token.id == token_id).scalar_subquery()
    return select(Token.id).where(Token.user_id == user)
