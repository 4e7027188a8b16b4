"""The learned actions written as a PDDL domain (`learned_domain`), and that domain in the
vocabulary of a hand-written one: its types, predicate declarations and still-valid
annotations, parameters typed from the objects seen (`typed_domain`)."""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence

from sage_pddl.pddl import write_formula
from sage_pddl.pddl.model import (
    Action,
    And,
    Atom,
    Domain,
    Equals,
    Exists,
    ForallEffect,
    Formula,
    Not,
    Or,
    PredicateDef,
    Typed,
    Variable,
    When,
    key,
)
from sage_pddl.pddl.vocabulary import canonical_sexpr, split_reason

from .learned import LearnedAction, LearnedEffect
from .lifting import EXTRA, SECOND, Either, Literal, variable_names


def _term(index: int, names: Sequence[str]) -> Variable:
    return Variable("o" if index == EXTRA else "m" if index == SECOND else names[index])


def _other_than(variable: str, names: Sequence[str]) -> tuple[Not, ...]:
    """`(not (= ?o ?x))` for each of `names`: the learner's ?o (and ?m) is an object that is
    not one of the step's arguments (nor ?o) (`lifting.py`), where a PDDL variable ranges over
    them too."""
    return tuple(Not(Equals(Variable(variable), Variable(n))) for n in names)


def _some(variable: str, others: Sequence[str], parts: Sequence[Formula]) -> Exists:
    """`(exists (?v) (and (not (= ?v ?x)) ... parts))`: some object other than `others`."""
    return Exists((Typed(variable),), And((*_other_than(variable, others), *parts)))


def _formula(literal: Literal | Either, names: Sequence[str], some: bool = False):
    """A literal as a formula; with `some`, ?o is read existentially, over the objects other
    than the arguments (`(exists (?o) (and (not (= ?o ?x)) ...))`). An `Either` is `(or L
    (exists (?o) (and (not (= ?o ?x)) ... C)))`, its ?m written ?o (the one object its
    existential names)."""
    if isinstance(literal, Either):
        through = [Literal(lit.positive, lit.predicate,
                           tuple(EXTRA if i == SECOND else i for i in lit.slots))
                   for lit in literal.through]
        return Or((_formula(literal.literal, names),
                   _some("o", names, [_formula(lit, names) for lit in through])))
    atom: Atom | Exists = Atom(literal.predicate, tuple(_term(i, names) for i in literal.slots))
    if some and EXTRA in literal.slots:
        distinct = _other_than("o", names)
        atom = Exists((Typed("o"),), And((*distinct, atom)) if distinct else atom)
    return atom if literal.positive else Not(atom)


def _conjunction(literals: Sequence[Literal], names: Sequence[str], some: bool = False):
    parts = tuple(_formula(lit, names, some) for lit in literals)
    return parts[0] if len(parts) == 1 else And(parts)


def _effect_formula(effect: LearnedEffect, names: Sequence[str]):
    """The effect's PDDL; a universal one ranges over the objects other than the arguments
    (`(forall (?o) (when (and (not (= ?o ?x)) ...) e))`), as `LearnedAction.changes` does, and
    its condition on a further object reads `(exists (?m) (and (not (= ?m ?x)) (not (= ?m
    ?o)) ...))`."""
    node = _formula(effect.literal, names)
    some = not effect.universal
    condition: list[Formula] = list(_other_than("o", names)) if effect.universal else []
    condition += [_formula(lit, names, some) for lit in effect.condition]
    if effect.exception:
        condition.append(Not(_conjunction(effect.exception, names, some)))
    if effect.bridge:  # some ?m other than the arguments and ?o
        condition.append(_some("m", (*names, "o"), [_formula(lit, names) for lit in effect.bridge]))
    if condition:
        node = When(condition[0] if len(condition) == 1 else And(tuple(condition)), node)
    if effect.universal:
        node = ForallEffect((Typed("o"),), node)
    return node


def precondition_text(literal: Literal | Either, names: Sequence[str]) -> str:
    """A precondition literal as the domain writes it (?o read existentially)."""
    return write_formula(_formula(literal, names, some=True))


def effect_text(effect: LearnedEffect, names: Sequence[str]) -> str:

    return write_formula(_effect_formula(effect, names))


def learned_domain(name: str, learned: Sequence[LearnedAction], arities: Mapping[str, int]) -> Domain:
    requirements = [":strips"]
    either = any(isinstance(lit, Either) for a in learned for lit in a.preconditions)
    some_other = either or any(
        not e.universal and EXTRA in lit.slots for a in learned for e in a.effects
        for lit in e.condition + e.exception) or any(
        isinstance(lit, Literal) and EXTRA in lit.slots
        for a in learned for lit in a.preconditions) or any(
        e.bridge for a in learned for e in a.effects)
    # ?o is told apart from the arguments with (not (= ?o ?x))
    distinct = some_other or any(e.universal and a.arity for a in learned for e in a.effects)
    if distinct or any(not lit.positive for a in learned for lit in a.preconditions) or any(
            not lit.positive for a in learned for e in a.effects for lit in e.condition) or any(
            e.exception for a in learned for e in a.effects):
        requirements.append(":negative-preconditions")
    if distinct:
        requirements.append(":equality")
    if any(e.condition or e.exception or e.universal for a in learned for e in a.effects):
        requirements.append(":conditional-effects")
    if either:
        requirements.append(":disjunctive-preconditions")
    if some_other:
        requirements.append(":existential-preconditions")
    predicates = tuple(
        PredicateDef(p, tuple(Typed(n) for n in ("a", "b", "c", "d", "e", "f")[:n]) if n <= 6
                     else tuple(Typed(f"a{i}") for i in range(n)))
        for p, n in sorted(arities.items()))
    actions = []
    for action in learned:
        names = variable_names(action.arity)
        precondition = And(tuple(_formula(lit, names, some=True)
                                 for lit in action.preconditions))
        effect = And(tuple(_effect_formula(e, names) for e in action.effects))
        actions.append(Action(action.name, tuple(Typed(n) for n in names), precondition, effect))
    return Domain(name=name, requirements=tuple(requirements), predicates=predicates,
                  actions=tuple(actions))


