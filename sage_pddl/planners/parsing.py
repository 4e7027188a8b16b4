"""Reading LLM output: JSON values, step lists, sub-goal lists, and canonical step spelling.

Models wrap JSON in prose or code fences, write `{"plan": [...]}` instead of `{"steps": [...]}`,
or write plain lines (`1. Pick Apple`). `parse_steps` tries, in order: the whole text as JSON,
the first decodable JSON value found anywhere in the text (scanning with a real JSON decoder, so
it never grabs an unbalanced bracket span), then step-like lines. This is where an answer's
steps enter the program: each is read into a `PlanStep` by `pddl.plans.step_from_json`. A step
with an `args` list is read as `{"action", "args": [...]}` (any number of arguments); one with
named fields as `{"action", "object", "target"}` (plus any `argN` fields); a step given as a
string or a list of words has the field form for up to two arguments and the `args` form
beyond. What the model adds beside a step (a "reason", a "thought") is not part of it, and an
item that names no action is no step (dropped): an unusable answer gives no steps, a failed
plan, never an exception.

`Canonicalizer(domain, problem)` rewrites a `PlanStep` to the form the domain's prompts show (the
vocabulary's `written_step`: `args`, or named fields for domains annotated `@sage fields`), its
action to the domain's spelling (case, spaces, `_` and `-` ignored; `@sage alias` names
accepted) and its object words to the problem's spelling (`dining_table` -> `DiningTable`).
Unknown names are kept as written so the gate reports them with a typed code (`unknown-action`,
`unknown-object`) instead of the planner hiding them.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from sage_pddl.pddl.limits import MAX_DEPTH
from sage_pddl.pddl.model import Domain, PlanStep, Problem
from sage_pddl.pddl.plans import step_from_json
from sage_pddl.pddl.vocabulary import ObjectNames, loose_step_words, step_words, vocabulary

_NO_JSON = object()
_EXTRA_FIELD = re.compile(r"arg\d+")
_STEP_KEYS = ("steps", "plan", "actions", "remaining_steps")
# every run of spaces follows a literal, so a long run is matched one way only (linear time)
_LINE = re.compile(r"^\s*(?:step\s*)?(?:(?:\d+[.):]|[-*•])\s*)?(?:\(\s*)?([A-Za-z][\w\-]*)"
                   r"((?:[\s,]+[A-Za-z][\w\-]*)*)\s*(?:\)\s*)?$", re.IGNORECASE)


# ----------------------------------------------------------------------------------- JSON values
def strip_fences(text: str) -> str:
    return re.sub(r"```[A-Za-z0-9_-]*", "", text or "").strip()


def parse_json_value(text: str | None) -> Any:
    """The JSON value in `text`: the whole (unfenced) text, else the first decodable value
    starting at a `{` or `[` (`_json_spans`); `_NO_JSON` when there is none. Time linear in
    the text's length."""
    if not text:
        return _NO_JSON
    cleaned = strip_fences(text)
    try:
        return json.loads(cleaned)
    except (ValueError, RecursionError):  # CallLog refuses such answers; text from elsewhere
        pass
    best: Any = _NO_JSON
    for value in _json_spans(cleaned):
        if isinstance(value, dict) or (isinstance(value, list) and value):
            return value
        if best is _NO_JSON:
            best = value
    return best


_STRUCTURE = re.compile(r'[\[\]{}"]')
_STRING_END = re.compile(r'["\\]')
_OPENING = re.compile(r"[\[{]")
_CLOSING = {"[": "]", "{": "}"}


class _Span:
    """A bracketed stretch of text: where it starts and ends, and the spans it holds."""

    __slots__ = ("start", "end", "inner")

    def __init__(self, start: int):
        self.start, self.end = start, -1
        self.inner: list[_Span] = []


def _json_spans(text: str) -> Iterator[Any]:
    """The values decoded from `text`'s bracketed spans, in the order of their starts: a span
    that does not decode gives the values of the spans it holds. One pass finds the spans:
    brackets are matched with JSON's strings skipped inside them (outside any bracket a quote
    is prose); a closing bracket that matches nothing, or nesting past `MAX_DEPTH`, ends every
    span open (they cannot decode). Each span is decoded at most once, and a span read past by
    its enclosing span's decoder is not decoded again (`_values`): the time is linear in the
    text's length (a factor of `MAX_DEPTH` at worst)."""
    open_spans: list[_Span] = []
    opened: list[str] = []
    position = 0
    while True:
        pattern = _STRUCTURE if open_spans else _OPENING
        found = pattern.search(text, position)
        if found is None:
            break
        char, position = found.group(), found.end()
        if char == '"':
            while (end := _STRING_END.search(text, position)) is not None \
                    and end.group() == "\\":
                position = end.end() + 1
            if end is None:
                break
            position = end.end()
        elif char in _CLOSING:
            if len(open_spans) == MAX_DEPTH:
                yield from _abandoned(text, open_spans)
                open_spans, opened = [], []
            open_spans.append(_Span(found.start()))
            opened.append(_CLOSING[char])
        elif char == opened[-1]:
            span = open_spans.pop()
            opened.pop()
            span.end = position
            if open_spans:
                open_spans[-1].inner.append(span)
            else:
                yield from _values(text, span)
        else:
            yield from _abandoned(text, open_spans)
            open_spans, opened = [], []
    yield from _abandoned(text, open_spans)


def _abandoned(text: str, open_spans: list[_Span]) -> Iterator[Any]:
    """The values of the spans that unclosed spans hold, outermost first."""
    for span in open_spans:
        for inner in span.inner:
            yield from _values(text, inner)


