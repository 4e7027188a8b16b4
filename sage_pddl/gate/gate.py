"""Check plans against a compiled domain and problem: the precondition gate.

`compile_gate(domain, problem)` builds a `Gate`. `Gate.check(plan, state=None, mode="first")`
walks the plan from `state` (default: the problem's initial state): each step is bound to its
action and objects (`binding.py`) and ground (`table.py`); it is accepted when its ground
action applies in the current state, and then applied. In mode "first"
checking stops at the first rejected step; in mode "all" it continues, skipping the rejected
step's effects. A rejected step is explained by one `Violation` per failed literal or
disjunction (`explain.py`; an `Explainer`, kept with the step, keeps what it said in each state
the step's precondition tells apart). The result is a `Verdict` (`verdict.py`).

Every check runs the same loop, on the one engine (`engine.py`): a state is an int (`bits.py`),
a step a `ResolvedStep` made once per step content, whose successor is that of its ground
action compiled once per gate (`engine.compile_step`). The methods that take and give sets
(`ground`, `applies`, `applicable`, `effects`, `apply`, `explain`, `precondition_holds`, the
goal's) run the same compiled steps and conditions on the state's mask: nothing else in the
program executes a step. A step whose words name several instances (`Open Cabinet` with
`Cabinet_1`, `Cabinet_2`) acts on the first candidate applicable in the current state, and is
rejected with the first candidate's violations when none is.

A gate is a value any number of threads may use at once. What it keeps (the steps it has
resolved, its compiled steps and conditions, the masks of states it was given, the bits it has
given atoms, what its explainers said, the ground actions of its table) is filled under the
gate's lock (its table's, `table.lock`) on a miss only; a hit is a plain dictionary look-up,
and what a look-up finds (a resolved step's closures on ints, a mask) never changes once made.
A check from a state whose static facts differ from the problem's uses the gate's unpruned
form (`for_state`): the same problem compiled without the pruning by static facts, made once
under that lock and kept with the gate, so every thread and every world asking gets the same
one.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from itertools import repeat
from typing import Any, NamedTuple

from ..pddl.built_once import keep_bounded
from ..pddl.errors import SageError
from ..pddl.model import Action, And, Domain, Plan, PlanStep, Problem
from ..pddl.vocabulary import NOT_ARGUMENTS, Vocabulary
from .binding import StepBinder, text_of
from .bits import BitSets
from .engine import (
    CompiledCond,
    CompiledStep,
    Successor,
    compile_cond,
    compile_plain,
    compile_step,
)
from .explain import Explainer, failure_text, violations
from .ground import AnyOf, Atoms, Cond, GroundAction, GroundAtom, GroundLiteral, State
from .lifted import ActionTemplate
from .table import PreconditionTable
from .verdict import Reading, StepRejected, Verdict, Violation

MODES = ("first", "all")

NOTHING: Atoms = frozenset()

STEPS_KEPT = 4096
"""Distinct steps one gate keeps resolved to their bit-set form (`Gate._steps`), at most; the
oldest is forgotten first."""

STATES_KEPT = 64
"""Given states one gate keeps the bit-set mask of (`Gate._start_masks`), at most; the
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


