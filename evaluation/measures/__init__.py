"""Measures: declarations grouped in families behind one registry (see ``registry.default_registry``)."""

from evaluation.measures import adhoc

#: The families shipped with evalserve; each exposes ``DEFINITIONS``.
FAMILIES = (adhoc,)
