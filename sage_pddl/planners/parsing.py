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
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sage_pddl.pddl.model import Domain, Problem, key

from .base import Step

_NO_JSON = object()
_STEP_KEYS = ("steps", "plan", "actions", "remaining_steps")
_LINE = re.compile(r"^\s*(?:step\s*)?(?:\d+[.):]|[-*•])?\s*\(?\s*([A-Za-z][\w\-]*)"
                   r"((?:[\s,]+[A-Za-z][\w\-]*)*)\s*\)?\s*$", re.IGNORECASE)


def name_key(name: str) -> str:
    """Names compare ignoring case, spaces, `_` and `-` (as the domain annotations say)."""
    return re.sub(r"[\s_\-]+", "", str(name)).lower()


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
    except ValueError:
        pass
    decoder = json.JSONDecoder()
    best: Any = _NO_JSON
    for match in re.finditer(r"[\[{]", cleaned):
        try:
            value, _ = decoder.raw_decode(cleaned, match.start())
        except ValueError:
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
def annotation_words(domain: Domain, kind: str) -> list[list[str]]:
    return [a.text.split() for a in domain.annotations if a.kind.lower() == kind and a.text]


def action_names(domain: Domain) -> dict[str, str]:
    """name key (of an action or one of its aliases) -> the action's spelling in the domain."""
    names = {name_key(a.name): a.name for a in domain.actions}
    for words in annotation_words(domain, "alias"):
        action = domain.action(words[0]) or next(
            (a for a in domain.actions if name_key(a.name) == name_key(words[0])), None)
        if action is None:
            continue
        for alias in words[1:]:
            names.setdefault(name_key(alias), action.name)
    return names


def object_names(domain: Domain, problem: Problem) -> dict[str, str]:
    """name key -> spelling, for the problem's objects and the domain's constants."""
    out: dict[str, str] = {}
    for typed in tuple(domain.constants) + tuple(problem.objects):
        out.setdefault(name_key(typed.name), typed.name)
    return out


def step_fields(domain: Domain) -> dict[str, tuple[tuple[str, ...], ...]]:
    """action key -> for each parameter, the JSON fields that fill it (`@sage step`)."""
    out: dict[str, tuple[tuple[str, ...], ...]] = {}
    for words in annotation_words(domain, "step"):
        action = domain.action(words[0])
        if action is not None:
            out[key(action.name)] = tuple(tuple(w.split("|")) for w in words[1:])
    return out


def step_from_args(domain: Domain, action_name: str, args: Sequence[str]) -> Step:
    """The JSON step that fills `action_name`'s parameters with `args` in order."""
    action = domain.action(action_name)
    spelled = action.name if action else action_name
    fields = step_fields(domain).get(key(spelled))
    step: Step = {"action": spelled, "object": "", "target": ""}
    for index, value in enumerate(args):
        if fields and index < len(fields) and fields[index]:
            name = fields[index][0]
        else:
            name = ("object", "target")[index] if index < 2 else f"arg{index}"
        if step.get(name):  # two parameters mapped to one field: fall back to position
            name = ("object", "target")[index] if index < 2 else f"arg{index}"
        step[name] = value
    return step


class Canonicalizer:
    """Rewrites steps to the spelling of one domain and problem (see module docstring)."""

    def __init__(self, domain: Domain, problem: Problem):
        self.actions = action_names(domain)
        self.objects = object_names(domain, problem)

    def step(self, step: Mapping[str, Any]) -> Step:
        out = {k: str(v) if v is not None else "" for k, v in step.items()}
        out.setdefault("object", "")
        out.setdefault("target", "")
        action = out.get("action", "")
        out["action"] = self.actions.get(name_key(action), action.strip())
        for name in ("object", "target"):
            word = out.get(name, "").strip()
            out[name] = self.objects.get(name_key(word), word) if word else ""
        return out

    def steps(self, steps: Iterable[Mapping[str, Any]]) -> list[Step]:
        return [self.step(s) for s in steps]
