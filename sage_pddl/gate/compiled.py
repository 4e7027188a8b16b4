"""Action schemas compiled to Python functions that check and apply one step on a set state.

A gate's first check of a plan runs each step through its action's generated function instead
of grounding it (`Gate.check`): a plan checked once, the common case for a new problem, then
costs one call per step and nothing is ground, as VAL grounds nothing it does not meet.

`step_function(action)` writes, once per action schema, the source of

    def step(s, a, objects):

where `s` is the state (a mutable set of ground atoms), `a` the step's object keys in parameter
order and `objects(type_keys)` the problem's objects of those types in declaration order. It
returns True when the action is applicable in `s`, after applying it to `s` in place; False
when it is not (and `s` is untouched); None, before evaluating anything, when its quantifiers
range over more instances than `limits.MAX_GROUND`, so that grounding it refuses the step
exactly as it would on the other paths.

Cost: each object list a quantifier ranges over is read once per call; a `when` under a
`forall` tests each conjunct of its condition at the outermost loop that binds the conjunct's
variables (before the loops when it uses none), so `(forall (?o ?f) (when (and (holding ?o)
(near ?f ?r)) ...))` looks for ?f only under the held ?o and a Place on a non-heater skips the
heating loops; an atom of the step's objects named twice (tested and deleted, say) is built
once. Conditions have no side effects, so where they are tested changes no result.

Semantics: exactly those of the ground action (`ground.py`), which tests hold it to. The
precondition is the formula evaluated in `s` under the closed world (`forall` is `all` over the
objects of the variables' types, `exists` is `any`, `imply` is `not a or b`, `=` compares
object keys). Effects are collected first, every `when` condition read in the state before the
step, then the deletions are applied and the additions after them (an atom both deleted and
added holds afterwards). Costs (`increase`/`decrease`) change nothing. A condition the grounder
simplifies by the problem's static facts (`PreconditionTable.prune_static`) reads the same
facts here, in `s`, which agrees with the initial state on them whenever the gate uses pruning.

An action with a part the generator does not express (a free variable, a construct outside the
gate's scope) gets no function: the gate grounds it, and the grounder reports the problem.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from ..pddl import limits
from ..pddl.model import (
    Action,
    And,
    Atom,
    Constant,
    Equals,
    Exists,
    Forall,
    ForallEffect,
    Imply,
    Not,
    NumericEffect,
    Or,
    Typed,
    Variable,
    When,
    key,
    walk,
)

Objects = Callable[[tuple[str, ...]], tuple[str, ...]]
StepFunction = Callable[[set[tuple[str, ...]], tuple[str, ...], Objects], "bool | None"]
WordsFunction = Callable[[set[tuple[str, ...]], tuple[str, ...],
                          Callable[[str], "str | tuple[str, ...] | None"], Objects],
                         "bool | None"]


class _NotExpressed(Exception):
    """A part of the action the generator leaves to the grounder."""


class _Writer:
    """The source of one action's step function, and the names it binds."""

    def __init__(self, env: dict[str, str]):
        self.env = env
        """Parameter key -> the Python expression of its object."""
        self.parameters = set(env.values())
        self.fixed: dict[str, int] = {}
        """The source of each atom of parameters and constants only -> how often it is used
        (one used more than once is built once, `_body`)."""
        self.names = itertools.count()
        self.lines: list[str] = []
        self.bounds: list[str] = []
        """Per quantifier: its number of instances, times those of the quantifiers around it."""
        self.enclosing: list[str] = []
        self.object_sets: dict[tuple[str, ...], str] = {}
        """Type keys -> the local name of `objects(type keys)`, read once per call."""

    def objects(self, types: tuple[str, ...]) -> str:
        name = self.object_sets.get(types)
        if name is None:
            name = self.object_sets[types] = f"o{len(self.object_sets)}"
        return name

    def term(self, term: object, env: dict[str, str]) -> str:
        if isinstance(term, Variable):
            found = env.get(key(term.name))
            if found is None:
                raise _NotExpressed(f"free variable ?{term.name}")
            return found
        if isinstance(term, Constant):
            return repr(key(term.name))
        raise _NotExpressed(type(term).__name__)

    def atom(self, atom: Atom, env: dict[str, str]) -> str:
        terms = [self.term(t, env) for t in atom.args]
        text = "(" + "".join(f"{part}, " for part in (repr(key(atom.predicate)), *terms)) + ")"
        if all(term in self.parameters or term.startswith("'") for term in terms):
            self.fixed[text] = self.fixed.get(text, 0) + 1
        return text

    def bind(self, variables: tuple[Typed, ...], env: dict[str, str]
             ) -> tuple[dict[str, str], list[tuple[str, str]]]:
        """Fresh names for quantified variables: the inner environment and, per variable, its
        name and the expression of its objects. Counts the quantifier's instances, and makes
        it enclose what is bound until `unbind`."""
        inner = dict(env)
        loops = []
        for variable in variables:
            name = f"v{next(self.names)}"
            inner[key(variable.name)] = name
            loops.append((name, self.objects(tuple(key(t) for t in variable.types))))
        size = "(" + (" * ".join(f"len({objects})" for _, objects in loops) or "1") + ")"
        self.enclosing.append(size)
        self.bounds.append(" * ".join(self.enclosing))
        return inner, loops

    def unbind(self) -> None:
        self.enclosing.pop()

    # -- conditions -------------------------------------------------------------------------

    def condition(self, formula: object, positive: bool, env: dict[str, str]) -> str:
        """A Python expression that is True when `formula` (negated unless `positive`) holds
        in `s`."""
        if isinstance(formula, Atom):
            return f"{self.atom(formula, env)} {'in' if positive else 'not in'} s"
        if isinstance(formula, Equals):
            left, right = self.term(formula.left, env), self.term(formula.right, env)
            return f"{left} {'==' if positive else '!='} {right}"
        if isinstance(formula, Not):
            return self.condition(formula.arg, not positive, env)
        if isinstance(formula, (And, Or)):
            conjunctive = isinstance(formula, And) == positive
            parts = [self.condition(part, positive, env) for part in formula.parts]
            if not parts:
                return "True" if conjunctive else "False"
            return "(" + (" and " if conjunctive else " or ").join(parts) + ")"
        if isinstance(formula, Imply):
            antecedent = self.condition(formula.antecedent, True, env)
            if positive:
                return f"(not {antecedent} or {self.condition(formula.consequent, True, env)})"
            return f"({antecedent} and {self.condition(formula.consequent, False, env)})"
        if isinstance(formula, (Forall, Exists)):
            every = isinstance(formula, Forall) == positive
            inner, loops = self.bind(formula.variables, env)
            body = self.condition(formula.body, positive, inner)
            self.unbind()
            fors = " ".join(f"for {name} in {objects}" for name, objects in loops)
            return f"{'all' if every else 'any'}({body} {fors})"
        raise _NotExpressed(type(formula).__name__)

    # -- effects ----------------------------------------------------------------------------

    def effect(self, effect: object, env: dict[str, str], indent: str) -> None:
        """Statements that collect `effect`'s atoms in `add` and `delete`."""
        if isinstance(effect, And):
            for part in effect.parts:
                self.effect(part, env, indent)
        elif isinstance(effect, Atom):
            self.lines.append(f"{indent}add({self.atom(effect, env)})")
        elif isinstance(effect, Not) and isinstance(effect.arg, Atom):
            self.lines.append(f"{indent}delete({self.atom(effect.arg, env)})")
        elif isinstance(effect, When):
            self.lines.append(f"{indent}if {self.condition(effect.condition, True, env)}:")
            before = len(self.lines)
            self.effect(effect.effect, env, indent + "    ")
            if len(self.lines) == before:
                self.lines.append(f"{indent}    pass")
        elif isinstance(effect, ForallEffect):
            inner, loops = self.bind(effect.variables, env)
            body = effect.effect
            # a `when`'s conjuncts are tested at the outermost loop that binds their
            # variables (before all loops when they use none): `(forall (?o ?f) (when (and
            # (holding ?o) (near ?f ?r)) ...))` looks for ?f only under the held ?o
            levels: list[list[str]] = [[] for _ in range(len(loops) + 1)]
            if isinstance(body, When):
                names = [name for name, _ in loops]
                parts = body.condition.parts if isinstance(body.condition, And) else (
                    body.condition,)
                for part in parts:
                    used = _variables(part)
                    depth = max((names.index(inner[v]) + 1 for v in used
                                 if inner.get(v) in names), default=0)
                    levels[depth].append(self.condition(part, True, inner))
                body = body.effect
            for depth in range(len(loops) + 1):
                if depth:
                    name, objects = loops[depth - 1]
                    self.lines.append(f"{indent}for {name} in {objects}:")
                    indent += "    "
                if levels[depth]:
                    self.lines.append(f"{indent}if {' and '.join(levels[depth])}:")
                    indent += "    "
            before = len(self.lines)
            self.effect(body, inner, indent)
            if len(self.lines) == before:
                self.lines.append(f"{indent}pass")
            self.unbind()
        elif isinstance(effect, NumericEffect):
            pass  # a cost (the table's scope check rejects any other numeric effect)
        else:
            raise _NotExpressed(type(effect).__name__)


