"""Semantic checks of parsed domains and problems, reported as located diagnostics.

`check_domain(domain)` and `check_problem(problem, domain)` return `Diagnostic`s, never raise.
A diagnostic is an error when the file cannot mean what it says — unknown predicate, type, object
or variable, wrong arity, duplicate definition, a type mismatch that is certain, a construct the
gate cannot evaluate — and a warning when real-world files do it and tools disagree about it.

Leniencies, each forced by a real file (see the corpus README):
- a constant used in an action but declared nowhere in the domain is a warning at domain level
  (ALFWorld's `SinkBasinType`); `check_problem` then requires it among the problem's objects;
- a type mismatch is an error only when the domain declares an explicit type hierarchy (some
  type has a parent). With flat types (`(:types agent location receptacle ...)`) the sources
  disagree on what sits below what — ALFWorld's `(checked ?l)` over a location, VirtualHome's
  `(facing floor computer)` — so a mismatch there is a warning. A variable whose type is more
  general than the parameter's is never a mismatch (it may hold a suitable object);
- `increase`/`decrease` of a 0-ary fluent that no precondition compares is an action cost,
  inside the gate's scope;
- a requirement flag no PDDL version names (`REQUIREMENT_FLAGS`; a typo such as `:stripz`)
  is a warning: the flags are advisory, and the grammar reads any.
Unsupported constructs are errors with code "unsupported" naming the construct and where it is.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .errors import PDDLError, PDDLSemanticError, UnsupportedConstruct
from .model import (
    Action,
    And,
    Atom,
    Comparison,
    Constant,
    Domain,
    Equals,
    Exists,
    FluentValue,
    Forall,
    ForallEffect,
    FunctionTerm,
    Imply,
    Location,
    Not,
    NumericEffect,
    Or,
    Problem,
    Typed,
    Unsupported,
    Variable,
    When,
    key,
    walk,
    walk_numeric,
)
from .vocabulary import KINDS, vocabulary
from .writer import write_formula

__all__ = ["Diagnostic", "check_domain", "check_problem", "errors_of", "raise_first_error",
           "TypeHierarchy"]

Severity = Literal["error", "warning"]

REQUIREMENT_FLAGS = frozenset({
    # PDDL 1.2 (McDermott et al. 1998)
    ":strips", ":typing", ":disjunctive-preconditions", ":equality",
    ":existential-preconditions", ":universal-preconditions", ":quantified-preconditions",
    ":conditional-effects", ":action-expansions", ":foreach-expansions", ":dag-expansions",
    ":domain-axioms", ":subgoal-through-axioms", ":safety-constraints", ":expression-evaluation",
    ":fluents", ":open-world", ":true-negation", ":adl", ":ucpop",
    # PDDL 2.1 to 3.1, and PDDL+
    ":negative-preconditions", ":durative-actions", ":duration-inequalities",
    ":continuous-effects", ":derived-predicates", ":timed-initial-literals", ":preferences",
    ":constraints", ":action-costs", ":numeric-fluents", ":object-fluents", ":time",
    # FOND and PPDDL, whose files the corpus holds
    ":non-deterministic", ":probabilistic-effects", ":rewards", ":mdp",
})
"""The requirement flags some PDDL version or common dialect names (`check` warns of others)."""


@dataclass(frozen=True)
class Diagnostic:
    """One finding: severity, a stable code, a message and where it is."""

    severity: Severity
    code: str
    message: str
    loc: Location | None = None
    source_line: str = ""

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def exception(self) -> PDDLError:
        """The diagnostic as the exception `raise_first_error` raises."""
        kind = UnsupportedConstruct if self.code == "unsupported" else PDDLSemanticError
        return kind(self.message, self.loc, source_line=self.source_line)

    def __str__(self) -> str:
        where = f"{self.loc}: " if self.loc else ""
        return f"{where}{self.severity}: {self.message} [{self.code}]"


def errors_of(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.is_error]


def raise_first_error(diagnostics: Iterable[Diagnostic]) -> None:
    """Raise the first error (as `PDDLSemanticError`, or `UnsupportedConstruct`); warnings pass."""
    for diagnostic in diagnostics:
        if diagnostic.is_error:
            raise diagnostic.exception()


# --- types -----------------------------------------------------------------------------------------

class TypeHierarchy:
    """The declared types of a domain, with `object` as the implicit root."""

    def __init__(self, domain: Domain):
        self.parents: dict[str, tuple[str, ...]] = {"object": ()}
        for typedef in domain.types:
            # A type declared twice (IPC storage: `area - object` and `area - surface`) has
            # every parent it was given.
            merged = self.parents.get(key(typedef.name), ())
            merged += tuple(key(p) for p in typedef.parents if key(p) not in merged)
            self.parents[key(typedef.name)] = merged
            for parent in typedef.parents:
                self.parents.setdefault(key(parent), ())
        self.explicit = any(t.parents for t in domain.types)
        self.children: dict[str, list[str]] = {}
        """Type key -> the keys of the types that name it as a parent."""
        for child, parents in self.parents.items():
            for parent in parents:
                self.children.setdefault(parent, []).append(child)
        self.closure: dict[str, frozenset[str]] = {name: self._above(name)
                                                   for name in self.parents}
        """Type key -> `ancestors` of it, for every type the domain names (one entry each)."""

    def known(self, name: str) -> bool:
        return key(name) in self.parents

    def ancestors(self, name: str) -> frozenset[str]:
        """The type and every type above it (cycles tolerated), always including `object`."""
        name = key(name)
        found = self.closure.get(name)
        return self._above(name) if found is None else found

    def descendants(self, keys: Iterable[str]) -> frozenset[str]:
        """The type keys `keys` and those of every type below one of them (the types whose
        `ancestors` meet `keys`)."""
        return _reached(set(keys), self.children)

    def _above(self, name: str) -> frozenset[str]:
        return _reached({name, "object"}, self.parents)

    def in_cycle(self, name: str) -> bool:
        name = key(name)
        return any(name in self.ancestors(p) for p in self.parents.get(name, ()))

    def is_subtype(self, actual: tuple[str, ...], expected: tuple[str, ...]) -> bool:
        """Every alternative of `actual` lies below some alternative of `expected`."""
        wanted = {key(t) for t in expected} or {"object"}
        if "object" in wanted:
            return True
        return all(self.ancestors(t) & wanted for t in (actual or ("object",)))

    def may_match(self, actual: tuple[str, ...], expected: tuple[str, ...]) -> bool:
        """Some object of type `actual` may be of type `expected` (for variables)."""
        if self.is_subtype(actual, expected):
            return True
        wanted = expected or ("object",)
        return any(key(a) in self.ancestors(e) for a in (actual or ("object",)) for e in wanted)


def _reached(seen: set[str], edges: Mapping[str, Iterable[str]]) -> frozenset[str]:
    """`seen` and every type reached from one of them along `edges` (cycles tolerated)."""
    todo = list(seen)
    while todo:
        for other in edges.get(todo.pop(), ()):
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return frozenset(seen)


# --- shared walking of formulas --------------------------------------------------------------------

def _types_text(types: tuple[str, ...]) -> str:
    return types[0] if len(types) == 1 else f"(either {' '.join(types)})" if types else "object"


def _named(what: str, name: str) -> str:
    """`parameter of stack: ?x` from `what` = "parameter of stack: ?" (a variable's `?` is
    written against its name), `object a` from "object"."""
    return f"{what}{name}" if what.endswith("?") else f"{what} {name}"


class _Checker:
    """Collects diagnostics for one domain (and optionally one problem)."""

    def __init__(self, domain: Domain, source: str | None):
        self.domain = domain
        self.types = TypeHierarchy(domain)
        self.predicates = {key(p.name): p for p in domain.predicates}
        self.functions = {key(f.name): f for f in domain.functions}
        self.constants = {key(c.name): c for c in domain.constants}
        self.compared: set[str] = set()
        for action in domain.actions:
            _compared_fluents(action.precondition, self.compared)
        self.lines = source.splitlines() if source else []
        self.found: list[Diagnostic] = []

    def report(self, severity: Severity, code: str, message: str, loc: Location | None) -> None:
        line = ""
        if loc and 0 < loc.line <= len(self.lines):
            line = self.lines[loc.line - 1]
        self.found.append(Diagnostic(severity, code, message, loc, line))

    def requirements(self, flags: tuple[str, ...], locs: tuple[Location, ...],
                     fallback: Location | None) -> None:
        """A warning for each flag outside `REQUIREMENT_FLAGS`, where it is written."""
        for position, flag in enumerate(flags):
            if flag not in REQUIREMENT_FLAGS:
                where = locs[position] if position < len(locs) else fallback
                self.report("warning", "unknown-requirement",
                            f"unknown requirement {flag} (no PDDL version names it)", where)

    def unsupported(self, construct: str, loc: Location | None) -> None:
        self.report("error", "unsupported", f"{construct} is outside the gate's scope", loc)

    def mismatch_severity(self) -> Severity:
        return "error" if self.types.explicit else "warning"

    def check_types_known(self, items: Iterable[Typed], what: str) -> None:
        for item in items:
            for type_name in item.types:
                if not self.types.known(type_name):
                    self.report("error", "unknown-type",
                                f"unknown type {type_name} of {_named(what, item.name)}",
                                item.loc)

    def check_duplicates(self, items: Iterable[Any], what: str,
                         severity: Severity = "error") -> None:
        seen: dict[str, Any] = {}
        for item in items:
            name = key(item.name)
            if name in seen:
                first = seen[name].loc
                where = f" (first at {first.line}:{first.column})" if first else ""
                self.report(severity, "duplicate",
                            f"duplicate {_named(what, item.name)}{where}", item.loc)
            else:
                seen[name] = item

    # --- terms and atoms -------------------------------------------------------------------------

    def term_types(self, term: Variable | Constant, scope: dict[str, tuple[str, ...]],
                   context: str,
                   objects: dict[str, Typed] | None) -> tuple[str, ...] | None:
        """The declared types of a term, or None when unknown (already reported)."""
        if isinstance(term, Variable):
            if key(term.name) not in scope:
                self.report("error", "unknown-variable",
                            f"variable ?{term.name} is not a parameter or quantified variable "
                            f"{context}", term.loc)
                return None
            return scope[key(term.name)]
        declared = self.constants.get(key(term.name))
        if declared is None and objects is not None:
            declared = objects.get(key(term.name))
        if declared is not None:
            return declared.types
        if objects is None:
            self.report("warning", "undeclared-constant",
                        f"constant {term.name} {context} is not declared in :constants; "
                        f"it must be an object of every problem", term.loc)
        else:
            self.report("error", "unknown-object", f"unknown object {term.name} {context}",
                        term.loc)
        return None

    def check_atom(self, atom: Atom, scope: dict[str, tuple[str, ...]], context: str,
                   objects: dict[str, Typed] | None) -> None:
        predicate = self.predicates.get(key(atom.predicate))
        if predicate is None:
            self.report("error", "unknown-predicate",
                        f"unknown predicate {atom.predicate} {context}", atom.loc)
            for term in atom.args:
                self.term_types(term, scope, context, objects)
            return
        if len(atom.args) != len(predicate.parameters):
            self.report("error", "wrong-arity",
                        f"{atom.predicate} takes {len(predicate.parameters)} argument(s), "
                        f"{write_formula(atom)} gives {len(atom.args)} {context}", atom.loc)
        for term, parameter in zip(atom.args, predicate.parameters):
            actual = self.term_types(term, scope, context, objects)
            if actual is None:
                continue
            ground = isinstance(term, Constant)
            fits = (self.types.is_subtype(actual, parameter.types) if ground
                    else self.types.may_match(actual, parameter.types))
            if not fits:
                self.report(self.mismatch_severity(), "type-mismatch",
                            f"{term} is {_types_text(actual)} but {atom.predicate} expects "
                            f"{_types_text(parameter.types)} for ?{parameter.name} in "
                            f"{write_formula(atom)} {context}", term.loc or atom.loc)

    def bind(self, scope: dict[str, tuple[str, ...]], variables: tuple[Typed, ...],
             what: str) -> dict[str, tuple[str, ...]]:
        self.check_types_known(variables, what)
        inner = dict(scope)
        inner.update((key(v.name), v.types) for v in variables)
        return inner

    # --- formulas and effects --------------------------------------------------------------------

    def formula(self, node: object, scope: dict[str, tuple[str, ...]], context: str,
                objects: dict[str, Typed] | None = None) -> None:
        if isinstance(node, Atom):
            self.check_atom(node, scope, context, objects)
        elif isinstance(node, (And, Or)):
            for part in node.parts:
                self.formula(part, scope, context, objects)
        elif isinstance(node, Not):
            self.formula(node.arg, scope, context, objects)
        elif isinstance(node, Imply):
            self.formula(node.antecedent, scope, context, objects)
            self.formula(node.consequent, scope, context, objects)
        elif isinstance(node, (Exists, Forall)):
            inner = self.bind(scope, node.variables, "quantified variable")
            self.formula(node.body, inner, context, objects)
        elif isinstance(node, Equals):
            self.term_types(node.left, scope, context, objects)
            self.term_types(node.right, scope, context, objects)
        elif isinstance(node, Comparison):
            self.unsupported(f"numeric comparison {write_formula(node)}", node.loc)
        elif isinstance(node, Unsupported):
            self.unsupported(node.construct, node.loc)

    def effect(self, node: object, scope: dict[str, tuple[str, ...]], context: str) -> None:
        if isinstance(node, Atom):
            self.check_atom(node, scope, context, None)
        elif isinstance(node, Not):
            self.effect(node.arg, scope, context)
        elif isinstance(node, And):
            for part in node.parts:
                self.effect(part, scope, context)
        elif isinstance(node, When):
            self.formula(node.condition, scope, context)
            self.effect(node.effect, scope, context)
        elif isinstance(node, ForallEffect):
            inner = self.bind(scope, node.variables, "quantified variable")
            self.effect(node.effect, inner, context)
        elif isinstance(node, NumericEffect):
            is_cost = (node.op in ("increase", "decrease") and not node.fluent.args
                       and key(node.fluent.name) not in self.compared)
            if not is_cost:
                self.unsupported(f"numeric effect {write_formula(node)}", node.loc)
            elif key(node.fluent.name) not in self.functions:
                self.report("warning", "undeclared-function",
                            f"cost fluent ({node.fluent.name}) is not declared in :functions "
                            f"{context}", node.fluent.loc or node.loc)
        elif isinstance(node, Unsupported):
            self.unsupported(node.construct, node.loc)

    def action(self, action: Action) -> None:
        context = f"in action {action.name}"
        self.check_duplicates(action.parameters, f"parameter of {action.name}: ?")
        scope = self.bind({}, action.parameters, f"parameter of {action.name}: ?")
        self.formula(action.precondition, scope, context)
        self.effect(action.effect, scope, context)


def _compared_fluents(node: object, found: set[str]) -> None:
    """Names of the fluents a formula compares: those are state, not action costs."""
    for part in walk(node):
        if isinstance(part, Comparison):
            for side in (part.left, part.right):
                found.update(key(e.name) for e in walk_numeric(side) if isinstance(e, FunctionTerm))


# --- public checks -------------------------------------------------------------------------------

def check_domain(domain: Domain) -> list[Diagnostic]:
    """Semantic diagnostics of a domain, in source order of discovery."""
    checker = _Checker(domain, domain.source)
    checker.requirements(domain.requirements, domain.requirement_locs, domain.loc)
    types = [t for t in domain.types if key(t.name) != "object"]
    checker.check_duplicates(types, "type", severity="warning")
    for typedef in domain.types:
        if checker.types.in_cycle(typedef.name):
            checker.report("error", "type-cycle",
                           f"type {typedef.name} is its own ancestor", typedef.loc)
    checker.check_duplicates(domain.constants, "constant")
    checker.check_types_known(domain.constants, "constant")
    checker.check_duplicates(domain.predicates, "predicate")
    checker.check_duplicates(domain.functions, "function")
    checker.check_duplicates(domain.actions, "action")
    for predicate in domain.predicates:
        checker.check_types_known(predicate.parameters, f"parameter of {predicate.name}: ?")
    for function in domain.functions:
        checker.check_types_known(function.parameters, f"parameter of {function.name}: ?")
    for action in domain.actions:
        checker.action(action)
    for section in domain.unsupported:
        checker.unsupported(section.construct, section.loc)
    vocab = vocabulary(domain)
    if vocab.error is not None:
        checker.report("error", "annotation", vocab.error.message, vocab.error.loc)
    for note in vocab.unknown:
        checker.report("warning", "annotation",
                       f"unknown annotation @sage {note.kind} (sage-pddl reads "
                       f"{', '.join(KINDS)}); it is ignored", note.loc)
    return checker.found


def _constants_used(node: object, found: dict[str, Constant]) -> None:
    """Collect the constants of an action's formulas and effects, first occurrence kept."""
    for part in walk(node):
        if isinstance(part, Atom):
            terms = part.args
        elif isinstance(part, Equals):
            terms = (part.left, part.right)
        else:
            continue
        for term in terms:
            if isinstance(term, Constant):
                found.setdefault(key(term.name), term)


