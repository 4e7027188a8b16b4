"""Read plans in the formats found in the wild into a `Plan`.

Formats (`format=` name, "auto" detects them in this order):
- "json":  a JSON list of steps, or `{"steps": [...]}`. A step is an object with "action" and
  named fields ("object", "target", ...; an "args" list is taken as the arguments), or a string
  read as an IPC or plain step. A JSON object mapping ids to step lists (EAI's
  `gold_pddl_plan.json`) needs the id: `load_plan("file.json#id")` or `parse_plan(..., plan_id=)`.
- "val":   VAL's timestamped lines `0.001: (a b c) [1.0]` (several steps may share a timestamp;
  the optional `[duration]` is ignored).
- "ipc":   one or more `(action arg ...)` per line, `;` comments (`; cost = 10 (unit cost)`).
- "plain": one step per line, words separated by spaces or commas: `Pick Apple`.
Blank lines and `;` comments are skipped in the line formats. A JSON dict step is read by
`step_from_json`. Anything that cannot be read raises `PlanSyntaxError` naming the line or the
step.

One step given as a value, where steps enter the program (an LLM's answer, a wire message, a
caller's text), is read here into a `PlanStep`, and written back by `step_json` (with its
text, for a wire) or `written_json` (as planners write steps: prompts, results rows, memory and
trace files; `step_from_json` reads either back to the same step):
- `step_from_json`: an object with a non-empty "action" and either an "args" list of names (the
  arguments in order; its `fields` stay empty) or named fields (`object`, `target`, ...: every
  string field but the action and commentary ("text", "reason", "thought", "id") is kept in
  `fields`, which the gate maps to parameters through the domain's `@sage step` annotations;
  `args` holds the non-empty `object` then `target`, their reading without annotations). Its
  text is its "text" field, else the step in one line (`vocabulary.step_text`).
- `json_step_text`: a JSON value given as a step, in one line, for a message about it even when
  it is no step.
- `step_from_text`: `Pick Apple` or `(pick apple)`: the words of the text without its outer
  parentheses, the text kept as written.
"""
from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import limits
from .errors import PDDLSyntaxError, PlanSyntaxError, SageError
from .limits import load_json, read_text
from .model import Location, Plan, PlanStep
from .vocabulary import NOT_ARGUMENTS, step_text

__all__ = ["parse_plan", "load_plan", "PLAN_FORMATS", "step_from_json", "step_from_text", "step_of",
           "step_from_value", "step_json", "written_json",
           "json_step_text"]

PLAN_FORMATS = ("auto", "ipc", "val", "json", "plain")

_TIMESTAMP = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*:\s*")
_DURATION = re.compile(r"\s*\[\s*[\d.eE+-]+\s*\]\s*$")
_WORD = re.compile(r"[^\s(),;]+")
_ARG_FIELDS = ("object", "target")
NO_ACTION = "the step has no action name"


def _strip_comment(line: str) -> str:
    return line.split(";", 1)[0]


def _error(message: str, file: str | None, line: int, column: int, text: str) -> PlanSyntaxError:
    return PlanSyntaxError(message, Location(file, line, column), text=text.strip(),
                           source_line=text)


# --- line formats ----------------------------------------------------------------------------------

def _parenthesized(body: str, offset: int, line_text: str, line_no: int, file: str | None,
                   steps: list[PlanStep]) -> None:
    """Append every `(action args)` group of `body` (which starts at column `offset` + 1)."""
    position = 0
    while position < len(body):
        char = body[position]
        if char.isspace():
            position += 1
            continue
        column = offset + position + 1
        if char != "(":
            raise _error(f"unexpected {body[position:].split()[0]!r} in plan step, expected '('",
                         file, line_no, column, line_text)
        end = body.find(")", position)
        if end < 0:
            raise _error("unbalanced parentheses: '(' is never closed", file, line_no, column,
                         line_text)
        inner = body[position + 1:end]
        if "(" in inner:
            raise _error("nested '(' in plan step", file, line_no,
                         offset + position + 2 + inner.index("("), line_text)
        words = _WORD.findall(inner)
        if not words:
            raise _error("empty plan step '()'", file, line_no, column, line_text)
        steps.append(PlanStep(words[0], tuple(words[1:]), len(steps),
                              body[position:end + 1], (), Location(file, line_no, column)))
        position = end + 1


