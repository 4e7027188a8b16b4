"""Compile a PDDL domain and problem into a precondition table that grounds lazily.

Semantics
---------
* **Objects and types.** The objects of a task are the domain constants followed by the problem
  objects (a name declared in both is one object whose types are merged; constants that the
  domain's actions use without declaring them, as ALFWorld does, are simply problem objects). An
  object belongs to its declared types, their ancestors (a type with several parents, an
  `either` parent, belongs to all of them) and `object`. An `(either a b)` parameter or
  quantified variable accepts an object of any of the listed types; an untyped one accepts any.
* **Atoms.** A ground atom is a tuple of lower-case strings, `("holding", "apple")`; every atom
  the table creates is interned, so equal atoms are the same object. A state is a frozenset of
  atoms (closed world: what is not in it is false). `Not` facts in `:init` are documentation of
  absence and ignored; numeric initial values are ignored.
* **Grounding.** An action and a tuple of object names become a `GroundAction` on first use and
  are cached. Quantifiers range over the objects of their types and are expanded when the action
  is grounded (`forall` becomes a conjunction, `exists` a disjunction); equality is decided at
  grounding time. What remains is a conjunction whose literals are two frozensets (`pre_pos`,
  `pre_neg`) plus, only where the formula has a disjunction or an implication, a closure per such
  part. Checking is `pre_pos <= state and state.isdisjoint(pre_neg)` then the closures; applying
  is `(state - delete) | add`, with conditional effects evaluated on the state *before* the step
  (delete-then-add: an atom both deleted and added holds afterwards).
* **Costs.** `increase`/`decrease` of a 0-ary cost fluent (the one the problem's metric names,
  or `total-cost`/`totalCost`) is ignored: costs never change whether a plan is valid.
* **Scope.** Numeric comparisons, other numeric effects, durative actions, derived predicates,
  preferences, `oneof` and any other `Unsupported` node make `compile_table` raise
  `UnsupportedConstruct` naming the construct and its line:column.

Annotations (`; @sage alias|step|reason`, see docs/annotations.md) are read here too: action
aliases and name matching (case, spaces, `_` and `-` ignored), the JSON-field map of each action's
parameters, and the friendly code and message of a precondition literal.
"""
from __future__ import annotations

import itertools
import re
import shlex
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Union

from ..pddl.errors import PDDLSemanticError, UnsupportedConstruct
from ..pddl.model import (
    Action, And, Annotation, Atom, Comparison, Constant, Domain, Equals, Exists, Forall,
    ForallEffect, FunctionTerm, Imply, Location, Not, NumericEffect, Or, Problem,
    Typed, Unsupported, Variable, When, key,
)

GroundAtom = tuple  # ("predicate", "arg", ...), all lower case
State = frozenset

EQUALS = "="
"""Predicate name of the pseudo-atom `("=", a, b)` used to report a failed equality."""


# --- ground conditions ---------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class GroundLiteral:
    """A ground literal of a condition, with where it came from for reporting.

    `schema` is the canonical text of the literal as written in the action (variables kept,
    `(not ...)` when negative); `anchor` the canonical text of the top-level precondition conjunct
    that contains it. A `@sage reason` annotation may name either.
    """

    atom: GroundAtom
    positive: bool
    schema: str
    anchor: str


@dataclass(frozen=True, slots=True, eq=False)
class AnyOf:
    """A ground disjunction (from `or`, `exists`, a negated `and`/`forall`, ...).

    Single-literal alternatives are kept as two sets (`any_pos`: one present suffices;
    `any_neg`: one absent suffices), so a clause is checked with two set operations.
    `source`/`bindings`/`positive` let the reporter print it as written, with the action's
    parameters (and enclosing quantified variables) replaced by objects.
    """

    parts: tuple["Cond", ...]
    source: object
    bindings: tuple[tuple[str, str], ...]
    positive: bool
    schema: str
    anchor: str
    any_pos: frozenset = frozenset()
    any_neg: frozenset = frozenset()
    complex_parts: tuple["Cond", ...] = ()

    @classmethod
    def of(cls, parts: tuple["Cond", ...], source: object, bindings: tuple, positive: bool,
           schema: str, anchor: str) -> "AnyOf":
        any_pos, any_neg, complex_parts = set(), set(), []
        for part in parts:
            if part.subs or part.unsat or len(part.pos) + len(part.neg) != 1:
                complex_parts.append(part)
            elif part.pos:
                any_pos |= part.pos
            else:
                any_neg |= part.neg
        return cls(parts, source, bindings, positive, schema, anchor, frozenset(any_pos),
                   frozenset(any_neg), tuple(complex_parts))

    @property
    def is_clause(self) -> bool:
        """Only single-literal alternatives, at least one of them negative."""
        return not self.complex_parts and bool(self.any_neg)

    def holds(self, state: State) -> bool:
        return (not self.any_pos.isdisjoint(state) or not self.any_neg <= state
                or any(part.holds(state) for part in self.complex_parts))


