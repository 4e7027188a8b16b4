"""Domain-level compilation for the gate, done once per `Domain` object and shared by its problems.

Semantics
---------
`domain_schema(domain)` returns the `DomainSchema` of a domain: everything the gate derives from
the domain alone, so that compiling a gate for another problem of the same domain redoes none
of it:

* the domain's `Vocabulary` (`pddl/vocabulary.py`: action names and aliases, `@sage step`
  field maps, `@sage reason` codes and messages, canonical texts; a malformed annotation is
  raised by every compile, after the scope check) and predicate spellings;
* the type hierarchy (ancestors of each type, and for a parameter the declared types whose
  objects it takes: `fitting`), and the domain's constants by key with their declared types
  and spellings;
* the scope hazards: the nodes the scope check must look at (numeric comparisons, unsupported
  constructs, numeric effects), in the order the check visits them, since whether a numeric
  effect is a harmless cost depends on the problem's metric;
* the canonical text of every condition node of every action (annotation matching, reports);
* one `ActionTemplate` per action: the literal part of its precondition and effect as atom
  templates, compiled to one Python function that builds every ground atom of a step from the
  step's arguments (tuple substitution, no formula walking). Parts a template cannot express
  (quantifiers, disjunction, implication, conditional effects, a variable that is not a
  parameter) are kept as formula nodes that the table grounds with its general walker. The
  template also holds a generated function that lists the literals a state fails (`failed`:
  what a rejected step reports), and the whole action as a generated step function on set
  states (`compiled.py`), which a gate's first check runs instead of grounding;
* what each action word names (`words`, `runs`): every action's name and alias from the start,
  other spellings as steps use them.

The cache is `pddl.vocabulary.PerDomain`: per domain object, not per equal domain (equality
ignores the `@sage` annotations). A schema holds the domain's actions and nodes but never the
`Domain` itself, so the cache does not keep domains alive.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..pddl.model import (
    Action,
    And,
    Atom,
    Comparison,
    Domain,
    Equals,
    Not,
    NumericEffect,
    Unsupported,
    Variable,
    key,
    object_keys,
    walk,
)
from ..pddl.vocabulary import DEFAULT_FIELDS, PerDomain, vocabulary
from .compiled import StepFunction, WordsFunction, step_function, words_function

# --- action templates ------------------------------------------------------------------------

class PreLiteral(NamedTuple):
    """A literal of an action's precondition as the template holds it: its polarity, its
    node (an `Atom` or `Equals`), its terms as parameter positions (int) or constant keys
    (str), its predicate's key ("" for `=`), and the canonical texts a `GroundLiteral` carries:
    its own and its anchor's (the top-level conjunct that contains it)."""

    positive: bool
    node: Atom | Equals
    terms: tuple[int | str, ...]
    predicate: str
    text: str
    anchor: str


@dataclass(frozen=True, slots=True, eq=False)
class ActionTemplate:
    """An action schema prepared for grounding by substitution.

    `build(args)` returns `(pre_pos, pre_neg, add, delete, equalities)`: tuples of ground atoms
    (not yet interned) for the literals of the precondition's top-level conjunction and of the
    unconditional effect, and `(left, right, positive)` triples for its equalities. The rest of
    the precondition (`complex_pre`: top-level conjuncts with quantifiers, disjunctions,
    implications or free variables) and of the effect (`complex_effects`: `when`, `forall`,
    anything unusual) is ground by the table's walker. Grounding both parts and conjoining them
    gives exactly the sets the walker alone would give.
    """

    action: Action
    key: str
    param_keys: tuple[str, ...]
    param_types: tuple[frozenset[str] | None, ...]
    """Per parameter: the type keys it accepts, or None for any object (untyped or `object`)."""
    build: Callable[[tuple[str, ...]], tuple[Any, ...]]
    masks: Callable[[tuple[str, ...], Callable[..., Any], Callable[..., Any]], tuple[Any, ...]]
    """`masks(args, get, new)`: the bit-set form of `build(args)`, `(pre_pos, pre_neg, add,
    delete, unsat)` as int masks (`get(atom)` an atom's bit or None, `new(atom)` a new bit) and
    whether an equality is false for these arguments."""
    complex_pre: tuple[object, ...]
    complex_effects: tuple[object, ...]
    unsat: Callable[[tuple[str, ...]], bool] | None
    """`unsat(args)`: whether an equality of the literal part is false for `args`; None when
    the literal part has no equality."""
    literals: tuple[PreLiteral, ...]
    """The literals of the precondition's template part, in the order the walker grounds them
    (what a rejected step's explanation walks when the action has no complex precondition)."""
    failed: Callable[[Any, tuple[str, ...]], list[tuple[int, tuple[str, ...]]]]
    """`failed(s, args)`: the literals that do not hold in state `s` (a set of ground atoms)
    for the step's object keys `args`, each as its position in `literals` and its objects:
    the equalities first, then the others in order (a literal whose atom an earlier one
    names is reported again; `PreconditionTable.failed_literals` reports each once)."""
    step: StepFunction | None
    """The whole action as one generated function on set states (`compiled.step_function`):
    what a gate's first check runs instead of grounding. None: the action is ground."""
    step_words: WordsFunction | None
    """The same for a step given by its words (`compiled.words_function`)."""


