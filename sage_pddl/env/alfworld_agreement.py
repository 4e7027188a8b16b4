"""Do our symbolic world and ALFWorld's TextWorld game agree on the `alfworld` task set?

For each task, its reference plan is played in both worlds (`SymbolicEnv` with our domain,
`AlfworldEnv`: TextWorld's engine with the game's grammar) and each world says where the plan
first failed (a step index, or none) and whether the goal was reached: the worlds agree when
both say the same.

Then mutants of the reference plan, one error each (`mutants`): every step dropped in turn
(`drop`), and every step's first object replaced by another object of the same type in the
problem (`object`: the first such object in name order). Our gate checks each mutant; one it
refuses at step k must fail in TextWorld at step k too, and one it accepts must run through in
TextWorld and end as it does in the symbolic world. `agreement(tasks, textworld)` returns one
`TaskAgreement` per task, `agreement_table` writes them as Markdown (the tool
`tools/alfworld_agreement.py` prints it; `tests/env/test_alfworld_agreement.py` holds every
row in agreement).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sage_pddl.pddl.plans import step_from_json

from ..domains import load_domain
from ..gate import compile_gate
from ..pddl.model import Domain, Problem, key
from ..tasks.taskset import Task
from .symbolic import SymbolicEnv

Steps = tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class Ending:
    """How a plan ended in one world: the first failing step (0-based, None when every step
    ran) and whether the goal held at the end."""

    failed_at: int | None
    goal: bool | None
    message: str = ""


@dataclass(frozen=True)
class Mutant:
    """A reference plan with one error: `kind` (drop, object) at step `site`."""

    kind: str
    site: int
    steps: Steps
    change: str


@dataclass(frozen=True)
class MutantResult:
    mutant: Mutant
    gate_refused_at: int | None
    symbolic: Ending
    textworld: Ending

    @property
    def agrees(self) -> bool:
        """Refused by the gate: TextWorld fails at that step. Accepted: both worlds end alike."""
        if self.gate_refused_at is not None:
            return self.textworld.failed_at == self.gate_refused_at
        return (self.textworld.failed_at == self.symbolic.failed_at
                and self.textworld.goal == self.symbolic.goal)


@dataclass(frozen=True)
class TaskAgreement:
    task_id: str
    steps: int
    symbolic: Ending
    textworld: Ending
    mutants: tuple[MutantResult, ...] = field(default=())

    @property
    def reference_agrees(self) -> bool:
        return (self.symbolic.failed_at == self.textworld.failed_at
                and self.symbolic.goal == self.textworld.goal)

    @property
    def refused(self) -> tuple[MutantResult, ...]:
        return tuple(m for m in self.mutants if m.gate_refused_at is not None)

    @property
    def accepted(self) -> tuple[MutantResult, ...]:
        return tuple(m for m in self.mutants if m.gate_refused_at is None)

    @property
    def agrees(self) -> bool:
        return self.reference_agrees and all(m.agrees for m in self.mutants)


def task_domain(task: Task) -> Domain:
    """The task's domain as a model (a bundled name or a file path)."""
    return task.domain if isinstance(task.domain, Domain) else load_domain(str(task.domain))


def play(env: Any, task: Task, domain: Domain, steps: Sequence[Mapping[str, Any]]
         ) -> Ending:
    """Play `steps` from the task's initial state; stop at the first failing step."""
    assert isinstance(task.problem, Problem)
    env.reset(task.problem, domain=domain, task=task.task_id, scene=task.scene)
    for index, step in enumerate(steps):
        result = env.step(step_from_json(step, index))
        if not result.success:
            return Ending(index, env.goal_reached(), result.message)
    return Ending(None, env.goal_reached())


