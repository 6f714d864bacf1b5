"""Hierarchies as JSON: the ``hierarchy`` side input (``--hierarchy FILE``) and the export of built hierarchies.

One document holds, per topic, a super-intent grouping (``h=SUP`` variants, Wang et al. 2016), a hierarchy's
nodes (built by evalserve and exported, or made by hand), or both::

    {
      "format": "evalserve-hierarchy", "version": 1,
      "settings": {"h": "WI", "delta": 0.3, "top": "uniform", "sim": "simhash", "wi": "leaves", "wd_gain": "intent"},
      "topics": {
        "151": {
          "super_intents": [{"id": "s1", "children": ["1", "3"]}, {"id": "s2", "children": ["2"]}],
          "nodes": [
            {"id": "i:1", "parent": null, "layer": 1, "kind": "intent", "intents": ["1"],
             "docs": ["d1", "d3"], "weight": 0.5, "sim": 0.375},
            ...
          ]
        }
      }
    }

- ``format``/``version`` are optional on input; ``settings`` (written by ``to_json`` for built hierarchies) says
  how the nodes were built: measures whose hierarchy parameters are the same use them instead of building.
  Without settings, nodes are used by ``h=given`` only.
- ``super_intents``: a list of ``{"id", "children"}`` whose children are official intent labels or nested
  super-intents, or the short form ``{"s1": ["1", "3"], "s2": ["2"]}`` (one layer).
- ``nodes``: ``id`` and ``docs`` are required; ``parent`` (default null: a child of the root), ``layer`` (default:
  the parent's plus one), ``kind`` (``super``, ``intent``, ``cluster``, ``leaf``, ``dummy``, ``node``; default
  ``node``), ``intents`` (default none: grades are the topic-level ones), ``weight`` and ``sim`` are optional.
  Every leaf must be in the bottom layer, an internal node must cover exactly its children's documents, and
  either every node of a topic has a weight or none has (then the weights are computed as WI: official intents
  uniform, super-intents the sum of theirs, below them by leaf counts; without intent nodes from the root,
  spec 4.6). Weights of a layer that do not sum to 1 are renormalised (a warning).

Problems carry no line numbers (JSON has no line structure of interest) but name the place, e.g.
``topics["151"].nodes[3].parent``.
"""

from __future__ import annotations

import json
import math
from typing import Any, cast

from evaluation.formats.source import Blob, SourceLike, load
from evaluation.hierarchy.model import (
    NODE_KINDS,
    Hierarchies,
    HierarchySettings,
    Node,
    NodeKind,
    SuperIntent,
    TopicHierarchy,
)
from evaluation.hierarchy.weights import LAYER_TOLERANCE, assign_weights, check_layers, renormalise_layers
from evaluation.problems import InputError, Parsed, ProblemLog

FORMAT = "evalserve-hierarchy"
VERSION = 1


# -- export ---------------------------------------------------------------------------------------------------


def _node_json(n: Node) -> dict[str, Any]:
    out: dict[str, Any] = {"id": n.id, "parent": n.parent, "layer": n.layer, "kind": n.kind,
                           "intents": list(n.intents), "docs": list(n.docs), "weight": n.weight}
    if n.sim is not None:
        out["sim"] = n.sim
    return out


def _super_json(g: SuperIntent) -> dict[str, Any]:
    return {"id": g.id, "children": [_super_json(c) if isinstance(c, SuperIntent) else c for c in g.children]}


def as_document(hierarchies: Hierarchies) -> dict[str, Any]:
    """The JSON document of ``hierarchies`` as Python values (topics in their order)."""
    topics: dict[str, Any] = {}
    for topic in dict.fromkeys([*hierarchies.super_intents, *hierarchies.topics]):
        entry: dict[str, Any] = {}
        if topic in hierarchies.super_intents:
            entry["super_intents"] = [_super_json(g) for g in hierarchies.super_intents[topic]]
        if topic in hierarchies.topics:
            h = hierarchies.topics[topic]
            entry["height"] = h.height
            entry["nodes"] = [_node_json(n) for n in h.nodes]
        topics[topic] = entry
    doc: dict[str, Any] = {"format": FORMAT, "version": VERSION}
    if hierarchies.settings is not None:
        doc["settings"] = hierarchies.settings.as_dict()
    doc["topics"] = topics
    return doc


