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
import itertools
import re
from collections.abc import Iterable, Sequence
from operator import itemgetter
from typing import Any, NamedTuple

from ..pddl.errors import SageError
from ..pddl.model import (
    Action,
    And,
    Domain,
    Plan,
    PlanStep,
    Problem,
    Variable,
    key,
)
from ..pddl.vocabulary import NOT_ARGUMENTS, ObjectNames, Vocabulary, step_text
from ..pddl.writer import write_formula
from .bits import BitSets
from .ground import (
    EQUALS,
    AnyOf,
    Atoms,
    Cond,
    GroundAction,
    GroundAtom,
    GroundLiteral,
    Implies,
    State,
    action_bindings,
    action_text,
)
from .schema import StepAction
from .table import PreconditionTable, compile_table, lazy

MODES = ("first", "all")
_new_tuple = tuple.__new__
StepLike = PlanStep | dict[str, Any] | str


class Violation(NamedTuple):
    """Why a step was rejected. `step` is 0-based; `literal` is PDDL text in original spelling.

    `atoms` lists the ground literals behind the violation as (positive, atom) pairs, so the
    feedback can look for actions that would achieve them; it is empty for structural codes.

    A named tuple, as a `Verdict` is a tuple: a check makes one per failed literal, and
    `_violation_of` makes it without even the named tuple's constructor.
    """

    step: int
    step_text: str
    action: str
    code: str
    literal: str
    message: str
    atoms: tuple[tuple[bool, tuple[Any, ...]], ...] = ()

    def __repr__(self) -> str:  # without the atoms, which the literal spells
        return (f"Violation(step={self.step!r}, step_text={self.step_text!r}, "
                f"action={self.action!r}, code={self.code!r}, literal={self.literal!r}, "
                f"message={self.message!r})")


class Reading(NamedTuple):
    """A plan word that names an object through the domain's synonym table (`@sage synonym`):
    step `step` (0-based) says `word`, which the gate read as `name` and took to mean the
    object `taken` (declared spelling; of several instances, the one the step acted on)."""

    step: int
    word: str
    name: str
    taken: str

    def __str__(self) -> str:
        return f"step {self.step + 1}: {self.word!r} read as {self.name}: {self.taken}"


def _violation_of(*fields: Any) -> Violation:
    """`Violation(...)`, all seven fields given in order."""
    return _new_tuple(Violation, fields)


def _resolve(start: tuple[Gate, State, int], mask: int) -> State:
    """A check's final state from its bit-set form `mask`, given where the check started
    (`(gate, start state, its mask)`): only the atoms that differ from the start state are
    converted, and the result's mask is remembered for a next check that starts from it."""
    gate, state, start_mask = start
    final: State = gate.table.bits.state(state, start_mask, mask)
    _remember(gate._masks, final, mask)
    return final


class Verdict(tuple[Any, ...]):
    """What `Gate.check` says of a plan: an immutable value of five fields.

    `valid`: every checked step was accepted; `steps_checked`; `final_state`: the state after
    the checked steps (a frozenset of atoms; a rejected step's effects skipped); `goal_reached`
    (None when the problem has no goal); `violations`, in step order.

    A verdict is a tuple underneath, because `check` builds one per call and a tuple is the
    cheapest immutable object Python makes (a dataclass's `__init__` costs as much as checking
    a short plan). `check` stores the final state in its bit-set form (an int, with a sixth,
    hidden item: where the check started, one tuple per gate and start state) or as its own
    mutable set, and converts it to a frozenset on the first read of `final_state` (most
    callers only read `valid`); equality, hashing, `repr`, `to_dict`, copy and pickle all see
    the five fields, with the frozenset. (No `__slots__`: the converted state is kept in the
    instance's `__dict__`, which Python creates only when a verdict's final state is first
    read.)
    """

    _FIELDS = ("valid", "steps_checked", "final_state", "goal_reached", "violations")

    def __new__(cls, valid: bool, steps_checked: int, final_state: Atoms,
                goal_reached: bool | None, violations: Iterable[Violation] = ()) -> Verdict:
        return tuple.__new__(cls, (valid, steps_checked, final_state, goal_reached,
                                   tuple(violations), None))

    valid = property(itemgetter(0))
    steps_checked = property(itemgetter(1))
    goal_reached = property(itemgetter(3))
    violations = property(itemgetter(4))

    @property
    def final_state(self) -> Atoms:
        value = tuple.__getitem__(self, 2)
        if type(value) is frozenset:
            return value
        # pending: a bit-set form (an int) or a check's own mutable set; converted once
        cache = self.__dict__
        found = cache.get("_final_state")
        if found is None:
            found = cache["_final_state"] = (_resolve(tuple.__getitem__(self, 5), value)
                                             if type(value) is int else frozenset(value))
        return found

    def _values(self) -> tuple[Any, ...]:
        return (self[0], self[1], self.final_state, self[3], self[4])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Verdict):
            return NotImplemented
        return self._values() == other._values()

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        values = self._values()
        return "Verdict(" + ", ".join(f"{k}={v!r}" for k, v in zip(self._FIELDS, values)) + ")"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Verdict, self._values())

    def __copy__(self) -> Verdict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Verdict:
        return Verdict(*self._values())

    def to_dict(self) -> dict[str, Any]:
        """The five fields by name (the final state as a frozenset)."""
        return dict(zip(self._FIELDS, self._values()))

    @property
    def solved(self) -> bool:
        """Every step applicable and the goal (if any) reached."""
        return bool(self[0]) and self[3] is not False



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
        return step_text(step)
    return str(step)


