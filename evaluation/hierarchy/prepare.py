"""How the ``hierarchies`` prepared input is built from the ``hierarchy`` side input (both declared in
``evaluation.side_registry``).

Per evaluator (``ctx.cache``), a ``HierarchySource`` turns hierarchy settings into ``LayeredSlots`` once for all
runs; per run, ``HierarchyInputs`` joins the run with them (``evaluation.hierarchy.layered``). Where the
hierarchies of a setting come from:

- ``h=given``: the nodes of the hierarchy file, as they are;
- any other ``h``, when the hierarchy file holds nodes built with the same settings (it says so in its
  ``settings``, as ``to_json`` writes them): those nodes, so an exported hierarchy is reused without documents;
- otherwise built from the qrels (spec 4.2-4.8): ``sim=simhash`` clusters with the ``fingerprints`` side input
  (or SimHash of ``doc_texts`` when only texts are given), ``sim=tfidf`` with TF-IDF vectors of ``doc_texts``;
  ``SUP`` variants take their super-intents from the hierarchy file.

Kept out of ``evaluation.hierarchy``'s package imports: the side-input machinery imports the measures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evaluation.docsim.vectors import DocumentSimilarity, DocumentTexts, DocumentVectors
from evaluation.hierarchy.build import SimilarityFn, TopicJudgments, build_hierarchies, topic_judgments
from evaluation.hierarchy.layered import HierarchyInputs, LayeredSlots, layered_slots
from evaluation.hierarchy.model import Hierarchies, HierarchySettings
from evaluation.intent_ranking import IntentSlots
from evaluation.model import FloatArray, Qrels
from evaluation.problems import EvaluationError, MeasureError
from evaluation.side_inputs import SideInputs

if TYPE_CHECKING:
    from evaluation.side_inputs import PrepareContext

NAME = "hierarchies"
KIND = "hierarchy"
_CACHE_KEY = ("hierarchy", "source")


def similarity_function(vectors: DocumentSimilarity) -> SimilarityFn:
    """The (n, n) similarity matrix of docnos from document vectors (missing documents: 0, spec Appendix D)."""

    def matrix(docnos: tuple[str, ...]) -> FloatArray:
        return vectors.pairwise(vectors.lookup(list(docnos)))

    return matrix


@dataclass(eq=False)
class HierarchySource:
    """Hierarchies and their slots per setting, for one evaluator (qrels, side inputs)."""

    qrels: Qrels
    slots: IntentSlots
    side: SideInputs
    cache: dict[object, Any]
    _layered: dict[HierarchySettings, LayeredSlots] = field(default_factory=dict)
    _built: dict[HierarchySettings, Hierarchies] = field(default_factory=dict)
    _judgments: dict[str, TopicJudgments] | None = None

    def layered(self, settings: HierarchySettings) -> LayeredSlots:
        key = settings.normalised()
        found = self._layered.get(key)
        if found is None:
            found = self._layered[key] = layered_slots(self.hierarchies(key), self.qrels)
        return found

    def hierarchies(self, settings: HierarchySettings) -> Hierarchies:
        """The hierarchies of every qrels topic for these (normalised) settings."""
        found = self._built.get(settings)
        if found is not None:
            return found
        label = f"the hierarchy h={settings.h}"
        given = self.side.values.get(KIND)
        if settings.h == "given":
            hierarchies = self.side.get(KIND, label)
            assert isinstance(hierarchies, Hierarchies)
            if not hierarchies.topics:
                raise MeasureError(f"h=given uses the nodes of the hierarchy file, and {hierarchies.name} has none")
            found = hierarchies
        elif isinstance(given, Hierarchies) and given.topics and given.settings == settings:
            found = given
        else:
            found = self._build(settings, label)
        self._built[settings] = found
        return found

    def judgments(self) -> dict[str, TopicJudgments]:
        if self._judgments is None:
            self._judgments = topic_judgments(self.qrels, self.slots)
        return self._judgments

    def _build(self, settings: HierarchySettings, label: str) -> Hierarchies:
        groups = None
        if settings.with_super:
            file = self.side.get(KIND, label)
            assert isinstance(file, Hierarchies)
            groups = file.super_intents
        similarity = self._similarity(settings, label) if settings.clustered else None
        try:
            return build_hierarchies(self.judgments(), settings, similarity, groups, name=f"built({self.qrels.name})")
        except EvaluationError as exc:  # a setting that cannot be built; a bare ValueError is a bug
            raise MeasureError(f"{label}: {exc}") from None

    def _similarity(self, settings: HierarchySettings, label: str) -> SimilarityFn:
        side, cache = self.side, self.cache
        if settings.sim == "tfidf":
            key: tuple[str, ...] = ("docsim", "tfidf-of-doc-texts")
            if key not in cache:
                texts = side.get("doc_texts", f"{label},sim=tfidf")
                assert isinstance(texts, DocumentTexts)
                cache[key] = texts.tfidf()
            return similarity_function(cache[key])
        if "fingerprints" not in side and "doc_texts" in side:
            key = ("docsim", "simhash-of-doc-texts")  # shared with S_sim/D_sim
            if key not in cache:
                texts = side.get("doc_texts", label)
                assert isinstance(texts, DocumentTexts)
                cache[key] = texts.fingerprints()
            vectors = cache[key]
        else:
            vectors = side.get("fingerprints", label)
        assert isinstance(vectors, DocumentVectors)
        return similarity_function(vectors)


def build_hierarchy_inputs(ctx: PrepareContext) -> HierarchyInputs:
    source = ctx.cache.get(_CACHE_KEY)
    if not isinstance(source, HierarchySource) or source.qrels is not ctx.qrels:
        slots = ctx.prepared("intents").at(1).slots
        source = ctx.cache[_CACHE_KEY] = HierarchySource(ctx.qrels, slots, ctx.side, ctx.cache)
    return HierarchyInputs(ctx.docs, ctx.qrels, source.layered)