def check_problem(problem: Problem, domain: Domain) -> list[Diagnostic]:
    """Semantic diagnostics of a problem against its domain (the domain itself is not checked)."""
    checker = _Checker(domain, problem.source)
    checker.requirements(problem.requirements, problem.requirement_locs, problem.loc)
    if key(problem.domain_name) != key(domain.name):
        checker.report("warning", "domain-mismatch",
                       f"problem {problem.name} is for domain {problem.domain_name}, "
                       f"checked against {domain.name}", problem.loc)
    objects: dict[str, Typed] = {}
    for obj in problem.objects:
        previous = objects.get(key(obj.name))
        if previous is not None:
            same = {key(t) for t in previous.types} == {key(t) for t in obj.types}
            checker.report("warning" if same else "error", "duplicate",
                           f"object {obj.name} is declared twice"
                           + ("" if same else " with different types"), obj.loc)
        objects[key(obj.name)] = obj
    checker.check_types_known(problem.objects, "object")

    missing: dict[str, Constant] = {}
    for action in domain.actions:
        _constants_used(action.precondition, missing)
        _constants_used(action.effect, missing)
    for name, constant in missing.items():
        if name not in checker.constants and name not in objects:
            checker.report("error", "unknown-object",
                           f"the domain uses constant {constant.name}, which is neither a domain "
                           f"constant nor an object of problem {problem.name}", problem.loc)

    for element in problem.init:
        if isinstance(element, Atom):
            checker.check_atom(element, {}, "in :init", objects)
        elif isinstance(element, Not) and isinstance(element.arg, Atom):
            checker.check_atom(element.arg, {}, "in :init", objects)
        elif isinstance(element, FluentValue):
            if key(element.fluent.name) not in checker.functions:
                checker.report("warning", "undeclared-function",
                               f"function {element.fluent.name} in :init is not declared in "
                               f":functions", element.loc)
        elif isinstance(element, Unsupported):
            checker.unsupported(element.construct, element.loc)
    checker.formula(problem.goal, {}, "in :goal", objects)
    for section in problem.unsupported:
        checker.unsupported(section.construct, section.loc)
    return checker.found
