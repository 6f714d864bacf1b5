"""The OpenAPI document's prose as Swagger UI shows it: flask-smorest takes each operation's summary and
description from the view's docstring, written in this project's reStructuredText style. Swagger UI renders
Markdown, so ````code```` there showed literal double backticks (issue 28), and a summary kept the docstring's
line breaks. This apispec plugin writes Markdown code spans (`` `code` ``) and one-line summaries."""

from __future__ import annotations

import re
from typing import Any

from apispec import BasePlugin

_RST_CODE = re.compile(r"``(.+?)``", re.DOTALL)


def markdown(text: str) -> str:
    """reStructuredText inline literals (````x````) as Markdown code spans (`` `x` ``)."""
    return _RST_CODE.sub(lambda m: f"`{m.group(1)}`", text)


def _rewrite(node: Any) -> None:
    """Every ``summary`` and ``description`` string under ``node`` (an operation: its parameters and responses
    too) in Markdown; summaries on one line."""
    if isinstance(node, list):
        for item in node:
            _rewrite(item)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key in ("summary", "description") and isinstance(value, str):
                value = markdown(value)
                node[key] = " ".join(value.split()) if key == "summary" else value
            else:
                _rewrite(value)


class MarkdownText(BasePlugin):
    """Rewrites each operation's text as ``_rewrite`` says, as the operation is added to the document."""

    def operation_helper(self, path: str | None = None, operations: dict[str, Any] | None = None,
                         **kwargs: Any) -> None:
        _rewrite(operations or {})
