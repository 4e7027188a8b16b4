"""The rule-deletion study: what each precondition rule of a hand-written domain catches, and
which deleted rules an induced domain restores.

`deletion_study(domain, tasks, induced=None)`:

1. **Injected violations.** From every task's reference plan that the full domain's gate accepts
   step by step, single-step mutants: the plan with step i deleted, with steps i and i+1
   swapped, and with step i repeated. A mutant counts when the full gate rejects one of its
   steps (a violation of some precondition; mutants that only miss the goal are not
   violations).
2. **Deletions.** For each top-level literal of each action's precondition (a *rule*), the
   domain with that one literal removed; its gate checks every counted mutant, and the rule's
   row says how many the weakened gate now lets through (`missed`): the violations that only
   this rule catches.
3. **Restoration.** With an induced domain (written with `--types-from` the same domain, so it
   reads the same problems), a deleted rule is *restored* when the induced action of the same
   name and arity has the same literal (`evaluate.compare_preconditions`), and `induced_catches`
   counts the missed mutants the induced domain's gate rejects.

Parts of a precondition that are not literals (disjunctions, quantifiers) are not deleted; they
are listed in `StudyResult.not_rules`.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sage_pddl.gate import compile_gate
from sage_pddl.pddl import write_formula
from sage_pddl.pddl.model import And, Atom, Domain, Not
from sage_pddl.tasks import normalize_steps, task_problem

from .evaluate import _literals, _text, compare_preconditions


@dataclass(frozen=True)
class RuleRow:
    action: str
    rule: str
    missed: int
    """Counted mutants the domain without this rule accepts."""
    restored: bool | None = None
    """Whether the induced domain has the rule (None: no induced domain given)."""
    induced_catches: int | None = None
    """Of the missed mutants, how many the induced domain's gate rejects."""

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class StudyResult:
    tasks: int
    plans: int
    """Reference plans the full gate accepts (the others give no mutants)."""
    mutants: int
    """Counted mutants: injected violations the full gate catches."""
    rows: tuple[RuleRow, ...]
    not_rules: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"tasks": self.tasks, "plans": self.plans, "mutants": self.mutants,
                "rows": [r.to_json() for r in self.rows], "not_rules": list(self.not_rules)}

    def markdown(self) -> str:
        with_induced = any(r.restored is not None for r in self.rows)
        head = "| action | deleted rule | violations missed |"
        rule = "|---|---|---|"
        if with_induced:
            head += " restored by induction | of those missed, induced domain catches |"
            rule += "---|---|"
        lines = [f"{self.mutants} injected violations (single-step mutants of {self.plans} "
                 f"reference plans of {self.tasks} tasks that the full domain rejects)", "",
                 head, rule]
        for row in self.rows:
            line = f"| {row.action} | `{row.rule}` | {row.missed} |"
            if with_induced:
                line += (f" {'yes' if row.restored else 'no'} | "
                         f"{row.induced_catches if row.missed else '-'} |")
            lines.append(line)
        if with_induced:
            restored = sum(1 for r in self.rows if r.restored)
            lines += ["", f"restored: {restored} of {len(self.rows)} rules"]
        return "\n".join(lines)


def _mutants(steps: Sequence[Any]) -> list[list[Any]]:
    steps = list(steps)
    out = []
    for i in range(len(steps)):
        out.append(steps[:i] + steps[i + 1:])
        if i + 1 < len(steps):
            out.append(steps[:i] + [steps[i + 1], steps[i]] + steps[i + 2:])
        out.append(steps[:i + 1] + [steps[i]] + steps[i + 1:])
    return out


def _rejects(gate: Any, plan: Sequence[Any]) -> bool:
    """Whether some step of `plan` is not applicable (the goal is not asked)."""
    return not gate.check(list(plan), mode="first").valid


def _without(domain: Domain, action_index: int, part_index: int) -> Domain:
    action = domain.actions[action_index]
    parts = action.precondition.parts  # type: ignore[union-attr]
    weakened = dataclasses.replace(
        action, precondition=And(parts[:part_index] + parts[part_index + 1:]))
    actions = list(domain.actions)
    actions[action_index] = weakened
    # `reason` annotations name precondition literals, one of which is gone; they only word
    # the violations, never decide them
    return dataclasses.replace(domain, actions=tuple(actions), annotations=tuple(
        a for a in domain.annotations if a.kind != "reason"))


def deletion_study(domain: Domain, tasks: Sequence[Any], induced: Domain | None = None
                   ) -> StudyResult:
    """See the module docstring."""
    cases = []  # (problem, counted mutants)
    plans = 0
    for task in tasks:
        problem = task_problem(task, domain)
        gate = compile_gate(domain, problem)
        steps = normalize_steps(task.reference_steps, domain)
        if not steps or _rejects(gate, steps):
            continue
        plans += 1
        cases.append((problem, [m for m in _mutants(steps) if _rejects(gate, m)]))
    matches = {m.action.lower(): m for m in compare_preconditions(induced, domain)} \
        if induced is not None else {}
    induced_gates: dict[int, Any] = {}

    def induced_gate(problem: Any) -> Any:
        assert induced is not None
        if id(problem) not in induced_gates:
            induced_gates[id(problem)] = compile_gate(induced, problem)
        return induced_gates[id(problem)]

    rows, not_rules = [], []
    for a, action in enumerate(domain.actions):
        pre = action.precondition
        parts = pre.parts if isinstance(pre, And) else ()
        for p, part in enumerate(parts):
            atom = part.arg if isinstance(part, Not) else part
            if not isinstance(atom, Atom):
                not_rules.append(f"{action.name}: {write_formula(part)}")
                continue
            weakened = _without(domain, a, p)
            missed: list[tuple[Any, list[Any]]] = []
            for problem, caught in cases:
                gate = compile_gate(weakened, problem)
                missed += [(problem, m) for m in caught if not _rejects(gate, m)]
            rule = write_formula(part)
            restored = catches = None
            if induced is not None:
                match = matches.get(action.name.lower())
                literal = _literals(part, [q.name for q in action.parameters])[0]
                restored = bool(match and literal and _text(literal[0]) in match.recovered)
                catches = sum(1 for problem, m in missed if _rejects(induced_gate(problem), m))
            rows.append(RuleRow(action.name, rule, len(missed), restored, catches))
    return StudyResult(len(tasks), plans, sum(len(m) for _, m in cases), tuple(rows),
                       tuple(not_rules))


__all__ = ["RuleRow", "StudyResult", "deletion_study"]
