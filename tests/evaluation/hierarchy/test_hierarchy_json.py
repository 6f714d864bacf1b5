"""Hierarchies as JSON (the ``hierarchy`` side input): round trips of built hierarchies and super-intents, every
problem code of the reader, weights computed or renormalised on reading, and the command-line paths (evalserve
``--hierarchy FILE``; ``python -m evaluation.hierarchy`` build and fingerprints)."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evalserve.cli.main import main as evalserve
from evaluation.docsim import DocumentVectors
from evaluation.formats import Blob, read_qrels
from evaluation.hierarchy import (
    Hierarchies,
    HierarchySettings,
    SuperIntent,
    build_hierarchies,
    from_json,
    parse_hierarchies,
    to_json,
    topic_judgments,
)
from evaluation.hierarchy.__main__ import main as hierarchy_cli
from evaluation.hierarchy.prepare import similarity_function
from evaluation.intent_ranking import intent_slots
from evaluation.problems import InputError
from evaluation.side_registry import SIDE_KINDS, side_reader


def qrels_text(seed: int) -> str:
    rng = random.Random(seed)
    return "".join(f"{t} {i} d{d:02d} {rng.choice([0, 1, 2])}\n" for t in ("t1", "t2", "t3") for i in "1234"
                   for d in rng.sample(range(30), rng.randint(0, 9)))


def built(settings: HierarchySettings, seed: int = 1) -> Hierarchies:
    qrels = read_qrels(Blob.from_bytes(qrels_text(seed).encode(), "q"))
    fp = DocumentVectors.build([f"d{d:02d}" for d in range(30)], np.random.default_rng(seed).integers(0, 2**10, 30),
                               bits=10)
    groups = {"t1": (SuperIntent("A", ("1", "2")), SuperIntent("B", (SuperIntent("C", ("3",)),)))}
    return build_hierarchies(topic_judgments(qrels, intent_slots(qrels)), settings, similarity_function(fp), groups)


@pytest.mark.parametrize("h", ["WI", "WD", "TL-WD", "SUP+WI", "FLAT"])
def test_round_trip(h: str) -> None:
    original = built(HierarchySettings(h=h, delta=0.7))
    text = to_json(original)
    again = from_json(text)
    assert again.topics == original.topics and again.settings == original.settings
    assert again.super_intents == original.super_intents
    assert to_json(again) == text
    assert from_json(to_json(original, indent=2)).topics == original.topics
    doc = json.loads(text)
    assert doc["format"] == "evalserve-hierarchy" and doc["version"] == 1
    assert doc["settings"]["h"] == h


def test_the_side_kind_reads_gzip_and_short_super_intents() -> None:
    assert "hierarchy" in SIDE_KINDS and SIDE_KINDS["hierarchy"].flag == "--hierarchy"
    doc = {"topics": {"151": {"super_intents": {"s1": ["1", "3"], "s2": ["2"]}}}}
    parsed = side_reader("hierarchy")(Blob.from_bytes(gzip.compress(json.dumps(doc).encode()), "h.json.gz"))
    assert parsed.ok and not parsed.problems
    assert parsed.unwrap().super_intents == {"151": (SuperIntent("s1", ("1", "3")), SuperIntent("s2", ("2",)))}
    assert parsed.unwrap().settings is None and not parsed.unwrap().topics


def test_weights_are_computed_when_absent_and_renormalised_when_off() -> None:
    nodes: list[dict[str, Any]] = [
        {"id": "a", "kind": "intent", "intents": ["1"], "docs": ["x", "y"]},
        {"id": "b", "kind": "intent", "intents": ["2"], "docs": ["z"]},
        {"id": "a1", "parent": "a", "docs": ["x"]},
        {"id": "a2", "parent": "a", "docs": ["y"]},
        {"id": "b1", "parent": "b", "docs": ["z"], "kind": "dummy"},
    ]
    read = from_json(json.dumps({"topics": {"q": {"nodes": nodes}}}))
    assert [(n.id, n.layer, n.weight) for n in read["q"].nodes] == [
        ("a", 1, 0.5), ("b", 1, 0.5), ("a1", 2, 0.25), ("a2", 2, 0.25), ("b1", 2, 0.5)]
    weighted = [dict(n, weight=w) for n, w in zip(nodes, (1, 1, 0.5, 0.5, 1))]
    parsed = parse_hierarchies(Blob.from_bytes(json.dumps({"topics": {"q": {"nodes": weighted}}}).encode(), "h"))
    assert [p.code for p in parsed.problems] == ["hierarchy-weights"]
    assert parsed.problems[0].severity == "warning" and "layer(s) 1, 2" in parsed.problems[0].message
    assert [n.weight for n in parsed.unwrap()["q"].nodes] == [0.5, 0.5, 0.25, 0.25, 0.5]


def problems(doc: Any) -> list[tuple[str, str]]:
    text = doc if isinstance(doc, (str, bytes)) else json.dumps(doc)
    parsed = parse_hierarchies(Blob.from_bytes(text.encode() if isinstance(text, str) else text, "h.json"))
    return [(p.code, p.message) for p in parsed.problems]


def node(node_id: str, parent: str | None = None, docs: tuple[str, ...] = ("d",), **more: Any) -> dict[str, Any]:
    return {"id": node_id, "parent": parent, "docs": list(docs), **more}


@pytest.mark.parametrize(
    ("doc", "code", "says"),
    [
        ('{"topics": ', "hierarchy-not-json", "not a JSON document"),
        (b"\xff\xfe", "hierarchy-not-json", "not UTF-8"),
        ([1, 2], "hierarchy-format", "must be a JSON object"),
        ({"format": "other", "topics": {}}, "hierarchy-format", "is not 'evalserve-hierarchy'"),
        ({"version": 2, "topics": {}}, "hierarchy-format", "version 2 is not supported"),
        ({"nodes": []}, "hierarchy-format", "no 'topics' object"),
        ({"topics": {}}, "hierarchy-empty", "no topic"),
        ({"topics": {"q": []}}, "hierarchy-field", 'topics["q"] must be an object'),
        ({"topics": {"q": {"nodes": [node("a", weight=-1)]}}}, "hierarchy-field", "nodes[0].weight must be"),
        ({"topics": {"q": {"nodes": [node("a", docs=())]}}}, "hierarchy-field", "nodes[0].docs must be"),
        ({"topics": {"q": {"nodes": [node("a", kind="root")]}}}, "hierarchy-field", "nodes[0].kind must be"),
        ({"topics": {"q": {"nodes": [node("a", layer=0)]}}}, "hierarchy-field", "nodes[0].layer must be"),
        ({"topics": {"q": {"nodes": [node("a", weight=1), node("b")]}}}, "hierarchy-field",
         "either every node has a weight or none has"),
        ({"topics": {"q": {"nodes": [node("a"), node("a")]}}}, "hierarchy-duplicate-id", "'a' is used twice"),
        ({"topics": {"q": {"nodes": [node("a", "zz")]}}}, "hierarchy-unknown-parent", "no node 'zz'"),
        ({"topics": {"q": {"nodes": [node("a", "b"), node("b", "a")]}}}, "hierarchy-unknown-parent",
         "its own ancestor"),
        ({"topics": {"q": {"nodes": [node("a"), node("b", "a", layer=3)]}}}, "hierarchy-layer",
         "but its place in the tree is layer 2"),
        ({"topics": {"q": {"nodes": [node("a"), node("b"), node("c", "a")]}}}, "hierarchy-layer",
         "leaf 'b' is in layer 1, above the bottom layer 2"),
        ({"topics": {"q": {"nodes": [node("a", docs=("x", "y")), node("b", "a", docs=("x",))]}}}, "hierarchy-docs",
         "does not cover exactly its children's documents"),
        ({"topics": {"q": {"super_intents": [{"id": "s", "children": ["1"]}, {"id": "t", "children": ["1"]}]}}},
         "hierarchy-intent-twice", "intent '1' is in two super-intents"),
        ({"topics": {"q": {"super_intents": [{"id": "s", "children": ["1"]}, {"id": "s", "children": ["2"]}]}}},
         "hierarchy-duplicate-id", "super-intent id 's' is used twice"),
        ({"topics": {"q": {"super_intents": [{"id": "s", "children": []}]}}}, "hierarchy-field",
         "non-empty 'children' list"),
        ({"settings": {"h": "XX"}, "topics": {}}, "hierarchy-settings", "h='XX'"),
        ({"settings": {"colour": 1}, "topics": {}}, "hierarchy-settings", "unknown setting(s) colour"),
    ],
)
def test_problem_codes(doc: Any, code: str, says: str) -> None:
    found = problems(doc)
    assert any(c == code and says in m for c, m in found), found


def test_json_errors_have_a_position_and_errors_raise() -> None:
    parsed = parse_hierarchies(Blob.from_bytes(b'{\n  "topics": [,]\n}', "h.json"))
    assert not parsed.ok and (parsed.problems[0].line, parsed.problems[0].column) == (2, 14)
    with pytest.raises(InputError, match="hierarchy-not-json"):
        from_json("nope")


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(qrels_text(2))
    run = tmp_path / "run.txt"
    run.write_text("".join(f"{t} Q0 d{d:02d} {d} {30 - d} r\n" for t in ("t1", "t2", "t3") for d in range(30)))
    fp, out = tmp_path / "fp.txt", tmp_path / "h.json"
    assert hierarchy_cli(["fingerprints", "--qrels", str(qrels), "--seed", "7", "-o", str(fp)]) == 0
    assert hierarchy_cli(["build", "--qrels", str(qrels), "--fingerprints", str(fp), "--delta", "0.6",
                          "-o", str(out)]) == 0
    assert "topic hierarchies" in capsys.readouterr().err
    assert from_json(out.read_bytes()).settings == HierarchySettings(delta=0.6)
    measure = "HDsharp_nDCG(delta=0.6)@10"
    outputs = []
    for side in (["--fingerprints", str(fp)], ["--hierarchy", str(out)]):
        code = evalserve(["evaluate", "--qrels", str(qrels), "--run", str(run), *side, "-m", measure,
                          "--format", "tsv"])
        assert code == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] and measure in outputs[0]
    bad = tmp_path / "bad.json"
    bad.write_text('{"topics": {"q": {"nodes": [{"id": "a", "parent": "b", "docs": ["x"]}]}}}')
    code = evalserve(["evaluate", "--qrels", str(qrels), "--run", str(run), "--hierarchy", str(bad), "-m", measure])
    assert code == 2 and "[hierarchy-unknown-parent]" in capsys.readouterr().err
