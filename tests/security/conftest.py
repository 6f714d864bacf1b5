"""Attacks on a public instance, tried on real processes on 127.0.0.1 only: every test says what was refused
and checks that nothing accepted was lost. The deployment fixtures are the service tests' own."""

from __future__ import annotations

from tests.service.conftest import live, stack

__all__ = ["live", "stack"]
