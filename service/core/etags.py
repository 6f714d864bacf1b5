"""Strong ETags, Flask-free: a hash of what a response shows, so services can tag what they return and tell
whether the client already has it (``web.api.conditional`` reads ``If-None-Match`` and answers ``304``)."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def etag_of(*parts: Any) -> str:
    """A strong ETag (quoted) of JSON-able ``parts``: equal parts, equal bytes shown, equal tag."""
    text = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return '"' + hashlib.sha256(text.encode()).hexdigest()[:32] + '"'


def matches(tag: str, known: set[str]) -> bool:
    """Does the client already have the representation tagged ``tag``?"""
    return tag in known or "*" in known
