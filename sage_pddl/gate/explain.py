"""Why a step is rejected: the typed violations of a ground action in a state.

Violation codes
---------------
* Structural (the step cannot become a ground action, `binding.py`): `unparsable-step` (no
  action word, or not a step at all), `unknown-action`, `wrong-arity` (also when a JSON field a
  parameter needs is empty), `unknown-object`, `type-mismatch` (an object not of the
  parameter's type).
* A failed precondition literal: `<action>/requires/<predicate>` when a positive literal does
  not hold, `<action>/forbids/<predicate>` when a negated literal holds, and
  `<action>/requires/equal` / `<action>/forbids/equal` for `=` (action and predicate lower case).
  Quantifiers are expanded: a failed `forall` reports each failing instance as a literal of its
  own, and an `imply` whose condition holds reports the failed literals of its consequent.
* A failed disjunction (`or`, `exists`, a negated `and`/`forall`) has no single culprit: it is
  reported once as `<action>/requires/any-of`, its literal being the formula as written with
  the step's objects substituted.
* Every failed literal (or disjunction) of a rejected step is its own `Violation`, all with the
  same `step`, in the order the domain writes them (equalities false for the step's objects
  first).
* A `; @sage reason <Action> <literal> <code> "<message>"` annotation replaces the code and
  message of that literal; it matches the literal as written in the action, or the whole
  top-level precondition conjunct that contains a failed part.

Which literals and disjunctions failed is the engine's to say (`engine.CompiledCond.failures`:
the sources of the bits and guards that fail, recorded when the step was compiled); this module
words them (`explanation`, `violations`). The gate's check loop explains a refused step with an
`Explainer` per step, which keeps what it said in each state the precondition can tell apart.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..pddl.built_once import keep_bounded
from ..pddl.errors import SageError
from ..pddl.model import Variable, key
from ..pddl.writer import write_formula
from .engine import CompiledStep
from .ground import EQUALS, AnyOf, GroundAction, GroundAtom, GroundLiteral
from .table import PreconditionTable
from .verdict import Violation


def failure_text(table: PreconditionTable, failure: GroundLiteral | AnyOf) -> str:
    """A failed literal or disjunction as PDDL text, objects in their original spelling."""
    if isinstance(failure, GroundLiteral):
        return table.objects.format_literal(failure)
    bound = dict(failure.bindings)
    names = table.objects.object_names

    def name(term: Any) -> str:
        if isinstance(term, Variable):
            value = bound.get(key(term.name))
            return names.get(value, value) if value is not None else f"?{term.name}"
        spelled: str = names.get(key(term.name), term.name)
        return spelled

    text = write_formula(failure.source, name)
    return text if failure.positive else f"(not {text})"


def violations(table: PreconditionTable, failed: Sequence[GroundLiteral | AnyOf],
               ground: GroundAction, index: int, step_text: str = "") -> list[Violation]:
    """One violation of step `index` (written `step_text`) per failed literal or disjunction
    of `ground`'s precondition (`failed`, in source order; `ground` must not apply)."""
    step_text = _shown(step_text, ground.text)
    out = [explanation(table, failure, ground).violation(index, step_text, ground.text)
           for failure in failed]
    if not out:
        raise SageError(f"{ground.text} is applicable; nothing to explain")
    return out


@dataclass(frozen=True, slots=True)
class Explanation:
    """What a violation says of one failed literal or disjunction of a ground action: all of
    it but the step, the same in every state in which that literal fails."""

    code: str
    literal: str
    message: str
    atoms: tuple[tuple[bool, GroundAtom], ...]

    def violation(self, index: int, step_text: str, action: str) -> Violation:
        """This explanation as the violation of step `index` (`step_text`) acting on the ground
        action `action` (its text)."""
        return Violation(index, step_text, action, self.code, self.literal, self.message,
                         self.atoms)


def explanation(table: PreconditionTable, failure: GroundLiteral | AnyOf,
                ground: GroundAction) -> Explanation:
    """The code, literal text, message and atoms of a failed literal or disjunction of
    `ground` (the module docstring's rules, a `@sage reason` annotation applied)."""
    action_key = key(ground.name)
    literal = failure_text(table, failure)
    atoms: tuple[tuple[bool, GroundAtom], ...]
    if isinstance(failure, GroundLiteral):
        equality = failure.atom[0] == EQUALS
        atoms = () if equality else ((failure.positive, failure.atom),)
        code = _code(action_key, failure.positive, "equal" if equality else failure.atom[0])
        message = _literal_message(ground.text, literal, failure.positive,
                                   None if equality else table.objects.format_atom(failure.atom))
    else:
        atoms = tuple(dict.fromkeys(
            (lit.positive, lit.atom)
            for part in failure.parts for lit in part.literals if lit.atom[0] != EQUALS))
        code = f"{action_key}/requires/any-of"
        message = f"{ground.text} requires {literal}, and no alternative holds"
    reason = table.reason(ground.schema, (failure.schema, failure.anchor))
    if reason is not None:
        code = reason.code
        if reason.message:
            message = _fill(reason.message, _literal_bindings(table, failure) + ground.bindings)
    return Explanation(code, literal, message, atoms)


