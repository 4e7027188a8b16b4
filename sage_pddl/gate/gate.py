"""Check plans against a compiled domain and problem: the precondition gate.

`Gate.check(plan, state=None, mode="first")` walks the plan from `state` (default: the
problem's initial state). Each step is resolved to a cached `GroundAction`; a step is accepted
when its precondition holds in the current state, and then applied. The `Verdict` says whether
every checked step was accepted (`valid`), whether the goal holds in the final state
(`goal_reached`, None when the problem has no goal), and lists the `Violation`s. In mode
"first" checking stops at the first rejected step; in mode "all" it continues, skipping the
rejected step's effects. `valid` is about executability only: a plan *solves* the task when it is
valid and reaches the goal (`Verdict.solved`).

Violation codes
---------------
* Structural (the step cannot become a ground action): `unparsable-step` (no action word, or not
  a step at all), `unknown-action`, `wrong-arity` (also when a JSON field a parameter needs is
  empty), `unknown-object`, `type-mismatch` (an object not of the parameter's type).
* A failed precondition literal: `<action>/requires/<predicate>` when a positive literal does
  not hold, `<action>/forbids/<predicate>` when a negated literal holds, and
  `<action>/requires/equal` / `<action>/forbids/equal` for `=` (action and predicate lower case).
  Quantifiers are expanded: a failed `forall` reports each failing instance as a literal of its
  own, and an `imply` whose condition holds reports the failed literals of its consequent.
* A failed disjunction (`or`, `exists`, a negated `and`/`forall`) has no single culprit: it is
  reported once as `<action>/requires/any-of`, its literal being the formula as written with
  the step's objects substituted.
* Every failed literal (or disjunction) of a rejected step is its own `Violation`, all with the
  same `step`, in the order the domain writes them.
* A `; @sage reason <Action> <literal> <code> "<message>"` annotation replaces the code and
  message of that literal; it matches the literal as written in the action, or the whole
  top-level precondition conjunct that contains a failed part.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Iterable, Sequence, Union

from ..pddl.errors import SageError
from ..pddl.model import Action, Domain, Plan, PlanStep, Problem, Variable, key
from .compile import (
    EQUALS, AnyOf, BitSets, Cond, GroundAction, GroundLiteral, Implies, PreconditionTable,
    compile_table, formula_text,
)

MODES = ("first", "all")
_new = object.__new__
StepLike = Union[PlanStep, dict, str]


@dataclass(frozen=True)
class Violation:
    """Why a step was rejected. `step` is 0-based; `literal` is PDDL text in original spelling.

    `atoms` lists the ground literals behind the violation as (positive, atom) pairs, so the
    feedback can look for actions that would achieve them; it is empty for structural codes.
    """

    step: int
    step_text: str
    action: str
    code: str
    literal: str
    message: str
    atoms: tuple[tuple[bool, tuple], ...] = field(default=(), repr=False)


def _resolve(pending: tuple) -> frozenset:
    """A check's final state from its bit-set form `(gate, start, start_mask, mask)`: only the
    atoms that differ from the start state are converted, and the result's mask is remembered
    for a next check that starts from it."""
    gate, start, start_mask, mask = pending
    state = gate.table.bits.state(start, start_mask, mask)
    _remember(gate._masks, state, mask)
    return state


class _FinalState:
    """The `final_state` field of `Verdict`: always read as a frozenset.

    `Gate.check` runs on bit-set states; converting the last one to a frozenset can cost as much
    as checking a short plan, and most callers only read `valid`. So a check stores a
    pending tuple (see `_resolve`) and the first read of `final_state` converts and keeps it. A data descriptor
    does this on a frozen dataclass (`functools.cached_property` cannot: it would clash with the
    field of the same name): `__init__` stores through `__set__`, attribute assignment is still
    refused by the frozen `__setattr__`, and `__eq__`, `__hash__`, `__repr__`, `replace`,
    `asdict`, copy and pickle all read the field through `__get__`.
    """

    def __get__(self, obj: Any, owner: type | None = None) -> frozenset:
        if obj is None:
            raise AttributeError("final_state")  # tells dataclass: no default
        value = obj.__dict__["_final_state"]
        if type(value) is tuple:  # pending: a frozenset is never a tuple
            value = obj.__dict__["_final_state"] = _resolve(value)
        return value

    def __set__(self, obj: Any, value: frozenset) -> None:
        obj.__dict__["_final_state"] = value


@dataclass(frozen=True)
class Verdict:
    valid: bool
    steps_checked: int
    final_state: frozenset = _FinalState()  # type: ignore[assignment] - see _FinalState
    goal_reached: bool | None
    violations: tuple[Violation, ...] = ()

    @classmethod
    def _of_check(cls, valid: bool, steps_checked: int, pending: tuple,
                  goal_reached: bool | None, violations: tuple[Violation, ...]) -> "Verdict":
        """What `Gate.check` returns: the same fields, stored in the instance's own dict rather
        than by the frozen `__init__`'s one `object.__setattr__` per field (a measurable share of
        a short plan; `check` inlines this)."""
        verdict = _new(cls)
        fields = verdict.__dict__
        fields["valid"] = valid
        fields["steps_checked"] = steps_checked
        fields["_final_state"] = pending
        fields["goal_reached"] = goal_reached
        fields["violations"] = violations
        return verdict

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_final_state": self.final_state}

    @property
    def solved(self) -> bool:
        """Every step applicable and the goal (if any) reached."""
        return self.valid and self.goal_reached is not False

    @property
    def first_failing_step(self) -> int | None:
        return self.violations[0].step if self.violations else None


class StepRejected(SageError):
    """A step that cannot become a ground action; `violation` carries the structural code."""

    def __init__(self, violation: Violation):
        self.violation = violation
        super().__init__(f"step {violation.step + 1} ({violation.step_text}): "
                         f"[{violation.code}] {violation.message}")


def _step_text(step: Any) -> str:
    if isinstance(step, PlanStep):
        return step.text or " ".join([step.action, *step.args])
    if isinstance(step, dict):
        words = [str(step.get(k, "")).strip() for k in ("action", "object", "target")]
        return " ".join(w for w in words if w)
    return str(step)


_PLAN_STEP_KEY = attrgetter("action", "args", "fields")
_STATE_MASKS_KEPT = 256


def _remember(masks: dict, state: frozenset, mask: int) -> None:
    """Keep `state`'s bit set for a later check that starts from it (bounded)."""
    if len(masks) >= _STATE_MASKS_KEPT:
        masks.clear()
    masks[state] = mask


