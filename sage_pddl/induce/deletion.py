"""The rule-deletion study: what each precondition rule of a hand-written domain catches, and
which deleted rules an induced domain restores.

`deletion_study(domain, tasks, induced=None, per_class=1)`:

1. **Injected violations.** Every task's reference plan that the full domain's gate accepts is
   mutated by the classes of `tasks/mutations.py` (pick while holding, place with an empty hand,
   put into a closed container, pick out of a closed container, pick what is not pickupable,
   open what is not openable, turn on what is not toggleable, close what is closed, turn off
   what is off, interact without locating; at most `per_class` mutants per class and plan).
   The structural classes (an unknown action, an absent object) are left out: no precondition
   decides them. A mutant counts when the full gate rejects it at the mutated step.
2. **Deletions.** For each top-level literal of each action's precondition (a *rule*), the
   domain with that one literal removed. Its gate checks every counted mutant; the rule's row
   says how many it now lets through at the mutated step (`missed`, by mutation class): the
   violations that only this rule catches.
3. **Restoration.** With an induced domain that reads the same problems (written with
   `--types-from` the same domain), a deleted rule is *restored* when the induced action of the
   same name and arity has the same literal (by predicate and parameter position,
   `evaluate.compare_preconditions`), and `induced_catches` counts the missed mutants the
   induced domain's gate rejects at the mutated step.

Parts of a precondition that are not literals (disjunctions, quantifiers) are not deleted; they
are listed in `StudyResult.not_rules`.
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sage_pddl.gate import PlanChecker, compile_gate
from sage_pddl.pddl import write_formula
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import And, Domain, Problem
from sage_pddl.tasks import Task, normalize_steps, task_problem
from sage_pddl.tasks.mutations import MUTATION_CLASSES, Mutant, detect, plan_mutants

from .evaluate import compare_preconditions, positional_text, precondition_literals
from .learner import EXCLUDED_CODES


@dataclass(frozen=True)
class RuleRow:
    action: str
    rule: str
    missed: int
    """Counted mutants the domain without this rule accepts at the mutated step."""
    missed_by_class: Mapping[str, int] = dataclasses.field(default_factory=dict)
    restored: bool | None = None
    """Whether the induced domain has the rule (None: no induced domain given)."""
    induced_catches: int | None = None
    """Of the missed mutants, how many the induced domain's gate rejects at the mutated step."""

    def to_json(self) -> dict:
        return {"action": self.action, "rule": self.rule, "missed": self.missed,
                "missed_by_class": dict(self.missed_by_class), "restored": self.restored,
                "induced_catches": self.induced_catches}


@dataclass(frozen=True)
class StudyResult:
    tasks: int
    plans: int
    """Reference plans the full gate accepts (the others give no mutants)."""
    mutants: Mapping[str, int]
    """Counted mutants (injected violations the full gate catches) by mutation class."""
    rows: tuple[RuleRow, ...]
    not_rules: tuple[str, ...] = ()
    induced: str | None = None

    @property
    def total(self) -> int:
        return sum(self.mutants.values())

    def to_json(self) -> dict:
        return {"tasks": self.tasks, "plans": self.plans, "mutants": self.total,
                "mutants_by_class": dict(self.mutants), "induced": self.induced,
                "rows": [r.to_json() for r in self.rows], "not_rules": list(self.not_rules)}

    def markdown(self) -> str:
        with_induced = self.induced is not None
        classes = ", ".join(f"{kind} {n}" for kind, n in self.mutants.items())
        lines = [f"{self.total} injected violations ({classes}): mutants of the {self.plans} "
                 f"reference plans (of {self.tasks} tasks) that the full domain accepts, each "
                 "rejected by the full domain at its mutated step.", ""]
        head = "| action | deleted rule | violations missed | by class |"
        rule = "|---|---|---|---|"
        if with_induced:
            head += f" restored by {self.induced} | of those missed, it catches |"
            rule += "---|---|"
        lines += [head, rule]
        for row in self.rows:
            by_class = ", ".join(f"{k} {n}" for k, n in row.missed_by_class.items()) or "-"
            line = f"| {row.action} | `{row.rule}` | {row.missed} | {by_class} |"
            if with_induced:
                line += (f" {'yes' if row.restored else 'no'} | "
                         f"{row.induced_catches if row.missed else '-'} |")
            lines.append(line)
        catching = [r for r in self.rows if r.missed]
        lines += ["", f"{len(catching)} of {len(self.rows)} rules catch a violation no other "
                      "rule catches."]
        if with_induced:
            restored = sum(1 for r in self.rows if r.restored)
            restored_catching = sum(1 for r in catching if r.restored)
            lines.append(f"{self.induced} restores {restored} of {len(self.rows)} rules "
                         f"({restored_catching} of the {len(catching)} that catch one); its "
                         f"gate catches {sum(r.induced_catches or 0 for r in catching)} of the "
                         f"{sum(r.missed for r in catching)} violations the deletions miss.")
        if self.not_rules:
            lines.append("Not deleted (not literals): " + "; ".join(self.not_rules))
        return "\n".join(lines)