EXPLAINED_KEPT = 64
"""States one `Explainer` keeps the violations in, at most (as the atoms its precondition
reads); the oldest is forgotten first."""


class Explainer:
    """The violations of one compiled step (its first candidate's, for a step that names
    several), written `step_text`, in the gate's bit-set states.

    The violations depend only on the atoms the precondition reads (`BitSets.reads`), but for
    the step's index: they are made from the failing parts' sources
    (`engine.CompiledCond.failures`) the first time the step is refused with those atoms so,
    then kept (`EXPLAINED_KEPT`) and reported at the index of each refusal.
    """

    __slots__ = ("table", "step", "step_text", "_reads", "_kept")

    def __init__(self, table: PreconditionTable, step: CompiledStep, step_text: str) -> None:
        self.table = table
        self.step = step
        self.step_text = step_text
        self._reads: int | None = None
        """The bits of the atoms the precondition reads (None: not yet made; most steps are
        never refused)."""
        self._kept: dict[int, tuple[Violation, ...]] = {}
        """The state's atoms the precondition reads, as a mask -> the violations there, made
        for the step index of the first refusal (`EXPLAINED_KEPT`)."""

    def violations(self, s: int, index: int) -> tuple[Violation, ...]:
        """The violations in the bit-set state `s`, where the step does not apply, for step
        `index`."""
        reads = self._reads
        if reads is None:
            reads = self._reads = self.step.bits.reads(self.step.ground.precondition)
        read = s & reads
        found = self._kept.get(read)
        if found is None:
            found = tuple(violations(self.table, self.step.precondition.failures(s),
                                     self.step.ground, index, self.step_text))
            keep_bounded(self._kept, EXPLAINED_KEPT, read, found)
        if found[0].step == index:  # (a refinement loop meets a refusal at the same index)
            return found
        return tuple(violation.at(index) for violation in found)


def _shown(step_text: str, action_text: str) -> str:
    """The step as its violations show it: its text, else its ground action's text."""
    return step_text or action_text.strip("()")


def _code(action_key: str, positive: bool, predicate: str) -> str:
    """The code of a failed literal: `<action>/requires/<predicate>` (`forbids` when negative;
    `equal` for `=`)."""
    return f"{action_key}/{'requires' if positive else 'forbids'}/{predicate}"


def _literal_message(action_text: str, literal: str, positive: bool,
                     atom_text: str | None) -> str:
    """Why a failed literal fails: `<action> requires <literal>, ...`; `atom_text` is the
    literal's atom in the source's spelling, None for `=`."""
    if atom_text is None:
        detail = "the objects differ" if positive else "the objects are the same"
    elif positive:
        detail = "which does not hold"
    else:
        detail = f"but {atom_text} holds"
    return f"{action_text} requires {literal}, {detail}"


def _literal_bindings(table: PreconditionTable,
                      failure: GroundLiteral | AnyOf) -> tuple[tuple[str, str], ...]:
    """The variables of a failed literal as written (a quantifier's among them: `?c` of
    `(forall (?c - thing) (not (shut-in ?x ?c)))`) bound to its atom's objects, so that an
    annotated message can name the object a quantifier found (the closed container)."""
    if not isinstance(failure, GroundLiteral):
        return ()
    atom = re.search(r"\(([^()\s]+)((?:\s+[^()\s]+)*)\)", failure.schema)
    if atom is None:
        return ()
    terms = atom.group(2).split()
    return tuple((term[1:], table.objects.object_names.get(value, value))
                 for term, value in zip(terms, failure.atom[1:]) if term.startswith("?"))


def _fill(template: str, bindings: tuple[tuple[str, str], ...]) -> str:
    """An annotated message with each `?variable` replaced by its object: the step's, or the
    failed literal's (the last binding of a name wins)."""
    bound = {key(name): value for name, value in bindings}
    return re.sub(r"\?([A-Za-z_][\w\-]*)",
                  lambda m: bound.get(key(m.group(1)), m.group(0)), template)
