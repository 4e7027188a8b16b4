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

`step` accepts a `PlanStep`, a JSON-style step dict (`{"action", "object", "target"}` or
`{"action", "args"}`) or a one-step text (`Pick Apple`, `(pick apple)`); `as_plan_step` does the
conversion with the parser's rules so every environment reads steps the same way.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import Atom, Constant, PlanStep, Problem, StepLike, key

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

    def step(self, step: StepLike) -> StepResult: ...

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

def as_plan_step(step: StepLike, index: int = 0) -> PlanStep:
    """Convert a step in any accepted form into a PlanStep with the given index.

    The rules are the gate's (`Gate.ground`): a dict's string fields other than `action` are kept
    as `fields` and its non-empty `object` then `target` are the args (a dict with `args` and no
    object/target is positional); text is `Action Arg ...` or `(action arg ...)`.
    Raises EnvError for anything that is not a step.
    """
    if isinstance(step, PlanStep):
        if step.index == index:
            return step
        return PlanStep(step.action, step.args, index, step.text, step.fields, step.loc)
    if isinstance(step, Mapping):
        action = step.get("action")
        if not isinstance(action, str) or not action.strip():
            raise EnvError(f"step {dict(step)!r} has no action name")
        if "args" in step and "object" not in step and "target" not in step:
            args = step.get("args") or []
            if not isinstance(args, (list, tuple)) or not all(isinstance(a, str) for a in args):
                raise EnvError(f"step {dict(step)!r}: 'args' must be a list of names")
            args = tuple(a.strip() for a in args)
            text = str(step.get("text") or " ".join([action.strip(), *args]))
            return PlanStep(action.strip(), args, index, text)
        fields = tuple((k, v.strip()) for k, v in step.items()
                       if k not in ("action", "text") and isinstance(v, str))
        args = tuple(v for k, v in fields if k in ("object", "target") and v)
        text = str(step.get("text") or " ".join([action.strip(), *args]))
        return PlanStep(action.strip(), args, index, text, fields)
    if isinstance(step, str):
        words = step.strip().strip("()").split()
        if not words:
            raise EnvError("the step is empty")
        return PlanStep(words[0], tuple(words[1:]), index, step.strip())
    raise EnvError(f"cannot read a plan step from {step!r}")


def step_json(step: PlanStep) -> dict:
    """The `action` record of a transition / wire message: {action, args, text}."""
    return {"action": step.action, "args": list(step.args),
            "text": step.text or " ".join([step.action, *step.args])}
