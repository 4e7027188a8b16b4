"""Domain-level compilation for the gate, done once per `Domain` object and shared by its problems.

Semantics
---------
`domain_schema(domain)` returns the `DomainSchema` of a domain: everything the gate derives from
the domain alone, so that compiling a gate for another problem of the same domain redoes none
of it:

* names: actions by case-insensitive name and by loose name (case, spaces, `_`, `-` ignored),
  `@sage alias` names, predicate spellings;
* `@sage step` field maps and `@sage reason` codes/messages (a malformed annotation is kept as
  the `PDDLSemanticError` it raises, and raised by every compile, after the scope check);
* the type hierarchy (ancestors of each type);
* the scope hazards: the nodes the scope check must look at (numeric comparisons, unsupported
  constructs, numeric effects), in the order the check visits them, since whether a numeric
  effect is a harmless cost depends on the problem's metric;
* the canonical text of every condition node of every action (annotation matching, reports);
* one `ActionTemplate` per action: the literal part of its precondition and effect as atom
  templates, compiled to one Python function that builds every ground atom of a step from the
  step's arguments (tuple substitution, no formula walking). Parts a template cannot express
  (quantifiers, disjunction, implication, conditional effects, a variable that is not a
  parameter) are kept as formula nodes that the table grounds with its general walker.

The cache is keyed on `id(domain)` and holds a weak reference to the domain: an entry is used
only while that very object is alive (`ref() is domain`), and dropped by the reference's
callback when the domain is collected, so a recycled id can never return another domain's
schema. Keying on the domain's hash would be both slow (a frozen dataclass rehashes its whole
tree on every call) and wrong: `Domain.annotations` is excluded from equality, so two domains
that differ only in their `@sage` comments compare equal. A schema holds the domain's actions
and nodes but never the `Domain` itself, so the cache does not keep domains alive.
"""
from __future__ import annotations

import re
import shlex
import weakref
from dataclasses import dataclass
from typing import Callable

from ..pddl.errors import PDDLSemanticError
from ..pddl.model import (
    Action, And, Annotation, Atom, Comparison, Domain, Equals, Exists, Forall,
    ForallEffect, Imply, Not, NumericEffect, Or, Typed, Unsupported, Variable, When, key, walk,
)

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


def annotation_error(annotation: Annotation, message: str) -> PDDLSemanticError:
    return PDDLSemanticError(f"@sage {annotation.kind}: {message}", annotation.loc,
                             text=annotation.text)


def split_reason(annotation: Annotation) -> tuple[str, str, str, str]:
    """`Action <literal> code "message"` -> (action, literal, code, message)."""
    text = annotation.text.strip()
    head, _, rest = text.partition(" ")
    rest = rest.lstrip()
    if not head or not rest:
        raise annotation_error(annotation, "expected: <Action> <literal> <code> \"<message>\"")
    if rest.startswith("("):
        depth = 0
        for i, ch in enumerate(rest):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                literal, rest = rest[: i + 1], rest[i + 1:].strip()
                break
        else:
            raise annotation_error(annotation, "unbalanced parentheses in the literal")
    else:
        literal, _, rest = rest.partition(" ")
        rest = rest.strip()
    try:
        words = shlex.split(rest)
    except ValueError as error:
        raise annotation_error(annotation, f"cannot read code and message ({error})") from None
    if not words:
        raise annotation_error(annotation, "missing the code after the literal")
    return head, literal, words[0], " ".join(words[1:])


# --- action templates ------------------------------------------------------------------------

Spec = tuple  # per argument: an int (parameter position) or a str (constant key)


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
    build: Callable[[tuple[str, ...]], tuple]
    masks: Callable[[tuple[str, ...], Callable, Callable], tuple]
    """`masks(args, get, new)`: the bit-set form of `build(args)`, `(pre_pos, pre_neg, add,
    delete, unsat)` as int masks (`get(atom)` an atom's bit or None, `new(atom)` a new bit) and
    whether an equality is false for these arguments."""
    complex_pre: tuple[object, ...]
    complex_effects: tuple[object, ...]


