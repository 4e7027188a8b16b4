"""Reading a plan step: which action and objects its words name.

A step is a `PlanStep`, or a JSON object or text that the gate's public entry points were given
(read as `pddl.plans` reads them: `{"action": "Pick", "object": "Apple"}`, the fields of each
parameter given by the domain's `@sage step` map, or `args`; `"Pick Apple"`). Its
action word is looked up exactly (case-insensitive), then through the domain's aliases; each
argument word is an object key when it names an object of its parameter's type, else the
words may name instances (`Cabinet` -> `Cabinet_1`, `Cabinet_2`: `pddl/vocabulary.py`), and the
step names every combination that fits the parameter types, in order. A step that names no
ground action raises `StepRejected` with a structural violation (`explain.py`'s codes).
"""
from __future__ import annotations

import difflib
import itertools
from functools import cached_property
from typing import Any, NamedTuple

from ..pddl.errors import PlanSyntaxError
from ..pddl.model import Action, PlanStep
from ..pddl.plans import json_step_text, step_from_value
from ..pddl.vocabulary import ObjectNames
from .schema import StepAction
from .table import PreconditionTable
from .verdict import StepRejected, Violation


def text_of(step: Any) -> str:
    """A step as text, for violations."""
    if isinstance(step, PlanStep):
        return step.text or " ".join([step.action, *step.args])
    if isinstance(step, dict):
        return json_step_text(step)
    return str(step)


class Bound(NamedTuple):
    """What a step names: its action and, in order, every tuple of object keys its words may
    name (one when each word is an object of its parameter's type)."""

    action: Action
    candidates: tuple[tuple[str, ...], ...]