class Gate:
    """A domain and problem compiled for checking plans (see the module docstring).

    How `check` is fast: every distinct step is resolved once, to the bit-set form of its
    ground action (`PreconditionTable.fast_step`), and cached under the step as written (JSON
    steps: `(action, object, target)`, also nested as action -> object -> target, which is
    cheaper to look up than a key tuple is to build and hash; PlanSteps: `(action, args,
    fields)`; text: the text). The step's *content* is the key, never the step object, so a
    step edited in place is resolved afresh. When every step of a plan is in the cache (a plan
    of steps seen before), the loop does lookups and int operations only; otherwise the plan is
    walked step by step, grounding on first use. Action words resolve once per gate. The
    initial mask and the goal's masks are computed on the first check (`_prepare`). Violations
    are built only for rejected steps, and the final frozenset state only when read.
    `_check_sets` is the reference: the same walk on frozensets with `GroundAction.applicable`
    and `apply_in_place`; tests hold the two to identical verdicts.
    """

    def __init__(self, table: PreconditionTable):
        self.table = table
        self._steps: dict[Any, GroundAction] = {}
        mapped = {name for fields in table.step_fields.values() for names in fields for name in names}
        self._step_fields = ("action", "object", "target", *sorted(mapped - {"object", "target"}))
        self._simple_fields = len(self._step_fields) == 3
        # step as written -> fast tuple, one cache per kind of step so keys cannot collide
        self._fast_dicts: dict[Any, tuple] = {}
        # the same for JSON steps when only action/object/target matter, nested by those three
        # values: three dict lookups of strings whose hashes are cached cost less than building
        # and hashing a key tuple
        self._fast_nested: dict[Any, dict[Any, dict[Any, tuple]]] = {}
        self._prepared: tuple | None = None
        # action word as written -> (action, its step-field map or None, accepted types)
        self._action_words: dict[str, tuple] = {}
        self._fast_plan_steps: dict[Any, tuple] = {}
        self._fast_texts: dict[str, tuple] = {}
        self._masks: dict[frozenset, int] = {}

    @classmethod
    def compile(cls, domain: Domain, problem: Problem) -> "Gate":
        return cls(compile_table(domain, problem))

    @property
    def domain(self) -> Domain:
        return self.table.domain

    @property
    def problem(self) -> Problem:
        return self.table.problem

    @property
    def initial_state(self) -> frozenset:
        return self.table.initial_state

    @property
    def objects(self) -> dict[str, str]:
        """Object key -> original spelling."""
        return self.table.object_names

    def format_atom(self, atom: tuple) -> str:
        return self.table.format_atom(atom)

    # -- steps -> ground actions ----------------------------------------------------------

    def ground(self, step: StepLike, index: int = 0) -> GroundAction:
        """The ground action a step names; raises `StepRejected` with a structural violation."""
        cache_key = self._cache_key(step)
        if cache_key is not None:
            found = self._steps.get(cache_key)
            if found is not None:
                return found
        ground = self._ground(step, index)
        if cache_key is not None:
            self._steps[cache_key] = ground
        return ground

    def _cache_key(self, step: Any) -> Any:
        """What a step's ground action depends on (None: not cacheable)."""
        kind = type(step)
        if kind is dict:
            # only the action and the fields that can fill parameters matter (not "reason")
            fields = self._step_fields
            if len(fields) == 3:
                key_ = (step.get("action"), step.get("object"), step.get("target"))
            else:
                key_ = tuple(step.get(name) for name in fields)
            try:
                hash(key_)
            except TypeError:
                return None
            return key_
        if kind is str:
            return step
        if isinstance(step, PlanStep):
            return (step.action, step.args, step.fields)
        return None

    def _reject(self, index: int, step: Any, code: str, message: str, action: str = "") -> StepRejected:
        text = _step_text(step)
        return StepRejected(Violation(index, text, action or text, code, "", message))

    def _words(self, step: Any, index: int) -> tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]]:
        if isinstance(step, PlanStep):
            return step.action, step.args, step.fields
        if isinstance(step, dict):
            action = step.get("action")
            if not isinstance(action, str) or not action.strip():
                raise self._reject(index, step, "unparsable-step", "the step has no action name")
            fields = tuple((k, v.strip()) for k, v in step.items()
                           if k != "action" and isinstance(v, str))
            args = tuple(v for k, v in fields if k in ("object", "target") and v)
            return action.strip(), args, fields
        if isinstance(step, str):
            words = step.strip().strip("()").split()
            if not words:
                raise self._reject(index, step, "unparsable-step", "the step is empty")
            return words[0], tuple(words[1:]), ()
        raise self._reject(index, step, "unparsable-step",
                           f"a step must be a PlanStep, a JSON object or text, not {type(step).__name__}")

    def _ground(self, step: Any, index: int) -> GroundAction:
        table = self.table
        name, args, fields = self._words(step, index)
        if not name:
            raise self._reject(index, step, "unparsable-step", "the step has no action name")
        resolved = self._action_words.get(name)
        if resolved is None:
            action = table.resolve_action(name)
            if action is None:
                known = [a.name for a in table.domain.actions]
                close = difflib.get_close_matches(name.lower(), [k.lower() for k in known], n=1)
                hint = (f"; did you mean {known[[k.lower() for k in known].index(close[0])]}?"
                        if close else "")
                raise self._reject(index, step, "unknown-action",
                                   f"unknown action {name!r} (the domain has: {', '.join(known)}){hint}")
            resolved = self._action_words[name] = (
                action, table.step_fields.get(action.name.lower()),
                table.schema.template(action).param_types)
        action, step_fields, accepted = resolved
        params = action.parameters
        mapping = step_fields if fields else None
        if mapping is not None:
            values = dict(fields)
            filled = []
            for param, names in zip(params, mapping):
                value = next((values[n] for n in names if values.get(n)), "")
                if not value:
                    raise self._reject(
                        index, step, "wrong-arity",
                        f"{action.name} needs ?{param.name} from the step field "
                        f"{' or '.join(repr(n) for n in names)}, which is empty", action.name)
                filled.append(value)
            args = tuple(filled)
        if len(args) != len(params):
            signature = " ".join(f"?{p.name}" + (f" - {'/'.join(p.types)}" if p.types else "")
                                 for p in params)
            raise self._reject(
                index, step, "wrong-arity",
                f"{action.name} takes {len(params)} argument(s) ({signature or 'none'}), "
                f"the step gives {len(args)}", action.name)
        objects = tuple(map(str.lower, args))
        object_types = table.object_types
        for obj, types in zip(objects, accepted):
            have = object_types.get(obj)
            if have is None or (types is not None and types.isdisjoint(have)):
                raise self._object_error(step, index, action, args, accepted)
        return table.ground(action, objects)

    def _object_error(self, step: Any, index: int, action: Action, args: tuple[str, ...],
                      accepted: tuple) -> StepRejected:
        """The rejection of the first argument that is not an object or not of its type."""
        table = self.table
        params = action.parameters
        object_types = table.object_types
        for position, (param, word, types) in enumerate(zip(params, args, accepted), start=1):
            obj = word.lower()
            have = object_types.get(obj)
            if have is None:
                close = difflib.get_close_matches(obj, list(table.object_names), n=1)
                hint = f"; did you mean {table.object_names[close[0]]}?" if close else ""
                return self._reject(index, step, "unknown-object",
                                    f"unknown object {word!r} (argument {position} of "
                                    f"{action.name}){hint}", action.name)
            if types is not None and types.isdisjoint(have):  # table.fits, precomputed
                have = "/".join(table.declared_types.get(obj, ("object",)))
                return self._reject(
                    index, step, "type-mismatch",
                    f"argument {position} of {action.name} (?{param.name}) must be "
                    f"{' or '.join(param.types)}, but {table.object_names[obj]} is {have}",
                    action.name)
        raise AssertionError("every argument is an object of its parameter's type")

    # -- checking -------------------------------------------------------------------------

    def plan_steps(self, plan: Any) -> Sequence[Any]:
        if isinstance(plan, Plan):
            return plan.steps
        if isinstance(plan, str):
            from ..pddl import parse_plan  # the parser is only needed for plans given as text
            return parse_plan(plan).steps
        if isinstance(plan, dict) and isinstance(plan.get("steps"), list):
            return plan["steps"]
        return plan

    def check(self, plan: Any, state: Iterable[tuple] | None = None, mode: str = "first") -> Verdict:
        """Check `plan` (a Plan, a sequence of PlanSteps or JSON step dicts, or plan text)."""
        if mode == "first":
            stop = True
        elif mode == "all":
            stop = False
        else:
            raise SageError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        prepared = self._prepared
        if prepared is None:
            prepared = self._prepare()
        initial, initial_mask, goal_pos, goal_neg, goal_test = prepared
        if state is None:
            start, start_mask = initial, initial_mask
        else:
            start = self._state(state)
            start_mask = self._masks.get(start)
            if start_mask is None:
                start_mask = self.table.bits.mask(start) | BitSets.ALWAYS
                _remember(self._masks, start, start_mask)
        if type(plan) is list:
            steps = plan
        else:
            steps = self.plan_steps(plan)
            if not isinstance(steps, (list, tuple)):
                steps = list(steps)
        if not steps:
            return self._check_stepwise(steps, start, start_mask, stop)
        s = start_mask
        violations = None
        index = -1
        # A step not cached yet, a key of unhashable values, a dict without "object" or
        # "target" and a step of another kind than the first all raise below (KeyError or
        # TypeError, AttributeError for a PlanStep), and such a plan is checked step by step.
        kind = type(steps[0])
        try:
            if kind is dict and self._simple_fields:
                nested = self._fast_nested
                for step in steps:
                    index += 1
                    literals, pos, keep, add, trigger, special, ground = (
                        nested[step["action"]][step["object"]][step["target"]])
                    if s & literals == pos:
                        if not s & trigger:  # a STRIPS step, or no conditional effect fires
                            s = s & keep | add
                            continue
                        after = special(s)
                        if after is not None:
                            s = after
                            continue
                    if violations is None:
                        violations = []
                    violations.extend(self.explain(self.table.bits.state(start, start_mask, s),
                                                   ground, index, _step_text(step)))
                    if stop:
                        break
            else:
                if kind is PlanStep:
                    fasts = map(self._fast_plan_steps.__getitem__, map(_PLAN_STEP_KEY, steps))
                elif kind is str:
                    fasts = map(self._fast_texts.__getitem__, steps)
                else:
                    return self._check_stepwise(steps, start, start_mask, stop)
                for literals, pos, keep, add, trigger, special, ground in fasts:
                    index += 1
                    if s & literals == pos:
                        if not s & trigger:
                            s = s & keep | add
                            continue
                        after = special(s)
                        if after is not None:
                            s = after
                            continue
                    if violations is None:
                        violations = []
                    violations.extend(self.explain(self.table.bits.state(start, start_mask, s),
                                                   ground, index, _step_text(steps[index])))
                    if stop:
                        break
        except (KeyError, TypeError, AttributeError):
            return self._check_stepwise(steps, start, start_mask, stop)
        if goal_test is None:
            goal = None if goal_pos is None else s & goal_pos == goal_pos and not s & goal_neg
        else:
            goal = goal_test(s)
        # Verdict._of_check, inlined: a call is a measurable share of checking a short plan
        verdict = _new(Verdict)
        fields = verdict.__dict__
        fields["valid"] = violations is None
        fields["steps_checked"] = index + 1
        fields["_final_state"] = (self, start, start_mask, s)
        fields["goal_reached"] = goal
        fields["violations"] = () if violations is None else tuple(violations)
        return verdict

    def _prepare(self) -> tuple:
        """What every check needs, computed on the first: `(initial state, its mask, goal_pos,
        goal_neg, goal_test)` with the goal as two masks when it is a conjunction of literals
        (`goal_test` None), else a test on bit sets (goal_pos None too when there is no goal)."""
        table = self.table
        goal_pos = goal_neg = goal_test = None
        if table.goal is not None:
            masks = table.goal_masks
            if masks is None:
                goal_test = table.goal_test
            else:
                goal_pos, goal_neg = masks
        self._prepared = (table.initial_state, table.initial_mask, goal_pos, goal_neg, goal_test)
        return self._prepared

    def _fast_step(self, step: Any, index: int) -> tuple:
        """The fast tuple of one step, resolved and cached on first use (raises StepRejected)."""
        kind = type(step)
        if kind is dict:
            cache, cache_key = self._fast_dicts, self._cache_key(step)
        elif kind is str:
            cache, cache_key = self._fast_texts, step
        elif isinstance(step, PlanStep):
            cache, cache_key = self._fast_plan_steps, (step.action, step.args, step.fields)
        else:
            cache = cache_key = None
        if cache_key is not None:
            try:
                found = cache.get(cache_key)
            except TypeError:  # unhashable field values: resolve every time
                cache_key = None
            else:
                if found is not None:
                    return found
        if cache_key is None:
            return self.ground(step, index).fast
        # `ground` inlined: its cache has the same key (`_cache_key`)
        ground = self._steps.get(cache_key)
        if ground is None:
            ground = self._steps[cache_key] = self._ground(step, index)
        fast = cache[cache_key] = ground.fast
        if kind is dict and self._simple_fields:
            action, obj, target = cache_key
            self._fast_nested.setdefault(action, {}).setdefault(obj, {})[target] = fast
        return fast

    def _check_stepwise(self, steps: Sequence[Any], start: frozenset, start_mask: int,
                        stop: bool) -> Verdict:
        """`check` for a plan with steps not yet cached or rejected as steps."""
        table = self.table
        s = start_mask
        violations: list[Violation] = []
        checked = 0
        for index, step in enumerate(steps):
            checked = index + 1
            try:
                literals, pos, keep, add, trigger, special, ground = self._fast_step(step, index)
            except StepRejected as rejected:
                violations.append(_at(rejected.violation, index))
                if stop:
                    break
                continue
            if s & literals == pos:
                if not s & trigger:
                    s = s & keep | add
                    continue
                after = special(s)
                if after is not None:
                    s = after
                    continue
            violations.extend(self.explain(table.bits.state(start, start_mask, s), ground, index,
                                           _step_text(step)))
            if stop:
                break
        _, _, goal_pos, goal_neg, goal_test = self._prepared or self._prepare()
        if goal_test is None:
            goal = None if goal_pos is None else s & goal_pos == goal_pos and not s & goal_neg
        else:
            goal = goal_test(s)
        return Verdict._of_check(not violations, checked, (self, start, start_mask, s), goal,
                                 tuple(violations))

    def _check_sets(self, plan: Any, state: Iterable[tuple] | None = None,
                    mode: str = "first") -> Verdict:
        """`check` on frozenset states, step by step: the reference the fast path must equal."""
        if mode not in MODES:
            raise SageError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        stop = mode == "first"
        start = self.initial_state if state is None else self._state(state)
        current = set(start)  # mutated in place: a step costs O(its effects), not O(state)
        violations: list[Violation] = []
        steps = self.plan_steps(plan)
        cache = self._steps
        cache_key = self._cache_key
        checked = 0
        for index, step in enumerate(steps):
            checked = index + 1
            ground = cache.get(cache_key(step))
            if ground is None:
                try:
                    ground = self.ground(step, index)
                except StepRejected as rejected:
                    violations.append(_at(rejected.violation, index))
                    if stop:
                        break
                    continue
            if (ground.pre_pos <= current and current.isdisjoint(ground.pre_neg)
                    and (not ground.checks or all(check(current) for check in ground.checks))):
                ground.apply_in_place(current)
            else:
                violations.extend(self.explain(current, ground, index, _step_text(step)))
                if stop:
                    break
        final = frozenset(current)
        goal = None if self.table.goal is None else self.table.goal.holds(final)
        return Verdict(not violations, checked, final, goal, tuple(violations))

    def _state(self, state: Iterable[tuple]) -> frozenset:
        if isinstance(state, frozenset):
            return state  # states the gate hands out are already interned lower-case tuples
        return frozenset(self.table.atom(tuple(str(p).lower() for p in atom)) for atom in state)

    def applicable(self, state: frozenset, ground: GroundAction, index: int = 0,
                   step_text: str = "") -> Violation | None:
        """None when `ground` can run in `state`, else its first violation."""
        if ground.applicable(state):
            return None
        return self.explain(state, ground, index, step_text)[0]

    def apply(self, state: frozenset, ground: GroundAction) -> frozenset:
        return ground.apply(state)

    def goal_holds(self, state: frozenset) -> bool:
        """Whether the goal holds (True when the problem has no goal)."""
        return self.table.goal is None or self.table.goal.holds(state)

    def goal_unmet(self, state: frozenset) -> list[str]:
        """The goal's failed literals/disjunctions as PDDL text (empty when it holds)."""
        if self.table.goal is None:
            return []
        return [self._failure_text(f) for f in _failures(self.table.goal, state)]

    # -- explaining -----------------------------------------------------------------------

    def explain(self, state: frozenset, ground: GroundAction, index: int = 0,
                step_text: str = "") -> list[Violation]:
        """One violation per failed literal or disjunction of `ground`'s precondition."""
        step_text = step_text or ground.text.strip("()")
        out = [self._violation(failure, ground, index, step_text)
               for failure in _failures(ground.precondition, state)]
        if not out:  # cannot happen unless the caller passes an applicable action
            raise SageError(f"{ground.text} is applicable; nothing to explain")
        return out

    def _failure_text(self, failure: GroundLiteral | AnyOf) -> str:
        if isinstance(failure, GroundLiteral):
            return self.table.format_literal(failure)
        return self._any_of_text(failure)

    def _any_of_text(self, failure: AnyOf) -> str:
        bound = dict(failure.bindings)
        names = self.table.object_names

        def name(term: Any) -> str:
            if isinstance(term, Variable):
                value = bound.get(key(term.name))
                return names.get(value, value) if value is not None else f"?{term.name}"
            return names.get(key(term.name), term.name)

        text = formula_text(failure.source, name)
        return text if failure.positive else f"(not {text})"

    def _violation(self, failure: GroundLiteral | AnyOf, ground: GroundAction, index: int,
                   step_text: str) -> Violation:
        table = self.table
        action_key = key(ground.name)
        literal = self._failure_text(failure)
        if isinstance(failure, GroundLiteral):
            atoms = () if failure.atom[0] == EQUALS else ((failure.positive, failure.atom),)
            if failure.atom[0] == EQUALS:
                predicate = "equal"
                detail = "the objects differ" if failure.positive else "the objects are the same"
            else:
                predicate = failure.atom[0]
                detail = ("which does not hold" if failure.positive
                          else f"but {table.format_atom(failure.atom)} holds")
            code = f"{action_key}/{'requires' if failure.positive else 'forbids'}/{predicate}"
            message = f"{ground.text} requires {literal}, {detail}"
        else:
            atoms = tuple(dict.fromkeys(
                (lit.positive, lit.atom)
                for part in failure.parts for lit in part.literals if lit.atom[0] != EQUALS))
            code = f"{action_key}/requires/any-of"
            message = f"{ground.text} requires {literal}, and no alternative holds"
        reason = table.reason(ground.schema, (failure.schema, failure.anchor))
        if reason is not None:
            code = reason.code
            if reason.message:
                message = _fill(reason.message, ground)
        return Violation(index, step_text, ground.text, code, literal, message, atoms)


