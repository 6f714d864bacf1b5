"""Requests that would crash or mislead the parsers, answered as clear problems: a multipart body with more parts
than ``EVALSERVE_MAX_FORM_PARTS`` (413 ``too-many-files``, not werkzeug's bare "too large"), and a JSON body
nested deeper than ``MAX_JSON_DEPTH`` (400 ``too-deep``, not a RecursionError's 500)."""

from __future__ import annotations

import json
from typing import Any

from flask import Request, current_app, request
from werkzeug.exceptions import RequestEntityTooLarge

from evalserve.service.web.problems import ApiProblem

#: deepest nesting of a request's JSON body; the API's documents nest a few levels
MAX_JSON_DEPTH = 64


class LimitedRequest(Request):
    """Flask's request; a multipart body over the parts limit is a problem that names the limit."""

    def _load_form_data(self) -> None:
        try:
            super()._load_form_data()
        except RequestEntityTooLarge:
            limit = self.max_content_length
            if limit is not None and self.content_length is not None and self.content_length > limit:
                raise
            parts = self.max_form_parts
            runs = current_app.extensions["evalserve"].settings.limits.max_runs_per_request
            raise ApiProblem(413, "too-many-files", f"the multipart request has more than {parts} parts (files and"
                             f" fields; EVALSERVE_MAX_FORM_PARTS) or a form field over {self.max_form_memory_size}"
                             f" bytes; send at most {runs} run files per request; nothing was stored") from None


def json_depth(value: Any) -> int:
    """How deeply lists and objects nest in a parsed JSON value (a scalar: 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def refuse_deep_json() -> None:
    """Before the view: a JSON body too deeply nested for the parsers is a 400 problem. Other malformed JSON is
    left to the arguments parser (its own 400)."""
    if not request.is_json:
        return
    try:
        document = json.loads(request.get_data(cache=True))
    except RecursionError:
        document = None
        depth = MAX_JSON_DEPTH + 1
    except ValueError:
        return
    else:
        depth = json_depth(document)
    if depth > MAX_JSON_DEPTH:
        raise ApiProblem(400, "too-deep", f"the JSON body nests more than {MAX_JSON_DEPTH} levels deep")
