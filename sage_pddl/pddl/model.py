"""Immutable model of PDDL domains, problems and plans.

Every node is a frozen dataclass, so models hash, compare by value and can be shared freely.
Source locations (`loc`, a `Location`: a named tuple) are carried for error messages but never
take part in equality: a model parsed from a file equals the model parsed from its re-written
text.

Names keep the spelling of the source; PDDL names are case-insensitive, so every lookup goes
through `key(name)` (lower case). Variables are stored without their leading `?`.

Formulas (preconditions, goals, effect conditions) are built from `Atom`, `Equals`, `Not`, `And`,
`Or`, `Imply`, `Exists`, `Forall` and, for what the gate cannot evaluate, `Comparison` and
`Unsupported`. Effects are built from `Atom`, `Not(Atom)`, `And`, `When`, `ForallEffect`,
`NumericEffect` and `Unsupported`. Sections the gate cannot evaluate (durative actions, derived
predicates, ...) are kept as `Unsupported` nodes holding their source text, so a file parses,
re-writes and reports them by line and column.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

_Node = TypeVar("_Node")


def key(name: str) -> str:
    """The case-insensitive identity of a PDDL name."""
    return name.lower()


def atom_key(atom: Atom) -> tuple[str, ...]:
    """The case-insensitive identity of an atom whose terms are objects, as states hold it:
    its predicate's and its terms' keys, `(on B1 b2)` -> `("on", "b1", "b2")`."""
    args = atom.args
    # the common arities spelled out: a problem's every fact and goal literal comes here, and
    # a comprehension costs a call of its own
    if len(args) == 1:
        return (atom.predicate.lower(), args[0].name.lower())
    if len(args) == 2:
        return (atom.predicate.lower(), args[0].name.lower(), args[1].name.lower())
    return (atom.predicate.lower(), *[term.name.lower() for term in args])


class Location(NamedTuple):
    """Where a node starts in its source: 1-based line and column. A named tuple, not a
    dataclass: a parse makes one for most tokens, and a tuple is the cheapest immutable value
    Python makes (`tuple.__new__(Location, (file, line, column))` skips even the named tuple's
    own constructor)."""

    file: str | None
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file or '<string>'}:{self.line}:{self.column}"

    def __reduce__(self) -> tuple[Any, ...]:
        # unpickled as it is made, by tuple.__new__, not by the named tuple's own constructor
        # (a kept domain holds a location for most of its tokens: `pddl/cache.py`)
        return (tuple.__new__, (Location, tuple(self)))


def _loc() -> Location | None:
    return field(default=None, compare=False, repr=False)


# --- terms -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Variable:
    """A variable `?name` (stored without the `?`)."""

    name: str
    loc: Location | None = _loc()

    def __str__(self) -> str:
        return f"?{self.name}"


@dataclass(frozen=True)
class Constant:
    """A reference to a domain constant or problem object."""

    name: str
    loc: Location | None = _loc()

    def __str__(self) -> str:
        return self.name


Term = Variable | Constant


@dataclass(frozen=True)
class Typed:
    """A name with its declared types: () means untyped (`object`), several mean `(either ...)`.

    Used for parameters and quantified variables (name without `?`), objects and constants.
    """

    name: str
    types: tuple[str, ...] = ()
    loc: Location | None = _loc()


# --- numeric expressions ---------------------------------------------------------------------

@dataclass(frozen=True)
class Number:
    """A numeric literal, kept as written."""

    text: str
    loc: Location | None = _loc()

    @property
    def value(self) -> float:
        return float(self.text)


@dataclass(frozen=True)
class FunctionTerm:
    """A numeric fluent application such as `(total-cost)` or `(distance ?a ?b)`."""

    name: str
    args: tuple[Term, ...] = ()
    loc: Location | None = _loc()


@dataclass(frozen=True)
class Arithmetic:
    """An arithmetic expression `(op arg ...)` with op one of + - * /."""

    op: str
    args: tuple[NumericExpr, ...]
    loc: Location | None = _loc()


NumericExpr = Number | FunctionTerm | Arithmetic


# --- formulas --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Atom:
    """A predicate applied to terms; 0-ary predicates have no args."""

    predicate: str
    args: tuple[Term, ...] = ()
    loc: Location | None = _loc()


@dataclass(frozen=True)
class Equals:
    """`(= a b)` over objects."""

    left: Term
    right: Term
    loc: Location | None = _loc()


@dataclass(frozen=True)
class Not:
    arg: Formula
    loc: Location | None = _loc()


@dataclass(frozen=True)
class And:
    """Conjunction; `And(())` is the empty, always-true formula (and the empty effect)."""

    parts: tuple[Any, ...] = ()
    loc: Location | None = _loc()


@dataclass(frozen=True)
class Or:
    parts: tuple[Formula, ...] = ()
    loc: Location | None = _loc()


@dataclass(frozen=True)
class Imply:
    antecedent: Formula
    consequent: Formula
    loc: Location | None = _loc()


@dataclass(frozen=True)
class Exists:
    variables: tuple[Typed, ...]
    body: Formula
    loc: Location | None = _loc()


@dataclass(frozen=True)
class Forall:
    variables: tuple[Typed, ...]
    body: Formula
    loc: Location | None = _loc()


@dataclass(frozen=True)
class Comparison:
    """A numeric comparison `(op left right)`, op one of < <= > >= = (outside the gate's scope)."""

    op: str
    left: NumericExpr
    right: NumericExpr
    loc: Location | None = _loc()


@dataclass(frozen=True)
class Unsupported:
    """A construct that parses but that the gate cannot evaluate, kept as its source text.

    `construct` names it for error messages, e.g. ":durative-action", ":derived", "preference",
    "oneof", "numeric fluent".
    """

    construct: str
    text: str
    loc: Location | None = _loc()


Formula = Atom | Equals | Not | And | Or | Imply | Exists | Forall | Comparison | Unsupported


# --- effects ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class When:
    """Conditional effect `(when condition effect)`."""

    condition: Formula
    effect: Effect
    loc: Location | None = _loc()


@dataclass(frozen=True)
class ForallEffect:
    """Universal effect `(forall (vars) effect)`."""

    variables: tuple[Typed, ...]
    effect: Effect
    loc: Location | None = _loc()


@dataclass(frozen=True)
class NumericEffect:
    """`(increase|decrease|assign|scale-up|scale-down fluent value)`.

    The gate ignores `increase`/`decrease` of a 0-ary cost fluent (action costs do not affect
    validity) and reports any other numeric effect as outside its scope.
    """

    op: str
    fluent: FunctionTerm
    value: NumericExpr
    loc: Location | None = _loc()


Effect = Atom | Not | And | When | ForallEffect | NumericEffect | Unsupported


def walk(node: object) -> Iterator[object]:
    """`node` and its sub-formulas/sub-effects, pre-order, children in source order (terms and
    numeric expressions are not visited)."""
    yield node
    if isinstance(node, Not):
        yield from walk(node.arg)
    elif isinstance(node, (And, Or)):
        for part in node.parts:
            yield from walk(part)
    elif isinstance(node, Imply):
        yield from walk(node.antecedent)
        yield from walk(node.consequent)
    elif isinstance(node, (Exists, Forall)):
        yield from walk(node.body)
    elif isinstance(node, When):
        yield from walk(node.condition)
        yield from walk(node.effect)
    elif isinstance(node, ForallEffect):
        yield from walk(node.effect)


def walk_numeric(expression: object) -> Iterator[object]:
    """A numeric expression and its sub-expressions, pre-order (function terms and arithmetic;
    the terms inside a function term are not visited)."""
    yield expression
    if isinstance(expression, Arithmetic):
        for arg in expression.args:
            yield from walk_numeric(arg)


def effect_literals(effect: object) -> Iterator[tuple[Atom, bool]]:
    """The literals an effect may set, as (atom, added?) pairs in source order: what `walk`
    visits minus the conditions of `when` (which an effect reads, never sets)."""
    if isinstance(effect, Atom):
        yield effect, True
    elif isinstance(effect, Not) and isinstance(effect.arg, Atom):
        yield effect.arg, False
    elif isinstance(effect, And):
        for part in effect.parts:
            yield from effect_literals(part)
    elif isinstance(effect, (When, ForallEffect)):
        yield from effect_literals(effect.effect)


# --- domain ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class TypeDef:
    """A declared type with its parents (several for an `either` parent; () means `object`)."""

    name: str
    parents: tuple[str, ...] = ()
    loc: Location | None = _loc()


@dataclass(frozen=True)
class PredicateDef:
    name: str
    parameters: tuple[Typed, ...] = ()
    loc: Location | None = _loc()


@dataclass(frozen=True)
class FunctionDef:
    """A numeric function declaration; `type` is "number" unless declared otherwise."""

    name: str
    parameters: tuple[Typed, ...] = ()
    type: str = "number"
    loc: Location | None = _loc()


@dataclass(frozen=True)
class Action:
    """An action schema. A missing or `()` precondition/effect is `And(())`."""

    name: str
    parameters: tuple[Typed, ...]
    precondition: Formula = And(())
    effect: Effect = And(())
    loc: Location | None = _loc()


@dataclass(frozen=True)
class Annotation:
    """A structured comment `; @sage <kind> <text>` in a domain file.

    PDDL tools ignore comments, so a domain carries our extras (action aliases, how plan-step
    words map to parameters, friendly violation codes) while staying valid PDDL. `kind` is the
    first word after `@sage`, `text` the rest of the line, stripped.
    """

    kind: str
    text: str
    loc: Location | None = _loc()


@dataclass(frozen=True)
class Domain:
    name: str
    requirements: tuple[str, ...] = ()
    types: tuple[TypeDef, ...] = ()
    constants: tuple[Typed, ...] = ()
    predicates: tuple[PredicateDef, ...] = ()
    functions: tuple[FunctionDef, ...] = ()
    actions: tuple[Action, ...] = ()
    unsupported: tuple[Unsupported, ...] = ()
    """Sections outside the gate's scope (durative actions, derived predicates, constraints)."""
    annotations: tuple[Annotation, ...] = field(default=(), compare=False)
    source: str | None = field(default=None, compare=False)
    loc: Location | None = _loc()
    requirement_locs: tuple[Location, ...] = field(default=(), compare=False)
    """Where each of `requirements` is written (parsed models; () for a model made in code)."""

    def action(self, name: str) -> Action | None:
        wanted = key(name)
        return next((a for a in self.actions if key(a.name) == wanted), None)

    def predicate(self, name: str) -> PredicateDef | None:
        wanted = key(name)
        return next((p for p in self.predicates if key(p.name) == wanted), None)


# --- problem ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class FluentValue:
    """An initial numeric value `(= (fluent args) number)`."""

    fluent: FunctionTerm
    value: Number
    loc: Location | None = _loc()


@dataclass(frozen=True)
class Metric:
    direction: str  # "minimize" | "maximize"
    expression: NumericExpr | Unsupported
    loc: Location | None = _loc()


@dataclass(frozen=True)
class Problem:
    """A problem. `init` holds ground atoms, `Not(atom)` where a source lists a negated fact
    (closed-world: it only documents absence), and numeric `FluentValue`s.

    A problem also holds, by key, what every reader of it looks up: its initial state
    (`facts`), a goal of literals (`goal_literals`), and its objects' declared types
    (`declared`) and spellings (`spelling`). They are derived from the fields above when the
    problem is made (a parse reads each fact, goal literal and object once, and a gate's
    compile then takes them as they are), take no part in equality, and are read only."""

    name: str
    domain_name: str
    requirements: tuple[str, ...] = ()
    objects: tuple[Typed, ...] = ()
    init: tuple[Atom | Not | FluentValue | Unsupported, ...] = ()
    goal: Formula = And(())
    metric: Metric | None = None
    unsupported: tuple[Unsupported, ...] = ()
    source: str | None = field(default=None, compare=False)
    loc: Location | None = _loc()
    requirement_locs: tuple[Location, ...] = field(default=(), compare=False)
    """Where each of `requirements` is written (parsed models; () for a model made in code)."""
    facts: frozenset[tuple[str, ...]] = field(init=False, compare=False, repr=False)
    """The initial state: the `Atom`s of `init` by their keys (`atom_key`)."""
    goal_literals: tuple[frozenset[tuple[str, ...]], frozenset[tuple[str, ...]]] | None = field(
        init=False, compare=False, repr=False)
    """The goal by keys when it is a conjunction of literals of objects (`literal_goal`):
    the atoms that must hold and those that must not; None for any other goal."""
    declared: dict[str, str | tuple[str, ...]] = field(init=False, compare=False, repr=False)
    """The objects by key, each with its type's key (`object_keys`): what a plan step's words
    name."""
    spelling: dict[str, str] = field(init=False, compare=False, repr=False)
    """The objects by key, each with its name as declared (`object_keys`): how messages name
    them."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "facts", frozenset(map(atom_key, [
            fact for fact in self.init if isinstance(fact, Atom)])))
        object.__setattr__(self, "goal_literals", literal_goal(self.goal))
        declared, spelling = object_keys(self.objects)
        object.__setattr__(self, "declared", declared)
        object.__setattr__(self, "spelling", spelling)


ObjectKeys = tuple[dict[str, "str | tuple[str, ...]"], dict[str, str]]


def object_keys(declarations: Sequence[Typed]) -> ObjectKeys:
    """Each declared name's key -> its type's key ("object" when untyped), or the keys of all
    its types when it has several (an `(either ...)`, or a name declared more than once,
    whose declarations add up); and each name's key -> the name as first declared. In
    declaration order."""
    declared: dict[str, str | tuple[str, ...]] = {}
    spelling: dict[str, str] = {}
    last: tuple[str, ...] | None = None
    these: str | tuple[str, ...] = "object"
    for typed in declarations:
        if typed.types is not last:  # the names of one declaration share its types' tuple
            last = typed.types
            these = _type_keys(last)
        name = typed.name
        name_key = name.lower()
        declared[name_key] = these
        spelling[name_key] = name
    if len(declared) < len(declarations):  # a name declared more than once
        declared, spelling = {}, {}
        for typed in declarations:
            name_key = typed.name.lower()
            types = _type_keys(typed.types)
            had = declared.get(name_key)
            if had is not None and had != types:
                types = _one_or_all([*((had,) if type(had) is str else had),
                                     *((types,) if type(types) is str else types)])
            declared[name_key] = types
            spelling.setdefault(name_key, typed.name)
    return declared, spelling


def _type_keys(types: tuple[str, ...]) -> str | tuple[str, ...]:
    """A declaration's types by key: "object" when it has none, the key of its one type, or
    the keys of all of them (each once)."""
    if len(types) == 1:
        return types[0].lower()
    return _one_or_all([t.lower() for t in types]) if types else "object"


def _one_or_all(type_keys: list[str]) -> str | tuple[str, ...]:
    unique = tuple(dict.fromkeys(type_keys))
    return unique[0] if len(unique) == 1 else unique


def literal_goal(goal: Formula) -> tuple[frozenset[tuple[str, ...]],
                                          frozenset[tuple[str, ...]]] | None:
    """`(pos, neg)`, the keys of the atoms `goal` requires and of those it forbids, when it is
    an atom, a negated atom or a conjunction of them whose terms are objects (`And(())`, no
    goal: two empty sets); None for any other formula."""
    pos: list[tuple[str, ...]] = []
    neg: list[tuple[str, ...]] = []
    for part in goal.parts if type(goal) is And else (goal,):
        if type(part) is Atom:
            atoms = pos
        elif type(part) is Not and type(part.arg) is Atom:
            atoms, part = neg, part.arg
        else:
            return None
        for term in part.args:
            if type(term) is not Constant:
                return None
        atoms.append(atom_key(part))
    return frozenset(pos), frozenset(neg)


# --- plans -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class PlanStep:
    """One step of a plan as written.

    The one step type inside the program: planners, the gate, the runtime and the environments
    pass steps as `PlanStep`s; JSON and text are read into it where they enter and written from
    it where they leave (`pddl.plans`: `step_from_json`, `step_from_text`, `step_json`).
    `action` and `args` are the words of the step (`(pick apple)`, `Pick Apple`). Steps read from
    JSON with named fields (`object`, `target`, ...) keep them in `fields`, because a domain maps
    those to parameters through its `@sage step` annotations; a step with fields is bound from
    them. `index` is 0-based; `text` is the step as it appeared, for messages.
    """

    action: str
    args: tuple[str, ...] = ()
    index: int = 0
    text: str = ""
    fields: tuple[tuple[str, str], ...] = ()
    loc: Location | None = _loc()

    def field(self, name: str) -> str:
        return next((v for k, v in self.fields if k == name), "")


@dataclass(frozen=True)
class Plan:
    steps: tuple[PlanStep, ...] = ()
    source: str | None = field(default=None, compare=False)

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self) -> Iterator[PlanStep]:
        return iter(self.steps)


def frozen_maker(cls: type[_Node]) -> Callable[..., _Node]:
    """`cls(*fields)`, every field given in order, for a frozen dataclass made by the million
    (a parse makes a node and a `Location` for most tokens): it stores each field in the new
    instance's dictionary, where the dataclass's `__init__` stores each through
    `object.__setattr__` (a frozen class's `__setattr__` refuses). The object is the same
    (fields, equality, hash, repr, pickle). `cls` must not check or derive fields
    (`__post_init__`, `init=False`). The function is written for `cls`'s fields, as
    `dataclasses` writes an `__init__`."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]  # a dataclass, or it raises
    if hasattr(cls, "__post_init__") or not all(f.init for f in fields):
        raise TypeError(f"{cls.__name__} checks or derives fields: make it with its __init__")
    values = [f"_{position}" for position in range(len(fields))]
    stores = "".join(f"    stored[{field.name!r}] = {value}\n"
                     for field, value in zip(fields, values))
    source = (f"def make({', '.join(values)}):\n"
              f"    node = new(cls)\n"
              f"    stored = node.__dict__\n"
              f"{stores}"
              f"    return node\n")
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls}
    exec(compile(source, f"<frozen_maker {cls.__name__}>", "exec"), namespace)  # noqa: S102
    make: Callable[..., _Node] = namespace["make"]
    return make