def _spec(term: object, params: dict[str, int]) -> int | str | None:
    if isinstance(term, Variable):
        return params.get(key(term.name))  # None: not a parameter, left to the walker's error
    return key(term.name)


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


def _generated(name: str, source: str, action_name: str) -> Callable:
    """The function `name` defined by generated `source`."""
    namespace: dict = {}
    exec(compile(source, f"<gate template {action_name}>", "exec"), namespace)  # noqa: S102
    return namespace[name]


def compile_template(action: Action) -> ActionTemplate:
    params = {key(p.name): i for i, p in enumerate(action.parameters)}
    pos: list[str] = []
    neg: list[str] = []
    eqs: list[tuple[str, str, bool]] = []
    complex_pre: list[object] = []

    def literal(node: object, positive: bool) -> bool:
        """Add a literal conjunct to the template; False when the walker must ground it."""
        if isinstance(node, Not):
            return literal(node.arg, not positive)
        if isinstance(node, Atom):
            source = _atom_source(node, params)
            if source is None:
                return False
            (pos if positive else neg).append(source)
            return True
        if isinstance(node, Equals):
            left, right = _term_source(node.left, params), _term_source(node.right, params)
            if left is None or right is None:
                return False
            eqs.append((left, right, positive))
            return True
        if isinstance(node, And) and positive:
            # nested conjunctions flatten exactly as the walker's conjoin does
            done = [p for p in node.parts if not literal(p, True)]
            complex_pre.extend(done)
            return True
        return False

    for part in _conjuncts(action.precondition):
        if not literal(part, True):
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

    def tup(items: list[str]) -> str:
        return "(" + "".join(f"{i}, " for i in items) + ")"

    def bits(items: list[str]) -> str:
        # `get(atom) or new(atom)`: a bit is a power of two, never 0; `|` merges duplicates
        return " | ".join(f"(get({i}) or new({i}))" for i in items) or "0"

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
    build_source = (f"def build(a):\n    return ({tup(pos)}, {tup(neg)}, {tup(add)}, "
                    f"{tup(delete)}, {equalities})\n")
    compiled: list[Callable] = []

    def build(args: tuple[str, ...]) -> tuple:
        if not compiled:
            compiled.append(_generated("build", build_source, action.name))
        return compiled[0](args)

    param_types = []
    for p in action.parameters:
        types = frozenset(key(t) for t in p.types)
        param_types.append(None if not types or "object" in types else types)
    return ActionTemplate(action, key(action.name), tuple(params), tuple(param_types),
                          build, masks, tuple(complex_pre),
                          tuple(complex_effects))


# --- the schema ------------------------------------------------------------------------------

