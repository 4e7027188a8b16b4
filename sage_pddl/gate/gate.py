"""Check plans against a compiled domain and problem: the precondition gate.

`compile_gate(domain, problem)` builds a `Gate`. `Gate.check(plan, state=None, mode="first")`
walks the plan from `state` (default: the problem's initial state): each step is bound to its
action and objects (`binding.py`) and ground (`table.py`); it is accepted when its ground
action is applicable in the current state, and then applied (`ground.py`). In mode "first"
checking stops at the first rejected step; in mode "all" it continues, skipping the rejected
step's effects. A rejected step is explained by one `Violation` per failed literal or
disjunction (`explain.py`; an `Explainer`, kept with the step, keeps what it said in each state
the step's precondition tells apart). The result is a `Verdict` (`verdict.py`).

Every check runs the same loop, on the bit-set form of the ground actions (`bits.py`): a
state is an int, a step a `ResolvedStep` made once per step content, whose successor is that
of its ground action on bit sets, derived from its sets (`bits.bit_step`). A step whose words
name several instances (`Open Cabinet` with `Cabinet_1`, `Cabinet_2`) acts on the first
candidate applicable in the current state, and is rejected with the first candidate's
violations when none is.

A gate is a value any number of threads may use at once. What it keeps (the steps it has
resolved, the masks of start states, the bits it has given atoms, what its explainers said, the
ground actions of its table) is filled under the gate's lock (its table's, `table.lock`) on a
miss only; a hit is a plain dictionary look-up, and what a look-up finds (a resolved step's
closures on ints, a mask) never changes once made. A check from a state whose static facts
differ from the problem's uses the gate's unpruned form (`for_state`): the same problem
compiled without the pruning by static facts, made once under that lock and kept with the gate,
so every thread and every world asking gets the same one.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any, NamedTuple

from ..pddl.built_once import keep_bounded
from ..pddl.errors import SageError
from ..pddl.model import And, Domain, Plan, PlanStep, Problem
from ..pddl.vocabulary import NOT_ARGUMENTS, Vocabulary
from .binding import StepBinder, text_of
from .bits import BitSets, Successor, bit_step
from .explain import Explainer, explain, failure_text, failures
from .ground import Atoms, Cond, GroundAction, GroundAtom, State
from .table import PreconditionTable
from .verdict import Reading, StepRejected, Verdict, Violation

MODES = ("first", "all")

NOTHING: Atoms = frozenset()

STEPS_KEPT = 4096
"""Distinct steps one gate keeps resolved to their bit-set form (`Gate._steps`), at most; the
oldest is forgotten first."""

STATES_KEPT = 64
"""Given start states one gate keeps the bit-set mask of (`Gate._start_masks`), at most; the
oldest is forgotten first."""


class ResolvedStep(NamedTuple):
    """A step as the check loop uses it, made once per step content (`Gate._resolve`)."""

    successor: Callable[[int], int | None]
    """The bit-set state after the step from the state `s`; None where it is refused."""
    violations: Callable[[int, int], Sequence[Violation]]
    """Why the step is refused in the state `s`, as the violations of step `index`."""


def _refused(s: int) -> None:
    """The successor of a step that is no ground action: refused in every state."""
    return None


def _structural(violation: Violation, s: int, index: int) -> tuple[Violation]:
    """The violations of a step that is no ground action: its structural one, in every state."""
    return (violation.at(index),)


def _first_successor(candidates: tuple[Successor, ...], s: int) -> int | None:
    """The successor of a step naming several instances: that of its first candidate
    applicable in `s`."""
    for candidate in candidates:
        after = candidate(s)
        if after is not None:
            return after
    return None


class Gate:
    """A domain and problem compiled for checking plans (see the module docstring)."""

    def __init__(self, table: PreconditionTable):
        self.table = table
        self.binder = StepBinder(table)
        # a pruned table's gate checks only states with the problem's static facts
        # (`for_state`): their atoms need no bits
        self.bits = (BitSets(table.dynamic, table.initial_state) if table.prune_static
                     else BitSets())
        self._steps: dict[Any, ResolvedStep] = {}
        """A step's content (`StepBinder.cache_key`) -> its `ResolvedStep` (`STEPS_KEPT`)."""
        self._start_masks: dict[Atoms, int] = {}
        """A given start state, with the problem's static facts -> its mask (`STATES_KEPT`)."""
        self._unpruned: Gate | None = None
        self._lock = table.lock
        """Held while anything the gate keeps is filled (see the module docstring)."""
        with self._lock:  # the initial state's atoms get the first bits, then the goal's
            self._initial_mask = self.bits.first_mask(table.initial_state)
            self._goal_test = self._goal_on_bits()
            self._goal_parts: tuple[Cond, ...] | None = None

    @property
    def vocabulary(self) -> Vocabulary:
        return self.table.vocabulary

    @property
    def domain(self) -> Domain:
        return self.table.domain

    @property
    def problem(self) -> Problem:
        return self.table.problem

    @property
    def initial_state(self) -> Atoms:
        return self.table.initial_state

    @property
    def objects(self) -> dict[str, str]:
        """Object key -> original spelling."""
        return self.table.objects.object_names

    def format_atom(self, atom: GroundAtom) -> str:
        return self.table.objects.format_atom(atom)

    def for_state(self, state: Iterable[tuple[Any, ...]]) -> Gate:
        """The form of this gate to use from `state`: itself when `state` has the problem's
        static facts (what grounding prunes by), else its unpruned form (see the module
        docstring), one per gate, made on first use."""
        if not self.table.prune_static or self.table.agrees_on_static(self._state(state)):
            return self
        unpruned = self._unpruned
        if unpruned is None:
            with self._lock:
                unpruned = self._unpruned
                if unpruned is None:
                    unpruned = self._unpruned = Gate(PreconditionTable(
                        self.domain, self.problem, prune_static=False))
        return unpruned

    # -- steps -> ground actions ----------------------------------------------------------

    def _candidates(self, step: Any, index: int) -> tuple[GroundAction, ...]:
        """The ground actions a step may act on, in order; raises `StepRejected`."""
        bound = self.binder.bind(step, index)
        return tuple(self.table.ground(bound.action, objects) for objects in bound.candidates)

    def ground(self, step: PlanStep, index: int = 0,
               state: Atoms | None = None) -> GroundAction:
        """The ground action a step names; raises `StepRejected` with a structural violation.
        A step naming several instances acts on the first whose action is applicable in
        `state` (default: the initial state), as in `check`; from a state with other static
        facts, its ground actions are those of `for_state`."""
        current = self.initial_state if state is None else self._state(state)
        gate = self if state is None else self.for_state(current)
        try:
            candidates = gate._candidates(step, index)
        except StepRejected as rejected:
            raise StepRejected(rejected.violation.at(index)) from None
        return next((g for g in candidates if g.applicable(current)), candidates[0])

    def readings(self, plan: Any, state: Iterable[tuple[Any, ...]] | None = None
                 ) -> tuple[Reading, ...]:
        """The words of `plan` that name objects through the domain's synonym table, each with
        the name it was read as and the object the step took, the plan run from `state` as
        `check` runs it (a rejected step changes nothing): what a verdict's steps acted on
        where the plan said a synonym."""
        names = self.binder.names
        current = self.initial_state if state is None else self._state(state)
        out = []
        for index, step in enumerate(self.plan_steps(plan)):
            try:
                _, args, fields = self.binder.words(step, index)
                ground = self.ground(step, index, current)
            except StepRejected:
                continue
            words = args if args is not None else tuple(
                v for k, v in fields if v and k not in NOT_ARGUMENTS)
            for word in words:
                read = names.synonym(word)
                if read is not None:
                    taken = next((a for a in ground.args if a in read.objects), read.objects[0])
                    out.append(Reading(index, word, read.name, names.spelling[taken]))
            if ground.applicable(current):
                current = ground.apply(current)
        return tuple(out)

    # -- checking -------------------------------------------------------------------------

    def plan_steps(self, plan: Any) -> Sequence[Any]:
        if isinstance(plan, Plan):
            return plan.steps
        if isinstance(plan, str):
            # start-up time: the parser (Lark) loads only for plans given as text
            from ..pddl import parse_plan
            return parse_plan(plan).steps
        if isinstance(plan, dict) and isinstance(plan.get("steps"), list):
            steps: list[Any] = plan["steps"]
            return steps
        return plan if isinstance(plan, Sequence) else list(plan)

    def check(self, plan: Any, state: Iterable[tuple[Any, ...]] | None = None,
              mode: str = "first") -> Verdict:
        """Check `plan` (a Plan, a sequence of PlanSteps or JSON step dicts, or plan text) from
        `state` (default: the problem's initial state). Mode "first" stops at the first rejected
        step; mode "all" goes on, skipping the rejected step's effects, and its verdict also
        holds the one mode "first" would give (`Verdict.first_refusal`), so that no caller
        checks a plan twice."""
        if mode not in MODES:
            raise SageError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        if state is None:
            start, start_mask = self.table.initial_state, self._initial_mask
        else:
            start = self._state(state)
            found = self._start_masks.get(start)
            if found is None:
                gate = self.for_state(start)
                if gate is not self:
                    return gate.check(plan, start, mode)
                with self._lock:
                    found = self.bits.mask(start)
                    keep_bounded(self._start_masks, STATES_KEPT, start, found)
            start_mask = found
        s = start_mask
        violations: list[Violation] = []
        refused: tuple[int, int, int] | None = None  # (state, index, violations until then)
        index = -1
        steps = self._steps
        cache_key = self.binder.cache_key
        for index, step in enumerate(plan if type(plan) is list else self.plan_steps(plan)):
            step_key = cache_key(step)
            try:
                resolved = steps.get(step_key)
            except TypeError:  # a JSON step with a list of args: its key made hashable
                step_key = self.binder.hashable_key(step_key)
                resolved = None if step_key is None else steps.get(step_key)
            if resolved is None:  # (a look-up, not an exception: most steps of a first check)
                resolved = self._resolve(step, index, step_key)
            after = resolved.successor(s)
            if after is not None:
                s = after
                continue
            with self._lock:  # (its explainer keeps what it says)
                violations += resolved.violations(s, index)
            if mode == "first":
                break
            if refused is None:  # where a check in mode "first" stops
                refused = (s, index, len(violations))
        first_refusal = None
        if refused is not None:
            at, stop, count = refused
            first_refusal = self._verdict(start, start_mask, at, stop, violations[:count], None)
        return self._verdict(start, start_mask, s, index, violations, first_refusal)

    def _verdict(self, start: Atoms, start_mask: int, s: int, index: int,
                 violations: Sequence[Violation], first_refusal: Verdict | None) -> Verdict:
        """The verdict of a check that started in `start` (`start_mask`) and stopped in `s`
        after step `index`."""
        goal = self._goal_test
        changed = NOTHING if s == start_mask else frozenset(self.bits.atoms_of(start_mask ^ s))
        return Verdict(not violations, index + 1, start, changed,
                       None if goal is None else goal(s), tuple(violations), first_refusal)

    def _goal_on_bits(self) -> Callable[[int], bool] | None:
        """The goal on bit-set states (None when the problem has no goal)."""
        sets = self.table.goal.sets
        if sets is not None:
            goal: Cond | None = Cond(sets[0], sets[1])
        else:
            goal = self.table.goal.ground
        return None if goal is None else self.bits.cond_test(goal)

    def _resolve(self, step: Any, index: int, step_key: Any) -> ResolvedStep:
        """A new step's `ResolvedStep`, kept under its hashable content `step_key`
        (`StepBinder.cache_key`; never the step object, so a step edited in place is resolved
        afresh; None: not kept), made under the gate's lock (by the first thread to ask)."""
        with self._lock:
            found = None if step_key is None else self._steps.get(step_key)
            return found or self._resolved(step, index, step_key)

    def _resolved(self, step: Any, index: int, step_key: Any) -> ResolvedStep:
        try:
            candidates = self._candidates(step, index)
        except StepRejected as rejected:
            found = ResolvedStep(_refused, partial(_structural, rejected.violation))
        else:
            successors = tuple(bit_step(self.bits, g) for g in candidates)
            successor = (successors[0] if len(successors) == 1
                         else partial(_first_successor, successors))
            explainer = Explainer(self.table, self.bits, candidates[0], text_of(step))
            found = ResolvedStep(successor, explainer.violations)
        if step_key is not None:
            keep_bounded(self._steps, STEPS_KEPT, step_key, found)
        return found

    def _state(self, state: Iterable[tuple[Any, ...]]) -> Atoms:
        if isinstance(state, frozenset):
            return state
        return frozenset(tuple(str(p).lower() for p in atom) for atom in state)

    # -- one step, on sets ----------------------------------------------------------------

    def applicable(self, state: Atoms, ground: GroundAction, index: int = 0,
                   step_text: str = "") -> Violation | None:
        """None when `ground` can run in `state`, else its first violation."""
        if ground.applicable(state):
            return None
        return self.explain(state, ground, index, step_text)[0]

    def apply(self, state: Atoms, ground: GroundAction) -> Atoms:
        return ground.apply(state)

    def explain(self, state: Atoms, ground: GroundAction, index: int = 0,
                step_text: str = "") -> list[Violation]:
        """One violation per failed literal or disjunction of `ground`'s precondition."""
        with self._lock:  # (the table keeps the canonical texts it writes)
            return explain(self.table, state, ground, index, step_text)

    # -- the goal -------------------------------------------------------------------------

    def goal_holds(self, state: State) -> bool:
        """Whether the goal holds (True when the problem has no goal)."""
        return self.table.goal.holds_in(state) is not False

    def goal_conditions(self, state: State) -> tuple[int, int]:
        """(met, total) over the goal's top-level conjuncts in `state` (a goal that is not a
        conjunction is one condition; no goal: (0, 0)). Goal-condition success, as ALFRED and
        the Embodied Agent Interface score it, is met / total."""
        met = self.goal_report(state)
        return sum(1 for _, holds in met if holds), len(met)

    def goal_report(self, state: State) -> list[tuple[Any, bool]]:
        """Each top-level goal conjunct (the problem's formula, as written) with whether it
        holds in `state`: what `goal_conditions` counts, one by one (no goal: [])."""
        goal = self.table.problem.goal
        formulas = goal.parts if isinstance(goal, And) else (goal,)
        parts = self._goal_parts
        if parts is None:
            with self._lock:
                parts = self._goal_parts = self._goal_parts or tuple(
                    self.table.ground_condition(part, {}, anchor="") for part in formulas)
        return [(formula, part.holds(state)) for formula, part in zip(formulas, parts)]

    def goal_unmet(self, state: State) -> list[str]:
        """The goal's failed literals/disjunctions as PDDL text (empty when it holds)."""
        with self._lock:  # (the table grounds its goal, and its texts, on first use)
            if self.table.goal.ground is None:
                return []
            return [failure_text(self.table, f) for f in failures(self.table.goal.ground, state)]


def compile_gate(domain: Domain, problem: Problem) -> Gate:
    """Compile `domain` and `problem` into a `Gate` (raises UnsupportedConstruct)."""
    return Gate(PreconditionTable(domain, problem))

