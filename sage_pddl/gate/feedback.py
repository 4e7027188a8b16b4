"""Render a gate verdict as feedback text for an LLM planner.

The text lists every violation (1-based step number, the step as written, code, message and the
failed literal), the symbolic state before the first failing step (all of it when small;
otherwise the facts that mention the step's objects first, then those that mention the failed
literals' objects, capped), and for each failed literal the actions that would satisfy it:
actions of the domain whose add effects unify with a missing literal, or whose delete effects
unify with a literal that must become false, with the literal's objects filled in and the other
parameters left as `?name`. When the plan is executable but the goal does not hold, it lists the
unmet goal literals the same way. Output is deterministic (facts sorted, actions in domain order).

It reads the gate through its interface alone (`interface.PlanChecker`), as the planners that
call it hold one.
"""
from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from typing import Any

from ..pddl.model import Atom, Variable, effect_literals, key
from .ground import Atoms, GroundAtom, GroundLiteral, State
from .interface import PlanChecker
from .verdict import Verdict, Violation

STATE_CAP = 25
"""Facts shown when the state is bigger than this: the relevant ones only, at most this many."""
ACHIEVER_CAP = 3

_effect_index: weakref.WeakKeyDictionary[PlanChecker, dict[Any, Any]] = weakref.WeakKeyDictionary()
"""Checker -> which actions add or delete each predicate (`_index`): one entry per live gate."""


def _index(gate: PlanChecker) -> dict[tuple[str, bool], list[tuple[Any, Atom]]]:
    """(predicate, adds?) -> [(action, effect atom)] in domain order, built once per gate."""
    found = _effect_index.get(gate)
    if found is None:
        found = {}
        for action in gate.domain.actions:
            for atom, adds in effect_literals(action.effect):
                found.setdefault((key(atom.predicate), adds), []).append((action, atom))
        _effect_index[gate] = found
    return found


def achievers(gate: PlanChecker, atom: tuple[Any, ...], make_true: bool,
              limit: int = ACHIEVER_CAP) -> list[str]:
    """Steps (`Action Obj ?param`) whose effects make `atom` true (or false)."""
    out: list[str] = []
    for action, effect_atom in _index(gate).get((atom[0], make_true), []):
        if len(effect_atom.args) != len(atom) - 1:
            continue
        params = {key(p.name) for p in action.parameters}
        binding: dict[str, str] = {}
        for term, obj in zip(effect_atom.args, atom[1:]):
            if isinstance(term, Variable):
                name = key(term.name)
                if name in params:
                    if binding.setdefault(name, obj) != obj:
                        break
                # a quantified variable of a forall effect matches any object
            elif key(term.name) != obj:
                break
        else:
            if all(not p.types or binding[key(p.name)] in gate.objects_of(p.types)
                   for p in action.parameters if key(p.name) in binding):
                names = gate.objects
                words = [action.name, *(names.get(binding[key(p.name)], binding[key(p.name)])
                                        if key(p.name) in binding else f"?{p.name}"
                                        for p in action.parameters)]
                text = " ".join(words)
                if text not in out:
                    out.append(text)
        if len(out) >= limit:
            break
    return out


def _hint(gate: PlanChecker, positive: bool, atom: GroundAtom) -> str:
    literal = gate.format_atom(atom)
    if not positive:
        literal = f"(not {literal})"
    steps = achievers(gate, atom, positive)
    if steps:
        return f"needs {literal}: {' or '.join(steps)} first"
    if positive:
        return f"needs {literal}: no action makes it true, so it must hold from the start"
    return f"needs {literal}: no action makes it false"


def _state_before(gate: PlanChecker, verdict: Verdict, steps: Sequence[Any],
                  state: Iterable[tuple[Any, ...]] | None) -> Atoms:
    first = verdict.violations[0].step
    failing_steps = {v.step for v in verdict.violations}
    if failing_steps == {first} and first == verdict.steps_checked - 1:
        return verdict.final_state  # the check stopped at the failing step, effects not applied
    replay = gate.check(steps[:first], state=state, mode="all")
    return replay.final_state


