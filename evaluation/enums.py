"""``StrEnum`` on every supported Python: the standard library's (3.11+), or the same small class on 3.10.

Its members are strings equal to their values, so a policy member compares, hashes, formats and serialises
(JSON) exactly as the plain string it replaces.
"""

from __future__ import annotations

import sys
from enum import Enum

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # pragma: no cover - Python 3.10

    class StrEnum(str, Enum):
        """A string enumeration whose ``str()`` is its value, as ``enum.StrEnum`` on Python 3.11+."""

        def __str__(self) -> str:
            return str(self.value)

__all__ = ["StrEnum"]