def _parse_lines(text: str, file: str | None, kind: str) -> Plan:
    steps: list[PlanStep] = []
    for line_no, line_text in enumerate(text.splitlines(), start=1):
        body = _strip_comment(line_text)
        if not body.strip():
            continue
        offset = 0
        if kind == "val":
            match = _TIMESTAMP.match(body)
            if not match:
                raise _error("expected a timestamped step 'time: (action args)'", file, line_no,
                             len(body) - len(body.lstrip()) + 1, line_text)
            offset = match.end()
            body = _DURATION.sub("", body[offset:])
        if kind == "plain":
            stripped = body.strip()
            if stripped.startswith("(") and stripped.endswith(")"):
                _parenthesized(body, 0, line_text, line_no, file, steps)
                continue
            if "(" in stripped or ")" in stripped:
                raise _error("unbalanced parentheses in plan step", file, line_no,
                             body.index("(" if "(" in body else ")") + 1, line_text)
            words = _WORD.findall(body)
            column = len(body) - len(body.lstrip()) + 1
            steps.append(PlanStep(words[0], tuple(words[1:]), len(steps), stripped, (),
                                  Location(file, line_no, column)))
        else:
            _parenthesized(body, offset, line_text, line_no, file, steps)
        if len(steps) > limits.MAX_PLAN_STEPS:
            raise _error(limits.too_many_steps(limits.MAX_PLAN_STEPS), file, line_no, 1,
                         line_text)
    return Plan(tuple(steps), source=text)


# --- one step ------------------------------------------------------------------------------------

def step_from_json(value: Mapping[str, Any], index: int = 0) -> PlanStep:
    """A JSON step as a `PlanStep` numbered `index` (see the module docstring); raises
    `PlanSyntaxError` when it names no action or its args are not names."""
    action = value.get("action")
    if not isinstance(action, str) or not action.strip():
        raise PlanSyntaxError(NO_ACTION)
    text = value.get("text")
    args = value.get("args")
    if isinstance(args, (list, tuple)):
        if not all(isinstance(a, str) for a in args):
            raise PlanSyntaxError("every entry of the step's args must be a string")
        step = PlanStep(action.strip(), tuple(a.strip() for a in args), index)
    else:
        fields = tuple((name, field.strip()) for name, field in value.items()
                       if name not in NOT_ARGUMENTS and isinstance(field, str))
        named = dict(fields)
        words = tuple(word for word in (named.get(name, "") for name in _ARG_FIELDS) if word)
        step = PlanStep(action.strip(), words, index, "", fields)
    if not isinstance(text, str) or not text.strip():
        text = step_text(step)
    return dataclasses.replace(step, text=text.strip())


def json_step_text(value: Mapping[str, Any]) -> str:
    """A JSON value given as a step in one line, for messages, even when it is no step: its
    action, then its "args" or its other text fields (`vocabulary.step_text` of what
    `step_from_json` reads)."""
    args = value.get("args")
    words = ([str(a).strip() for a in args] if isinstance(args, (list, tuple)) else
             [str(v).strip() for k, v in value.items()
              if k not in NOT_ARGUMENTS and isinstance(v, str)])
    return " ".join(w for w in (str(value.get("action", "") or "").strip(), *words) if w)


def step_of(action: str, args: Sequence[str], index: int = 0) -> PlanStep:
    """The step of `action` on the argument words `args`, numbered `index`, written
    `action arg ...`: a step the program makes itself (a probe, a planner's answer)."""
    return PlanStep(action, tuple(args), index, " ".join([action, *args]))


def step_from_text(text: str, index: int = 0) -> PlanStep:
    """One step's text as a `PlanStep` numbered `index` (see the module docstring); raises
    `PlanSyntaxError` when it holds no word."""
    words = text.strip().strip("()").split()
    if not words:
        raise PlanSyntaxError("the step is empty")
    return PlanStep(words[0], tuple(words[1:]), index, text.strip())


def step_from_value(value: Any, index: int = 0) -> PlanStep:
    """A step given as a value, a JSON object (`step_from_json`) or text (`step_from_text`),
    as a `PlanStep` numbered `index`; raises `PlanSyntaxError` for anything else."""
    if isinstance(value, Mapping):
        return step_from_json(value, index)
    if isinstance(value, str):
        return step_from_text(value, index)
    raise PlanSyntaxError("a step must be a PlanStep, a JSON object or text, "
                          f"not {type(value).__name__}")


def step_json(step: PlanStep) -> dict[str, Any]:
    """A step as `step_from_json` reads it back: `written_json` and its text."""
    return {**written_json(step), "text": step.text or " ".join([step.action, *step.args])}