def mutants(problem: Problem, steps: Sequence[Mapping[str, Any]]) -> list[Mutant]:
    """Every step dropped in turn, and every step's first object changed (see the module
    docstring); a step whose object has no other of its type gets no `object` mutant."""
    made = [Mutant("drop", index, tuple(s for i, s in enumerate(steps) if i != index),
                   f"without step {index + 1}") for index in range(len(steps))]
    types = {key(obj.name): "|".join(key(t) for t in obj.types) for obj in problem.objects}
    by_type: dict[str, list[str]] = {}
    for obj in problem.objects:
        by_type.setdefault(types[key(obj.name)], []).append(obj.name)
    for index, step in enumerate(steps):
        args = [str(a) for a in step.get("args", ())]
        for position, arg in enumerate(args):
            kind = types.get(key(arg))
            if kind is None or kind == "agent":
                continue
            others = sorted(name for name in by_type[kind] if key(name) != key(arg))
            if others:
                changed = [*args[:position], others[0], *args[position + 1:]]
                mutated = {**step, "args": changed}
                made.append(Mutant("object", index, (*steps[:index], mutated, *steps[index + 1:]),
                                   f"step {index + 1}: {arg} -> {others[0]}"))
            break
    return made


def agreement(tasks: Iterable[Task], textworld: Any,
              with_mutants: bool = True) -> list[TaskAgreement]:
    """One TaskAgreement per task with reference steps (see the module docstring)."""
    rows = []
    for task in tasks:
        if not task.reference_steps or not isinstance(task.problem, Problem):
            continue
        domain = task_domain(task)
        steps = tuple(task.reference_steps)
        symbolic_env = SymbolicEnv(domain)
        results = []
        if with_mutants:
            gate = compile_gate(domain, task.problem)
            for mutant in mutants(task.problem, steps):
                verdict = gate.check(list(mutant.steps))
                refused = verdict.violations[0].step if verdict.violations else None
                results.append(MutantResult(mutant, refused,
                                            play(symbolic_env, task, domain, mutant.steps),
                                            play(textworld, task, domain, mutant.steps)))
        rows.append(TaskAgreement(task.task_id, len(steps),
                                  play(symbolic_env, task, domain, steps),
                                  play(textworld, task, domain, steps), tuple(results)))
    return rows


def _goal(ending: Ending) -> str:
    return "yes" if ending.goal else "no" if ending.failed_at is None else \
        f"no (step {ending.failed_at + 1} failed)"


def agreement_table(rows: Sequence[TaskAgreement]) -> str:
    """The rows as a Markdown table, with a total line."""
    lines = ["| task | steps | goal (symbolic) | goal (TextWorld) | mutants | gate refused | "
             "TextWorld fails at the same step | gate accepted | TextWorld ends alike | agree |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        refused, accepted = row.refused, row.accepted
        lines.append(f"| {row.task_id} | {row.steps} | {_goal(row.symbolic)} | "
                     f"{_goal(row.textworld)} | {len(row.mutants)} | {len(refused)} | "
                     f"{sum(m.agrees for m in refused)} | {len(accepted)} | "
                     f"{sum(m.agrees for m in accepted)} | {'yes' if row.agrees else 'NO'} |")
    total = sum(len(r.mutants) for r in rows)
    refused_total = sum(len(r.refused) for r in rows)
    lines.append(f"| **all {len(rows)}** | {sum(r.steps for r in rows)} | "
                 f"{sum(bool(r.symbolic.goal) for r in rows)} reached | "
                 f"{sum(bool(r.textworld.goal) for r in rows)} reached | {total} | "
                 f"{refused_total} | {sum(m.agrees for r in rows for m in r.refused)} | "
                 f"{total - refused_total} | {sum(m.agrees for r in rows for m in r.accepted)} | "
                 f"{sum(r.agrees for r in rows)}/{len(rows)} |")
    return "\n".join(lines)


def disagreements(rows: Sequence[TaskAgreement]) -> list[str]:
    """Each disagreement in words (empty when the worlds agree everywhere)."""
    said = []
    for row in rows:
        if not row.reference_agrees:
            said.append(f"{row.task_id}: reference plan: symbolic {row.symbolic}, "
                        f"TextWorld {row.textworld}")
        for m in row.mutants:
            if not m.agrees:
                said.append(f"{row.task_id}: {m.mutant.kind} mutant ({m.mutant.change}): gate "
                            f"refused at {m.gate_refused_at}, symbolic {m.symbolic}, "
                            f"TextWorld {m.textworld}")
    return said