class ClauseIndex:
    """Many clauses checked together: a clause can only fail when all its negative atoms are
    present, so each is filed under one of them and only clauses whose atom is in the state are
    evaluated (the `(not (exists (?o) (and (inside ?x ?o) (closed ?o))))` pattern)."""

    __slots__ = ("index", "keys")

    def __init__(self, clauses: list[AnyOf]):
        self.index: dict = {}
        for clause in clauses:
            trigger = min(clause.any_neg)  # any of them; min keeps it deterministic
            self.index.setdefault(trigger, []).append(clause)
        self.keys = frozenset(self.index)

    def holds(self, state: State) -> bool:
        for atom in self.keys & state:
            for clause in self.index[atom]:
                if not clause.holds(state):
                    return False
        return True


@dataclass(frozen=True, slots=True, eq=False)
class Implies:
    """A ground implication: when `condition` holds, `then` must hold."""

    condition: "Cond"
    then: "Cond"

    def holds(self, state: State) -> bool:
        return not self.condition.holds(state) or self.then.holds(state)


@dataclass(frozen=True, slots=True, eq=False)
class Cond:
    """A ground conjunction: literals as two frozensets, plus disjunctions/implications.

    `literals` lists the literals in source order (for reporting every failed one); `unsat` holds
    equalities decided false at grounding time, which make the conjunction false in every state.
    """

    pos: frozenset
    neg: frozenset
    literals: tuple[GroundLiteral, ...] = ()
    subs: tuple[Union[AnyOf, Implies], ...] = ()
    unsat: tuple[GroundLiteral, ...] = ()

    def holds(self, state: State) -> bool:
        if self.unsat or not self.pos <= state or not state.isdisjoint(self.neg):
            return False
        for sub in self.subs:
            if not sub.holds(state):
                return False
        return True

    @property
    def is_literal(self) -> bool:
        """Exactly one positive literal and nothing else."""
        return len(self.pos) == 1 and not (self.neg or self.subs or self.unsat)

    @property
    def is_true(self) -> bool:
        return not (self.pos or self.neg or self.subs or self.unsat)

    @property
    def is_false(self) -> bool:
        return bool(self.unsat)


TRUE = Cond(frozenset(), frozenset())


def conjoin(conds: Iterable[Cond]) -> Cond:
    """The conjunction of ground conditions, flattened."""
    conds = [c for c in conds if not c.is_true]
    if not conds:
        return TRUE
    if len(conds) == 1:
        return conds[0]
    return Cond(
        frozenset().union(*(c.pos for c in conds)),
        frozenset().union(*(c.neg for c in conds)),
        tuple(itertools.chain.from_iterable(c.literals for c in conds)),
        tuple(itertools.chain.from_iterable(c.subs for c in conds)),
        tuple(itertools.chain.from_iterable(c.unsat for c in conds)),
    )


# --- ground actions ------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, eq=False)
class ConditionalEffect:
    condition: Cond
    add: frozenset
    delete: frozenset