def _type_lineage(types_from: Domain) -> Callable[[str], list[str]]:
    """type key -> the type and its ancestors, nearest first (`object` left out)."""
    parents = {key(t.name): [key(p) for p in t.parents] for t in types_from.types}

    def lineage(type_name: str) -> list[str]:
        order, queue = [], [key(type_name)]
        while queue:
            current = queue.pop(0)
            if current != "object" and current not in order:
                order.append(current)
                queue += parents.get(current, [])
        return order

    return lineage


def _renamed_variables(text: str, renamed: Mapping[str, str]) -> str:
    """`text` with each `?variable` whose key `renamed` maps spelled as it says."""
    def rename(match: re.Match[str]) -> str:
        return "?" + renamed.get(key(match.group(1)), match.group(1))

    return re.sub(r"\?([A-Za-z][\w-]*)", rename, text)


def _vocabulary_annotations(types_from: Domain, actions: Sequence[Action]) -> tuple:
    """The annotations of `types_from` that still hold for `actions` (its actions learned from
    logs): the step form and the description; the aliases and step fields of the actions
    learned with the same arity; and the `reason` of each precondition literal the learned
    action also has, its variables renamed by position (so violations keep their friendly
    codes, and a task's problem is explained the same way with either domain)."""
    learned = {key(a.name): a for a in actions}
    kept = []
    for annotation in types_from.annotations:
        kind, words = annotation.kind.lower(), annotation.text.split()
        if kind in ("fields", "describe"):
            kept.append(annotation)
            continue
        mine = learned.get(key(words[0])) if words else None
        theirs = types_from.action(words[0]) if words else None
        if kind not in ("alias", "step", "reason") or mine is None or theirs is None \
                or len(mine.parameters) != len(theirs.parameters):
            continue
        if kind == "reason":
            renamed = {key(a.name): b.name for a, b in zip(theirs.parameters, mine.parameters)}
            annotation = dataclasses.replace(annotation, text=_renamed_variables(
                annotation.text, renamed))
            literal = canonical_sexpr(split_reason(annotation).literal)
            parts = mine.precondition.parts if isinstance(mine.precondition, And) else ()
            if literal not in {canonical_sexpr(write_formula(part)) for part in parts}:
                continue
        kept.append(annotation)
    return tuple(kept)


def typed_domain(learned: Domain, types_from: Domain, object_types: Mapping[str, str],
                 seen: Mapping[str, Sequence[set[str]]]) -> Domain:
    """`learned` in the vocabulary of `types_from`, so that it reads that domain's problems and
    plans: its types, constants, predicate declarations (predicates it lacks stay untyped) and
    the annotations that still apply (`_vocabulary_annotations`). Each parameter gets the most
    specific type that every object seen there in a success has (`object_types`: object key ->
    its declared type; `seen`: action key -> the object keys per position); a position with an
    object of unknown type, or whose objects share no type below `object`, stays untyped. A
    universal effect's variable gets the type that every typed object has."""
    lineage = _type_lineage(types_from)
    spelled = {key(t.name): t.name for t in types_from.types}

    def common_type(objects: set[str]) -> tuple[str, ...]:
        if not objects or any(o not in object_types for o in objects):
            return ()
        lines = [lineage(object_types[o]) for o in sorted(objects)]
        shared = [t for t in lines[0] if all(t in line for line in lines[1:])]
        return (spelled.get(shared[0], shared[0]),) if shared else ()

    # a quantified ?o ranges over every object a state mentions: the type all objects share
    quantified = common_type(set(object_types))

    def typed_effect(effect):
        if isinstance(effect, And):
            return And(tuple(typed_effect(part) for part in effect.parts))
        if isinstance(effect, ForallEffect):
            return ForallEffect(tuple(Typed(v.name, v.types or quantified)
                                      for v in effect.variables), typed_effect(effect.effect))
        if isinstance(effect, When):
            return When(typed_condition(effect.condition), effect.effect)
        return effect

    def typed_condition(formula):
        if isinstance(formula, And):
            return And(tuple(typed_condition(part) for part in formula.parts))
        if isinstance(formula, Not):
            return Not(typed_condition(formula.arg))
        if isinstance(formula, Or):
            return Or(tuple(typed_condition(part) for part in formula.parts))
        if isinstance(formula, Exists):
            return Exists(tuple(Typed(v.name, v.types or quantified)
                                for v in formula.variables), formula.body)
        return formula

    actions = []
    for action in learned.actions:
        positions = seen.get(key(action.name), [])
        parameters = tuple(
            Typed(p.name, common_type(positions[i]) if i < len(positions) else ())
            for i, p in enumerate(action.parameters))
        actions.append(dataclasses.replace(action, parameters=parameters,
                                           precondition=typed_condition(action.precondition),
                                           effect=typed_effect(action.effect)))
    declared = {key(p.name) for p in types_from.predicates}
    predicates = types_from.predicates + tuple(p for p in learned.predicates
                                               if key(p.name) not in declared)
    requirements = tuple(dict.fromkeys((*learned.requirements, ":typing")))
    return dataclasses.replace(learned, requirements=requirements, types=types_from.types,
                               constants=types_from.constants, predicates=predicates,
                               actions=tuple(actions),
                               annotations=_vocabulary_annotations(types_from, actions))
