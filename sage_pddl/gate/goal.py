"""A problem's goal as the gate reads it: `ProblemGoal`.

An empty conjunction is no goal (`present` False: every state is fine). A goal that is a
conjunction of ground literals is two atom sets (`sets`, `Problem.goal_literals`: the atoms that
must hold and those that must not); any other goal is ground once, like a
precondition, with every literal's source (`ground`, what a report of the unmet goal reads),
at compile time for a complex goal (its errors are compile errors), else when first read.
Whether it holds in a state is the engine's to say (`Gate.goal_holds`). The
canonical texts of the goal's own nodes are written here, so they die with the problem (the
domain's are its vocabulary's).
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cached_property

from ..pddl.model import And, Problem, walk
from ..pddl.vocabulary import canonical_sexpr
from ..pddl.writer import write_formula
from .ground import Cond

GroundCondition = Callable[[object, dict[str, str], str | None], Cond]
"""`PreconditionTable.ground_condition`: a formula, its variables' objects and an anchor ->
the ground condition."""


class ProblemGoal:
    """The goal of a problem (see the module docstring)."""

    def __init__(self, problem: Problem, ground_condition: GroundCondition,
                 lock: threading.RLock):
        self.problem = problem
        goal = problem.goal
        self.present = not (type(goal) is And and not goal.parts)
        """False when the goal is the empty conjunction (no goal)."""
        self.sets = problem.goal_literals if self.present else None
        """The goal as `(pos, neg)` atom sets when it is a conjunction of ground literals,
        else None."""
        self._ground_condition = ground_condition
        self._lock = lock
        self._ground: Cond | None = None

    @property
    def is_complex(self) -> bool:
        """A goal that is no conjunction of ground literals (it is ground, not two sets)."""
        return self.present and self.sets is None

    @property
    def ground(self) -> Cond | None:
        """The ground goal with every literal's source; None when there is no goal. Made once,
        under the table's lock."""
        if self._ground is None and self.present:
            with self._lock:
                if self._ground is None:
                    self._ground = self._ground_condition(self.problem.goal, {}, "")
        return self._ground

    def text_of(self, node: object, positive: bool = True) -> str | None:
        """The canonical text of a node of the goal (None: the node is not the goal's)."""
        if id(node) not in self._nodes:
            return None
        text = self._texts.get(id(node))
        if text is None:
            text = self._texts[id(node)] = canonical_sexpr(write_formula(node))
        return text if positive else f"(not {text})"

    @cached_property
    def _nodes(self) -> frozenset[int]:
        """The ids of the nodes of the problem's goal (which the problem keeps alive)."""
        return frozenset(map(id, walk(self.problem.goal)))

    @cached_property
    def _texts(self) -> dict[int, str]:
        """id(goal node) -> its canonical text, made when first asked for (the same text
        whichever thread writes it)."""
        return {}
