"""JSON schemas generated from the loaded domain and problem, for structured LLM output.

`steps_schema(domain, problem)` constrains a plan to `{"steps": [step, ...]}` where a step has
the form the domain's prompts show (`vocabulary.written_step`):

* `{"action", "object", "target"}` for a domain annotated `@sage fields object target` whose
  actions all fit it: `action` an enum of the action names, each field an enum of the objects
  and constants plus "" for an unused word;
* otherwise one alternative per action (`anyOf`) whose `action` is that action's name: an
  action shown with named fields gets those fields, as above; any other gets `args` with
  exactly one entry per parameter, each an enum of the objects and constants of that
  parameter's type (all of them when none is of the type, so the gate, not the schema, names
  the mistake).

A backend that honours the schema (Ollama's structured output) therefore cannot produce an
unknown action or object; for a backend that ignores it, the gate reports such names with the
typed codes `unknown-action` / `unknown-object`.

Other schemas: `subgoals_schema` (Decompose), `react_schema` (one step or done), `scores_schema`
(SayCan), `reasoned_steps_schema` (CoT: reasoning text, then steps), `goal_schema` (LLM+P).
"""
from __future__ import annotations

from typing import Any

from sage_pddl.pddl.model import Domain, Problem
from sage_pddl.pddl.validate import TypeHierarchy
from sage_pddl.pddl.vocabulary import vocabulary


def action_enum(domain: Domain) -> list[str]:
    return [a.name for a in domain.actions]


def object_enum(domain: Domain, problem: Problem) -> list[str]:
    seen: dict[str, str] = {}
    for typed in tuple(problem.objects) + tuple(domain.constants):
        seen.setdefault(typed.name.lower(), typed.name)
    return list(seen.values())


def step_item_schema(domain: Domain, problem: Problem) -> dict[str, Any]:
    vocab = vocabulary(domain)
    everything = object_enum(domain, problem)
    if vocab.named_fields and all(vocab.uses_fields(a) for a in domain.actions):
        return _fields_step_schema(vocab.named_fields, {"enum": action_enum(domain)},
                                   everything)
    hierarchy = TypeHierarchy(domain)
    typed = tuple(problem.objects) + tuple(domain.constants)
    alternatives = []
    for action in domain.actions:
        name = {"const": action.name}
        if vocab.uses_fields(action):
            alternatives.append(_fields_step_schema(vocab.named_fields, name, everything))
            continue
        positions = [{"type": "string",
                      "enum": list(dict.fromkeys(o.name for o in typed
                                                 if hierarchy.is_subtype(o.types, p.types)))
                      or everything} for p in action.parameters]
        args: dict[str, Any] = {"type": "array", "minItems": len(positions),
                                "maxItems": len(positions)}
        if positions:
            args["prefixItems"] = positions
        alternatives.append({"type": "object",
                             "properties": {"action": {"type": "string", **name}, "args": args},
                             "required": ["action", "args"], "additionalProperties": False})
    return {"anyOf": alternatives}


def _fields_step_schema(fields: tuple[str, ...], action: dict[str, Any], objects: list[str]
                        ) -> dict[str, Any]:
    """A named-field step: `action` constrained as given, each field an object or ""."""
    words = objects + [""]
    return {"type": "object",
            "properties": {"action": {"type": "string", **action},
                           **{name: {"type": "string", "enum": words} for name in fields}},
            "required": ["action", fields[0]], "additionalProperties": False}


def steps_schema(domain: Domain, problem: Problem, *, max_steps: int | None = None
                 ) -> dict[str, Any]:
    steps: dict[str, Any] = {"type": "array", "items": step_item_schema(domain, problem)}
    if max_steps:
        steps["maxItems"] = max_steps
    return {"type": "object", "properties": {"steps": steps}, "required": ["steps"],
            "additionalProperties": False}


def reasoned_steps_schema(domain: Domain, problem: Problem) -> dict[str, Any]:
    schema = steps_schema(domain, problem)
    schema["properties"] = {"reasoning": {"type": "string"}, **schema["properties"]}
    schema["required"] = ["reasoning", "steps"]
    return schema


def subgoals_schema(min_items: int = 2, max_items: int = 5) -> dict[str, Any]:
    return {"type": "object",
            "properties": {"subgoals": {"type": "array", "items": {"type": "string"},
                                        "minItems": min_items, "maxItems": max_items}},
            "required": ["subgoals"], "additionalProperties": False}


def react_schema(domain: Domain, problem: Problem) -> dict[str, Any]:
    item = step_item_schema(domain, problem)
    return {"type": "object",
            "properties": {"thought": {"type": "string"}, "done": {"type": "boolean"},
                           "step": item},
            "required": ["thought", "done"], "additionalProperties": False}


def scores_schema(count: int) -> dict[str, Any]:
    return {"type": "object",
            "properties": {"scores": {"type": "object",
                                      "properties": {str(i): {"type": "number", "minimum": 0,
                                                              "maximum": 1}
                                                     for i in range(count)}},
                           "done": {"type": "boolean"}},
            "required": ["scores", "done"], "additionalProperties": False}


def goal_schema() -> dict[str, Any]:
    return {"type": "object", "properties": {"goal": {"type": "string"}},
            "required": ["goal"], "additionalProperties": False}
