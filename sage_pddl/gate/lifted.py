"""An action lifted once per domain: its precondition and effect as templates over slots.

Semantics
---------
Grounding an action substitutes a step's objects for its parameters (`table.py`). Lifting
does, once per action, everything in that substitution that does not depend on the objects:
the negations are pushed onto the literals, nested conjunctions are flattened, each literal
gets its canonical text and its anchor (the canonical text of the top-level precondition
conjunct that holds it, `ground.GroundLiteral`), each term becomes a slot, and the static
literals of conditional effects are marked. Grounding a template gives the ground action the
PDDL semantics of `ground.py` states.

* **Values and slots.** A grounding fills one tuple of values (`Values`): the words the
  formulas name (predicate keys, constant keys, `=`), then the step's objects in parameter
  order, then, inside a quantifier, the objects its variables take. A term is the index of
  its value there, its slot; an atom is an `operator.itemgetter` of its predicate's and its
  terms' slots, so that applied to the values it is the ground atom (`AtomTemplate`). A
  variable names the innermost quantifier or parameter of its name.
* **Conditions.** A `ConditionTemplate` is a conjunction: its items in source order, each a
  literal (`LiteralTemplate`: an atom or an equality, with its polarity once the negations
  around it are pushed in), a conjunctive quantifier (`ForallTemplate`: `forall`, or a negated
  `exists`, expanded into the conjunction), a disjunction (`AnyOfTemplate`: `or`, `exists`, a
  negated `and` or `forall`) or an implication (`ImpliesTemplate`; a negated one is the
  conjunction of its condition and its negated consequent). A conjunction of literals of atoms
  only (most preconditions and quantifier bodies) also holds them column by column
  (`LiteralColumns`), which grounding makes at once.
* **Effects.** An effect is its items in source order: literals (`EffectLiteral`),
  conditional effects (`WhenTemplate`: a condition of literals, each marked static when no
  action changes its predicate, or any other condition as a `ConditionTemplate`) and
  quantified effects (`ForallEffectTemplate`, with the static literals of a `when` directly
  under it filed by the variable that completes them, so that grounding skips the bindings a
  static fact rules out). An `ActionTemplate` files the literals of its top-level conjunction
  (which hold unconditionally) apart as `add` and `delete`.
* **Errors.** A free variable, or an effect that negates anything but an atom, raises
  `PDDLSemanticError` at its file:line:col when the formula is lifted (an action: when a step
  first names it); a construct outside the gate's scope raises `UnsupportedConstruct`
  (`unsupported`), which compiling the gate has already raised for every action and goal.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from operator import itemgetter

from ..pddl.errors import PDDLSemanticError, UnsupportedConstruct
from ..pddl.model import (
    Action,
    And,
    Atom,
    Equals,
    Exists,
    Forall,
    ForallEffect,
    Imply,
    Location,
    Not,
    NumericEffect,
    Or,
    Term,
    Typed,
    Variable,
    When,
    key,
    walk,
)
from .ground import EQUALS, GroundAtom

Values = tuple[str, ...]
"""A grounding's values: the formulas' words, the step's objects, the quantified variables'
objects (see the module docstring)."""

AtomTemplate = Callable[[Values], GroundAtom]
"""An atom over slots: applied to a grounding's values, its ground atom."""

Canonical = Callable[[object, bool], str]
"""The canonical text of a formula node, negated when the flag is False
(`Vocabulary.canonical`)."""

Scope = dict[str, int]
"""Variable key -> its slot."""


def unsupported(construct: str, loc: Location | None, context: str) -> UnsupportedConstruct:
    """The error of a construct outside the gate's scope."""
    return UnsupportedConstruct(
        f"{construct} {context} is outside the gate's scope "
        "(it evaluates STRIPS/ADL with typing, equality, quantifiers, conditional effects "
        "and action costs)", loc)


def _atom_template(slots: tuple[int, ...]) -> AtomTemplate:
    if len(slots) == 1:  # a 0-ary atom: `itemgetter` of one index gives the item, not a tuple
        return itemgetter(slice(slots[0], slots[0] + 1))
    return itemgetter(*slots)