class DomainSchema:
    """Everything the gate derives from a domain alone (see the module docstring)."""

    def __init__(self, domain: Domain):
        self.name = domain.name
        self.constants = domain.constants
        self.unsupported = domain.unsupported
        self.action_list: tuple[Action, ...] = domain.actions
        self.predicate_names: dict[str, str] = {key(p.name): p.name for p in domain.predicates}
        self.actions: dict[str, Action] = {}
        self.loose: dict[str, Action] = {}
        for action in domain.actions:
            self.actions.setdefault(key(action.name), action)
            self.loose.setdefault(loose_name(action.name), action)
        self.type_parents: dict[str, set[str]] = {}
        for typedef in domain.types:
            self.type_parents.setdefault(key(typedef.name), set()).update(
                key(p) for p in typedef.parents)
        self._ancestors: dict[str, frozenset[str]] = {}
        self.hazards: list[tuple[object, str]] = []
        self._canon: dict[int, tuple[object, str]] = {}
        for action in domain.actions:
            context = f"in action {action.name}"
            for formula in (action.precondition, action.effect):
                for node in walk(formula):
                    if isinstance(node, (Comparison, Unsupported, NumericEffect)):
                        self.hazards.append((node, context))
                    elif formula is action.precondition:
                        self.canonical(node)  # annotation matching and reports need them all
        self.templates: dict[int, ActionTemplate] = {}
        """id(action) -> template, built on first use."""
        self.step_fields: dict[str, tuple[tuple[str, ...], ...]] = {}
        self.reasons: dict[tuple[str, str], Reason] = {}
        self.annotation_error: PDDLSemanticError | None = None
        try:
            self._read_annotations(domain.annotations)
        except PDDLSemanticError as error:
            self.annotation_error = error

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

    def canonical(self, node: object, positive: bool = True) -> str:
        """Canonical text of a node (cached by identity; the entry keeps the node alive)."""
        entry = self._canon.get(id(node))
        if entry is None or entry[0] is not node:
            entry = self._canon[id(node)] = (node, canonical_sexpr(formula_text(node)))
        return entry[1] if positive else f"(not {entry[1]})"

    def template(self, action: Action) -> ActionTemplate:
        found = self.templates.get(id(action))
        if found is None:
            found = self.templates[id(action)] = compile_template(action)
        return found

    def resolve_action(self, name: str) -> Action | None:
        """The action a step names: exact (case-insensitive), then alias/loose match."""
        return self.actions.get(name.lower()) or self.loose.get(loose_name(name))

    def _read_annotations(self, annotations: tuple[Annotation, ...]) -> None:
        for annotation in annotations:
            kind = annotation.kind.lower()
            if kind == "alias":
                words = annotation.text.split()
                action = self._annotated_action(annotation, words[0] if words else "")
                for alias in words[1:]:
                    self.loose.setdefault(loose_name(alias), action)
            elif kind == "step":
                words = annotation.text.split()
                action = self._annotated_action(annotation, words[0] if words else "")
                fields = tuple(tuple(f for f in w.split("|") if f) for w in words[1:])
                if len(fields) != len(action.parameters):
                    raise annotation_error(
                        annotation, f"{action.name} has {len(action.parameters)} parameter(s) "
                        f"but the annotation maps {len(fields)}")
                self.step_fields[key(action.name)] = fields
            elif kind == "reason":
                action_name, literal, code, message = split_reason(annotation)
                action = self._annotated_action(annotation, action_name)
                wanted = canonical_sexpr(literal)
                if wanted not in self._literal_texts(action):
                    raise annotation_error(
                        annotation, f"{literal} is not a precondition literal of {action.name}")
                self.reasons[(key(action.name), wanted)] = Reason(code, message)

    def reraise_annotation_error(self, annotations: tuple[Annotation, ...]) -> None:
        """Raise the malformed annotation's error afresh (reading them again is idempotent)."""
        self._read_annotations(annotations)
        raise self.annotation_error  # not reached: the same annotation fails again

    def _annotated_action(self, annotation: Annotation, name: str) -> Action:
        action = self.actions.get(key(name)) if name else None
        if action is None:
            raise annotation_error(annotation, f"unknown action {name!r}")
        return action

    def _literal_texts(self, action: Action) -> set[str]:
        return {self.canonical(node) for node in walk(action.precondition)}


_SCHEMAS: dict[int, tuple[weakref.ref, DomainSchema]] = {}


def domain_schema(domain: Domain) -> DomainSchema:
    """The cached `DomainSchema` of this very `domain` object (see the module docstring)."""
    ident = id(domain)
    entry = _SCHEMAS.get(ident)
    if entry is not None and entry[0]() is domain:
        return entry[1]
    schema = DomainSchema(domain)

    def forget(ref: weakref.ref, ident: int = ident) -> None:
        current = _SCHEMAS.get(ident)
        if current is not None and current[0] is ref:
            del _SCHEMAS[ident]

    _SCHEMAS[ident] = (weakref.ref(domain, forget), schema)
    return schema