def _caught(gate: PlanChecker, mutant: Mutant) -> bool:
    return detect(gate, mutant).at_step


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
        a for a in domain.annotations if a.kind.lower() != "reason"))


def deletion_study(domain: Domain, tasks: Sequence[Task], induced: Domain | None = None,
                   per_class: int = 1,
                   progress: Callable[[str, int, int], None] | None = None) -> StudyResult:
    """See the module docstring. `progress(stage, done, total)` is told how far the study is:
    the stage "mutants" counts tasks, the stage "rules" the domain's precondition parts."""
    def tell(stage: str, done: int, total: int) -> None:
        if progress is not None:
            progress(stage, done, total)

    counted = [kind for kind, code in MUTATION_CLASSES.items() if code not in EXCLUDED_CODES]
    cases = []  # (problem, counted mutants)
    plans = 0
    refused = ""  # why the first refused reference plan was refused
    for done, task in enumerate(tasks):
        tell("mutants", done, len(tasks))
        problem = task_problem(task, domain)
        gate = compile_gate(domain, problem)
        steps = normalize_steps(task.reference_steps, domain)
        verdict = gate.check(steps) if steps else None
        if verdict is None or not verdict.valid:
            if verdict is not None and verdict.violations and not refused:
                v = verdict.violations[0]
                refused = (f"; task {task.task_id}, step {v.step + 1} ({v.step_text}): "
                           f"[{v.code}] {v.message}")
            continue
        plans += 1
        mutants = [m for m in plan_mutants(domain, problem, task.reference_steps, task.task_id,
                                           per_class, gate)
                   if m.kind in counted and _caught(gate, m)]
        cases.append((problem, mutants))
    if tasks and not plans:  # a table of zeros would read as a result
        raise SageError(f"domain {domain.name} accepts none of the {len(tasks)} tasks' reference "
                        f"plans, so the study has no plan to mutate (are the tasks written for "
                        f"this domain?){refused}")
    by_class = Counter(m.kind for _, mutants in cases for m in mutants)
    matches = ({m.action.lower(): m for m in compare_preconditions(induced, domain)}
               if induced is not None else {})
    induced_gates: dict[int, PlanChecker] = {}

    def induced_gate(problem: Problem) -> PlanChecker:
        assert induced is not None
        if id(problem) not in induced_gates:
            try:
                induced_gates[id(problem)] = compile_gate(
                    induced, dataclasses.replace(problem, domain_name=induced.name))
            except SageError as error:
                raise SageError(f"the induced domain {induced.name} cannot read problem "
                                f"{problem.name} (write it with --types-from {domain.name}): "
                                f"{error}") from error
        return induced_gates[id(problem)]

    rows: list[RuleRow] = []
    not_rules: list[str] = []
    tell("mutants", len(tasks), len(tasks))
    rules = sum(len(a.precondition.parts) for a in domain.actions
                if isinstance(a.precondition, And))
    for a, action in enumerate(domain.actions):
        pre = action.precondition
        parts = pre.parts if isinstance(pre, And) else ()
        params = [q.name for q in action.parameters]
        for p, part in enumerate(parts):
            tell("rules", len(rows) + len(not_rules), rules)
            literals, _ = precondition_literals(part, params)
            if not literals:
                not_rules.append(f"{action.name}: {write_formula(part)}")
                continue
            weakened = _without(domain, a, p)
            missed = [(problem, m) for problem, mutants in cases
                      for gate in (compile_gate(weakened, problem),)
                      for m in mutants if not _caught(gate, m)]
            restored = catches = None
            if induced is not None:
                match = matches.get(action.name.lower())
                restored = bool(match and match.induced
                                and positional_text(literals[0]) in match.recovered)
                catches = sum(1 for problem, m in missed if _caught(induced_gate(problem), m))
            rows.append(RuleRow(action.name, write_formula(part), len(missed),
                                dict(Counter(m.kind for _, m in missed)), restored, catches))
    tell("rules", rules, rules)
    return StudyResult(len(tasks), plans, {k: by_class[k] for k in counted if by_class[k]},
                       tuple(rows), tuple(not_rules), induced.name if induced else None)


__all__ = ["RuleRow", "StudyResult", "deletion_study"]
