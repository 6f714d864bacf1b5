"""Measures: declarations grouped in families behind one registry (see ``registry.default_registry``)."""

from evaluation.measures import adhoc, diversity, hierarchical, preference, scored, similarity

#: The families shipped with evalserve; each exposes ``DEFINITIONS``.
FAMILIES = (adhoc, diversity, similarity, scored, hierarchical, preference)