@dataclass(frozen=True, slots=True, eq=False)
class ConditionalEffects:
    """The conditional effects of a ground action, indexed so that applying them costs about
    the number of effects that fire rather than the number of `forall` instances.

    * `triggered`: effects whose condition has a positive literal, filed under the first one as
      (rest of the condition or None, add, delete); only those whose trigger atom is in the state
      are evaluated.
    * `absent`: effects whose condition is one negative literal and whose effect atoms no other
      such effect touches: they all fire (`absent_add`/`absent_delete`) except those whose atom
      is present, which are subtracted.
    * `general`: the rest, evaluated one by one.
    """

    triggered: dict
    trigger_keys: frozenset
    absent: dict
    absent_keys: frozenset
    absent_add: frozenset
    absent_delete: frozenset
    general: tuple[ConditionalEffect, ...]

    @classmethod
    def build(cls, effects: list[ConditionalEffect]) -> "ConditionalEffects | None":
        if not effects:
            return None
        triggered: dict = {}
        absent: dict = {}
        general: list[ConditionalEffect] = []
        for effect in effects:
            cond = effect.condition
            if cond.pos:
                trigger = next(lit.atom for lit in cond.literals if lit.positive)
                # the trigger alone decides a one-literal condition: no need to evaluate it
                rest = None if cond.is_literal else cond
                triggered.setdefault(trigger, []).append((rest, effect.add, effect.delete))
            elif len(cond.neg) == 1 and not cond.subs and not cond.unsat:
                (atom,) = cond.neg
                add, delete = absent.get(atom, (frozenset(), frozenset()))
                absent[atom] = (add | effect.add, delete | effect.delete)
            else:
                general.append(effect)
        absent_add = frozenset().union(*(a for a, _ in absent.values()))
        absent_delete = frozenset().union(*(d for _, d in absent.values()))
        disjoint = (sum(len(a) for a, _ in absent.values()) == len(absent_add)
                    and sum(len(d) for _, d in absent.values()) == len(absent_delete))
        if not disjoint:  # the subtraction trick needs each effect atom owned by one condition
            general += [ConditionalEffect(Cond(frozenset(), frozenset((atom,))), a, d)
                        for atom, (a, d) in absent.items()]
            absent, absent_add, absent_delete = {}, frozenset(), frozenset()
        return cls({k: tuple(v) for k, v in triggered.items()}, frozenset(triggered),
                   absent, frozenset(absent), absent_add, absent_delete, tuple(general))

    def fire(self, state: State) -> tuple[set, set]:
        """(add, delete) of the effects whose conditions hold in `state` (the pre-state)."""
        add: set = set()
        delete: set = set()
        for atom in self.trigger_keys & state:
            for condition, effect_add, effect_delete in self.triggered[atom]:
                if condition is None or condition.holds(state):
                    add |= effect_add
                    delete |= effect_delete
        if self.absent_keys:
            present = self.absent_keys & state
            if present:
                fired_add, fired_delete = set(self.absent_add), set(self.absent_delete)
                for atom in present:
                    not_add, not_delete = self.absent[atom]
                    fired_add -= not_add
                    fired_delete -= not_delete
                add |= fired_add
                delete |= fired_delete
            else:
                add |= self.absent_add
                delete |= self.absent_delete
        for effect in self.general:
            if effect.condition.holds(state):
                add |= effect.add
                delete |= effect.delete
        return add, delete


@dataclass(frozen=True, slots=True, eq=False)
class GroundAction:
    """An action with its parameters bound to objects, compiled to sets (pyperplan's Operator).

    `checks` holds the closures that the precondition needs beyond the two literal sets (one per
    disjunction/implication, and a constant-false one when an equality failed at grounding).
    """

    schema: Action
    args: tuple[str, ...]
    text: str
    bindings: tuple[tuple[str, str], ...]
    precondition: Cond
    pre_pos: frozenset
    pre_neg: frozenset
    checks: tuple[Callable[[State], bool], ...]
    add: frozenset
    delete: frozenset
    conditional: ConditionalEffects | None = None

    @property
    def name(self) -> str:
        return self.schema.name

    def applicable(self, state: State) -> bool:
        return (self.pre_pos <= state and state.isdisjoint(self.pre_neg)
                and all(check(state) for check in self.checks))

    def apply(self, state: State) -> State:
        """The successor state (a new frozenset)."""
        if self.conditional is None:
            return (state - self.delete) | self.add
        add, delete = self.conditional.fire(state)
        return ((state - self.delete) - delete) | self.add | add

    def apply_in_place(self, state: set) -> None:
        """Apply to a mutable set: O(|effects|), no copy of the state."""
        if self.conditional is None:
            state -= self.delete
            state |= self.add
            return
        add, delete = self.conditional.fire(state)  # conditions read the pre-state
        state -= self.delete
        state -= delete
        state |= self.add
        state |= add


def _never(state: State) -> bool:
    return False