def _given(ground: GroundAction) -> GroundAction:
    """The ground action a step was compiled from, as `CompiledStep.source` gives it."""
    return ground


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
        """A given state, with the problem's static facts -> its mask (`STATES_KEPT`)."""
        self._compiled: dict[tuple[str, tuple[str, ...]], CompiledStep] = {}
        """(action name, object keys) -> its ground action compiled (`STEPS_KEPT`)."""
        self._conditions: dict[Any, CompiledCond] = {}
        """(action name, object keys) -> its precondition compiled alone
        (`precondition_holds`); "goal" -> the ground goal; ("goal", i) -> its i-th conjunct
        (`STEPS_KEPT`)."""
        self._unpruned: Gate | None = None
        self._lock = table.lock
        """Held while anything the gate keeps is filled (see the module docstring)."""
        with self._lock:  # the initial state's atoms get the first bits, then the goal's
            self._initial_mask = self.bits.first_mask(table.initial_state)
            self._goal_test = self._goal_on_bits()

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

    def objects_of(self, types: tuple[str, ...]) -> tuple[str, ...]:
        """The keys of the objects that fit a parameter typed `types` (() = any), in
        declaration order."""
        return self.table.objects.objects_of(types)

    def format_atom(self, atom: GroundAtom) -> str:
        """`atom` in the domain's and problem's spelling (`ProblemObjects.format_atom`)."""
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
        action, candidates = self.binder.bind(step, index)
        return tuple(map(self.table.ground, repeat(action), candidates))

    def ground(self, step: PlanStep, index: int = 0,
               state: Atoms | None = None) -> GroundAction:
        """The ground action a step names; raises `StepRejected` with a structural violation.
        A step naming several instances acts on the first whose action is applicable in
        `state` (default: the initial state), as in `check`; from a state with other static
        facts, its ground actions are those of `for_state`."""
        gate, s = (self, self._initial_mask) if state is None else self._masked(state)
        return gate._ground_in(step, index, s)

    def _ground_in(self, step: PlanStep, index: int, s: int) -> GroundAction:
        """`ground` from the bit-set state `s` of this gate."""
        try:
            candidates = self._candidates(step, index)
        except StepRejected as rejected:
            raise StepRejected(rejected.violation.at(index)) from None
        return next((g for g in candidates if self.compiled(g).successor(s) is not None),
                    candidates[0])

    def readings(self, plan: Any, state: Iterable[tuple[Any, ...]] | None = None
                 ) -> tuple[Reading, ...]:
        """The words of `plan` that name objects through the domain's synonym table, each with
        the name it was read as and the object the step took, the plan run from `state` as
        `check` runs it (a rejected step changes nothing): what a verdict's steps acted on
        where the plan said a synonym."""
        names = self.binder.names
        gate, s = (self, self._initial_mask) if state is None else self._masked(state)
        out = []
        for index, step in enumerate(self.plan_steps(plan)):
            try:
                _, args, fields = self.binder.words(step, index)
                ground = gate._ground_in(step, index, s)
            except StepRejected:
                continue
            words = args if args is not None else tuple(
                v for k, v in fields if v and k not in NOT_ARGUMENTS)
            for word in words:
                read = names.synonym(word)
                if read is not None:
                    taken = next((a for a in ground.args if a in read.objects), read.objects[0])
                    out.append(Reading(index, word, read.name, names.spelling[taken]))
            s = gate.compiled(ground).successor(s) or s
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
            gate, start_mask = self._masked(start)
            if gate is not self:
                return gate.check(plan, start, mode)
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
        return None if goal is None else compile_cond(self.bits, goal).test

    def _resolve(self, step: Any, index: int, step_key: Any) -> ResolvedStep:
        """A new step's `ResolvedStep`, kept under its hashable content `step_key`
        (`StepBinder.cache_key`; never the step object, so a step edited in place is resolved
        afresh; None: not kept), made under the gate's lock (by the first thread to ask)."""
        with self._lock:
            found = None if step_key is None else self._steps.get(step_key)
            if found is not None:
                return found
            try:
                action, candidates = self.binder.bind(step, index)
            except StepRejected as rejected:
                found = ResolvedStep(_refused, partial(_structural, rejected.violation))
            else:
                first = self._compiled_args(action, candidates[0])
                successor = first.successor if len(candidates) == 1 else partial(
                    _first_successor,
                    (first.successor, *(self._compiled_args(action, other).successor
                                        for other in candidates[1:])))
                found = ResolvedStep(successor,
                                     Explainer(self.table, first, text_of(step)).violations)
            if step_key is not None:
                keep_bounded(self._steps, STEPS_KEPT, step_key, found)
            return found

    def _state(self, state: Iterable[tuple[Any, ...]]) -> Atoms:
        if isinstance(state, frozenset):
            return state
        return frozenset(tuple(str(p).lower() for p in atom) for atom in state)

    # -- the engine on sets ---------------------------------------------------------------

    def compiled(self, ground: GroundAction) -> CompiledStep:
        """`ground` compiled on this gate's bit sets, once: from its action's template when
        it is a plain action of the domain (`engine.compile_plain`), else from `ground`
        (`engine.compile_step`)."""
        cache_key = (ground.schema.name, ground.args)
        found = self._compiled.get(cache_key)
        if found is not None and (found.ground is ground or found.ground == ground):
            return found
        with self._lock:
            schema = self.table.schema
            # (none for an action made elsewhere: induce's, of its own conditions)
            template = (schema.template(ground.schema.name)
                        if schema.actions.get(ground.schema.name) is ground.schema else None)
            found = self._compile(template, ground.args, partial(_given, ground))
            keep_bounded(self._compiled, STEPS_KEPT, cache_key, found)
        return found

    def _compile(self, template: ActionTemplate | None, args: tuple[str, ...],
                 ground_of: Callable[[], GroundAction]) -> CompiledStep:
        """The step of `args` compiled from `template` when its action is plain
        (`engine.compile_plain`, its ground action made by `ground_of` when asked for), else
        from its ground action (`engine.compile_step`); called under the gate's lock."""
        if template is None or template.plain is None:
            return compile_step(self.bits, ground_of(), self._lock)
        return compile_plain(self.bits, template.plain, template.words + args, ground_of)

    def _compiled_args(self, action: Action, args: tuple[str, ...]) -> CompiledStep:
        """The step of `action` with object keys `args` (already checked) compiled, once (its
        ground action made only when the action is not plain); called under the gate's
        lock."""
        name = action.name
        cache_key = (name, args)
        found = self._compiled.get(cache_key)
        if found is None:
            table = self.table
            template = table.schema.templates.get(name) or table.schema.template(name)
            found = self._compile(template, args, partial(table.ground, action, args))
            keep_bounded(self._compiled, STEPS_KEPT, cache_key, found)
        return found

    def _condition(self, cache_key: Any, make: Callable[[], Cond]) -> CompiledCond:
        """The condition `make()` compiled on this gate's bit sets, kept under `cache_key`."""
        found = self._conditions.get(cache_key)
        if found is None:
            with self._lock:
                found = compile_cond(self.bits, make())
                keep_bounded(self._conditions, STEPS_KEPT, cache_key, found)
        return found

    def _masked(self, state: Iterable[tuple[Any, ...]]) -> tuple[Gate, int]:
        """The form of this gate to use from `state` (`for_state`) and the state's mask there."""
        start = self._state(state)
        if start is self.table.initial_state:
            return self, self._initial_mask
        found = self._start_masks.get(start)
        if found is not None:
            return self, found
        gate = self.for_state(start)
        if gate is not self:
            return gate._masked(start)
        with self._lock:
            found = self.bits.mask(start)
            keep_bounded(self._start_masks, STATES_KEPT, start, found)
        return self, found

    def _unmasked(self, s: int) -> Atoms:
        """The state of the mask `s`, kept with its mask (a world steps from it next)."""
        state = self.bits.state(s)
        with self._lock:
            keep_bounded(self._start_masks, STATES_KEPT, state, s)
        return state

    def applicable(self, state: Atoms, ground: GroundAction, index: int = 0,
                   step_text: str = "") -> Violation | None:
        """None when `ground` can run in `state`, else its first violation."""
        gate, s = self._masked(state)
        step = gate.compiled(ground)
        if step.successor(s) is not None:
            return None
        return gate._violations(s, step, index, step_text)[0]

    def applies(self, state: Atoms, ground: GroundAction) -> bool:
        """Whether `ground` can run in `state` (`applicable` without explaining why not)."""
        gate, s = self._masked(state)
        return gate.compiled(ground).successor(s) is not None

    def effects(self, state: Atoms, ground: GroundAction) -> tuple[Atoms, Atoms]:
        """`(add, delete)`: the atoms `ground` adds and deletes in `state`, its conditional
        effects whose conditions hold there included (delete, then add: `apply`)."""
        gate, s = self._masked(state)
        add, delete = gate.compiled(ground).effects(s)
        atoms_of = gate.bits.atoms_of
        return frozenset(atoms_of(add)), frozenset(atoms_of(delete))

    def apply(self, state: Atoms, ground: GroundAction) -> Atoms:
        """The state after `ground`'s effects in `state` (its precondition not checked: a
        world that has acted)."""
        gate, s = self._masked(state)
        return gate._unmasked(gate.compiled(ground).apply(s))

    def explain(self, state: Atoms, ground: GroundAction, index: int = 0,
                step_text: str = "") -> list[Violation]:
        """One violation per failed literal or disjunction of `ground`'s precondition."""
        gate, s = self._masked(state)
        return gate._violations(s, gate.compiled(ground), index, step_text)

    def _violations(self, s: int, step: CompiledStep, index: int,
                    step_text: str) -> list[Violation]:
        with self._lock:  # (the table keeps the canonical texts it writes)
            return violations(self.table, step.precondition.failures(s), step.ground, index,
                              step_text)

    def precondition_holds(self, action: Any, args: tuple[str, ...], state: Atoms) -> bool:
        """Whether `action` with object keys `args` (already checked) applies in `state`; its
        precondition alone is ground and compiled (`PreconditionTable.precondition`)."""
        gate, s = self._masked(state)
        table = gate.table
        return gate._condition((action.name, args),
                               lambda: table.precondition(action, args)).test(s)

    # -- the goal -------------------------------------------------------------------------

    def goal_holds(self, state: State) -> bool:
        """Whether the goal holds (True when the problem has no goal)."""
        gate, s = self._masked(state)
        return gate._goal_test is None or gate._goal_test(s)

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
        gate, s = self._masked(state)
        ground = gate.table.ground_condition
        return [(formula, gate._condition(("goal", i), partial(ground, formula, {}, "")).test(s))
                for i, formula in enumerate(formulas)]

    def goal_failures(self, state: State) -> list[GroundLiteral | AnyOf]:
        """The goal's literals and disjunctions that fail in `state`, in source order (the
        engine's `CompiledCond.failures`; empty when it holds or there is none)."""
        gate, s = self._masked(state)
        goal = gate.table.goal
        if not goal.present:
            return []
        return gate._condition("goal", lambda: goal.ground).failures(s)  # type: ignore[arg-type,return-value]

    def goal_unmet(self, state: State) -> list[str]:
        """The goal's failed literals/disjunctions as PDDL text (empty when it holds)."""
        failed = self.goal_failures(state)
        with self._lock:  # (the table writes the goal's texts on first use)
            return [failure_text(self.table, f) for f in failed]


def compile_gate(domain: Domain, problem: Problem) -> Gate:
    """Compile `domain` and `problem` into a `Gate` (raises UnsupportedConstruct)."""
    return Gate(PreconditionTable(domain, problem))