def _spec(term: object, params: dict[str, int]) -> int | str | None:
    if isinstance(term, Variable):
        return params.get(key(term.name))  # None: not a parameter, left to the walker's error
    return key(term.name)  # type: ignore[attr-defined]  # a Constant


def _atom_source(atom: Atom, params: dict[str, int]) -> str | None:
    specs = [_spec(a, params) for a in atom.args]
    if any(s is None for s in specs):
        return None
    parts = [repr(key(atom.predicate))] + [f"a[{s}]" if isinstance(s, int) else repr(s) for s in specs]
    return "(" + ", ".join(parts) + ",)"


def _term_source(term: object, params: dict[str, int]) -> str | None:
    spec = _spec(term, params)
    if spec is None:
        return None
    return f"a[{spec}]" if isinstance(spec, int) else repr(spec)


def _conjuncts(formula: object) -> tuple[object, ...]:
    return formula.parts if isinstance(formula, And) else (formula,)


def _generated(name: str, source: str, action_name: str) -> Callable[..., Any]:
    """The function `name` defined by generated `source`."""
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<gate template {action_name}>", "exec"), namespace)  # noqa: S102
    function: Callable[..., Any] = namespace[name]
    return function


def compile_template(action: Action, canonical: Callable[[object, bool], str],
                     fitting: Callable[[frozenset[str]], frozenset[str]]) -> ActionTemplate:
    """The template of `action`; `canonical(node, positive)` gives a condition's canonical text
    (`Vocabulary.canonical`), `fitting(types)` the declared types a parameter of `types`
    takes (`DomainSchema.fitting`)."""
    params = {key(p.name): i for i, p in enumerate(action.parameters)}
    pos: list[str] = []
    neg: list[str] = []
    eqs: list[tuple[str, str, bool]] = []
    complex_pre: list[object] = []

    literals: list[PreLiteral] = []

    def literal(node: object, positive: bool, top: object) -> bool:
        """Add a literal conjunct to the template; False when the walker must ground it."""
        if isinstance(node, Not):
            return literal(node.arg, not positive, top)
        if isinstance(node, Atom):
            source = _atom_source(node, params)
            if source is None:
                return False
            (pos if positive else neg).append(source)
            literals.append(PreLiteral(positive, node,
                                       tuple(_spec(t, params) for t in node.args),  # type: ignore[misc]
                                       key(node.predicate), canonical(node, positive),
                                       canonical(top, True)))
            return True
        if isinstance(node, Equals):
            left, right = _term_source(node.left, params), _term_source(node.right, params)
            if left is None or right is None:
                return False
            eqs.append((left, right, positive))
            literals.append(PreLiteral(positive, node, (_spec(node.left, params),  # type: ignore[arg-type]
                                                        _spec(node.right, params)),
                                       "", canonical(node, positive), canonical(top, True)))
            return True
        if isinstance(node, And) and positive:
            # nested conjunctions flatten exactly as the walker's conjoin does
            done = [p for p in node.parts if not literal(p, True, top)]
            complex_pre.extend(done)
            return True
        return False

    whole = action.precondition
    for part in _conjuncts(whole):
        # the anchor of a literal: its top-level conjunct (the whole precondition when that
        # is not a conjunction), as `PreconditionTable.ground_formula` names it
        if not literal(part, True, part if isinstance(whole, And) else whole):
            complex_pre.append(part)

    add: list[str] = []
    delete: list[str] = []
    complex_effects: list[object] = []

    def effect(node: object) -> None:
        if isinstance(node, And):
            for part in node.parts:
                effect(part)
        elif isinstance(node, Atom) and (source := _atom_source(node, params)) is not None:
            add.append(source)
        elif (isinstance(node, Not) and isinstance(node.arg, Atom)
              and (source := _atom_source(node.arg, params)) is not None):
            delete.append(source)
        elif isinstance(node, NumericEffect):
            pass  # a cost (the table's scope check rejects any other numeric effect)
        else:
            complex_effects.append(node)

    effect(action.effect)

    def bits(items: list[str]) -> str:
        # `get(atom) or new(atom)`: a bit is a power of two, never 0; `|` merges duplicates
        return " | ".join(f"(get({i}) or new({i}))" for i in items) or "0"

    def tup(items: list[str]) -> str:
        return "(" + "".join(f"{i}, " for i in items) + ")"

    # the literals that fail in a state, equalities first (what a rejected step reports)
    failed_lines = ["def failed(s, a):", "    out = []"]
    for position, lit in sorted(enumerate(literals), key=lambda item: bool(item[1].predicate)):
        terms = [f"a[{t}]" if isinstance(t, int) else repr(t) for t in lit.terms]
        if lit.predicate:
            test = f"{tup([repr(lit.predicate), *terms])} {'not in' if lit.positive else 'in'} s"
        else:
            test = f"{terms[0]} {'!=' if lit.positive else '=='} {terms[1]}"
        failed_lines += [f"    if {test}:", f"        out.append(({position}, {tup(terms)}))"]
    failed_lines.append("    return out")
    failed = _generated("failed", "\n".join(failed_lines) + "\n", action.name)

    # an equality decided false at grounding time (the walker's `unsat`)
    unsat = " or ".join(f"{left} {'!=' if positive else '=='} {right}"
                        for left, right, positive in eqs) or "False"
    equalities = tup([f"({left}, {right}, {positive})" for left, right, positive in eqs])

    # Generated once per action: one call builds every literal atom of a step (tuple
    # substitution), several times faster than interpreting the templates per step. `masks`
    # goes straight to the bit-set form the check loop uses; `build` (the atoms themselves,
    # for the set form and explanations) is compiled on its first call, since compiling
    # is most of a template's cost and checking never needs it.
    masks = _generated("masks", f"def masks(a, get, new):\n    return ({bits(pos)}, {bits(neg)}, "
                       f"{bits(add)}, {bits(delete)}, {unsat})\n", action.name)
    unsat_of = (_generated("unsat", f"def unsat(a):\n    return {unsat}\n", action.name)
                if eqs else None)
    build_source = (f"def build(a):\n    return ({tup(pos)}, {tup(neg)}, {tup(add)}, "
                    f"{tup(delete)}, {equalities})\n")
    compiled: list[Callable[..., Any]] = []

    def build(args: tuple[str, ...]) -> tuple[Any, ...]:
        if not compiled:
            compiled.append(_generated("build", build_source, action.name))
        built: tuple[Any, ...] = compiled[0](args)
        return built

    param_types = []
    for p in action.parameters:
        types = frozenset(key(t) for t in p.types)
        param_types.append(None if not types or "object" in types else types)
    return ActionTemplate(action, key(action.name), tuple(params), tuple(param_types),
                          build, masks, tuple(complex_pre), tuple(complex_effects), unsat_of, tuple(literals),
                          failed, step_function(action),
                          words_function(action, tuple(None if types is None else fitting(types)
                                                       for types in param_types)))