def _variables(formula: object) -> set[str]:
    """The keys of the variables `formula` mentions (bound inside it or not)."""
    found: set[str] = set()
    for node in walk(formula):
        terms: tuple[object, ...] = ()
        if isinstance(node, Atom):
            terms = node.args
        elif isinstance(node, Equals):
            terms = (node.left, node.right)
        found.update(key(term.name) for term in terms if isinstance(term, Variable))
    return found


def _body(writer: _Writer, test: str) -> list[str]:
    """The lines of a step function after its arguments are bound."""
    lines = [f"    {name} = objects({types!r})" for types, name in writer.object_sets.items()]
    if writer.bounds:
        lines.append(f"    if {' + '.join(writer.bounds)} > limits.MAX_GROUND:")
        lines.append("        return None  # the grounder refuses it: let it say so")
    # an atom the precondition and the effect (or two effects) both name is built once
    shared = [text for text, uses in writer.fixed.items() if uses > 1]
    body = writer.lines
    for number, text in enumerate(shared):
        lines.append(f"    x{number} = {text}")
        test = test.replace(text, f"x{number}")
        body = [line.replace(text, f"x{number}") for line in body]
    lines.append(f"    if not {test}:")
    lines.append("        return False")
    plain = all(line.startswith(("    add(", "    delete(")) for line in body)
    if plain:  # no condition, no loop: straight to the state, deletions first
        lines += [line.replace("    delete(", "    s.discard(") for line in body
                  if line.startswith("    delete(")]
        lines += [line.replace("    add(", "    s.add(") for line in body
                  if line.startswith("    add(")]
    else:  # conditions read the state before the step: collect, then apply
        lines += ["    added = []", "    deleted = []", "    add = added.append",
                  "    delete = deleted.append", *body,
                  "    s.difference_update(deleted)", "    s.update(added)"]
    lines.append("    return True")
    return lines