# --- conditions ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class LiteralTemplate:
    """A literal of a condition; an equality's atom is `("=", left, right)`."""

    atom: AtomTemplate
    positive: bool
    schema: str
    anchor: str
    equality: bool


@dataclass(frozen=True, slots=True)
class Quantified:
    """The variables of a quantifier: the types each ranges over (`()`: any object), and where
    the quantifier is written (for `GroundingTooLarge`)."""

    types: tuple[tuple[str, ...], ...]
    loc: Location | None


@dataclass(frozen=True, slots=True)
class ForallTemplate:
    """A conjunctive quantifier: its body, a conjunction, for every binding of its variables."""

    quantified: Quantified
    body: ConditionTemplate


@dataclass(frozen=True, slots=True)
class AnyOfTemplate:
    """A disjunction: its alternatives (`parts`), or, for a quantifier (`quantified`), its body
    for every binding. `source`, `positive`, `schema` and `anchor` are those of the ground
    `AnyOf`, and `scope` the variables in scope, sorted, whose values are its `bindings`."""

    parts: tuple[ConditionTemplate, ...]
    quantified: Quantified | None
    source: object
    positive: bool
    schema: str
    anchor: str
    scope: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class ImpliesTemplate:
    """An implication: when `condition` holds, `then` must hold."""

    condition: ConditionTemplate
    then: ConditionTemplate


ConditionItem = LiteralTemplate | ForallTemplate | AnyOfTemplate | ImpliesTemplate


@dataclass(frozen=True, slots=True)
class LiteralColumns:
    """A conjunction of literals of atoms (no equality), column by column: what grounding reads
    of each literal, in source order, without a look-up per literal. `negative` is the
    complement of `positive`, or None when every literal is positive."""

    atoms: tuple[AtomTemplate, ...]
    positive: tuple[bool, ...]
    negative: tuple[bool, ...] | None
    schemas: tuple[str, ...]
    anchors: tuple[str, ...]

    @classmethod
    def of(cls, literals: tuple[LiteralTemplate, ...]) -> LiteralColumns:
        positive = tuple(literal.positive for literal in literals)
        return cls(tuple(literal.atom for literal in literals), positive,
                   None if all(positive) else tuple(not sign for sign in positive),
                   tuple(literal.schema for literal in literals),
                   tuple(literal.anchor for literal in literals))


@dataclass(frozen=True, slots=True)
class ConditionTemplate:
    """A conjunction: its items, in source order."""

    items: tuple[ConditionItem, ...]
    literals: LiteralColumns | None
    """`items` by column when every item is a literal of an atom (no equality), else None:
    most preconditions and quantifier bodies, ground as their literals and the two sets of
    their atoms without walking items."""

    @classmethod
    def of(cls, items: Iterable[ConditionItem]) -> ConditionTemplate:
        items = tuple(items)
        literals = tuple(item for item in items
                         if isinstance(item, LiteralTemplate) and not item.equality)
        return cls(items, LiteralColumns.of(literals) if len(literals) == len(items) else None)


# --- effects ---------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class EffectLiteral:
    """An atom an effect adds (`positive`) or deletes."""

    atom: AtomTemplate
    positive: bool


@dataclass(frozen=True, slots=True)
class WhenTemplate:
    """A conditional effect. Its condition is `literals` (atom, positive, static) when it is
    a conjunction of literals; else it is `general`, and `literals` are the literals it
    starts with (a static one that does not hold makes it false without grounding it)."""

    literals: tuple[tuple[AtomTemplate, bool, bool], ...]
    general: ConditionTemplate | None
    effects: EffectTemplate


@dataclass(frozen=True, slots=True)
class ForallEffectTemplate:
    """A quantified effect: `effects` for every binding of the variables. `checks` holds, per
    variable, the static atoms of the `when` directly under it that this variable completes
    (`()` when there are none)."""

    quantified: Quantified
    checks: tuple[tuple[AtomTemplate, ...], ...]
    effects: EffectTemplate