_STATES_KEPT = 256
"""States a gate remembers something of (a given state's mask, an accepted plan's verdict),
at most; a cache that is full is emptied."""


def _remember(kept: dict[Any, Any], state: Any, value: Any) -> None:
    """Keep `value` for `state` in one of a gate's bounded caches (`_STATES_KEPT`)."""
    if len(kept) >= _STATES_KEPT:
        kept.clear()
    kept[state] = value


class Choice:
    """A step whose word names several instances (`Open Cabinet` with `Cabinet_1`,
    `Cabinet_2`): it acts on the first candidate whose ground action is applicable in the
    current state; when none is, it is rejected with the first candidate's violations."""

    __slots__ = ("candidates",)

    def __init__(self, candidates: tuple[GroundAction, ...]):
        self.candidates = candidates

    def chosen(self, state: State | set[GroundAtom]) -> GroundAction:
        """The candidate the step acts on in `state` (the first one when none applies)."""
        return next((g for g in self.candidates if g.applicable(state)), self.candidates[0])

    def fast(self) -> tuple[Any, ...]:
        """The check loop's tuple: the first candidate's, with this choice in place of its
        ground action, so the step costs what a plain step costs when the first candidate
        applies; when it does not, the loop calls `rest`."""
        test, pos, add, delete, (literals, reads, successors, _) = self.candidates[0].fast
        return (test, pos, add, delete, (literals, reads, successors, self))

    def rest(self, s: int) -> int | None:
        """The successor of bit-set state `s` by the first of the other candidates that
        applies there (None: none does)."""
        for candidate in self.candidates[1:]:
            after = _successor(candidate.fast, s)
            if after is not None:
                return after
        return None


def _successor(fast: tuple[Any, ...], s: int) -> int | None:
    """What the check loop does with one step's tuple (`GroundAction.fast`) in state `s`: the
    successor state, or None when the step does not apply."""
    test, pos, add, delete, (literals, reads, successors, _) = fast
    if s & test == pos:
        successor: int = (s | add) ^ delete
        return successor
    if successors is not None and s & literals == pos:
        found = successors[s & reads]
        if found is not None:
            after: int = (s | found[0]) ^ found[1]
            return after
    return None


_MOVES_KEPT = 64
"""States whose successor one step remembers (`Moves`; forgotten all at once when full)."""


class Moves(dict[int, int]):
    """One cached step's moves: bit-set state -> the state after the step, each computed the
    first time a check applies the step in that state (`move`) and remembered, so that a
    check walking states and steps it has walked before is one dictionary lookup per step.

    The successor of a state is a function of the step's ground action and the state alone,
    so a remembered move is the move `fast` (the step's check-loop tuple, `GroundAction.fast`;
    a `Choice`'s or a rejection's) computes; a state in which the step does not apply is not
    remembered (its check explains the step). At most `_MOVES_KEPT` states a step."""

    __slots__ = ("fast",)

    def __init__(self, fast: tuple[Any, ...]) -> None:
        super().__init__()
        self.fast = fast

    def move(self, s: int) -> int | None:
        """The state after the step in state `s`, remembered; None when it does not apply."""
        after = _successor(self.fast, s)
        if after is None:
            ground = self.fast[4][3]
            if type(ground) is Choice:  # its first candidate does not apply: the others
                after = ground.rest(s)
            if after is None:
                return None
        if len(self) >= _MOVES_KEPT:
            self.clear()
        self[s] = after
        return after


class Instances:
    """What a step whose words name instances binds to: its action and, in order, every
    combination of objects its words may name (a `Choice` once ground)."""

    __slots__ = ("named", "candidates")

    def __init__(self, named: StepAction, candidates: tuple[tuple[str, ...], ...]):
        self.named = named
        self.candidates = candidates


def _rejection_fast(violation: Violation) -> tuple[Any, ...]:
    """The check loop's tuple of a step that is not a ground action: the literal test fails in
    every state (`ALWAYS` is set in every state mask), so the loop reports `violation`."""
    return (BitSets.ALWAYS, 0, 0, 0, (BitSets.ALWAYS, 0, None, violation))