# --- canonical text --------------------------------------------------------------------------

_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def canonical_sexpr(text: str) -> str:
    """Lower-case, single-spaced s-expression text, used to match annotation literals."""
    out: list[str] = []
    for token in _TOKEN.findall(text.lower()):
        if out and token != ")" and out[-1] != "(":
            out.append(" ")
        out.append(token)
    return "".join(out)


def _typed_text(variables: tuple[Typed, ...]) -> str:
    parts = []
    for v in variables:
        if not v.types:
            parts.append(f"?{v.name}")
        elif len(v.types) == 1:
            parts.append(f"?{v.name} - {v.types[0]}")
        else:
            parts.append(f"?{v.name} - (either {' '.join(v.types)})")
    return " ".join(parts)


def formula_text(node: object, names: Callable[[object], str] = lambda t: str(t)) -> str:
    """PDDL text of a formula or effect; `names` renders each term (to substitute bindings)."""
    def text(n: object) -> str:
        if isinstance(n, Atom):
            return "(" + " ".join([n.predicate, *(names(a) for a in n.args)]) + ")"
        if isinstance(n, Equals):
            return f"(= {names(n.left)} {names(n.right)})"
        if isinstance(n, Not):
            return f"(not {text(n.arg)})"
        if isinstance(n, And):
            return "(and" + "".join(" " + text(p) for p in n.parts) + ")"
        if isinstance(n, Or):
            return "(or" + "".join(" " + text(p) for p in n.parts) + ")"
        if isinstance(n, Imply):
            return f"(imply {text(n.antecedent)} {text(n.consequent)})"
        if isinstance(n, Exists):
            return f"(exists ({_typed_text(n.variables)}) {text(n.body)})"
        if isinstance(n, Forall):
            return f"(forall ({_typed_text(n.variables)}) {text(n.body)})"
        if isinstance(n, When):
            return f"(when {text(n.condition)} {text(n.effect)})"
        if isinstance(n, ForallEffect):
            return f"(forall ({_typed_text(n.variables)}) {text(n.effect)})"
        if isinstance(n, Unsupported):
            return n.text
        return str(n)
    return text(node)


# --- annotations -----------------------------------------------------------------------------

def loose_name(name: str) -> str:
    """Action-name identity for plan steps: case, spaces, `_` and `-` ignored."""
    return re.sub(r"[\s_\-]+", "", name.lower())


@dataclass(frozen=True)
class Reason:
    code: str
    message: str


def _annotation_error(annotation: Annotation, message: str) -> PDDLSemanticError:
    return PDDLSemanticError(f"@sage {annotation.kind}: {message}", annotation.loc,
                             text=annotation.text)


def _split_reason(annotation: Annotation) -> tuple[str, str, str, str]:
    """`Action <literal> code "message"` -> (action, literal, code, message)."""
    text = annotation.text.strip()
    head, _, rest = text.partition(" ")
    rest = rest.lstrip()
    if not head or not rest:
        raise _annotation_error(annotation, "expected: <Action> <literal> <code> \"<message>\"")
    if rest.startswith("("):
        depth = 0
        for i, ch in enumerate(rest):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                literal, rest = rest[: i + 1], rest[i + 1:].strip()
                break
        else:
            raise _annotation_error(annotation, "unbalanced parentheses in the literal")
    else:
        literal, _, rest = rest.partition(" ")
        rest = rest.strip()
    try:
        words = shlex.split(rest)
    except ValueError as error:
        raise _annotation_error(annotation, f"cannot read code and message ({error})") from None
    if not words:
        raise _annotation_error(annotation, "missing the code after the literal")
    return head, literal, words[0], " ".join(words[1:])


# --- the table -------------------------------------------------------------------------------

def _walk(node: object) -> Iterator[object]:
    yield node
    if isinstance(node, Not):
        yield from _walk(node.arg)
    elif isinstance(node, (And, Or)):
        for part in node.parts:
            yield from _walk(part)
    elif isinstance(node, Imply):
        yield from _walk(node.antecedent)
        yield from _walk(node.consequent)
    elif isinstance(node, (Exists, Forall)):
        yield from _walk(node.body)
    elif isinstance(node, When):
        yield from _walk(node.condition)
        yield from _walk(node.effect)
    elif isinstance(node, ForallEffect):
        yield from _walk(node.effect)


