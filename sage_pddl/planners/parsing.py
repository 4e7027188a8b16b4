"""Reading LLM output: JSON values, step lists, sub-goal lists, and canonical step spelling.

Models wrap JSON in prose or code fences, write `{"plan": [...]}` instead of `{"steps": [...]}`,
or write plain lines (`1. Pick Apple`). `parse_steps` tries, in order: the whole text as JSON,
the first decodable JSON value found anywhere in the text (scanning with a real JSON decoder, so
it never grabs an unbalanced bracket span), then step-like lines. A step becomes
`{"action", "object", "target"}` with string values; a step given as a string is split into words.

`canonical_steps(steps, domain, problem)` rewrites a step's action to the domain's spelling
(case, spaces, `_` and `-` ignored; `@sage alias` names accepted) and its object words to the
problem's spelling (`dining_table` -> `DiningTable`). Unknown names are kept as written so the gate
reports them with a typed code (`unknown-action`, `unknown-object`) instead of the planner hiding
them.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from sage_pddl.pddl.model import Domain, Problem
from sage_pddl.pddl.vocabulary import ObjectNames, vocabulary

from .base import Step

_NO_JSON = object()
_STEP_KEYS = ("steps", "plan", "actions", "remaining_steps")
_LINE = re.compile(r"^\s*(?:step\s*)?(?:\d+[.):]|[-*•])?\s*\(?\s*([A-Za-z][\w\-]*)"
                   r"((?:[\s,]+[A-Za-z][\w\-]*)*)\s*\)?\s*$", re.IGNORECASE)


# ----------------------------------------------------------------------------------- JSON values
def strip_fences(text: str) -> str:
    return re.sub(r"```[A-Za-z0-9_-]*", "", text or "").strip()


def parse_json_value(text: str | None) -> Any:
    """The JSON value in `text`: the whole (unfenced) text, else the first decodable value
    starting at a `{` or `[`; `_NO_JSON` when there is none."""
    if not text:
        return _NO_JSON
    cleaned = strip_fences(text)
    try:
        return json.loads(cleaned)
    except (ValueError, RecursionError):  # CallLog refuses such answers; text from elsewhere
        pass
    decoder = json.JSONDecoder()
    best: Any = _NO_JSON
    for match in re.finditer(r"[\[{]", cleaned):
        try:
            value, _ = decoder.raw_decode(cleaned, match.start())
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) or (isinstance(value, list) and value):
            return value
        if best is _NO_JSON:
            best = value
    return best


def is_json(value: Any) -> bool:
    return value is not _NO_JSON


# ---------------------------------------------------------------------------------------- steps
def _as_step(item: Any) -> Step | None:
    if isinstance(item, Mapping):
        action = item.get("action") or item.get("name") or item.get("act")
        if not isinstance(action, str) or not action.strip():
            return None
        args = item.get("args") or item.get("arguments")
        obj = item.get("object", item.get("obj", ""))
        target = item.get("target", item.get("receptacle", ""))
        if isinstance(args, (list, tuple)) and not obj and not target:
            words = [str(a) for a in args if str(a).strip()]
            obj = words[0] if words else ""
            target = words[1] if len(words) > 1 else ""
        step = {"action": action.strip(), "object": str(obj or "").strip(),
                "target": str(target or "").strip()}
        reason = item.get("reason")
        if isinstance(reason, str) and reason.strip():
            step["reason"] = reason.strip()
        return step
    if isinstance(item, str):
        return _line_step(item)
    if isinstance(item, (list, tuple)) and item and all(isinstance(w, str) for w in item):
        return {"action": item[0], "object": item[1] if len(item) > 1 else "",
                "target": item[2] if len(item) > 2 else ""}
    return None


def _line_step(line: str) -> Step | None:
    match = _LINE.match(line.strip())
    if not match:
        return None
    words = [w for w in re.split(r"[\s,]+", match.group(2) or "") if w]
    return {"action": match.group(1), "object": words[0] if words else "",
            "target": words[1] if len(words) > 1 else ""}


def steps_from_value(value: Any) -> list[Step] | None:
    """Steps from a decoded JSON value, or None when it holds no step list."""
    if isinstance(value, Mapping):
        for name in _STEP_KEYS:
            if isinstance(value.get(name), list):
                return [s for s in (_as_step(i) for i in value[name]) if s]
        single = _as_step(value)
        return [single] if single else None
    if isinstance(value, list):
        steps = [s for s in (_as_step(i) for i in value) if s]
        return steps if steps or not value else None
    return None


def parse_steps(text: str | None) -> list[Step]:
    """The steps an LLM wrote, or [] when nothing step-like is found."""
    value = parse_json_value(text)
    if is_json(value):
        steps = steps_from_value(value)
        if steps is not None:
            return steps
    steps = []
    for line in strip_fences(text or "").splitlines():
        if re.match(r"^\s*(\d+[.):]|[-*•]|\()", line):
            step = _line_step(line)
            if step:
                steps.append(step)
    return steps


def parse_subgoals(text: str | None) -> list[str]:
    """Sub-goal phrases from `{"subgoals": [...]}`, a JSON list, or numbered/bulleted lines."""
    value = parse_json_value(text)
    items: list[Any] = []
    if isinstance(value, Mapping):
        for name in ("subgoals", "sub_goals", "goals", "phases"):
            if isinstance(value.get(name), list):
                items = value[name]
                break
    elif isinstance(value, list):
        items = value
    elif text:
        items = [m.group(1) for m in re.finditer(r"^\s*(?:\d+[.):]|[-*•])\s*(.+?)\s*$",
                                                  strip_fences(text), re.MULTILINE)]
    out = []
    for item in items:
        if isinstance(item, Mapping):
            item = item.get("subgoal") or item.get("goal") or item.get("description") or ""
        phrase = " ".join(str(item).split())
        if phrase:
            out.append(phrase)
    return out


def extract_tag(text: str | None, tag: str) -> str | None:
    """The content of `<tag>...</tag>` (case-insensitive), or None."""
    match = re.search(rf"<{tag}>(.*?)</{tag}>", text or "", re.DOTALL | re.IGNORECASE)
    return match.group(1).strip() if match else None


# --------------------------------------------------------------------------- canonical spelling
class Canonicalizer:
    """Rewrites steps to the spelling of one domain and problem (see module docstring)."""

    def __init__(self, domain: Domain, problem: Problem):
        self.vocabulary = vocabulary(domain)
        self.objects = ObjectNames(domain, problem)

    def step(self, step: Mapping[str, Any]) -> Step:
        out = {k: str(v) if v is not None else "" for k, v in step.items()}
        out.setdefault("object", "")
        out.setdefault("target", "")
        out["action"] = self.vocabulary.action_name(out.get("action", ""))
        for name in ("object", "target"):
            word = out.get(name, "").strip()
            found = self.objects.exact(word) if word else None
            out[name] = self.objects.spelling[found] if found is not None else word
        return out

    def steps(self, steps: Iterable[Mapping[str, Any]]) -> list[Step]:
        return [self.step(s) for s in steps]