class Gate:
    """A domain and problem compiled for checking plans (see the module docstring).

    How `check` is fast. A gate's FIRST check (a new problem, typically checked once) grounds
    nothing: each step is bound to its action and objects and run by the action's generated
    step function on a mutable set (`compiled.py`; a PlanStep whose words are exact names is
    bound inside that function; a step whose words name instances tries each candidate's
    objects in turn), and nothing is ground to explain a rejected step either: its failed
    literals are read from the action's precondition template (`_explain_literals`; only an
    action whose precondition has quantifiers, disjunctions or implications is ground to be
    explained). From the second check
    on, every distinct step is resolved once, to the bit-set form of its ground action
    (`GroundAction.fast`: `(test, pos, add, delete, rest)`), and cached under the step's
    CONTENT, never the step object, so a step edited in place is resolved afresh: JSON steps
    under `(action, object, target)` (or all their parameter fields and `args`), PlanSteps
    under `(action, args, fields)`, text under the text. A step that is not a ground action
    (unknown action or object, wrong arity, type mismatch) is cached as a tuple whose test
    always fails, and one naming several instances as a `Choice` (its first candidate's tuple).
    Each cached step holds its `Moves`: the states it has been applied in, each with the
    state after it. `check` then runs ONE loop, resolving a step only on a cache miss and
    computing a move only when the step has not been applied in that state before, which
    makes a check over states and steps met before (a planner re-checking its candidates from
    the same states) one dictionary lookup a step, as a lazily built automaton runs. A move
    is computed with int operations: a plain step costs one test and one or two updates; a
    step whose conditional effects fire, or whose guard the static facts leave open, reads
    its successor from a table over the bits it reads (`bits.Successors`); a choice whose
    first candidate fails tries the others. The modes differ only in whether it stops at the
    first rejected step. Violations are built only for rejected steps, the final frozenset
    state only when read, and an accepted plan's verdict, which its length and final state
    fix, once per final state (`_accepted`). Both paths give the same verdict.
    """

    # what a gate starts without (class defaults: a compile sets only what it must)
    _prepared: tuple[Any, ...] | None = None
    """What a check on bit sets needs (`_prepare`); None until the second check."""
    _checked = False
    _object_names: ObjectNames | None = None
    _goal_parts: tuple[Any, ...] | None = None
    _unpruned: Gate | None = None

    def __init__(self, table: PreconditionTable):
        self.table = table

    @property
    def vocabulary(self) -> Vocabulary:
        return self.table.vocabulary

    @lazy
    def _step_fields(self) -> tuple[str, ...]:
        return self.table.schema.step_fields

    @lazy
    def _simple_fields(self) -> bool:
        return len(self._step_fields) == 3

    @lazy
    def _moves(self) -> dict[Any, Moves]:
        """Cache key of a step (see `_cache_key`) -> its `Moves`."""
        return {}

    @lazy
    def _nested(self) -> dict[Any, dict[Any, dict[Any, Moves]]]:
        """The same for JSON steps whose only parameter fields are `object` and `target`, nested
        as action -> object -> target: three lookups of strings, whose hashes Python caches,
        cost less than building and hashing a key tuple."""
        return {}

    @lazy
    def _accepted(self) -> dict[int, Verdict]:
        """Final bit-set state -> the verdict of the last accepted plan that ended there
        (bounded). A verdict is an immutable value, and an accepted plan's is fixed by its
        length and its final state, so a check that accepts a plan of the same length ending
        in the same state returns it again (from any start: a verdict's final state is read
        from its mask, which names the same atoms for every check of this gate)."""
        return {}

    @lazy
    def _masks(self) -> dict[Atoms, int]:
        """States handed out or given (bounded, `_remember`) -> their bit-set masks."""
        return {}

    @classmethod
    def compile(cls, domain: Domain, problem: Problem) -> Gate:
        return cls(compile_table(domain, problem))

    def for_state(self, state: Iterable[tuple[Any, ...]]) -> Gate:
        """The gate to use from `state`: this one when `state` has the problem's static facts
        (what grounding prunes by), else one compiled without that pruning (made once)."""
        if not self.table.prune_static or self.table.agrees_on_static(self._state(state)):
            return self
        if self._unpruned is None:
            self._unpruned = Gate(compile_table(self.domain, self.problem, prune_static=False))
        return self._unpruned

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
        return self.table.object_names

    def format_atom(self, atom: GroundAtom) -> str:
        return self.table.format_atom(atom)

    # -- steps -> ground actions ----------------------------------------------------------

    def ground(self, step: StepLike, index: int = 0,
               state: Atoms | None = None) -> GroundAction:
        """The ground action a step names; raises `StepRejected` with a structural violation.
        A step naming several instances acts on the first whose action is applicable in
        `state` (default: the initial state), as in `check`."""
        found = self._resolve(step, index)
        if isinstance(found, Violation):
            raise StepRejected(_at(found, index))
        if isinstance(found, Choice):
            return found.chosen(self.initial_state if state is None else self._state(state))
        return found

    def _cache_key(self, step: Any) -> Any:
        """What a step's ground action depends on (None: not cacheable). The kinds of step
        cannot collide: text is a str, a PlanStep key starts with the action (a str) and holds
        tuples, a JSON step key is a tuple of its fields' values or ("args", action, args)."""
        kind = type(step)
        if kind is dict:
            args = step.get("args")
            if isinstance(args, (list, tuple)):
                key_: Any = ("args", step.get("action"), tuple(args))
            elif self._simple_fields:
                key_ = (step.get("action"), step.get("object"), step.get("target"))
            else:
                key_ = tuple(step.get(name) for name in self._step_fields)
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

    def _resolve(self, step: Any, index: int) -> GroundAction | Choice | Violation:
        """What a step names: its ground action, a choice of instances, or the structural
        violation that makes it no ground action (uncached; `_moves_of` caches)."""
        try:
            return self._ground(step, index)
        except StepRejected as rejected:
            return rejected.violation

    def _moves_of(self, step: Any, index: int) -> Moves:
        """The `Moves` of one step, its check-loop tuple resolved and cached on first use."""
        cache_key = self._cache_key(step)
        if cache_key is not None:
            found = self._moves.get(cache_key)
            if found is not None:
                return found
        resolved = self._resolve(step, index)
        if isinstance(resolved, Violation):
            moves = Moves(_rejection_fast(resolved))
        elif isinstance(resolved, Choice):
            moves = Moves(resolved.fast())
        else:
            moves = Moves(resolved.fast)
        if cache_key is not None:
            self._moves[cache_key] = moves
            if self._simple_fields and type(step) is dict and cache_key[0] != "args":
                action, obj, target = cache_key
                self._nested.setdefault(action, {}).setdefault(obj, {})[target] = moves
        return moves

    def _reject(self, index: int, step: Any, code: str, message: str, action: str = "") -> StepRejected:
        text = _step_text(step)
        return StepRejected(Violation(index, text, action or text, code, "", message))

    def _words(self, step: Any, index: int
               ) -> tuple[str, tuple[str, ...] | None, tuple[tuple[str, str], ...]]:
        """(action word, argument words or None, named fields): a JSON step with `args` or a
        text step gives its arguments; one with named fields gives the fields (mapped to the
        parameters once the action is known)."""
        if isinstance(step, PlanStep):
            return step.action, step.args, step.fields
        if isinstance(step, dict):
            action = step.get("action")
            if not isinstance(action, str) or not action.strip():
                raise self._reject(index, step, "unparsable-step", "the step has no action name")
            args = step.get("args")
            if isinstance(args, (list, tuple)):
                if not all(isinstance(a, str) for a in args):
                    raise self._reject(index, step, "unparsable-step",
                                       "every entry of the step's args must be a string")
                return action.strip(), tuple(a.strip() for a in args), ()
            fields = tuple((k, v.strip()) for k, v in step.items()
                           if k != "action" and isinstance(v, str))
            return action.strip(), None, fields
        if isinstance(step, str):
            words = step.strip().strip("()").split()
            if not words:
                raise self._reject(index, step, "unparsable-step", "the step is empty")
            return words[0], tuple(words[1:]), ()
        raise self._reject(index, step, "unparsable-step",
                           f"a step must be a PlanStep, a JSON object or text, not {type(step).__name__}")

    def _action_of(self, name: str, step: Any, index: int) -> StepAction:
        found = self.table.schema.word(name)
        if found is None:
            known = [a.name for a in self.table.domain.actions]
            close = difflib.get_close_matches(name.lower(), [k.lower() for k in known], n=1)
            hint = (f"; did you mean {known[[k.lower() for k in known].index(close[0])]}?"
                    if close else "")
            raise self._reject(index, step, "unknown-action",
                               f"unknown action {name!r} (the domain has: {', '.join(known)}){hint}")
        return found

    def _bind(self, step: Any, index: int
              ) -> tuple[StepAction, tuple[str, ...]] | Instances:
        """What a step names: `(action, object keys)` when each word is an object of its
        parameter's type, else (words naming instances) the `Instances` it may act on.
        Raises `StepRejected` with the structural violation."""
        name, args, fields = self._words(step, index)
        if not name:
            raise self._reject(index, step, "unparsable-step", "the step has no action name")
        named = self._action_of(name, step, index)
        action, step_fields, accepted = named.action, named.fields, named.accepted
        params = action.parameters
        if args is None:  # a JSON step with named fields
            values = dict(fields)
            if step_fields is not None:
                filled = []
                for param, names in zip(params, step_fields):
                    value = next((values[n] for n in names if values.get(n)), "")
                    if not value:
                        raise self._reject(
                            index, step, "wrong-arity",
                            f"{action.name} needs ?{param.name} from the step field "
                            f"{' or '.join(repr(n) for n in names)}, which is empty", action.name)
                    filled.append(value)
                args = tuple(filled)
            else:
                args = tuple(v for v in (values.get("object", ""), values.get("target", "")) if v)
        if len(args) != len(params):
            signature = " ".join(f"?{p.name}" + (f" - {'/'.join(p.types)}" if p.types else "")
                                 for p in params)
            raise self._reject(
                index, step, "wrong-arity",
                f"{action.name} takes {len(params)} argument(s) ({signature or 'none'}), "
                f"the step gives {len(args)}", action.name)
        objects = tuple(map(str.lower, args))
        object_types = self.table.object_types
        for obj, types in zip(objects, accepted):
            have = object_types.get(obj)
            if have is None or (types is not None and types.isdisjoint(have)):
                return Instances(named, self._instances(step, index, action, args, accepted))
        return named, objects

    def _ground(self, step: Any, index: int) -> GroundAction | Choice:
        bound = self._bind(step, index)
        if not isinstance(bound, Instances):
            return self.table.ground(bound[0].action, bound[1])
        action = bound.named.action
        candidates = tuple(self.table.ground(action, objects) for objects in bound.candidates)
        if len(candidates) == 1:
            return candidates[0]
        return Choice(candidates)

    def _instances(self, step: Any, index: int, action: Action, args: tuple[str, ...],
                   accepted: tuple[frozenset[str] | None, ...]) -> tuple[tuple[str, ...], ...]:
        """A step some of whose words are not objects of their parameter's type: each such word
        may name instances (`Cabinet` -> `Cabinet_1`, `Cabinet_2`; see `pddl/vocabulary.py`);
        the step names every combination that fits the parameter types (the candidates of a
        `Choice`, in order), or is rejected for the first word that names no fitting object."""
        table = self.table
        names = self._names()
        options: list[tuple[str, ...]] = []
        for word, types in zip(args, accepted):
            found = names.candidates(word)
            fitting = tuple(o for o in found if o in table.object_types and
                            (types is None or not types.isdisjoint(table.object_types[o])))
            if not fitting:
                raise self._object_error(step, index, action, args, accepted)
            options.append(fitting)
        return tuple(itertools.product(*options))

    def readings(self, plan: Any, state: Iterable[tuple[Any, ...]] | None = None
                 ) -> tuple[Reading, ...]:
        """The words of `plan` that name objects through the domain's synonym table, each with
        the name it was read as and the object the step took, the plan run from `state` as
        `check` runs it (a rejected step changes nothing): what a verdict's steps acted on
        where the plan said a synonym."""
        names = self._names()
        current = self.initial_state if state is None else self._state(state)
        out = []
        for index, step in enumerate(self.plan_steps(plan)):
            try:
                _, args, fields = self._words(step, index)
                ground = self.ground(step, index, current)
            except StepRejected:
                continue
            words = args if args is not None else tuple(
                v for k, v in fields if v and k not in NOT_ARGUMENTS)
            for word in words:
                read = names.synonym(word)
                if read is not None:
                    taken = next((a for a in ground.args if a in read[1]), read[1][0])
                    out.append(Reading(index, word, read[0], names.spelling[taken]))
            if ground.applicable(current):
                current = ground.apply(current)
        return tuple(out)

    def _names(self) -> ObjectNames:
        if self._object_names is None:
            self._object_names = ObjectNames(self.table.domain, self.table.problem)
        return self._object_names

    def _object_error(self, step: Any, index: int, action: Action, args: tuple[str, ...],
                      accepted: tuple[frozenset[str] | None, ...]) -> StepRejected:
        """The rejection of the first argument that names no object of its parameter's type."""
        table = self.table
        names = self._names()
        for position, (param, word, types) in enumerate(zip(action.parameters, args, accepted),
                                                        start=1):
            found = names.candidates(word)
            if not found:
                close = difflib.get_close_matches(word.lower(), list(table.object_names), n=1)
                hint = f"; did you mean {table.object_names[close[0]]}?" if close else ""
                return self._reject(index, step, "unknown-object",
                                    f"unknown object {word!r} (argument {position} of "
                                    f"{action.name}){hint}", action.name)
            if types is not None and all(types.isdisjoint(table.object_types[o]) for o in found):
                have = "/".join(dict.fromkeys(t for o in found
                                              for t in table.declared_types.get(o, ("object",))))
                named = table.object_names[found[0]] if len(found) == 1 else f"every {word}"
                return self._reject(
                    index, step, "type-mismatch",
                    f"argument {position} of {action.name} (?{param.name}) must be "
                    f"{' or '.join(param.types)}, but {named} is {have}", action.name)
        raise AssertionError("every argument names an object of its parameter's type")

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
        step; mode "all" goes on, skipping the rejected step's effects."""
        stop = mode == "first"
        if not stop and mode != "all":
            raise SageError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        prepared = self._prepared
        if prepared is None:
            if not self._checked:  # the gate's first check: on sets, nothing compiled
                self._checked = True
                return self._check_sets(plan.steps if type(plan) is Plan else
                                        plan if type(plan) is list else self.plan_steps(plan),
                                        state, stop)
            prepared = self._prepare()
        context, s, nested, goal_literals, goal_pos, goal_test = prepared
        if state is not None:
            start = self._state(state)
            s = self._masks.get(start)
            if s is None:
                if self.table.prune_static and not self.table.agrees_on_static(start):
                    return self.for_state(start).check(plan, start, mode)
                s = self.table.bits.mask(start) | BitSets.ALWAYS
                _remember(self._masks, start, s)
            context = (self, start, s)
        steps = plan if type(plan) is list else self.plan_steps(plan)
        # JSON steps with the household fields (the common case) are looked up in the nested
        # cache inline; any other step, or one not cached yet, goes through `_moves_of`
        if nested is not None and not (steps and type(steps[0]) is dict):
            nested = None
        violations = None
        index = -1
        for step in steps:
            index += 1
            if nested is not None:
                try:
                    moves = nested[step["action"]][step["object"]][step["target"]]
                except (KeyError, TypeError):  # not cached yet, a missing field, not a dict
                    moves = self._moves_of(step, index)
                else:
                    if "args" in step:  # `args` outranks the fields (vocabulary.step_words)
                        moves = self._moves_of(step, index)
            else:
                moves = self._moves_of(step, index)
            try:
                s = moves[s]  # a move made before
                continue
            except KeyError:
                after = moves.move(s)
            if after is not None:
                s = after
                continue
            if violations is None:
                violations = []
            violations.extend(self._explain_fast(context, s, moves.fast[4][3], index, step))
            if stop:
                break
        if violations is None:  # an accepted plan: its verdict may have been made before
            found = self._accepted.get(s)
            if found is not None and found[1] == index + 1:
                return found
        if goal_test is None:
            goal = None if goal_literals is None else s & goal_literals == goal_pos
        else:
            goal = goal_test(s)
        verdict: Verdict = _new_tuple(Verdict, (violations is None, index + 1, s, goal,
                                                () if violations is None else tuple(violations),
                                                context))
        if violations is None:
            _remember(self._accepted, s, verdict)
        return verdict

    def _check_sets(self, steps: Sequence[Any], state: Iterable[tuple[Any, ...]] | None,
                    stop: bool) -> Verdict:
        """`check` on a mutable set state, for a gate's first check: each step is bound to its
        action and objects (`_bind`) and run by its action's generated set function (or, for
        an action with quantifiers, disjunctions or conditional effects, by its ground action);
        nothing is ground but what a step needs that way and what a rejected step's
        explanation needs. Same verdict as the loop on bit sets."""
        table = self.table
        if state is None:
            s = set(table.initial_state)
        else:
            start = self._state(state)
            if table.prune_static and not table.agrees_on_static(start):
                return self.for_state(start).check(steps, start, "first" if stop else "all")
            s = set(start)
        run_of = table.schema.runs.get
        declared_of = table.declared.get
        objects_of = table.objects_of_keys
        plan_step = PlanStep  # locals: this loop runs once per step of every first check
        violations = None
        index = -1
        for index, step in enumerate(steps):
            # a PlanStep whose words name its action and objects exactly: bound and run by
            # the action's generated function (which declines anything else: that step, like
            # every other, is bound the general way, to the same action and objects)
            if type(step) is plan_step:
                run_words = run_of(step.action)
                if run_words is not None:
                    applied = run_words(s, step.args, declared_of, objects_of)
                    if applied:
                        continue
                    failed = self._set_step(step, index, s, applied is False)
                else:
                    failed = self._set_step(step, index, s)
            else:
                failed = self._set_step(step, index, s)
            if failed is None:
                continue
            if violations is None:
                violations = failed
            else:
                violations.extend(failed)
            if stop:
                break
        return _new_tuple(Verdict, (violations is None, index + 1, s, table.goal_holds_in(s),
                                    () if violations is None else tuple(violations), None))

    def _set_step(self, step: Any, index: int, s: set[GroundAtom],
                  rejected_as_written: bool = False) -> list[Violation] | None:
        """One step of a first check bound the general way (`_bind`) and applied to `s` in
        place: None when it applies, else its violations (`s` untouched).
        `rejected_as_written`: the step is a PlanStep whose words name its action and objects
        exactly, and its action's words function found it not applicable."""
        table = self.table
        if rejected_as_written:
            return self._explain_step(table.schema.words[step.action].action,
                                      tuple(map(str.lower, step.args)), s, index, step)
        try:
            bound = self._bind(step, index)
        except StepRejected as rejected:
            return [_at(rejected.violation, index)]
        if isinstance(bound, Instances):
            action = bound.named.action
            first = self._apply_instances(bound, s)
            if first is None:
                return None
            objects = first
        else:
            named, objects = bound
            action = named.action
            run = named.template.step
            applied = None if run is None else run(s, objects, table.objects_of_keys)
            if applied:
                return None
            # no function, or too many instances: the set form
            if applied is None and _apply_in_place(table.ground(action, objects), s) is None:
                return None
        return self._explain_step(action, objects, s, index, step)

    def _apply_instances(self, bound: Instances, s: set[GroundAtom]) -> tuple[str, ...] | None:
        """Act on the first of `bound`'s candidates that applies in `s` (in place), by the
        action's step function while it has one for them; None when one applied, else the
        first candidate's objects (whose violations the step reports)."""
        table = self.table
        action, run = bound.named.action, bound.named.template.step
        objects_of = table.objects_of_keys
        for position, objects in enumerate(bound.candidates):
            applied = None if run is None else run(s, objects, objects_of)
            if applied:
                return None
            if applied is None:  # no function, or too many instances: the ground actions
                rest = tuple(table.ground(action, o) for o in bound.candidates[position:])
                if _apply_in_place(Choice(rest), s) is None:
                    return None
                break
        return bound.candidates[0]

    def _explain_step(self, action: Action, objects: tuple[str, ...], s: set[GroundAtom],
                      index: int, step: Any) -> list[Violation]:
        """The violations of a first check's rejected step, `action` with `objects` in `s`:
        read from the action's template when its precondition is a conjunction of literals
        (`_explain_literals`, nothing ground), else `explain` of its ground action."""
        text = _step_text(step)
        return (self._explain_literals(action, objects, s, index, text)
                or self.explain(frozenset(s), self.table.ground(action, objects), index, text))

    def _explain_literals(self, action: Action, args: tuple[str, ...],
                          state: State | set[GroundAtom], index: int,
                          step_text: str) -> list[Violation] | None:
        """`explain` of `action` with object keys `args` in `state` without grounding it, when
        its precondition is a conjunction of literals (None otherwise, or when it holds): the
        same violations in the same order (`PreconditionTable.failed_literals`), each
        literal's code and annotated message looked up once per domain (`_literal_reports`)."""
        table = self.table
        found = table.failed_literals(action, args, state)
        if not found:
            return None
        reports = _literal_reports(table, action)
        text = action_text(action, args, table.object_names)
        step_text = step_text or text.strip("()")
        out = []
        for position, values in found:
            positive, predicate, code, reason_message = reports[position]
            atom_text = table.format_atom((predicate or EQUALS, *values))
            literal = atom_text if positive else f"(not {atom_text})"
            if reason_message is not None:
                message = _fill(reason_message, action_bindings(action, args, table.object_names))
            else:
                message = _literal_message(text, literal, positive,
                                           atom_text if predicate else None)
            atoms = ((positive, (predicate, *values)),) if predicate else ()
            out.append(_violation_of(index, step_text, text, code, literal, message, atoms))
        return out

    def _explain_fast(self, context: tuple[Gate, State, int], s: int, ground: Any, index: int,
                      step: Any) -> list[Violation]:
        """The violations of a rejected step (`ground` as the check-loop tuple holds it), the
        check having started from `context` (`(gate, start state, its mask)`)."""
        if isinstance(ground, Violation):
            return [_at(ground, index)]
        _, start, start_mask = context
        state = self.table.bits.state(start, start_mask, s)
        if isinstance(ground, Choice):
            ground = ground.candidates[0]
        return self.explain(state, ground, index, _step_text(step))

    def _prepare(self) -> tuple[Any, ...]:
        """What every check needs, computed on the first: `(context, initial mask, nested,
        goal_literals, goal_pos, goal_test)`, `context` being `(self, initial state, its
        mask)`; `nested` the cache of household JSON steps (`_nested`), None when the domain's
        steps have other fields; the goal as masks when it is a conjunction of literals (it holds when
        `s & goal_literals == goal_pos`; `goal_test` None), else a test on bit sets (and
        `goal_literals` None too when there is no goal)."""
        table = self.table
        goal_literals = goal_pos = goal_test = None
        if table.goal is not None:
            masks = table.goal_masks
            if masks is None:
                goal_test = table.goal_test
            else:
                goal_pos, goal_neg = masks
                goal_literals = goal_pos | goal_neg
        start_mask = table.initial_mask
        nested = self._nested if self._simple_fields else None
        self._prepared = ((self, table.initial_state, start_mask), start_mask, nested,
                          goal_literals, goal_pos, goal_test)
        return self._prepared

    def _state(self, state: Iterable[tuple[Any, ...]]) -> Atoms:
        if isinstance(state, frozenset):
            return state  # states the gate hands out are already interned lower-case tuples
        return frozenset(self.table.atom(tuple(str(p).lower() for p in atom)) for atom in state)

    def applicable(self, state: Atoms, ground: GroundAction, index: int = 0,
                   step_text: str = "") -> Violation | None:
        """None when `ground` can run in `state`, else its first violation."""
        if ground.applicable(state):
            return None
        return self.explain(state, ground, index, step_text)[0]

    def apply(self, state: Atoms, ground: GroundAction) -> Atoms:
        return ground.apply(state)

    def goal_holds(self, state: State) -> bool:
        """Whether the goal holds (True when the problem has no goal)."""
        return self.table.goal is None or self.table.goal.holds(state)

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
        if self._goal_parts is None:
            parts = goal.parts if isinstance(goal, And) else (goal,)
            self._goal_parts = tuple(self.table.ground_condition(part, {}, anchor="")
                                     for part in parts)
        formulas = goal.parts if isinstance(goal, And) else (goal,)
        return [(formula, part.holds(state))
                for formula, part in zip(formulas, self._goal_parts)]

    def goal_unmet(self, state: State) -> list[str]:
        """The goal's failed literals/disjunctions as PDDL text (empty when it holds)."""
        if self.table.goal is None:
            return []
        return [self._failure_text(f) for f in _failures(self.table.goal, state)]

    # -- explaining -----------------------------------------------------------------------

    def explain(self, state: Atoms, ground: GroundAction, index: int = 0,
                step_text: str = "") -> list[Violation]:
        """One violation per failed literal or disjunction of `ground`'s precondition."""
        step_text = step_text or ground.text.strip("()")
        failures: Sequence[GroundLiteral | AnyOf] | None = self.table.literal_failures(ground,
                                                                                      state)
        if failures is None:
            failures = _failures(ground.precondition, state)
        out = [self._violation(failure, ground, index, step_text) for failure in failures]
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
            spelled: str = names.get(key(term.name), term.name)
            return spelled

        text = write_formula(failure.source, name)
        return text if failure.positive else f"(not {text})"

    def _violation(self, failure: GroundLiteral | AnyOf, ground: GroundAction, index: int,
                   step_text: str) -> Violation:
        table = self.table
        action_key = key(ground.name)
        literal = self._failure_text(failure)
        if isinstance(failure, GroundLiteral):
            atoms: tuple[Any, ...] = () if failure.atom[0] == EQUALS else ((failure.positive, failure.atom),)
            equality = failure.atom[0] == EQUALS
            code = _code(action_key, failure.positive, "equal" if equality else failure.atom[0])
            message = _literal_message(ground.text, literal, failure.positive,
                                       None if equality else table.format_atom(failure.atom))
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
                message = _fill(reason.message, ground.bindings)
        return _violation_of(index, step_text, ground.text, code, literal, message, atoms)