class PreconditionTable:
    """A domain and problem compiled for checking plans: objects, types, actions, annotations,
    the initial state, the goal, and a cache of ground actions. Build it with `compile_table`."""

    def __init__(self, domain: Domain, problem: Problem):
        self.domain = domain
        self.problem = problem
        self._interned: dict[GroundAtom, GroundAtom] = {}
        self._canon: dict[object, str] = {}
        self._cost_fluents = self._find_cost_fluents()
        self._check_scope()
        self._resolve_types()
        self._resolve_objects()
        self._resolve_names()
        self._read_annotations()
        self._ground_cache: dict[tuple[str, tuple[str, ...]], GroundAction] = {}
        self.initial_state: State = self._initial_state()
        self.goal: Cond | None = None
        if not (isinstance(problem.goal, And) and not problem.goal.parts):
            self.goal = self.ground_formula(problem.goal, {}, True, anchor="")

    # -- scope ----------------------------------------------------------------------------

    def _find_cost_fluents(self) -> frozenset[str]:
        names = {"total-cost", "totalcost"}
        metric = self.problem.metric
        if metric is not None:
            for node in _walk_numeric(metric.expression):
                if isinstance(node, FunctionTerm) and not node.args:
                    names.add(key(node.name))
        return frozenset(names)

    def _unsupported(self, construct: str, loc: Location | None, context: str) -> UnsupportedConstruct:
        return UnsupportedConstruct(
            f"{construct} {context} is outside the gate's scope "
            "(it evaluates STRIPS/ADL with typing, equality, quantifiers, conditional effects "
            "and action costs)", loc)

    def _check_formula_scope(self, formula: object, context: str) -> None:
        for node in _walk(formula):
            if isinstance(node, Comparison):
                raise self._unsupported(f"numeric comparison `{node.op}`", node.loc, context)
            if isinstance(node, Unsupported):
                raise self._unsupported(node.construct, node.loc, context)
            if isinstance(node, NumericEffect):
                cost = (node.op in ("increase", "decrease") and not node.fluent.args
                        and key(node.fluent.name) in self._cost_fluents)
                if not cost:
                    raise self._unsupported(
                        f"numeric effect `({node.op} ({node.fluent.name}) ...)`", node.loc, context)

    def _check_scope(self) -> None:
        domain, problem = self.domain, self.problem
        if domain.unsupported:
            first = domain.unsupported[0]
            raise self._unsupported(first.construct, first.loc, f"in domain {domain.name}")
        for action in domain.actions:
            context = f"in action {action.name}"
            self._check_formula_scope(action.precondition, context)
            self._check_formula_scope(action.effect, context)
        if problem.unsupported:
            first = problem.unsupported[0]
            raise self._unsupported(first.construct, first.loc, f"in problem {problem.name}")
        for fact in problem.init:
            if isinstance(fact, Unsupported):
                raise self._unsupported(fact.construct, fact.loc, f"in the :init of {problem.name}")
        self._check_formula_scope(problem.goal, f"in the goal of {problem.name}")

    # -- types and objects ----------------------------------------------------------------

    def _resolve_types(self) -> None:
        parents: dict[str, set[str]] = {}
        for typedef in self.domain.types:
            parents.setdefault(key(typedef.name), set()).update(key(p) for p in typedef.parents)
        self._type_parents = parents
        self._ancestors: dict[str, frozenset[str]] = {}

    def ancestors(self, type_name: str) -> frozenset[str]:
        """The type, its ancestors and `object`."""
        type_key = key(type_name)
        found = self._ancestors.get(type_key)
        if found is None:
            seen = {type_key, "object"}
            todo = [type_key]
            while todo:
                for parent in self._type_parents.get(todo.pop(), ()):
                    if parent not in seen:
                        seen.add(parent)
                        todo.append(parent)
            found = self._ancestors[type_key] = frozenset(seen)
        return found

    def _resolve_objects(self) -> None:
        spelling: dict[str, str] = {}
        types: dict[str, set[str]] = {}
        declared: dict[str, list[str]] = {}
        for typed in (*self.domain.constants, *self.problem.objects):
            name = key(typed.name)
            spelling.setdefault(name, typed.name)
            bucket = types.setdefault(name, set())
            declared.setdefault(name, [])
            for type_name in typed.types or ("object",):
                bucket |= self.ancestors(type_name)
                if type_name not in declared[name]:
                    declared[name].append(type_name)
        self.object_names: dict[str, str] = spelling
        """Object key -> original spelling, in declaration order."""
        self.object_types: dict[str, frozenset[str]] = {n: frozenset(t) for n, t in types.items()}
        self.declared_types: dict[str, tuple[str, ...]] = {n: tuple(t) for n, t in declared.items()}
        self._objects_of: dict[tuple[str, ...], tuple[str, ...]] = {}

    def objects_of(self, types: tuple[str, ...]) -> tuple[str, ...]:
        """Object keys that fit a parameter typed `types` (() = any), in declaration order."""
        wanted = tuple(key(t) for t in types)
        found = self._objects_of.get(wanted)
        if found is None:
            if not wanted or "object" in wanted:
                found = tuple(self.object_names)
            else:
                want = set(wanted)
                found = tuple(o for o, t in self.object_types.items() if t & want)
            self._objects_of[wanted] = found
        return found

    def fits(self, obj: str, types: tuple[str, ...]) -> bool:
        if not types:
            return True
        have = self.object_types.get(obj, frozenset({"object"}))
        return any(key(t) in have for t in types)

    # -- names ----------------------------------------------------------------------------

    def _resolve_names(self) -> None:
        self.predicate_names: dict[str, str] = {key(p.name): p.name for p in self.domain.predicates}
        self.actions: dict[str, Action] = {}
        self._loose: dict[str, Action] = {}
        for action in self.domain.actions:
            self.actions.setdefault(key(action.name), action)
            self._loose.setdefault(loose_name(action.name), action)

    def resolve_action(self, name: str) -> Action | None:
        """The action a step names: exact (case-insensitive), then alias/loose match."""
        return self.actions.get(key(name)) or self._loose.get(loose_name(name))

    def atom(self, parts: tuple[str, ...]) -> GroundAtom:
        return self._interned.setdefault(parts, parts)

    def format_atom(self, atom: GroundAtom) -> str:
        """`("found", "apple")` -> `(found Apple)` in the domain's and problem's spelling."""
        head, *args = atom
        head = self.predicate_names.get(head, head)
        return "(" + " ".join([head, *(self.object_names.get(a, a) for a in args)]) + ")"

    def format_literal(self, literal: GroundLiteral) -> str:
        text = self.format_atom(literal.atom)
        return text if literal.positive else f"(not {text})"

    # -- annotations ----------------------------------------------------------------------

    def _read_annotations(self) -> None:
        self.step_fields: dict[str, tuple[tuple[str, ...], ...]] = {}
        self.reasons: dict[tuple[str, str], Reason] = {}
        for annotation in self.domain.annotations:
            kind = annotation.kind.lower()
            if kind == "alias":
                words = annotation.text.split()
                action = self._annotated_action(annotation, words[0] if words else "")
                for alias in words[1:]:
                    self._loose.setdefault(loose_name(alias), action)
            elif kind == "step":
                words = annotation.text.split()
                action = self._annotated_action(annotation, words[0] if words else "")
                fields = tuple(tuple(f for f in w.split("|") if f) for w in words[1:])
                if len(fields) != len(action.parameters):
                    raise _annotation_error(
                        annotation, f"{action.name} has {len(action.parameters)} parameter(s) "
                        f"but the annotation maps {len(fields)}")
                self.step_fields[key(action.name)] = fields
            elif kind == "reason":
                action_name, literal, code, message = _split_reason(annotation)
                action = self._annotated_action(annotation, action_name)
                wanted = canonical_sexpr(literal)
                if wanted not in self._literal_texts(action):
                    raise _annotation_error(
                        annotation, f"{literal} is not a precondition literal of {action.name}")
                self.reasons[(key(action.name), wanted)] = Reason(code, message)

    def _annotated_action(self, annotation: Annotation, name: str) -> Action:
        action = self.actions.get(key(name)) if name else None
        if action is None:
            raise _annotation_error(annotation, f"unknown action {name!r}")
        return action

    def _literal_texts(self, action: Action) -> set[str]:
        texts = set()
        for node in _walk(action.precondition):
            if isinstance(node, (Atom, Equals)):
                texts.add(self.canonical(node))
            texts.add(self.canonical(node))
        return texts

    def canonical(self, node: object, positive: bool = True) -> str:
        found = self._canon.get(node)
        if found is None:
            found = self._canon[node] = canonical_sexpr(formula_text(node))
        return found if positive else f"(not {found})"

    def reason(self, action: Action, literal_or_anchor: Iterable[str]) -> Reason | None:
        action_key = key(action.name)
        for text in literal_or_anchor:
            found = self.reasons.get((action_key, text))
            if found is not None:
                return found
        return None

    # -- state ----------------------------------------------------------------------------

    def _initial_state(self) -> State:
        facts = []
        for fact in self.problem.init:
            if isinstance(fact, Atom):  # Not facts document absence; FluentValues are numeric
                facts.append(self.atom((key(fact.predicate), *(key(a.name) for a in fact.args))))
        return frozenset(facts)

    # -- grounding ------------------------------------------------------------------------

    def ground(self, action: Action, args: tuple[str, ...]) -> GroundAction:
        """The cached ground action for `action` with object keys `args` (already checked)."""
        cache_key = (key(action.name), args)
        found = self._ground_cache.get(cache_key)
        if found is None:
            found = self._ground_cache[cache_key] = self._ground(action, args)
        return found

    @property
    def grounded_count(self) -> int:
        return len(self._ground_cache)

    def _ground(self, action: Action, args: tuple[str, ...]) -> GroundAction:
        env = {key(p.name): a for p, a in zip(action.parameters, args)}
        precondition = self.ground_formula(action.precondition, env, True, anchor=None)
        clauses = [sub for sub in precondition.subs if isinstance(sub, AnyOf) and sub.is_clause]
        checks = tuple(sub.holds for sub in precondition.subs
                       if not (isinstance(sub, AnyOf) and sub.is_clause))
        if len(clauses) > 1:
            checks = (ClauseIndex(clauses).holds, *checks)
        elif clauses:
            checks = (clauses[0].holds, *checks)
        if precondition.unsat:
            checks = (_never, *checks)
        add: list[GroundAtom] = []
        delete: list[GroundAtom] = []
        conditional: list[ConditionalEffect] = []
        self._ground_effect(action.effect, env, TRUE, add, delete, conditional)
        text = "(" + " ".join([action.name, *(self.object_names.get(a, a) for a in args)]) + ")"
        return GroundAction(
            schema=action, args=args, text=text,
            bindings=tuple((p.name, self.object_names.get(a, a))
                           for p, a in zip(action.parameters, args)),
            precondition=precondition, pre_pos=precondition.pos, pre_neg=precondition.neg,
            checks=checks, add=frozenset(add), delete=frozenset(delete),
            conditional=ConditionalEffects.build(conditional))

    def _term(self, term: object, env: dict[str, str]) -> str:
        if isinstance(term, Variable):
            value = env.get(key(term.name))
            if value is None:
                raise PDDLSemanticError(f"free variable ?{term.name}", term.loc)
            return value
        return key(term.name)  # a constant (declared or not: ALFWorld declares them per problem)

    def _instances(self, variables: tuple[Typed, ...], env: dict[str, str]) -> Iterator[dict[str, str]]:
        domains = [self.objects_of(v.types) for v in variables]
        names = [key(v.name) for v in variables]
        for values in itertools.product(*domains):
            inner = dict(env)
            inner.update(zip(names, values))
            yield inner

    def ground_formula(self, formula: object, env: dict[str, str], positive: bool,
                       anchor: str | None) -> Cond:
        """Ground `formula` (negated when not `positive`) under `env` into a `Cond`.

        `anchor` is the canonical text of the enclosing top-level precondition conjunct; None
        means `formula` is the whole precondition, whose conjuncts become the anchors.
        """
        if anchor is None:
            if isinstance(formula, And) and positive:
                return conjoin(self.ground_formula(p, env, True, self.canonical(p))
                               for p in formula.parts)
            anchor = self.canonical(formula, positive)
        if isinstance(formula, Atom):
            atom = self.atom((key(formula.predicate), *(self._term(a, env) for a in formula.args)))
            literal = GroundLiteral(atom, positive, self.canonical(formula, positive), anchor)
            if positive:
                return Cond(frozenset((atom,)), frozenset(), (literal,))
            return Cond(frozenset(), frozenset((atom,)), (literal,))
        if isinstance(formula, Equals):
            left, right = self._term(formula.left, env), self._term(formula.right, env)
            if (left == right) == positive:
                return TRUE
            literal = GroundLiteral((EQUALS, left, right), positive,
                                    self.canonical(formula, positive), anchor)
            return Cond(frozenset(), frozenset(), (literal,), (), (literal,))
        if isinstance(formula, Not):
            return self.ground_formula(formula.arg, env, not positive, anchor)
        if isinstance(formula, (And, Or)):
            conjunctive = isinstance(formula, And) == positive
            parts = (self.ground_formula(p, env, positive, anchor) for p in formula.parts)
            if conjunctive:
                return conjoin(parts)
            return self._any_of(parts, formula, env, positive, anchor)
        if isinstance(formula, Imply):
            condition = self.ground_formula(formula.antecedent, env, True, anchor)
            if positive:
                if condition.is_false:
                    return TRUE
                then = self.ground_formula(formula.consequent, env, True, anchor)
                if condition.is_true or then.is_true:
                    return then
                return Cond(frozenset(), frozenset(), (), (Implies(condition, then),))
            return conjoin([condition, self.ground_formula(formula.consequent, env, False, anchor)])
        if isinstance(formula, (Exists, Forall)):
            conjunctive = isinstance(formula, Forall) == positive
            parts = (self.ground_formula(formula.body, inner, positive, anchor)
                     for inner in self._instances(formula.variables, env))
            if conjunctive:
                return conjoin(parts)
            return self._any_of(parts, formula, env, positive, anchor)
        raise self._unsupported(type(formula).__name__, getattr(formula, "loc", None),
                                "in a condition")

    def _any_of(self, parts: Iterable[Cond], source: object, env: dict[str, str],
                positive: bool, anchor: str) -> Cond:
        kept = []
        for part in parts:
            if part.is_true:
                return TRUE
            if not part.is_false:
                kept.append(part)
        if len(kept) == 1:
            return kept[0]
        bindings = tuple(sorted(env.items()))
        any_of = AnyOf.of(tuple(kept), source, bindings, positive,
                          self.canonical(source, positive), anchor)
        return Cond(frozenset(), frozenset(), (), (any_of,))

    def _ground_effect(self, effect: object, env: dict[str, str], condition: Cond,
                       add: list, delete: list, conditional: list) -> None:
        if isinstance(effect, And):
            for part in effect.parts:
                self._ground_effect(part, env, condition, add, delete, conditional)
        elif isinstance(effect, (Atom, Not)):
            positive = isinstance(effect, Atom)
            atom_node = effect if positive else effect.arg
            if not isinstance(atom_node, Atom):
                raise PDDLSemanticError("an effect may only negate an atom", effect.loc)
            atom = self.atom((key(atom_node.predicate),
                              *(self._term(a, env) for a in atom_node.args)))
            if condition.is_true:
                (add if positive else delete).append(atom)
            else:
                conditional.append(ConditionalEffect(
                    condition, frozenset((atom,)) if positive else frozenset(),
                    frozenset() if positive else frozenset((atom,))))
        elif isinstance(effect, When):
            inner = conjoin([condition, self.ground_formula(effect.condition, env, True, "")])
            if not inner.is_false:
                self._ground_effect(effect.effect, env, inner, add, delete, conditional)
        elif isinstance(effect, ForallEffect):
            for inner_env in self._instances(effect.variables, env):
                self._ground_effect(effect.effect, inner_env, condition, add, delete, conditional)
        elif isinstance(effect, NumericEffect):
            pass  # a cost increase (anything else was rejected by _check_scope)
        else:
            raise self._unsupported(type(effect).__name__, getattr(effect, "loc", None),
                                    "in an effect")


def _walk_numeric(expression: object) -> Iterator[object]:
    yield expression
    for arg in getattr(expression, "args", ()) or ():
        if not isinstance(arg, (Variable, Constant)):
            yield from _walk_numeric(arg)


def compile_table(domain: Domain, problem: Problem) -> PreconditionTable:
    """Resolve `domain` and `problem` into a `PreconditionTable` (raises UnsupportedConstruct)."""
    return PreconditionTable(domain, problem)