def written_json(step: PlanStep) -> dict[str, Any]:
    """A step as planners write it (prompts, results rows, memory and trace files): its action
    and its named fields when it has them, else its `args`; `step_from_json` reads it back."""
    if step.fields:
        return {"action": step.action, **dict(step.fields)}
    return {"action": step.action, "args": list(step.args)}


# --- JSON ------------------------------------------------------------------------------------------

def _json_step(raw: object, index: int, file: str | None) -> PlanStep:
    where = f"step {index + 1}" + (f" of {file}" if file else "")
    if isinstance(raw, str):
        text = raw.strip()
        if not text:
            raise PlanSyntaxError(f"{where} is an empty string", text=raw)
        words_plan = _parse_lines(text, file, "plain")
        if len(words_plan.steps) != 1:
            raise PlanSyntaxError(f"{where} is not one step: {raw!r}", text=raw)
        step = words_plan.steps[0]
        return PlanStep(step.action, step.args, index, raw, ())
    if not isinstance(raw, dict):
        raise PlanSyntaxError(f"{where} is {type(raw).__name__}, expected an object with "
                              f"\"action\" or a string", text=json.dumps(raw)[:80])
    try:
        return step_from_json(raw, index)
    except PlanSyntaxError as error:
        what = ("has no \"action\" name" if error.message == NO_ACTION
                else f"is not a step: {error.message}")
        raise PlanSyntaxError(f"{where} {what}: {json.dumps(raw)[:120]}",
                              text=json.dumps(raw)[:120]) from None


def _parse_json(text: str, file: str | None, plan_id: str | None) -> Plan:
    where = f"plan {plan_id!r}: " if plan_id is not None else ""
    at = Location(file, 1, 1) if file else None
    try:
        data = load_json(text, file, "JSON plan")
    except PDDLSyntaxError as error:
        raise PlanSyntaxError(error.message, error.loc, text=error.text,
                              source_line=error.source_line) from None
    if isinstance(data, dict):
        if plan_id is not None:
            if plan_id not in data:
                raise PlanSyntaxError(f"no plan {plan_id!r} in {file or 'the JSON object'}"
                                      f" ({len(data)} plans)")
            data = data[plan_id]
        elif isinstance(data.get("steps"), list):
            data = data["steps"]
        else:
            by_id = data and all(isinstance(v, list) for v in data.values())
            raise PlanSyntaxError(
                f"{'the file' if file else 'the JSON object'} maps {len(data)} ids to plans; "
                f"name one as {file or 'FILE.json'}#ID" if by_id
                else "a JSON plan must be a list of steps or {\"steps\": [...]}", at)
    if not isinstance(data, list):
        raise PlanSyntaxError(f"{where}a JSON plan must be a list of steps, not "
                              f"{type(data).__name__}", at)
    if len(data) > limits.MAX_PLAN_STEPS:
        raise PlanSyntaxError(f"{where}{limits.too_many_steps(limits.MAX_PLAN_STEPS)}", at)
    steps = tuple(_json_step(raw, index, file) for index, raw in enumerate(data))
    return Plan(steps, source=text)


# --- entry points ----------------------------------------------------------------------------------

def _detect(text: str) -> str:
    stripped = text.lstrip()
    if stripped[:1] in ("[", "{"):
        return "json"
    for line in text.splitlines():
        body = _strip_comment(line).strip()
        if not body:
            continue
        if _TIMESTAMP.match(body):
            return "val"
        return "ipc" if body.startswith("(") else "plain"
    return "ipc"


def parse_plan(text: str, file: str | Path | None = None, format: str = "auto",
               plan_id: str | None = None) -> Plan:
    """Read a plan; `format` is one of `PLAN_FORMATS`. An empty text is the empty plan."""
    if format not in PLAN_FORMATS:
        raise SageError(f"unknown plan format {format!r}; choose one of {', '.join(PLAN_FORMATS)}")
    name = str(file) if file is not None else None
    if format != "auto":
        kind = format
    elif name is not None and name.lower().endswith(".json"):
        kind = "json"  # a .json file is JSON whatever it holds: `42` is no plain-lines plan
    else:
        kind = _detect(text)
    if kind == "json":
        return _parse_json(text, name, plan_id)
    return _parse_lines(text, name, kind)


def load_plan(ref: str | Path, format: str = "auto") -> Plan:
    """Read a plan file; `file.json#id` picks one plan of a JSON object of plans."""
    path, _, plan_id = str(ref).partition("#")
    text = read_text(path, "the plan file")
    return parse_plan(text, path, format=format, plan_id=plan_id or None)