def _apply_in_place(bound: GroundAction | Choice, state: set[GroundAtom]) -> GroundAction | None:
    """Apply a ground action, or the first applicable candidate of a `Choice`, to `state` in
    place; when none applies, return the ground action whose violations the step reports."""
    if type(bound) is Choice:
        for ground in bound.candidates:
            if ground.applicable(state):
                ground.apply_in_place(state)
                return None
        return bound.candidates[0]
    if bound.applicable(state):  # type: ignore[union-attr]
        bound.apply_in_place(state)  # type: ignore[union-attr]
        return None
    return bound  # type: ignore[return-value]


def _code(action_key: str, positive: bool, predicate: str) -> str:
    """The code of a failed literal: `<action>/requires/<predicate>` (`forbids` when negative;
    `equal` for `=`)."""
    return f"{action_key}/{'requires' if positive else 'forbids'}/{predicate}"


def _literal_message(action_text: str, literal: str, positive: bool,
                     atom_text: str | None) -> str:
    """Why a failed literal fails: `<action> requires <literal>, ...`; `atom_text` is the
    literal's atom in the source's spelling, None for `=`."""
    if atom_text is None:
        detail = "the objects differ" if positive else "the objects are the same"
    elif positive:
        detail = "which does not hold"
    else:
        detail = f"but {atom_text} holds"
    return f"{action_text} requires {literal}, {detail}"


