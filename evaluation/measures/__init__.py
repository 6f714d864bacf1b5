"""Measures: declarations grouped in families behind one registry (see ``registry.default_registry``).

The families are imported by ``registry`` (``FAMILIES``), not here, so ``evaluation.measures.base`` (what a measure
is) can be imported without loading every measure's kernels."""
