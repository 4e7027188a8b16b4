"""Domain-level compilation for the gate, done once per `Domain` object and shared by its problems.

Semantics
---------
`domain_schema(domain)` returns the `DomainSchema` of a domain: everything the gate derives from
the domain alone, so that compiling a gate for another problem of the same domain redoes none
of it:

* the domain's `Vocabulary` (`pddl/vocabulary.py`: action names and aliases, `@sage step`
  field maps, `@sage reason` codes and messages, canonical texts; a malformed annotation is
  raised by every compile, after the scope check) and predicate spellings;
* the type hierarchy (ancestors of each type), and the domain's constants by key with their
  declared types and spellings;
* the scope hazards: the nodes the scope check must look at (numeric comparisons, unsupported
  constructs, numeric effects), in the order the check visits them, since whether a numeric
  effect is a harmless cost depends on the problem's metric;
* the canonical text of every condition node of every action (annotation matching, reports);
* what each action word names (`words`): every action's name and alias from the start, other
  spellings as steps use them, with the declared types each parameter accepts (`StepAction`);
* each action lifted (`template`, `lifted.py`): its precondition and effect as templates a
  step's objects are substituted into, made when a step first names the action.

The cache is `pddl.vocabulary.PerDomain`: per domain object, not per equal domain (equality
ignores the `@sage` annotations). A schema holds the domain's actions and nodes but never the
`Domain` itself, so the cache does not keep domains alive.
"""
from __future__ import annotations

from typing import NamedTuple

from ..pddl.built_once import keep_bounded
from ..pddl.model import (
    Action,
    Comparison,
    Domain,
    NumericEffect,
    Typed,
    Unsupported,
    key,
    object_keys,
    walk,
)
from ..pddl.validate import TypeHierarchy
from ..pddl.vocabulary import PerDomain, vocabulary
from .lifted import ActionTemplate, lift_action

FITTING_KEPT = 4096
"""(action word, declared type keys) pairs one schema keeps whether they fit (`fits`), at
most; the oldest is forgotten first."""

# --- the schema ------------------------------------------------------------------------------

class DomainSchema:
    """Everything the gate derives from a domain alone (see the module docstring)."""

    def __init__(self, domain: Domain):
        self.name = domain.name
        self.constants = domain.constants
        self.unsupported = domain.unsupported
        self.vocabulary = vocab = vocabulary(domain)
        self.predicate_names: dict[str, str] = {key(p.name): p.name for p in domain.predicates}
        self.types = TypeHierarchy(domain)
        self.hazards: list[tuple[object, str]] = []
        for action in domain.actions:
            context = f"in action {action.name}"
            for formula in (action.precondition, action.effect):
                for node in walk(formula):
                    if isinstance(node, (Comparison, Unsupported, NumericEffect)):
                        self.hazards.append((node, context))
                    elif formula is action.precondition:
                        vocab.canonical(node)  # annotation matching and reports need them all
        self.words: dict[str, StepAction] = {}
        """A step's action word as written -> what it names: every action's name as declared,
        in lower case and its aliases from the start, other spellings as they are met."""
        for action in domain.actions:
            for word in (action.name, key(action.name), *vocab.aliases.get(action.name, ())):
                self.word(word)
        self.declared, self.spelling = object_keys(domain.constants)
        """The domain's constants by key, each with its type key and its name as declared
        (`model.object_keys`)."""
        self.actions: dict[str, Action] = {action.name: action for action in domain.actions}
        """Action name as declared -> the action."""
        self.fitting_kinds: dict[tuple[str, tuple[object, ...]], bool] = {}
        """(a step's action word, its objects' declared type keys) -> whether they fit its
        parameters (`fits`, `FITTING_KEPT`)."""
        self.templates: dict[str, ActionTemplate] = {}
        """Action name -> its lifted form (`template`), one entry per action of the domain."""

    def template(self, name: str) -> ActionTemplate:
        """The action `name` lifted (`lifted.lift_action`), made when first asked for: a free
        variable in it is an error of the first step that names it, not of every compile."""
        found = self.templates.get(name)
        if found is None:
            vocab = self.vocabulary
            found = self.templates[name] = lift_action(self.actions[name], vocab.canonical,
                                                       vocab.effect_predicates)
        return found

    def ancestors(self, type_name: str) -> frozenset[str]:
        """The type, its ancestors and `object` (`validate.TypeHierarchy`)."""
        return self.types.ancestors(type_name)

    def type_set(self, declared: str | tuple[str, ...]) -> frozenset[str]:
        """The type keys an object of `declared` type keys (`model.object_keys`) belongs
        to: their ancestors, merged."""
        if type(declared) is str:  # a type key: a declared type's ancestors are one look-up
            return self.types.closure.get(declared) or self.types.ancestors(declared)
        return frozenset({"object"}).union(*map(self.types.ancestors, declared))

    def word(self, word: str) -> StepAction | None:
        """What a step's action word names (exact, then alias/loose), or None."""
        found = self.words.get(word)
        if found is None:
            action = self.vocabulary.action(word)
            if action is None:
                return None
            found = self.words.get(action.name)  # made for the action's name at the start
            if found is None:
                accepted = tuple(map(_accepted, action.parameters))
                found = StepAction(action, self.vocabulary.fields(action), accepted,
                                   tuple(None if types is None else self.declared_fitting(types)
                                         for types in accepted))
            self.words[word] = found
        return found

    def fits(self, word: str, named: StepAction,
             kinds: tuple[str | tuple[str, ...] | None, ...]) -> bool:
        """Whether objects of the declared type keys `kinds` (`model.object_keys`; None: no
        such object) fit the parameters of `named`, the action `word` names, each of its
        type (`StepAction.fitting`). Kept per (word, kinds) in `fitting_kinds`: it depends
        on the domain alone, and a problem's steps name few such pairs."""
        found = all(kind is not None and (fitting is None or (
                        kind in fitting if type(kind) is str else not fitting.isdisjoint(kind)))
                    for kind, fitting in zip(kinds, named.fitting))
        keep_bounded(self.fitting_kinds, FITTING_KEPT, (word, kinds), found)
        return found

    def declared_fitting(self, accepted: frozenset[str]) -> frozenset[str]:
        """The type keys whose objects belong to one of `accepted`: those types and their
        subtypes, at any depth (`validate.TypeHierarchy.descendants`)."""
        return self.types.descendants(accepted)


def _accepted(parameter: Typed) -> frozenset[str] | None:
    """The type keys a parameter accepts, or None for any object (untyped or `object`)."""
    types = frozenset(key(t) for t in parameter.types)
    return None if not types or "object" in types else types


class StepAction(NamedTuple):
    """What a step's action word names: the action, the JSON fields of each parameter (its
    `@sage step` map, or None), the types each parameter accepts (None: any object) and,
    per parameter, the declared type keys (`model.object_keys`) of the objects it accepts
    (`DomainSchema.declared_fitting`; None: any object)."""

    action: Action
    fields: tuple[tuple[str, ...], ...] | None
    accepted: tuple[frozenset[str] | None, ...]
    fitting: tuple[frozenset[str] | None, ...]


domain_schema = PerDomain(DomainSchema)
"""`domain_schema(domain)`: the cached `DomainSchema` of this very `domain` object (see the
module docstring)."""