def _values(text: str, span: _Span, failed_at: int | None = None) -> Iterator[Any]:
    """The span's value, else those of the spans it holds. `failed_at`: where the decoder of
    an enclosing span failed inside this one (this one then fails there too: no need to try);
    a held span the decoder read past before failing decodes, one after is tried."""
    if failed_at is None:
        try:
            yield json.loads(text[span.start:span.end])
            return
        except json.JSONDecodeError as error:
            failed_at = span.start + error.pos
        except (ValueError, RecursionError):
            failed_at = span.end
    for inner in span.inner:
        if inner.end <= failed_at or inner.start > failed_at:
            yield from _values(text, inner)
        else:
            yield from _values(text, inner, failed_at)


def is_json(value: Any) -> bool:
    return value is not _NO_JSON


# ---------------------------------------------------------------------------------------- steps
def _as_step(item: Any) -> PlanStep | None:
    """One item of an answer's step list as a step, None when it names no action (commentary
    the model adds, such as a "reason", is not part of the step)."""
    if isinstance(item, Mapping):
        action = item.get("action") or item.get("name") or item.get("act")
        if not isinstance(action, str) or not action.strip():
            return None
        args = item.get("args", item.get("arguments"))
        obj = item.get("object", item.get("obj", ""))
        target = item.get("target", item.get("receptacle", ""))
        if isinstance(args, (list, tuple)) and not obj and not target:
            return _read({"action": action.strip(), "args": [_word(a) for a in args]})
        step = {"action": action.strip(), "object": _word(obj), "target": _word(target)}
        step.update({name: _word(value) for name, value in item.items()
                     if _EXTRA_FIELD.fullmatch(str(name)) and _word(value)})
        return _read(step)
    if isinstance(item, str):
        return _line_step(item)
    if isinstance(item, (list, tuple)) and item and all(isinstance(w, str) for w in item):
        return words_step(item[0], list(item[1:]))
    return None


def _read(step: Mapping[str, Any]) -> PlanStep:
    """A step this module wrote as JSON (a non-empty action, text words), as a `PlanStep`."""
    return step_from_json(step)


def _word(value: Any) -> str:
    """A step value as text: numbers become text, anything else (lists, objects) is dropped."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return ""
    return str(value).strip()


def words_step(action: str, words: list[str]) -> PlanStep:
    """The step of an action word and argument words (field form up to two arguments)."""
    if len(words) > 2:
        return _read({"action": action, "args": words})
    return _read({"action": action, "object": words[0] if words else "",
                  "target": words[1] if len(words) > 1 else ""})


def _line_step(line: str) -> PlanStep | None:
    match = _LINE.match(line.strip())
    if not match:
        return None
    return words_step(match.group(1), [w for w in re.split(r"[\s,]+", match.group(2) or "") if w])


def steps_from_value(value: Any) -> list[PlanStep] | None:
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


def parse_steps(text: str | None) -> list[PlanStep]:
    """The steps an LLM wrote, or [] when nothing step-like is found."""
    return steps_in(text, parse_json_value(text))


def steps_in(text: str | None, value: Any) -> list[PlanStep]:
    """`parse_steps` of `text` whose JSON value (`parse_json_value`) a caller has already
    read: an answer is parsed once."""
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


_ITEM = re.compile(r"^[^\S\n]*(?:\d+[.):]|[-*•])[^\S\n]*(\S.*)$", re.MULTILINE)
"""A numbered or bulleted line's text (spaces within a line only: linear time)."""


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
        items = [m.group(1) for m in _ITEM.finditer(strip_fences(text))]
    out = []
    for item in items:
        if isinstance(item, Mapping):
            item = item.get("subgoal") or item.get("goal") or item.get("description") or ""
        phrase = " ".join(str(item).split())
        if phrase:
            out.append(phrase)
    return out


def extract_tag(text: str | None, tag: str) -> str | None:
    """The content of `<tag>...</tag>` (case-insensitive), or None. (The first opening tag
    with a closing one after it is the first opening tag: each is looked for once.)"""
    text = text or ""
    opening = re.search(rf"<{tag}>", text, re.IGNORECASE)
    if opening is None:
        return None
    closing = re.compile(rf"</{tag}>", re.IGNORECASE).search(text, opening.end())
    return text[opening.end():closing.start()].strip() if closing else None


# --------------------------------------------------------------------------- canonical spelling
class Canonicalizer:
    """Rewrites steps to the spelling of one domain and problem (see module docstring)."""

    def __init__(self, domain: Domain, problem: Problem):
        self.vocabulary = vocabulary(domain)
        self.objects = ObjectNames(domain, problem)

    def _object(self, word: str) -> str:
        word = word.strip()
        found = self.objects.exact(word) if word else None
        return self.objects.spelling[found] if found is not None else word

    def step(self, step: PlanStep) -> PlanStep:
        action = self.vocabulary.action(step.action)
        if not step.fields or (action is not None and not self.vocabulary.uses_fields(action)):
            words = (step_words(step, action, self.vocabulary) if action is not None
                     else loose_step_words(step))
            name = action.name if action is not None else step.action
            return step_from_json(self.vocabulary.written_step(
                name, [self._object(w) for w in words]))
        fields = dict(step.fields)
        fields.setdefault("object", "")
        fields.setdefault("target", "")
        for name in ("object", "target"):
            fields[name] = self._object(fields[name])
        return step_from_json({"action": self.vocabulary.action_name(step.action), **fields})

    def steps(self, steps: Iterable[PlanStep]) -> list[PlanStep]:
        return [self.step(s) for s in steps]
