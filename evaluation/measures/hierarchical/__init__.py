"""Hierarchical-intent measures, spec section 4: layer-aware (LA) versions of the flat diversity measures, node
recall, hierarchical D-measures and their D# mixes, on hierarchies built from the qrels and document similarities
(or read from a hierarchy file) by ``evaluation.hierarchy``."""

from evaluation.measures.hierarchical import hd, layer_aware

DEFINITIONS = (*layer_aware.DEFINITIONS, *hd.DEFINITIONS)
