"""Whose budget a request spends (rate limits, quotas, caps on waits, uploads and deliveries in flight), Flask-free.

Today a token is its own budget; issue 29's users behind tokens make it the user who owns the token, so that a
user with several tokens gets one budget. Every per-caller cap asks this one function.
"""

from __future__ import annotations

from evalserve.service.store.models import Token


def budget_owner(token: Token) -> str:
    """The key every per-caller limit is counted under: ``token:<id>`` (the user's key once tokens have users)."""
    return f"token:{token.id}"
