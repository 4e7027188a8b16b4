"""Types learned from the objects' roles (`induce --role-types`): a small type hierarchy read
off the static properties the logs show objects have, so an induced domain is typed where
no hand-written domain gives it types (EAI's VirtualHome domain declares only `character`).

Semantics
---------
A *property* is a static unary predicate: one no logged transition ever changes (such as
VirtualHome's `grabbable`, `has_plug`, `sittable`). An object's *role* is the set of
properties it has in the pre-state of every logged success it takes part in (as any
argument of any action). A position of a learned action is *described* by the properties
every object seen succeeding there has: the intersection of their roles (at least
`min_objects` distinct objects, else the position is left untyped: one object's properties do
not say which of them the action needs).

Each distinct description is a candidate type, named by its properties (`grabbable_movable`
+ `_thing`). Types are admitted one at a time, those describing more positions first (then
fewer properties, then by name), while every object seen succeeding somewhere, in each
pre-state of its successes, still has a *chain* of admitted types (for any two admitted types
whose properties it has, one's properties include the other's). A type's parent is the
admitted type with the most properties among those whose properties are a strict subset of its
own (else `object`); the chain rule makes that a tree, so the PDDL is plain
`(:types a b - object c - a)`. A
position's type is the admitted type with the most properties among those its description
includes (a chain too: some object has them all), or none.

An object has a role type when it has that type's properties: a problem's object, declared
`object` or untyped, is declared the admitted type with the most properties whose properties
it has in the problem's initial state (`role_typed_problem`), so the induced domain reads the
problems of the domain it learned from. Since every object seen succeeding at a position has
the position's properties, hence that type or a descendant, a role type never refuses a step
the learner saw succeed. `LearnedAction.typing` holds the same check as literals, so what
`predict` says is what the gate says.
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sage_pddl.pddl.model import Atom, Domain, Problem, Typed, TypeDef, key

MIN_OBJECTS = 2
"""The distinct objects seen succeeding at a position below which it stays untyped: one
object's properties do not say which of them the action needs (with 1, VirtualHome's `type`
took every property of the one keyboard typed on, and held out a little worse)."""


@dataclass(frozen=True)
class RoleType:
    """A learned type: the objects that have every one of `properties` (static unary
    predicates); `parent` is `object` or another role type's name."""

    name: str
    properties: frozenset[str]
    parent: str = "object"

    def comment(self) -> str:
        props = " ".join(f"({p} ?o)" for p in sorted(self.properties))
        return f"{self.name}: objects that are {props} in every state"


@dataclass(frozen=True)
class RoleTypes:
    """The admitted role types, parents before children."""

    types: tuple[RoleType, ...] = ()

    @property
    def properties(self) -> frozenset[str]:
        return frozenset(p for t in self.types for p in t.properties)

    def type_of(self, properties: Iterable[str]) -> RoleType | None:
        """The admitted type with the most properties among those `properties` include."""
        have = frozenset(properties)
        fitting = [t for t in self.types if t.properties <= have]
        return max(fitting, key=lambda t: (len(t.properties), t.name), default=None)

    def typedefs(self) -> tuple[TypeDef, ...]:
        return tuple(TypeDef(t.name, (t.parent,)) for t in self.types)


def _type_name(properties: frozenset[str], taken: set[str]) -> str:
    name = "_".join(sorted(properties)) + "_thing"
    spelled, number = name, 2
    while key(spelled) in taken:
        spelled, number = f"{name}{number}", number + 1
    return spelled


def _is_chain(sets: Sequence[frozenset[str]]) -> bool:
    ordered = sorted(sets, key=len)
    return all(a <= b for a, b in zip(ordered, ordered[1:]))