EffectItem = EffectLiteral | WhenTemplate | ForallEffectTemplate
EffectTemplate = tuple[EffectItem, ...]
"""The items of an effect, in source order."""


@dataclass(frozen=True, slots=True)
class PlainTemplate:
    """A plain action's atoms, by what compiling a step does with them: an action whose
    precondition is a conjunction of literals of atoms (no equality) and whose effect has no
    conditional or quantified part. `required` and `forbidden` are the atoms of its positive
    and negative literals of predicates some action changes (those of `dynamic`),
    `static_required` and `static_forbidden` those of the others, which hold or not as the
    problem's facts say; `add` and `delete` its effect's."""

    required: tuple[AtomTemplate, ...]
    forbidden: tuple[AtomTemplate, ...]
    static_required: tuple[AtomTemplate, ...]
    static_forbidden: tuple[AtomTemplate, ...]
    add: tuple[AtomTemplate, ...]
    delete: tuple[AtomTemplate, ...]
    dynamic: frozenset[str]


@dataclass(frozen=True, slots=True)
class ActionTemplate:
    """An action lifted: a step's values are `words + args` (its objects' keys)."""

    action: Action
    words: Values
    precondition: ConditionTemplate
    add: tuple[AtomTemplate, ...]
    delete: tuple[AtomTemplate, ...]
    conditional: EffectTemplate
    """The rest of the effect (conditional and quantified effects), in source order."""
    plain: PlainTemplate | None
    """The action's atoms sorted for compiling a step straight to bits, when it is plain
    (`PlainTemplate`); None otherwise."""


def lift_action(action: Action, canonical: Canonical, dynamic: frozenset[str]) -> ActionTemplate:
    """`action` lifted; `dynamic` are the predicates some action of its domain changes."""
    lifter = _Lifter((action.precondition, action.effect), canonical, dynamic)
    scope, size = lifter.enter({}, len(lifter.words), action.parameters)
    precondition = lifter.condition(action.precondition, True, None, scope, size)
    add: list[AtomTemplate] = []
    delete: list[AtomTemplate] = []
    conditional: list[EffectItem] = []
    for item in lifter.effect(action.effect, scope, size):
        if type(item) is EffectLiteral:
            (add if item.positive else delete).append(item.atom)
        else:
            conditional.append(item)
    plain = None
    if precondition.literals is not None and not conditional:
        plain = _plain(precondition.literals, lifter.words + ("",) * len(action.parameters),
                       tuple(add), tuple(delete), dynamic)
    return ActionTemplate(action, lifter.words, precondition, tuple(add), tuple(delete),
                          tuple(conditional), plain)


def _plain(literals: LiteralColumns, values: Values, add: tuple[AtomTemplate, ...],
           delete: tuple[AtomTemplate, ...], dynamic: frozenset[str]) -> PlainTemplate:
    """A plain action's `PlainTemplate`. `values` are any values of its slots: an atom
    template's first slot is its predicate's word, which is all that is read of them."""
    sorted_atoms: tuple[list[AtomTemplate], ...] = ([], [], [], [])
    for atom, positive in zip(literals.atoms, literals.positive):
        static = atom(values)[0] not in dynamic
        sorted_atoms[2 * static + (not positive)].append(atom)
    required, forbidden, static_required, static_forbidden = map(tuple, sorted_atoms)
    return PlainTemplate(required, forbidden, static_required, static_forbidden, add, delete,
                         dynamic)


def lift_condition(formula: object, variables: Iterable[str], canonical: Canonical,
                   anchor: str | None) -> tuple[Values, ConditionTemplate]:
    """`formula` lifted as a whole condition, with `variables` (keys) given values after its
    words: (its words, its template). `anchor` is that of every literal; None means
    `formula` is a precondition, whose top-level conjuncts are the anchors."""
    lifter = _Lifter((formula,), canonical, frozenset())
    scope = {name: slot for slot, name in enumerate(variables, start=len(lifter.words))}
    return lifter.words, lifter.condition(formula, True, anchor, scope,
                                          len(lifter.words) + len(scope))


