"""Checking a task webhook's signature in the receiver -- standard library only, so any web framework can use it.

evalserve signs every delivery with the webhook's secret: the ``X-Evalserve-Signature`` header is
``t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>." + body)>``. Verify it against the raw request body (the
bytes as received, before any JSON parsing) and refuse the delivery when it does not match:

    from evalserve_client.webhooks import SIGNATURE_HEADER, verify_signature

    if not verify_signature(secret, request.body, request.headers.get(SIGNATURE_HEADER, "")):
        return 400
"""

from __future__ import annotations

import hashlib
import hmac
import time

#: The header carrying the signature.
SIGNATURE_HEADER = "X-Evalserve-Signature"
#: The scheme this module checks (a header may carry several ``v1`` values while a secret is being rotated).
SIGNATURE_VERSION = "v1"
#: How far the signing time may be from now, in seconds: an older delivery is refused as a possible replay.
DEFAULT_TOLERANCE = 300.0


def verify_signature(secret: str, body: bytes, header: str, *, tolerance: float = DEFAULT_TOLERANCE,
                     now: float | None = None) -> bool:
    """Does ``header`` sign ``body`` with ``secret`` at a time within ``tolerance`` seconds of ``now`` (default:
    the current time)? Digests are compared in constant time; any of the header's ``v1`` values may match. A
    malformed header is simply not a valid signature (False), never an exception."""
    timestamp: int | None = None
    candidates: list[str] = []
    for part in header.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep:
            return False
        if key == "t":
            try:
                timestamp = int(value)
            except ValueError:
                return False
        elif key == SIGNATURE_VERSION:
            candidates.append(value)
    if timestamp is None or not candidates:
        return False
    if abs((time.time() if now is None else now) - timestamp) > tolerance:
        return False
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + bytes(body), hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected.encode(), candidate.encode()) for candidate in candidates)
