"""The environment protocol: what a planner's executor talks to.

An environment runs one episode at a time. `reset(problem)` starts an episode from a PDDL problem
and returns the first `Observation`; `step(step)` executes one plan step and returns a
`StepResult`. A planner learns about failures only through `StepResult.success` and
`StepResult.message`; `true_state()` and `goal_reached()` are for the harness (scoring, logging),
never for the planner.

Facts are ground atoms written as tuples of lower-case strings, the gate's form:
`("holding", "apple")`, `("hand-empty",)`. `format_fact` / `parse_fact` convert them to and from the
PDDL text form `(holding apple)` used in observations, logs and the wire protocol.
The dynamic predicates (those some action changes, `Vocabulary.effect_predicates`) are what
observations (and planners' state descriptions) show; the others are static properties.

`step` takes a `PlanStep`, the program's one step type: a caller holding JSON or text reads it
first (`pddl.plans.step_from_json`, `step_from_text`), as the runtime does with a planner's steps
and the thor-server with the steps it is sent.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import Atom, Constant, PlanStep, Problem, key

Fact = tuple[str, ...]


class EnvError(SageError):
    """An environment error: misuse (step before reset), unknown environment, bad option,
    backend failure. Failed *actions* are not errors: they are StepResults."""


@dataclass(frozen=True)
class Observation:
    """What the robot perceives after a reset or a step.

    `text` is the human/LLM-readable view, `visible_objects` the object names it can see
    (original spelling, sorted), `facts` the observable ground atoms (sorted tuples).
    """

    text: str
    visible_objects: tuple[str, ...] = ()
    facts: tuple[Fact, ...] = ()

    def to_json(self) -> dict:
        return {"text": self.text, "visible_objects": list(self.visible_objects),
                "facts": [format_fact(f) for f in self.facts]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Observation:
        return cls(text=str(data.get("text", "")),
                   visible_objects=tuple(str(o) for o in data.get("visible_objects", ())),
                   facts=tuple(parse_fact(f) for f in data.get("facts", ())))


@dataclass(frozen=True)
class StepResult:
    """The outcome of one step.

    `message` is what the executor reports ("ok" on success, the typed reason on failure);
    `code` is the stable reason code on failure (a gate code such as `pick/requires/reachable`,
    a structural code such as `unknown-object`, `injected-failure`, `object-gone`, or a
    simulator code), None on success. `step_index` is the 0-based attempt number in the episode.
    """

    success: bool
    message: str
    observation: Observation
    code: str | None = None
    step_index: int = 0

    def to_json(self) -> dict:
        return {"success": self.success, "message": self.message, "code": self.code,
                "step_index": self.step_index, "observation": self.observation.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StepResult:
        return cls(success=bool(data["success"]), message=str(data.get("message", "")),
                   observation=Observation.from_json(data.get("observation") or {}),
                   code=data.get("code"), step_index=int(data.get("step_index", 0)))


@runtime_checkable
class Environment(Protocol):
    """What every environment provides (symbolic, thor client, ai2thor, ...).

    `reset` takes at least the keywords `domain`, `task` and `scene` (an environment that has no
    use for one accepts and ignores it), so `run_episode` can pass a task's scene to any of them.
    """

    name: str

    def reset(self, problem: Problem, **options: Any) -> Observation: ...

    def step(self, step: PlanStep) -> StepResult: ...

    def true_state(self) -> frozenset[Fact]: ...

    def goal_reached(self) -> bool | None: ...

    def close(self) -> None: ...


# --- facts -------------------------------------------------------------------------------------

def format_fact(fact: Fact) -> str:
    """`("on", "apple", "table")` -> `(on apple table)`."""
    return "(" + " ".join(fact) + ")"


def parse_fact(value: Any) -> Fact:
    """Read a fact from `(on apple table)`, `["on", "apple", "table"]`, a tuple or a model Atom.

    Names are lower-cased (PDDL names are case-insensitive). Raises EnvError on anything else.
    """
    if isinstance(value, Atom):
        if not all(isinstance(a, Constant) for a in value.args):
            raise EnvError(f"fact {value} is not ground")
        return (key(value.predicate),) + tuple(key(a.name) for a in value.args)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return tuple(key(v) for v in value)
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("(") and text.endswith(")"):
            words = text[1:-1].split()
            if words and not any("(" in w or ")" in w for w in words):
                return tuple(key(w) for w in words)
    raise EnvError(f"cannot read a fact from {value!r}: expected '(predicate arg ...)'")


def parse_facts(values: Iterable[Any] | None) -> frozenset[Fact]:
    return frozenset(parse_fact(v) for v in (values or ()))


# --- steps -------------------------------------------------------------------------------------

def numbered(step: PlanStep, index: int) -> PlanStep:
    """`step` as the episode's attempt number `index`."""
    return step if step.index == index else dataclasses.replace(step, index=index)