class _Lifter:
    """Lifts the formulas of one action (or one condition) over one tuple of words."""

    def __init__(self, formulas: Iterable[object], canonical: Canonical,
                 dynamic: frozenset[str]) -> None:
        self.canonical = canonical
        self.dynamic = dynamic
        slots: dict[str, int] = {}
        for formula in formulas:
            for node in walk(formula):
                if isinstance(node, Atom):
                    names = [node.predicate, *(t.name for t in node.args
                                               if type(t) is not Variable)]
                elif isinstance(node, Equals):
                    names = [EQUALS, *(t.name for t in (node.left, node.right)
                                       if type(t) is not Variable)]
                else:
                    continue
                for name in names:
                    slots.setdefault(key(name), len(slots))
        self.slots = slots
        """Word -> its slot."""
        self.words: Values = tuple(slots)

    def enter(self, scope: Scope, size: int, variables: tuple[Typed, ...]) -> tuple[Scope, int]:
        """The scope and the number of values inside a quantifier over `variables`."""
        inner = dict(scope)
        for slot, variable in enumerate(variables, start=size):
            inner[key(variable.name)] = slot
        return inner, size + len(variables)

    def quantified(self, variables: tuple[Typed, ...], loc: Location | None) -> Quantified:
        return Quantified(tuple(v.types for v in variables), loc)

    def slot(self, term: Term, scope: Scope) -> int:
        if type(term) is not Variable:
            return self.slots[key(term.name)]  # a constant (declared or not)
        found = scope.get(key(term.name))
        if found is None:
            raise PDDLSemanticError(f"free variable ?{term.name}", term.loc)
        return found

    def atom(self, predicate: str, terms: Iterable[Term], scope: Scope) -> AtomTemplate:
        return _atom_template((self.slots[key(predicate)],
                               *(self.slot(term, scope) for term in terms)))

    # -- conditions -----------------------------------------------------------------------

    def condition(self, formula: object, positive: bool, anchor: str | None, scope: Scope,
                  size: int) -> ConditionTemplate:
        """`formula` (negated when not `positive`) as a conjunction. `anchor` None: a
        precondition, whose top-level conjuncts are the anchors."""
        out: list[ConditionItem] = []
        if anchor is None and isinstance(formula, And) and positive:
            for part in formula.parts:
                self.items(part, True, self.canonical(part, True), scope, size, out)
        else:
            if anchor is None:
                anchor = self.canonical(formula, positive)
            self.items(formula, positive, anchor, scope, size, out)
        return ConditionTemplate.of(out)

    def items(self, formula: object, positive: bool, anchor: str, scope: Scope, size: int,
              out: list[ConditionItem]) -> None:
        """Append the conjuncts of `formula` (negated when not `positive`) to `out`."""
        if isinstance(formula, Atom):
            out.append(LiteralTemplate(self.atom(formula.predicate, formula.args, scope),
                                       positive, self.canonical(formula, positive), anchor,
                                       False))
        elif isinstance(formula, Equals):
            out.append(LiteralTemplate(self.atom(EQUALS, (formula.left, formula.right), scope),
                                       positive, self.canonical(formula, positive), anchor,
                                       True))
        elif isinstance(formula, Not):
            self.items(formula.arg, not positive, anchor, scope, size, out)
        elif isinstance(formula, (And, Or)):
            if isinstance(formula, And) == positive:  # a conjunction
                for part in formula.parts:
                    self.items(part, positive, anchor, scope, size, out)
            else:
                parts = tuple(self.condition(part, positive, anchor, scope, size)
                              for part in formula.parts)
                out.append(self.any_of(parts, None, formula, positive, anchor, scope))
        elif isinstance(formula, Imply):
            if positive:
                out.append(ImpliesTemplate(
                    self.condition(formula.antecedent, True, anchor, scope, size),
                    self.condition(formula.consequent, True, anchor, scope, size)))
            else:  # not (a -> b): a and not b
                self.items(formula.antecedent, True, anchor, scope, size, out)
                self.items(formula.consequent, False, anchor, scope, size, out)
        elif isinstance(formula, (Exists, Forall)):
            inner, inner_size = self.enter(scope, size, formula.variables)
            quantified = self.quantified(formula.variables, formula.loc)
            body = self.condition(formula.body, positive, anchor, inner, inner_size)
            if isinstance(formula, Forall) == positive:
                out.append(ForallTemplate(quantified, body))
            else:
                out.append(self.any_of((body,), quantified, formula, positive, anchor, scope))
        else:
            raise unsupported(type(formula).__name__, getattr(formula, "loc", None),
                              "in a condition")

    def any_of(self, parts: tuple[ConditionTemplate, ...], quantified: Quantified | None,
               source: object, positive: bool, anchor: str, scope: Scope) -> AnyOfTemplate:
        return AnyOfTemplate(parts, quantified, source, positive,
                             self.canonical(source, positive), anchor, tuple(sorted(scope.items())))

    # -- effects --------------------------------------------------------------------------

    def effect(self, effect: object, scope: Scope, size: int) -> EffectTemplate:
        out: list[EffectItem] = []
        self.effect_items(effect, scope, size, out)
        return tuple(out)

    def effect_items(self, effect: object, scope: Scope, size: int,
                     out: list[EffectItem]) -> None:
        if isinstance(effect, And):
            for part in effect.parts:
                self.effect_items(part, scope, size, out)
        elif isinstance(effect, (Atom, Not)):
            atom = effect.arg if isinstance(effect, Not) else effect
            if not isinstance(atom, Atom):
                raise PDDLSemanticError("an effect may only negate an atom", effect.loc)
            out.append(EffectLiteral(self.atom(atom.predicate, atom.args, scope),
                                     isinstance(effect, Atom)))
        elif isinstance(effect, When):
            out.append(self.when(effect, scope, size))
        elif isinstance(effect, ForallEffect):
            inner, inner_size = self.enter(scope, size, effect.variables)
            checks: tuple[tuple[AtomTemplate, ...], ...] = ()
            if isinstance(effect.effect, When):
                checks = self.static_checks(effect.effect.condition, inner, size,
                                            len(effect.variables))
            out.append(ForallEffectTemplate(self.quantified(effect.variables, effect.loc),
                                            checks, self.effect(effect.effect, inner, inner_size)))
        elif not isinstance(effect, NumericEffect):  # a cost (any other numeric effect is
            raise unsupported(type(effect).__name__,  # out of scope, refused at compile)
                              getattr(effect, "loc", None), "in an effect")

    def when(self, effect: When, scope: Scope, size: int) -> WhenTemplate:
        condition = effect.condition
        parts = condition.parts if isinstance(condition, And) else (condition,)
        effects = self.effect(effect.effect, scope, size)
        literals: list[tuple[AtomTemplate, bool, bool]] = []
        for part in parts:
            atom = part.arg if isinstance(part, Not) else part
            if not isinstance(atom, Atom):  # a quantifier, `or`, `=`...: a general condition
                return WhenTemplate(tuple(literals),
                                    self.condition(condition, True, "", scope, size), effects)
            literals.append((self.atom(atom.predicate, atom.args, scope), atom is part,
                             key(atom.predicate) not in self.dynamic))
        return WhenTemplate(tuple(literals), None, effects)

    def static_checks(self, condition: object, scope: Scope, first: int,
                      count: int) -> tuple[tuple[AtomTemplate, ...], ...]:
        """Per quantified variable (slots `first` to `first + count`), the static positive
        atoms of the conjunction `condition` whose last quantified variable it is: a binding
        that makes one false makes the condition false in every state."""
        parts = condition.parts if isinstance(condition, And) else (condition,)
        levels: list[list[AtomTemplate]] = [[] for _ in range(count)]
        for part in parts:
            if not isinstance(part, Atom) or key(part.predicate) in self.dynamic:
                continue
            depth = max((self.slot(term, scope) - first for term in part.args
                         if type(term) is Variable), default=-1)
            if depth >= 0:
                levels[depth].append(self.atom(part.predicate, part.args, scope))
        return tuple(map(tuple, levels)) if any(levels) else ()