class StepBinder:
    """Binds the steps of plans to a table's actions and objects (see the module docstring)."""

    def __init__(self, table: PreconditionTable) -> None:
        self.table = table
        self.schema = table.schema
        self.declared = table.objects.declared
        """Object key -> its declared type key, or keys (`objects.ProblemObjects.declared`)."""

    @cached_property
    def names(self) -> ObjectNames:
        """The problem's object names, with the domain's synonyms."""
        return ObjectNames(self.table.domain, self.table.problem)

    def cache_key(self, step: Any) -> Any:
        """What a step's ground action depends on, a step's content (None: not cacheable).
        The kinds of step cannot collide: text is a str, a PlanStep key starts with the action
        (a str) and holds tuples, a JSON step key is a tuple of (field, value) pairs, which
        a list of args makes unhashable (`hashable_key` then)."""
        kind = type(step)
        if kind is dict:
            return tuple(step.items())
        if kind is str:
            return step
        if isinstance(step, PlanStep):
            return (step.action, step.args, step.fields)
        return None

    @staticmethod
    def hashable_key(step_key: Any) -> Any:
        """An unhashable JSON step key with its list of args as a tuple (None: still
        unhashable, as a nested object is)."""
        step_key = tuple((k, tuple(v) if k == "args" and isinstance(v, list) else v)
                         for k, v in step_key)
        try:
            hash(step_key)
        except TypeError:
            return None
        return step_key

    def _reject(self, index: int, step: Any, code: str, message: str,
                action: str = "") -> StepRejected:
        text = text_of(step)
        return StepRejected(Violation(index, text, action or text, code, "", message))

    def words(self, step: Any, index: int
               ) -> tuple[str, tuple[str, ...] | None, tuple[tuple[str, str], ...]]:
        """(action word, argument words or None, named fields): a step with named fields
        gives the fields (mapped to the parameters once the action is known), any other its
        arguments. JSON and text are read as everywhere (`pddl.plans.step_from_value`)."""
        if not isinstance(step, PlanStep):
            try:
                step = step_from_value(step, index)
            except PlanSyntaxError as error:
                raise self._reject(index, step, "unparsable-step", error.message) from None
        # a step with named fields fills the parameters from them (`_field_args`)
        return step.action, None if step.fields else step.args, step.fields

    def _action_of(self, name: str, step: Any, index: int) -> StepAction:
        found = self.table.schema.word(name)
        if found is None:
            known = [a.name for a in self.table.domain.actions]
            close = difflib.get_close_matches(name.lower(), [k.lower() for k in known], n=1)
            hint = (f"; did you mean {known[[k.lower() for k in known].index(close[0])]}?"
                    if close else "")
            raise self._reject(index, step, "unknown-action",
                               f"unknown action {name!r} (the domain has: {', '.join(known)}){hint}")
        return found

    def bind(self, step: Any, index: int) -> Bound:
        """What a step names (`Bound`); raises `StepRejected` with the structural
        violation."""
        if type(step) is PlanStep:  # (what `words` gives of one)
            name, args, fields = step.action, None if step.fields else step.args, step.fields
        else:
            name, args, fields = self.words(step, index)
        if not name:
            raise self._reject(index, step, "unparsable-step", "the step has no action name")
        # an action's name as written is in `words` from the start; other spellings once met
        schema = self.schema
        named = schema.words.get(name) or self._action_of(name, step, index)
        action = named.action
        if args is None:  # a JSON step with named fields
            args = self._field_args(named, dict(fields), step, index)
        if len(args) != len(named.accepted):  # (one per parameter)
            raise self._arity_error(action, len(args), step, index)
        objects = tuple(map(str.lower, args))
        # each object's type key, or the keys of an object of several types (None: no object)
        kinds = tuple(map(self.declared.get, objects))
        fits = schema.fitting_kinds.get((name, kinds))
        if not (schema.fits(name, named, kinds) if fits is None else fits):
            return Bound(action, self._instances(step, index, action, args, named.accepted))
        return Bound(action, (objects,))

    def _field_args(self, named: StepAction, values: dict[str, str], step: Any,
                    index: int) -> tuple[str, ...]:
        """The arguments of a JSON step with named fields: each parameter's from the first
        non-empty field of its `@sage step` map, or without one `object` and `target`."""
        action = named.action
        if named.fields is None:
            return tuple(v for v in (values.get("object", ""), values.get("target", "")) if v)
        filled = []
        for param, names in zip(action.parameters, named.fields):
            value = next((values[n] for n in names if values.get(n)), "")
            if not value:
                raise self._reject(
                    index, step, "wrong-arity",
                    f"{action.name} needs ?{param.name} from the step field "
                    f"{' or '.join(repr(n) for n in names)}, which is empty", action.name)
            filled.append(value)
        return tuple(filled)

    def _arity_error(self, action: Action, given: int, step: Any, index: int) -> StepRejected:
        params = action.parameters
        signature = " ".join(f"?{p.name}" + (f" - {'/'.join(p.types)}" if p.types else "")
                             for p in params)
        return self._reject(
            index, step, "wrong-arity",
            f"{action.name} takes {len(params)} argument(s) ({signature or 'none'}), "
            f"the step gives {given}", action.name)

    def _instances(self, step: Any, index: int, action: Action, args: tuple[str, ...],
                   accepted: tuple[frozenset[str] | None, ...]) -> tuple[tuple[str, ...], ...]:
        """A step some of whose words are not objects of their parameter's type: each such word
        may name instances (`Cabinet` -> `Cabinet_1`, `Cabinet_2`; see `pddl/vocabulary.py`);
        the step names every combination that fits the parameter types (the candidates of a
        `Choice`, in order), or is rejected for the first word that names no fitting object."""
        table = self.table
        names = self.names
        options: list[tuple[str, ...]] = []
        for word, types in zip(args, accepted):
            found = names.candidates(word)
            fitting = tuple(o for o in found if o in table.objects.object_types and
                            (types is None or not types.isdisjoint(table.objects.object_types[o])))
            if not fitting:
                raise self._object_error(step, index, action, args, accepted)
            options.append(fitting)
        return tuple(itertools.product(*options))

    def _object_error(self, step: Any, index: int, action: Action, args: tuple[str, ...],
                      accepted: tuple[frozenset[str] | None, ...]) -> StepRejected:
        """The rejection of the first argument that names no object of its parameter's type."""
        table = self.table
        names = self.names
        for position, (param, word, types) in enumerate(zip(action.parameters, args, accepted),
                                                        start=1):
            found = names.candidates(word)
            if not found:
                close = difflib.get_close_matches(word.lower(), list(table.objects.object_names), n=1)
                hint = f"; did you mean {table.objects.object_names[close[0]]}?" if close else ""
                return self._reject(index, step, "unknown-object",
                                    f"unknown object {word!r} (argument {position} of "
                                    f"{action.name}){hint}", action.name)
            if types is not None and all(types.isdisjoint(table.objects.object_types[o]) for o in found):
                have = "/".join(dict.fromkeys(t for o in found
                                              for t in table.objects.declared_types.get(o, ("object",))))
                named = table.objects.object_names[found[0]] if len(found) == 1 else f"every {word}"
                return self._reject(
                    index, step, "type-mismatch",
                    f"argument {position} of {action.name} (?{param.name}) must be "
                    f"{' or '.join(param.types)}, but {named} is {have}", action.name)
        raise AssertionError("every argument names an object of its parameter's type")

