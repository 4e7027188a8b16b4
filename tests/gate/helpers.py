"""Small builders for hand-made PDDL models, so gate unit tests do not depend on the parser."""
from __future__ import annotations

from sage_pddl.pddl.model import (
    Action,
    And,
    Annotation,
    Atom,
    Constant,
    Domain,
    Location,
    Not,
    PredicateDef,
    Problem,
    Typed,
    TypeDef,
    Variable,
)


def term(word: str):
    return Variable(word[1:]) if word.startswith("?") else Constant(word)


def atom(predicate: str, *args: str, loc: Location | None = None) -> Atom:
    return Atom(predicate, tuple(term(a) for a in args), loc=loc)


def neg(predicate: str, *args: str) -> Not:
    return Not(atom(predicate, *args))


def typed(spec: str) -> tuple[Typed, ...]:
    """`"?o - item ?r - receptacle ?x"` -> Typed tuple (names without `?`); `either` as `a|b`."""
    out: list[Typed] = []
    words = spec.split()
    i = 0
    while i < len(words):
        name = words[i].lstrip("?")
        if i + 2 < len(words) and words[i + 1] == "-":
            out.append(Typed(name, tuple(words[i + 2].split("|"))))
            i += 3
        else:
            out.append(Typed(name))
            i += 1
    return tuple(out)


def action(name: str, params: str, pre=(), eff=()) -> Action:
    return Action(name, typed(params), And(tuple(pre)), And(tuple(eff)))


def domain(actions, types=(), constants="", predicates=(), annotations=(), name="d") -> Domain:
    return Domain(
        name=name,
        types=tuple(TypeDef(t, tuple(p.split("|")) if p else ()) for t, p in types),
        constants=typed(constants) if constants else (),
        predicates=tuple(PredicateDef(p) for p in predicates),
        actions=tuple(actions),
        annotations=tuple(Annotation(kind, text) for kind, text in annotations),
    )


def problem(objects: str, init=(), goal=None, name="p") -> Problem:
    return Problem(name=name, domain_name="d", objects=typed(objects) if objects else (),
                   init=tuple(init), goal=goal if goal is not None else And(()))
