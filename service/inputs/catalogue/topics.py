"""Topic descriptions of a published set: the TREC Web Track topic XML (``<topic number type>`` with ``query``,
``description`` and ``subtopic`` elements) as JSON-ready dictionaries, whitespace collapsed."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any


def _text(element: ET.Element | None) -> str:
    return " ".join((element.text or "").split()) if element is not None else ""


def read_topic_xml(data: bytes) -> dict[str, dict[str, Any]]:
    """Topic number -> {query, description, type, subtopics: [{number, type, text}]}; ValueError for a file that is
    not such XML. The files' internal DTD declares no entities, and no external one is ever fetched."""
    if b"<!ENTITY" in data:
        raise ValueError("topic files with entity declarations are not read")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ValueError(f"not topic XML: {exc}") from None
    topics: dict[str, dict[str, Any]] = {}
    for topic in root.iter("topic"):
        number = topic.get("number")
        if not number:
            raise ValueError("a <topic> without a number")
        topics[number] = {
            "query": _text(topic.find("query")),
            "description": _text(topic.find("description")),
            "type": topic.get("type", ""),
            "subtopics": [{"number": s.get("number", ""), "type": s.get("type", ""), "text": _text(s)}
                          for s in topic.findall("subtopic")],
        }
    return topics