def to_json(hierarchies: Hierarchies, indent: int | None = None) -> str:
    """The JSON text of ``hierarchies``; ``from_json`` reads it back to an equal object (floats round-trip)."""
    return json.dumps(as_document(hierarchies), indent=indent, ensure_ascii=False, allow_nan=False)


# -- import ---------------------------------------------------------------------------------------------------


def from_json(text: str | bytes, name: str = "<hierarchies>") -> Hierarchies:
    """Read a hierarchy document or raise InputError listing its problems."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return parse_hierarchies(Blob.from_bytes(data, name)).unwrap()


def read_hierarchies(source: SourceLike) -> Hierarchies:
    """Read a hierarchy file (path, ``-`` or Blob) or raise InputError listing its problems."""
    return parse_hierarchies(source).unwrap()


def parse_hierarchies(source: SourceLike) -> Parsed[Hierarchies]:
    """Read a hierarchy file, collecting every problem (the ``hierarchy`` side input's reader)."""
    try:
        blob = load(source)
    except InputError as exc:
        return Parsed(None, tuple(exc.problems))
    log = ProblemLog(source=blob.name)
    try:
        doc = json.loads(blob.data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        log.add("hierarchy-not-json", f"not UTF-8 text: {exc.reason} at byte {exc.start}")
        return Parsed.from_log(None, log)
    except json.JSONDecodeError as exc:
        log.add("hierarchy-not-json", f"not a JSON document: {exc.msg}", line=exc.lineno, column=exc.colno)
        return Parsed.from_log(None, log)
    except RecursionError:
        log.add("hierarchy-too-deep", "the JSON document nests too deeply to be read")
        return Parsed.from_log(None, log)
    try:
        value = _document(doc, log, blob.name)
    except RecursionError:
        log.add("hierarchy-too-deep", "the hierarchy nests too deeply to be read")
        return Parsed.from_log(None, log)
    return Parsed.from_log(value, log)


def _document(doc: Any, log: ProblemLog, name: str) -> Hierarchies | None:
    if not isinstance(doc, dict):
        log.add("hierarchy-format", "the document must be a JSON object with a 'topics' object")
        return None
    if doc.get("format", FORMAT) != FORMAT:
        log.add("hierarchy-format", f"format {doc.get('format')!r} is not {FORMAT!r}")
    if doc.get("version", VERSION) != VERSION:
        log.add("hierarchy-format", f"version {doc.get('version')!r} is not supported (expected {VERSION})")
    topics = doc.get("topics")
    if not isinstance(topics, dict):
        log.add("hierarchy-format", "the document has no 'topics' object (topic -> super_intents and/or nodes)")
        return None
    settings = _settings(doc.get("settings"), log)
    if not topics:
        log.add("hierarchy-empty", "the document has no topic", severity="warning")
    built: dict[str, TopicHierarchy] = {}
    groups: dict[str, tuple[SuperIntent, ...]] = {}
    for topic, entry in topics.items():
        where = f"topics[{json.dumps(topic)}]"
        if not isinstance(entry, dict):
            log.add("hierarchy-field", f"{where} must be an object with 'super_intents' and/or 'nodes'")
            continue
        if "super_intents" in entry:
            found = _super_intents(entry["super_intents"], f"{where}.super_intents", log)
            if found is not None:
                groups[topic] = found
        if "nodes" in entry:
            tree = _nodes(topic, entry["nodes"], f"{where}.nodes", log)
            if tree is not None:
                built[topic] = tree
    return Hierarchies(built, settings, groups, name)


def _settings(raw: Any, log: ProblemLog) -> HierarchySettings | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        log.add("hierarchy-settings", "'settings' must be an object (h, delta, top, sim, wi, wd_gain)")
        return None
    known = {"h", "delta", "top", "sim", "wi", "wd_gain"}
    unknown = sorted(set(raw) - known)
    if unknown:
        log.add("hierarchy-settings", f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return None
    try:
        return HierarchySettings(**raw).normalised()
    except (TypeError, ValueError) as exc:
        log.add("hierarchy-settings", str(exc))
        return None


def _super_intents(raw: Any, where: str, log: ProblemLog) -> tuple[SuperIntent, ...] | None:
    if isinstance(raw, dict):  # short form: {"s1": ["1", "2"], ...}
        raw = [{"id": k, "children": v} for k, v in raw.items()]
    if not isinstance(raw, list):
        log.add("hierarchy-field", f"{where} must be a list of {{'id', 'children'}} or an object id -> intents")
        return None
    seen_ids: set[str] = set()
    seen_intents: set[str] = set()
    ok = True

    def one(item: Any, at: str) -> SuperIntent | None:
        nonlocal ok
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not isinstance(
                item.get("children"), list) or not item["children"]:
            log.add("hierarchy-field", f"{at} must be an object with a string 'id' and a non-empty 'children' list")
            ok = False
            return None
        if item["id"] in seen_ids:
            log.add("hierarchy-duplicate-id", f"{at}: super-intent id {item['id']!r} is used twice")
            ok = False
        seen_ids.add(item["id"])
        children: list[SuperIntent | str] = []
        for i, c in enumerate(item["children"]):
            if isinstance(c, str):
                if c in seen_intents:
                    log.add("hierarchy-intent-twice", f"{at}.children[{i}]: intent {c!r} is in two super-intents")
                    ok = False
                seen_intents.add(c)
                children.append(c)
            else:
                nested = one(c, f"{at}.children[{i}]")
                if nested is not None:
                    children.append(nested)
        return SuperIntent(item["id"], tuple(children))

    out = [one(item, f"{where}[{i}]") for i, item in enumerate(raw)]
    return tuple(g for g in out if g is not None) if ok else None


def _str_list(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _nodes(topic: str, raw: Any, where: str, log: ProblemLog) -> TopicHierarchy | None:
    if not isinstance(raw, list):
        log.add("hierarchy-field", f"{where} must be a list of nodes")
        return None
    errors_before = len(log.problems)
    nodes: list[dict[str, Any]] = []
    ids: set[str] = set()
    for i, item in enumerate(raw):
        at = f"{where}[{i}]"
        if not isinstance(item, dict):
            log.add("hierarchy-field", f"{at} must be an object")
            continue
        node_id, parent, docs = item.get("id"), item.get("parent"), _str_list(item.get("docs"))
        intents = _str_list(item.get("intents", []))
        kind = item.get("kind", "node")
        weight = None if "weight" not in item else _number(item["weight"])
        sim = None if item.get("sim") is None else _number(item["sim"])
        layer = item.get("layer")
        problems = [
            (not isinstance(node_id, str) or not node_id, "id", "a non-empty string"),
            (parent is not None and not isinstance(parent, str), "parent", "a node id or null"),
            (docs is None or not docs, "docs", "a non-empty list of docnos"),
            (intents is None, "intents", "a list of intent labels"),
            (kind not in NODE_KINDS, "kind", "one of " + ", ".join(NODE_KINDS)),
            ("weight" in item and (weight is None or weight < 0), "weight", "a number >= 0"),
            (item.get("sim") is not None and sim is None, "sim", "a number"),
            (layer is not None and (isinstance(layer, bool) or not isinstance(layer, int) or layer < 1), "layer",
             "a positive integer"),
        ]
        bad = [(f, e) for cond, f, e in problems if cond]
        for field_name, expected in bad:
            log.add("hierarchy-field", f"{at}.{field_name} must be {expected}")
        if bad or not isinstance(node_id, str):
            continue
        if node_id in ids:
            log.add("hierarchy-duplicate-id", f"{at}: node id {node_id!r} is used twice in topic {topic}")
            continue
        ids.add(node_id)
        nodes.append({"at": at, "id": node_id, "parent": parent, "layer": layer, "kind": kind, "intents": intents,
                      "docs": docs, "weight": weight, "sim": sim})
    if len(log.problems) > errors_before:
        return None
    return _assemble(topic, nodes, where, log)


def _assemble(topic: str, nodes: list[dict[str, Any]], where: str, log: ProblemLog) -> TopicHierarchy | None:
    by_id = {n["id"]: n for n in nodes}
    layer_of: dict[str, int] = {}
    ok = True

    def layer(n: dict[str, Any], trail: tuple[str, ...] = ()) -> int | None:
        nonlocal ok
        if n["id"] in layer_of:
            return layer_of[n["id"]]
        if n["id"] in trail:
            log.add("hierarchy-unknown-parent", f"{n['at']}: node {n['id']!r} is its own ancestor")
            ok = False
            return None
        if n["parent"] is None:
            value = 1
        elif n["parent"] not in by_id:
            log.add("hierarchy-unknown-parent", f"{n['at']}.parent: no node {n['parent']!r} in topic {topic}")
            ok = False
            return None
        else:
            above = layer(by_id[n["parent"]], (*trail, n["id"]))
            if above is None:
                return None
            value = above + 1
        if n["layer"] is not None and n["layer"] != value:
            log.add("hierarchy-layer", f"{n['at']}.layer is {n['layer']} but its place in the tree is layer {value}")
            ok = False
        layer_of[n["id"]] = value
        return value

    for n in nodes:
        layer(n)
    if not ok or not nodes:
        if not nodes:
            log.add("hierarchy-field", f"{where} is empty")
        return None
    height = max(layer_of.values())
    kids: dict[str, list[dict[str, Any]]] = {}
    for n in nodes:
        if n["parent"] is not None:
            kids.setdefault(n["parent"], []).append(n)
    for n in nodes:
        below = kids.get(n["id"])
        if not below and layer_of[n["id"]] < height:
            log.add("hierarchy-layer", f"{n['at']}: leaf {n['id']!r} is in layer {layer_of[n['id']]}, above the"
                    f" bottom layer {height} (extend it with dummy nodes, spec 4.5)")
        elif below and set(n["docs"]) != {d for c in below for d in c["docs"]}:
            log.add("hierarchy-docs", f"{n['at']}: node {n['id']!r} does not cover exactly its children's documents")
    weighted = [n["weight"] is not None for n in nodes]
    if any(weighted) and not all(weighted):
        log.add("hierarchy-field", f"{where}: either every node has a weight or none has")
    if log.has_errors:
        return None
    order = sorted(range(len(nodes)), key=lambda i: layer_of[nodes[i]["id"]])
    built = TopicHierarchy(topic, tuple(
        Node(n["id"], n["parent"], layer_of[n["id"]], _kind(n["kind"]), n["intents"], tuple(sorted(n["docs"])),
             n["weight"] or 0.0, n["sim"])
        for n in (nodes[i] for i in order)
    ))
    if not all(weighted):
        built = assign_weights(built)  # sums to 1 per layer unless some leaves lie outside every intent's tree
    bad = check_layers(built, LAYER_TOLERANCE)
    if bad:
        log.add("hierarchy-weights", f"{where}: the weights of layer(s) {', '.join(map(str, bad))} do not sum to 1;"
                " renormalised", severity="warning")
        built = renormalise_layers(built)
    return built


def _kind(value: str) -> NodeKind:
    if value not in NODE_KINDS:
        raise ValueError(value)  # internal: the reader checked every kind before it builds nodes
    return cast(NodeKind, value)
