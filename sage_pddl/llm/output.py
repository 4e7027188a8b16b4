"""A model's output: what a request asks it to follow, and whether its answer is usable.

A request's `Schema` is a JSON schema (a mapping) the answer must follow, the string `"json"` for
"any JSON value", or None for free text (`schema_for_request` refuses anything else). An answer
is usable when it is not empty and, when a schema was asked for, is JSON, also inside one
surrounding markdown code fence, which `check_output` removes (`InvalidOutput` otherwise).
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from .errors import InvalidOutput, LLMConfigError

Schema = Mapping[str, Any] | Literal["json"] | None

_NOT_JSON = object()
_OPENING_FENCE = re.compile(r"```[A-Za-z0-9_-]*")


def parse_json_output(text: str) -> Any:
    """The JSON value in `text` (also inside one surrounding ``` fence), or `_NOT_JSON`."""
    for candidate in (text, _unfence(text)):
        if candidate is None:
            continue
        try:
            return json.loads(candidate)
        except (ValueError, TypeError):
            continue
    return _NOT_JSON


def json_value(text: str) -> Any:
    """The JSON value in `text` (as `parse_json_output`); `InvalidOutput` when it has none."""
    value = parse_json_output(text)
    if value is _NOT_JSON:
        raise InvalidOutput(f"model output is not JSON: {_preview(text)}")
    return value


def _unfence(text: str) -> str | None:
    """The text inside one surrounding fence (```` ```lang ```` and a newline before it,
    ```` ``` ```` after it; spaces around it and at its end dropped), or None. Read by string
    operations in one pass: a regular expression of it retried its runs of spaces at every
    split (minutes for a few thousand newlines)."""
    stripped = text.strip()
    opening = _OPENING_FENCE.match(stripped)
    if opening is None or not stripped.endswith("```") or len(stripped) - 3 < opening.end():
        return None
    inside = stripped[opening.end():-3]
    blank = len(inside) - len(inside.lstrip())
    newline = inside.rfind("\n", 0, blank)
    return inside[newline + 1:].rstrip() if newline >= 0 else None


def check_output(text: str | None, schema: Schema) -> str:
    """The usable output text, or `InvalidOutput`.

    Empty output is never usable. With a schema the text must be JSON; JSON wrapped in one
    markdown code fence (endpoints that ignore structured output do this) is unwrapped so the
    caller gets bare JSON.
    """
    if text is None or not text.strip():
        raise InvalidOutput("the model returned empty output")
    if schema is None:
        return text
    if parse_json_output(text) is _NOT_JSON:
        raise InvalidOutput(f"the model output is not JSON although a schema was requested: "
                            f"{_preview(text)}")
    return _unfence(text) or text


def _preview(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "...")


def schema_for_request(schema: Schema) -> Schema:
    """Validate the `schema` argument of `complete`."""
    if schema is None or schema == "json" or isinstance(schema, Mapping):
        return schema
    raise LLMConfigError(f"schema must be a JSON schema dict, 'json' or None, "
                         f"got {type(schema).__name__}")