def _written(action: Action, env: dict[str, str]) -> tuple[_Writer, str] | None:
    writer = _Writer(env)
    try:
        test = writer.condition(action.precondition, True, writer.env)
        writer.effect(action.effect, writer.env, "    ")
    except _NotExpressed:
        return None
    return writer, test


def _define(name: str, lines: list[str], action: Action,
            constants: dict[str, object] | None = None) -> Any:
    namespace: dict[str, Any] = {"limits": limits, **(constants or {})}
    exec(compile("\n".join(lines) + "\n", f"<gate {name} {action.name}>", "exec"),  # noqa: S102
         namespace)
    return namespace[name]


def step_function(action: Action) -> StepFunction | None:
    """The generated step function of `action` (see the module docstring), or None when the
    action has a part the generator does not express."""
    written = _written(action, {key(p.name): f"a[{i}]" for i, p in enumerate(action.parameters)})
    if written is None:
        return None
    writer, test = written
    function: StepFunction = _define("step", ["def step(s, a, objects):", *_body(writer, test)],
                                     action)
    return function


def words_function(action: Action, fitting: tuple[frozenset[str] | None, ...]
                   ) -> WordsFunction | None:
    """`step_words(s, words, declared_of, objects)`: the step function of `action` for a step
    given by its argument words as written, `declared_of(key)` an object's declared type key
    or None (`PreconditionTable.declared.get`, a bound method: one call per word). It binds
    the words itself when each is, in lower case, an object declared of one type its
    parameter takes (`fitting[i]`, `DomainSchema.fitting`; None for any object), and then
    returns what `step` returns; otherwise it returns None before anything else, and the gate
    binds the step the general way (loose names, instances, objects of several types,
    errors). None when the action has a part the generator does not express."""
    names = [f"a{i}" for i in range(len(action.parameters))]
    written = _written(action, {key(p.name): name for p, name in zip(action.parameters, names)})
    if written is None:
        return None
    writer, test = written
    lines = ["def step_words(s, w, declared_of, objects):"]
    if names:  # one unpacking binds the words and checks their number (try costs nothing)
        lines += ["    try:", f"        {', '.join(names)}, = w", "    except ValueError:",
                  "        return None"]
    else:
        lines += ["    if w:", "        return None"]
    constants: dict[str, object] = {}
    for i, (name, types) in enumerate(zip(names, fitting)):
        # a word written as its key (lower case) needs no `lower()`
        lines += [f"    t = declared_of({name})", "    if t is None:",
                  f"        {name} = {name}.lower()", f"        t = declared_of({name})",
                  "        if t is None:", "            return None"]
        if types is not None:
            constants[f"T{i}"] = types
            lines += [f"    if t not in T{i}:", "        return None"]
    function: WordsFunction = _define("step_words", [*lines, *_body(writer, test)], action,
                                      constants)
    return function