def _relevant(gate: PlanChecker, state: Atoms, objects: list[str]) -> tuple[list[str], str]:
    facts = sorted(state, key=gate.format_atom)
    if len(facts) <= STATE_CAP:
        return [gate.format_atom(f) for f in facts], f"{len(facts)} facts"
    shown: list[tuple[Any, ...]] = []
    for obj in objects:
        for fact in facts:
            if obj in fact[1:] and fact not in shown:
                shown.append(fact)
    names = ", ".join(dict.fromkeys(gate.objects.get(o, o) for o in objects)) or "none"
    more = len(shown) > STATE_CAP
    shown = shown[:STATE_CAP]
    note = (f"{len(shown)} of {len(facts)} facts: those about {names}"
            + (" (truncated)" if more else ""))
    return [gate.format_atom(f) for f in shown], note


def _objects(gate: PlanChecker, violations: list[Violation], steps: Sequence[Any]) -> list[str]:
    objects: list[str] = []
    for violation in violations:
        words = violation.action.strip("()").split()[1:] or violation.step_text.split()[1:]
        objects += [key(w) for w in words if key(w) in gate.objects]
    for violation in violations:
        for _, atom in violation.atoms:
            objects += [a for a in atom[1:] if a in gate.objects]
    return list(dict.fromkeys(objects))


def render_feedback(gate: PlanChecker, verdict: Verdict, steps: Sequence[Any],
                    state: Iterable[tuple[Any, ...]] | None = None) -> str:
    """Feedback text for `verdict` of the plan `steps` (PlanSteps, JSON step dicts or step
    texts, as `PlanChecker.check` takes them; checked from `state`, default the initial
    state)."""
    lines: list[str] = []
    if verdict.valid:
        lines.append(f"The plan is executable: all {verdict.steps_checked} step(s) satisfy their "
                     "preconditions.")
        if verdict.goal_reached is False:
            unmet = gate.goal_unmet(verdict.final_state)
            lines.append("But the goal does not hold after the last step. Unmet goal conditions:")
            lines += [f"  {text}" for text in unmet]
            hints = _goal_hints(gate, verdict.final_state)
            if hints:
                lines.append("What would satisfy them:")
                lines += [f"  {h}" for h in hints]
        elif verdict.goal_reached:
            lines.append("The goal holds after the last step.")
        return "\n".join(lines)

    failing = sorted({v.step for v in verdict.violations})
    lines.append(f"The plan is rejected: {len(verdict.violations)} violation(s) at step(s) "
                 f"{', '.join(str(s + 1) for s in failing)}.")
    lines.append("")
    lines.append("Violations:")
    for number, violation in enumerate(verdict.violations, start=1):
        lines.append(f"{number}. step {violation.step + 1} \"{violation.step_text}\": "
                     f"[{violation.code}] {violation.message}")
        if violation.literal:
            lines.append(f"   failed precondition: {violation.literal}")
    first = verdict.violations[0].step
    at_first = [v for v in verdict.violations if v.step == first]
    before = _state_before(gate, verdict, steps, state)
    facts, note = _relevant(gate, before, _objects(gate, at_first, steps))
    lines.append("")
    lines.append(f"State before step {first + 1} ({note}):")
    lines += [f"  {fact}" for fact in facts] or ["  (no facts)"]
    hints = []
    for violation in verdict.violations:
        for positive, atom in violation.atoms:
            hint = _hint(gate, positive, atom)
            if hint not in hints:
                hints.append(hint)
    if hints:
        lines.append("")
        lines.append("What would satisfy the failed preconditions:")
        lines += [f"  {h}" for h in hints]
    lines.append("")
    lines.append("Fix the plan so that every step's preconditions hold when it runs.")
    return "\n".join(lines)


def _goal_hints(gate: PlanChecker, state: State) -> list[str]:
    hints: list[str] = []
    for failure in gate.goal_failures(state):
        literals = [failure] if isinstance(failure, GroundLiteral) else [
            lit for part in failure.parts for lit in part.literals]
        for literal in literals:
            if literal.atom[0] == "=":
                continue
            hint = _hint(gate, literal.positive, literal.atom)
            if hint not in hints:
                hints.append(hint)
    return hints[:10]