def learn_role_types(positions: Mapping[str, Sequence[set[str]]],
                     object_roles: Mapping[str, Iterable[frozenset[str]]], static: Iterable[str],
                     *, min_objects: int = MIN_OBJECTS, taken: Iterable[str] = ()
                     ) -> tuple[RoleTypes, dict[str, list[RoleType | None]]]:
    """(the admitted types, action key -> each position's type or None); see the module
    docstring. `positions`: action key -> the objects seen succeeding at each position (only
    the positions to type); `object_roles`: object -> the sets of unary predicates it had in
    the pre-states of the successes it took part in (its role is their intersection, and each
    of them must see a chain of admitted types); `static`: the predicates no transition
    changes; `taken`: type names already declared (a role type is named apart from them)."""
    properties = frozenset(static)
    seen = {o: {frozenset(s) & properties for s in sets} for o, sets in object_roles.items()}
    roles = {o: frozenset.intersection(*sets) for o, sets in seen.items() if sets}
    states = {s for sets in seen.values() for s in sets}

    def described(objects: set[str]) -> frozenset[str]:
        if len(objects) < min_objects or any(o not in roles for o in objects):
            return frozenset()
        return frozenset.intersection(*(roles[o] for o in objects)) if objects else frozenset()

    descriptions = {action: [described(objects) for objects in per_position]
                    for action, per_position in positions.items()}
    uses = Counter(d for per_position in descriptions.values() for d in per_position if d)
    admitted: list[frozenset[str]] = []
    for candidate in sorted(uses, key=lambda d: (-uses[d], len(d), sorted(d))):
        trial = admitted + [candidate]
        if all(_is_chain([t for t in trial if t <= state]) for state in states):
            admitted = trial
    names: set[str] = {key(t) for t in taken}
    named: dict[frozenset[str], str] = {}
    for props in sorted(admitted, key=lambda d: (len(d), sorted(d))):
        named[props] = _type_name(props, names)
        names.add(key(named[props]))
    types = []
    for props in sorted(admitted, key=lambda d: (len(d), sorted(d))):
        below = [t for t in admitted if t < props]
        parent = max(below, key=len) if below else None
        types.append(RoleType(named[props], props, named[parent] if parent else "object"))
    learned = RoleTypes(tuple(types))
    typed = {action: [learned.type_of(d) if d else None for d in per_position]
             for action, per_position in descriptions.items()}
    return learned, typed


def _untyped(types: tuple[str, ...]) -> bool:
    return not types or tuple(key(t) for t in types) == ("object",)


def role_typed_domain(domain: Domain, roles: RoleTypes,
                      typed: Mapping[str, Sequence[RoleType | None]]) -> Domain:
    """`domain` with the role types declared under `object` and each parameter it leaves
    untyped (or `object`) typed by `typed` (action key -> each position's role type). The
    predicates are declared untyped: role types nest, which makes the type hierarchy explicit
    and a problem fact that breaks a predicate's declared types an error, and EAI's own
    VirtualHome problems break its domain's (`(facing couch television)`, where `facing`
    takes a `character`); the logs never told the learner what a predicate's arguments are."""
    if not roles.types:
        return domain
    actions = []
    for action in domain.actions:
        kinds = list(typed.get(key(action.name), []))
        kinds += [None] * (len(action.parameters) - len(kinds))
        actions.append(dataclasses.replace(action, parameters=tuple(
            Typed(p.name, (kind.name,)) if kind is not None and _untyped(p.types) else p
            for p, kind in zip(action.parameters, kinds))))
    requirements = tuple(dict.fromkeys((*domain.requirements, ":typing")))
    predicates = tuple(dataclasses.replace(p, parameters=tuple(Typed(a.name) for a in p.parameters))
                       for p in domain.predicates)
    return dataclasses.replace(domain, requirements=requirements, predicates=predicates,
                               types=domain.types + roles.typedefs(), actions=tuple(actions))


def role_typed_problem(problem: Problem, roles: RoleTypes) -> Problem:
    """`problem` with each object declared `object` (or untyped) declared the role type its
    properties in the initial state give it (`RoleTypes.type_of`); others are kept."""
    if not roles.types:
        return problem
    wanted = roles.properties
    has: dict[str, set[str]] = {}
    for fact in problem.init:
        if isinstance(fact, Atom) and len(fact.args) == 1 and key(fact.predicate) in wanted:
            has.setdefault(key(fact.args[0].name), set()).add(key(fact.predicate))
    objects = []
    for obj in problem.objects:
        kind = roles.type_of(has.get(key(obj.name), ())) if _untyped(obj.types) else None
        objects.append(Typed(obj.name, (kind.name,)) if kind is not None else obj)
    return dataclasses.replace(problem, objects=tuple(objects))


__all__ = ["MIN_OBJECTS", "RoleType", "RoleTypes", "learn_role_types", "role_typed_domain",
           "role_typed_problem"]
