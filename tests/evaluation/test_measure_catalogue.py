"""``evaluation.measures.catalogue`` (which family declares each name, so the registry imports only the families a
request names) matches the families' own declarations, and the lazy registry answers as an eager one would."""

from __future__ import annotations

import importlib

import pytest

from evaluation.measures.catalogue import NAMES
from evaluation.measures.registry import FAMILIES, Registry, default_registry
from evaluation.problems import MeasureError


def declared() -> dict[str, tuple[str, ...]]:
    """Every family's names and aliases, from its module's ``DEFINITIONS``, in the registry's order."""
    found = {}
    for family in FAMILIES:
        definitions = importlib.import_module(f"evaluation.measures.{family}").DEFINITIONS
        found[family] = tuple(key for d in definitions for key in (d.name, *d.aliases))
    return found


def test_the_catalogue_lists_what_every_family_declares() -> None:
    expected = declared()
    assert expected == NAMES, f"update evaluation/measures/catalogue.py: NAMES = {expected!r}"


def eager() -> Registry:
    """The registry built the old way: every family imported and declared at once."""
    return Registry(d for family in FAMILIES
                    for d in importlib.import_module(f"evaluation.measures.{family}").DEFINITIONS)


def test_the_lazy_registry_lists_and_resolves_as_the_eager_one() -> None:
    lazy, full = default_registry(), eager()
    assert [d.name for d in lazy] == [d.name for d in full] and len(lazy) == len(full)
    assert lazy.catalogue() == full.catalogue()
    for key in [k for keys in NAMES.values() for k in keys]:
        for spelling in (key, key.lower(), key.upper()):
            assert lazy.definition(spelling).name == full.definition(spelling).name, spelling


@pytest.mark.parametrize("name", ["alpha-ndcg", "ndgc", "Prff", "no_such_measure", "map_cut_x", "P_IA@x"])
def test_unknown_names_get_the_same_message(name: str) -> None:
    messages = []
    for registry in (default_registry(), eager()):
        with pytest.raises(MeasureError) as caught:
            registry.resolve(name)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