# --- the schema ------------------------------------------------------------------------------

class DomainSchema:
    """Everything the gate derives from a domain alone (see the module docstring)."""

    def __init__(self, domain: Domain):
        self.name = domain.name
        self.constants = domain.constants
        self.unsupported = domain.unsupported
        self.vocabulary = vocab = vocabulary(domain)
        self.predicate_names: dict[str, str] = {key(p.name): p.name for p in domain.predicates}
        self.type_parents: dict[str, set[str]] = {}
        for typedef in domain.types:
            self.type_parents.setdefault(key(typedef.name), set()).update(
                key(p) for p in typedef.parents)
        self._ancestors: dict[str, frozenset[str]] = {}
        self.hazards: list[tuple[object, str]] = []
        for action in domain.actions:
            context = f"in action {action.name}"
            for formula in (action.precondition, action.effect):
                for node in walk(formula):
                    if isinstance(node, (Comparison, Unsupported, NumericEffect)):
                        self.hazards.append((node, context))
                    elif formula is action.precondition:
                        vocab.canonical(node)  # annotation matching and reports need them all
        self.templates: dict[int, ActionTemplate] = {}
        """id(action) -> template, built on first use."""
        self.reports: dict[int, tuple[tuple[Any, ...], ...]] = {}
        """id(action) -> what a rejected step's violations take from the domain alone (the
        gate's `_literal_reports`), built on first use."""
        self.words: dict[str, StepAction] = {}
        """A step's action word as written -> what it names: every action's name as declared,
        in lower case and its aliases from the start, other spellings as they are met."""
        self.runs: dict[str, WordsFunction] = {}
        """The same words -> the action's `step_words` function, where it has one."""
        for action in domain.actions:
            for word in (action.name, key(action.name), *vocab.aliases.get(action.name, ())):
                self.word(word)
        self.declared, self.spelling = object_keys(domain.constants)
        """The domain's constants by key, each with its type key and its name as declared
        (`model.object_keys`)."""
        mapped = {name for fields in vocab.step_fields.values() for names in fields
                  for name in names}
        self.step_fields: tuple[str, ...] = ("action", *DEFAULT_FIELDS,
                                             *sorted(mapped - set(DEFAULT_FIELDS)))
        """Every JSON field a step of this domain may fill a parameter from, `action` first."""

    def ancestors(self, type_name: str) -> frozenset[str]:
        """The type, its ancestors and `object`."""
        type_key = key(type_name)
        found = self._ancestors.get(type_key)
        if found is None:
            seen = {type_key, "object"}
            todo = [type_key]
            while todo:
                for parent in self.type_parents.get(todo.pop(), ()):
                    if parent not in seen:
                        seen.add(parent)
                        todo.append(parent)
            found = self._ancestors[type_key] = frozenset(seen)
        return found

    def type_set(self, declared: str | tuple[str, ...]) -> frozenset[str]:
        """The type keys an object of `declared` type keys (`model.object_keys`) belongs
        to: their ancestors, merged."""
        if type(declared) is str:
            return self.ancestors(declared)
        return frozenset({"object"}).union(*map(self.ancestors, declared))

    def fitting(self, accepted: frozenset[str]) -> frozenset[str]:
        """The type keys whose objects a parameter accepting `accepted` takes: the accepted
        types and every type the domain declares below them (an object of a type the domain
        does not declare belongs to that type and `object` only)."""
        known = set(self.type_parents).union(*self.type_parents.values(), accepted)
        return frozenset(t for t in known if not accepted.isdisjoint(self.ancestors(t)))

    def template(self, action: Action) -> ActionTemplate:
        found = self.templates.get(id(action))
        if found is None:
            found = self.templates[id(action)] = compile_template(
                action, self.vocabulary.canonical, self.fitting)
        return found

    def word(self, word: str) -> StepAction | None:
        """What a step's action word names (exact, then alias/loose), or None."""
        found = self.words.get(word)
        if found is None:
            action = self.vocabulary.action(word)
            if action is None:
                return None
            template = self.template(action)
            found = self.words[word] = StepAction(action, self.vocabulary.fields(action),
                                                  template.param_types, template)
            if template.step_words is not None:
                self.runs[word] = template.step_words
        return found


class StepAction(NamedTuple):
    """What a step's action word names: the action, the JSON fields of each parameter (its
    `@sage step` map, or None), the types each parameter accepts, and its template."""

    action: Action
    fields: tuple[tuple[str, ...], ...] | None
    accepted: tuple[frozenset[str] | None, ...]
    template: ActionTemplate


domain_schema = PerDomain(DomainSchema)
"""`domain_schema(domain)`: the cached `DomainSchema` of this very `domain` object (see the
module docstring)."""