def _fill(template: str, ground: GroundAction) -> str:
    bound = {key(name): value for name, value in ground.bindings}
    return re.sub(r"\?([A-Za-z_][\w\-]*)",
                  lambda m: bound.get(key(m.group(1)), m.group(0)), template)


def _at(violation: Violation, index: int) -> Violation:
    if violation.step == index:
        return violation
    return Violation(index, violation.step_text, violation.action, violation.code,
                     violation.literal, violation.message, violation.atoms)


def _failures(cond: Cond, state: frozenset) -> list[GroundLiteral | AnyOf]:
    """The failed literals and disjunctions of `cond` in `state`, in source order, deduplicated."""
    out: list[GroundLiteral | AnyOf] = list(cond.unsat)
    seen: set[tuple[bool, tuple]] = {(lit.positive, lit.atom) for lit in cond.unsat}
    for lit in cond.literals:
        if (lit.atom in state) != lit.positive and (lit.positive, lit.atom) not in seen:
            seen.add((lit.positive, lit.atom))
            out.append(lit)
    for sub in cond.subs:
        if sub.holds(state):
            continue
        if isinstance(sub, Implies):
            for failure in _failures(sub.then, state):
                if isinstance(failure, AnyOf) or (failure.positive, failure.atom) not in seen:
                    if isinstance(failure, GroundLiteral):
                        seen.add((failure.positive, failure.atom))
                    out.append(failure)
        else:
            out.append(sub)
    return out


def compile_gate(domain: Domain, problem: Problem) -> Gate:
    """Compile `domain` and `problem` into a `Gate` (raises UnsupportedConstruct)."""
    return Gate.compile(domain, problem)