def _literal_reports(table: PreconditionTable, action: Action) -> tuple[tuple[Any, ...], ...]:
    """What `_violation` derives from the domain alone for each literal of `action`'s
    precondition template, in the template's order: `(positive, predicate key ("" for `=`),
    code, annotated message or None)`, the code and message being the literal's `@sage
    reason` when it has one. Cached per domain (`DomainSchema.reports`)."""
    reports = table.schema.reports
    found = reports.get(id(action))
    if found is None:
        action_key = key(action.name)
        rows = []
        for literal in table.schema.template(action).literals:
            predicate = literal.predicate
            reason = table.reason(action, (literal.text, literal.anchor))
            code = (reason.code if reason is not None
                    else _code(action_key, literal.positive, predicate or "equal"))
            message = reason.message if reason is not None and reason.message else None
            rows.append((literal.positive, predicate, code, message))
        found = reports[id(action)] = tuple(rows)
    return found


def _fill(template: str, bindings: tuple[tuple[str, str], ...]) -> str:
    bound = {key(name): value for name, value in bindings}
    return re.sub(r"\?([A-Za-z_][\w\-]*)",
                  lambda m: bound.get(key(m.group(1)), m.group(0)), template)


def _at(violation: Violation, index: int) -> Violation:
    if violation.step == index:
        return violation
    return _violation_of(index, violation.step_text, violation.action, violation.code,
                         violation.literal, violation.message, violation.atoms)


def _failures(cond: Cond, state: State | set[GroundAtom]) -> list[GroundLiteral | AnyOf]:
    """The failed literals and disjunctions of `cond` in `state`, in source order, deduplicated."""
    out: list[GroundLiteral | AnyOf] = list(cond.unsat)
    seen: set[tuple[bool, tuple[Any, ...]]] = {(lit.positive, lit.atom) for lit in cond.unsat}
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
    return Gate(PreconditionTable(domain, problem))
