"""Mutants of reference plans: one plan error of a known class each, with the code it must get.

Every reference plan of a task set is valid on its problem; each mutation below breaks it in
one place so that a named precondition fails at a known step, and the gate must reject the
mutant there with the class's code (`MUTATION_CLASSES`). Sites are chosen from the plan and from
the states the reference passes through (computed with the gate from the problem's initial
state), so a mutant is generated only where its error is real: "Close C" is inserted only where
C is closed at that point.

    pick-while-holding         Pick Y right after a Pick                      hand-full
    place-empty-hand           Place/PutIn with nothing held (prepended, or   hand-empty
                               the Pick before a Place removed)
    putin-closed-container     PutIn C with C closed (the Open before a       container-closed
                               PutIn removed, or PutIn of a closed container
                               right after a Pick)
    pick-from-closed-container Pick X inside a closed C (the Open before   shut-in
                               it removed, or X taken back after Close C)
    pick-non-pickupable        Pick of a non-pickupable object                not-pickupable
    open-non-openable          Open X after MoveTo X, X not openable          not-openable
    turnon-non-toggleable      TurnOn X after MoveTo X, X not toggleable      not-toggleable
    close-closed               Close C where C is closed                      already-closed
    turnoff-off                TurnOff X where X is off                       already-off
    no-locate                  every MoveTo/Find of X before the first        not-reachable
                               interaction with X removed, X out of reach
    unknown-action             the first step's verb replaced ("Teleport")    unknown-action
    absent-object              the first step's object replaced by an         unknown-object
                               AI2-THOR type absent from the scene

`plan_mutants(domain, problem, steps, task_id)` yields at most `per_class` mutants per class
(first sites first), so the suite stays small and deterministic.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ..gate.gate import Gate, compile_gate
from ..gate.interface import PlanChecker
from ..pddl.errors import PlanSyntaxError
from ..pddl.model import Domain, PlanStep, Problem
from ..pddl.plans import step_from_json, written_json
from ..pddl.vocabulary import name_key
from . import catalogue
from .taskset import reference_plan

MUTATION_CLASSES: dict[str, str] = {
    "pick-while-holding": "hand-full",
    "place-empty-hand": "hand-empty",
    "putin-closed-container": "container-closed",
    "pick-from-closed-container": "shut-in",
    "pick-non-pickupable": "not-pickupable",
    "open-non-openable": "not-openable",
    "turnon-non-toggleable": "not-toggleable",
    "close-closed": "already-closed",
    "turnoff-off": "already-off",
    "no-locate": "not-reachable",
    "unknown-action": "unknown-action",
    "absent-object": "unknown-object",
}

_INTERACTIONS = {"pick", "open", "close", "turnon", "turnoff"}
_LOCATE = {"moveto", "find"}


@dataclass(frozen=True)
class Mutant:
    task_id: str
    kind: str
    steps: tuple[PlanStep, ...]
    step: int
    """0-based index of the step that must be rejected."""
    description: str

    @property
    def expected_code(self) -> str:
        return MUTATION_CLASSES[self.kind]


def _step(action: str, obj: str = "") -> PlanStep:
    return step_from_json({"action": action, "object": obj, "target": ""})


def _changed(step: PlanStep, **fields: str) -> PlanStep:
    """`step` with some of its JSON fields replaced, read again (its text follows)."""
    return step_from_json({**written_json(step), **fields})


def plan_mutants(domain: Domain, problem: Problem, steps: Sequence[Mapping[str, str]],
                 task_id: str = "", per_class: int = 1, gate: Gate | None = None
                 ) -> list[Mutant]:
    """Mutants of a valid reference plan (see the module docstring); `gate` may be given."""
    if gate is None:
        gate = compile_gate(domain, problem)
    try:
        plan = reference_plan(steps, domain)
    except PlanSyntaxError:  # a reference that is no plan has no mutants
        return []
    if not plan or not gate.check(plan).valid:
        return []
    names = {o.name.lower(): o.name for o in problem.objects}
    grounds = [gate.ground(step) for step in plan]
    states = [gate.initial_state]
    for ground in grounds:
        states.append(gate.apply(states[-1], ground))
    init = gate.initial_state

    def has(predicate: str, obj: str, state=init) -> bool:
        return (predicate, obj.lower()) in state

    things = [o.name for o in problem.objects if "thing" in o.types or not o.types]
    rooms = any(atom[0] == "here" for atom in init)  # ProcTHOR: targets must be in the room
    actions = [name_key(s.action) for s in plan]
    targets = [names.get(g.args[0], g.args[0]) if g.args else "" for g in grounds]
    found: dict[str, list[Mutant]] = {k: [] for k in MUTATION_CLASSES}

    def add(kind: str, mutated: list[PlanStep], at: int, description: str) -> None:
        if len(found[kind]) < per_class:
            found[kind].append(Mutant(task_id, kind, tuple(mutated), at, description))

    def prefix_state(mutated: list[PlanStep], upto: int):
        """State before step `upto` of a mutant whose prefix must be valid, else None."""
        verdict = gate.check(mutated[:upto])
        return verdict.final_state if verdict.valid else None

    def without_last(kind: str, i: int, earlier: list[int], description: str) -> None:
        """The mutant without the last of the `earlier` steps (indices before step `i`), kept
        when every step before step `i` still applies without it."""
        if earlier:
            j = earlier[-1]
            mutated = plan[:j] + plan[j + 1:]
            if prefix_state(mutated, i - 1) is not None:
                add(kind, mutated, i - 1, f"{description} of step {j + 1}")

    for i, (act, x) in enumerate(zip(actions, targets)):
        after = states[i + 1]
        # pick-while-holding
        if act == "pick":
            others = [t for t in things if t != x and has("pickupable", t)]
            if others:
                add("pick-while-holding", plan[:i + 1] + [_step("Pick", others[0])] + plan[i + 1:],
                    i + 1, f"Pick {others[0]} while holding {x}")
            held = x
            receptacles = [t for t in things if has("receptacle", t) and has("closed", t, after)
                           and t != held and (not rooms or has("here", t, after))]
            if receptacles:
                c = receptacles[0]
                add("putin-closed-container",
                    plan[:i + 1] + [_step("PutIn", c)] + plan[i + 1:], i + 1,
                    f"PutIn {c} while {c} is closed")
            non = [t for t in things if not has("pickupable", t)]
            if non:
                choice = next((t for t in targets if t in non), non[0])
                mutated = list(plan)
                mutated[i] = _step("Pick", choice)
                add("pick-non-pickupable", mutated, i, f"Pick {choice} (not pickupable)")
        # place-empty-hand: remove the Pick before a Place/PutIn
        if act in ("place", "putin", "serve"):
            without_last("place-empty-hand", i, [j for j in range(i) if actions[j] == "pick"],
                         f"{plan[i].action} {x} without the Pick")
        if act == "putin":
            without_last("putin-closed-container", i,
                         [j for j in range(i) if actions[j] == "open" and targets[j] == x],
                         f"PutIn {x} without the Open")
        # pick-from-closed-container
        if act == "pick":
            containers = [t for t in things if (("inside", x.lower(), t.lower()) in init)
                          and has("openable", t)]
            for c in containers:
                without_last("pick-from-closed-container", i,
                             [j for j in range(i) if actions[j] == "open" and targets[j] == c],
                             f"Pick {x} from {c} without the Open")
        if act == "close":
            inside = [t for t in things if ("inside", t.lower(), x.lower()) in after
                      and has("pickupable", t) and has("reachable", t, after)]
            if inside and ("hand-empty",) in after:
                add("pick-from-closed-container",
                    plan[:i + 1] + [_step("Pick", inside[0])] + plan[i + 1:], i + 1,
                    f"Pick {inside[0]} back out of the closed {x}")
            add("close-closed", plan[:i + 1] + [_step("Close", x)] + plan[i + 1:], i + 1,
                f"Close {x} twice")
        if act == "turnoff":
            add("turnoff-off", plan[:i + 1] + [_step("TurnOff", x)] + plan[i + 1:], i + 1,
                f"TurnOff {x} twice")
        # after locating X: interactions X does not afford, or whose state is already there
        if act in _LOCATE and x in things:
            rest = plan[i + 1:]
            head = plan[:i + 1]
            if not has("openable", x):
                add("open-non-openable", head + [_step("Open", x)] + rest, i + 1,
                    f"Open {x} (not openable)")
            if not has("toggleable", x):
                add("turnon-non-toggleable", head + [_step("TurnOn", x)] + rest, i + 1,
                    f"TurnOn {x} (not toggleable)")
            if has("closed", x, after):
                add("close-closed", head + [_step("Close", x)] + rest, i + 1,
                    f"Close {x} while closed")
            if has("toggleable", x) and not has("turned-on", x, after):
                add("turnoff-off", head + [_step("TurnOff", x)] + rest, i + 1,
                    f"TurnOff {x} while off")
        # no-locate: drop every earlier MoveTo/Find of X
        if act in _INTERACTIONS and not any(
                actions[j] in _INTERACTIONS and targets[j] == x for j in range(i)):
            dropped = [j for j in range(i) if actions[j] in _LOCATE and targets[j] == x]
            if dropped:
                mutated = [s for j, s in enumerate(plan) if j not in dropped]
                at = i - len(dropped)
                state = prefix_state(mutated, at)
                if state is not None and ("reachable", x.lower()) not in state:
                    add("no-locate", mutated, at,
                        f"{plan[i].action} {x} without locating it first")

    # place-empty-hand at the start: nothing is held yet
    if ("hand-empty",) in init:
        receptacles = [t for t in things if has("receptacle", t)]
        if receptacles:
            used = [t for t, a in zip(targets, actions) if a in ("place", "putin")]
            r = used[0] if used else receptacles[0]
            add("place-empty-hand", [_step("Place", r)] + plan, 0, f"Place {r} with an empty hand")
    # unknown action / absent object on the first step
    first = plan[0]
    add("unknown-action", [_changed(first, action="Teleport")] + plan[1:], 0,
        f"Teleport instead of {first.action}")
    if grounds[0].args:
        present = {t.lower() for t in names}
        absent = next(t.name for t in sorted(catalogue.CATALOGUE.values(), key=lambda t: t.name)
                      if t.name.lower() not in present)
        add("absent-object", [_changed(first, object=absent, target="")] + plan[1:], 0,
            f"{first.action} {absent} (not in the scene)")
    return [m for kind in MUTATION_CLASSES for m in found[kind]]


class Detection(NamedTuple):
    """What a compiled gate makes of one mutant (`detect`): the gate's first violation only."""

    at_step: bool
    """The first violation is at the mutated step (`Mutant.step`)."""
    with_code: bool
    """The first violation is at the mutated step and has the class's code
    (`Mutant.expected_code`): the mutant is detected."""
    code: str
    """The first violation's code, or "accepted" when the gate finds none."""


def detect(gate: PlanChecker, mutant: Mutant) -> Detection:
    """Check a mutant with a compiled gate of its problem (see `Detection`)."""
    verdict = gate.check(list(mutant.steps), mode="first")
    if not verdict.violations:
        return Detection(at_step=False, with_code=False, code="accepted")
    first = verdict.violations[0]
    at_step = first.step == mutant.step
    return Detection(at_step=at_step, with_code=at_step and first.code == mutant.expected_code,
                     code=first.code)
