"""Plan-level evaluation of a domain: does its gate accept the gold plans, does a classical
planner solve the problems in it, and do those plans reach the goal in a simulator that owes
nothing to the domain.

`plan_outcome(domain, problem, gold, execute)` scores one task: the gold plan gated by
`domain` on `problem` (the problem re-labelled with the domain's name, so an induced domain
reads the hand-written domain's problems; `check_problem` first), a plan from `planner`
(Fast Downward by default) for the same problem in `domain`, and that plan handed to
`execute` (a callable: plan steps as text -> whether the simulator executes them to the
goal). `PlanOutcome.gold_executes` is the simulator's verdict on the gold plan itself, so a
gold plan the simulator refuses can be left out of the acceptance figure ("accepted as the
simulator accepts them").
`plan_summary(outcomes)` gives the shares; `plan_table` writes them as a Markdown table.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from sage_pddl.export.classical import ClassicalPlannerError, solve_result
from sage_pddl.gate import compile_gate
from sage_pddl.pddl import check_problem
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import Domain, Problem

Execute = Callable[[Sequence[str]], bool]
"""Plan steps (text, in the domain's spelling) -> whether the simulator reaches the goal."""


@dataclass(frozen=True)
class PlanOutcome:
    """One task under one domain. `accepted` is None when the domain cannot read the problem
    (`note` says why); `solved` and `reaches_goal` are False then."""

    task: str
    domain: str
    gold_executes: bool
    accepted: bool | None
    solved: bool
    reaches_goal: bool
    note: str = ""
    plan: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


def plan_outcome(task: str, domain: Domain, problem: Problem, gold: Sequence[str],
                 execute: Execute, gold_executes: bool, *, planner: str = "fast-downward",
                 timeout: float = 60.0) -> PlanOutcome:
    """See the module docstring."""
    mine = dataclasses.replace(problem, domain_name=domain.name)
    try:
        errors = [d for d in check_problem(mine, domain) if d.severity == "error"]
        if errors:
            raise SageError(str(errors[0]))
        gate = compile_gate(domain, mine)
    except SageError as error:
        return PlanOutcome(task, domain.name, gold_executes, None, False, False,
                           f"problem not read: {error}")
    verdict = gate.check(list(gold))
    note = "" if verdict.valid else (
        f"gold step {verdict.violations[0].step + 1} refused: {verdict.violations[0].code}")
    try:
        result = solve_result(domain, mine, planner, timeout)
    except ClassicalPlannerError as error:
        return PlanOutcome(task, domain.name, gold_executes, verdict.valid, False, False,
                           "; ".join(filter(None, [note, f"planner: {error}"])))
    if result.plan is None:
        return PlanOutcome(task, domain.name, gold_executes, verdict.valid, False, False,
                           "; ".join(filter(None, [note, f"planner: {result.status}"])))
    steps = tuple(" ".join([s.action, *s.args]) for s in result.plan.steps)
    return PlanOutcome(task, domain.name, gold_executes, verdict.valid, True, execute(steps),
                       note, steps)


def plan_summary(outcomes: Iterable[PlanOutcome]) -> dict[str, dict]:
    """Per domain: tasks, gold plans the simulator executes, the share of those the gate
    accepts, the share of all gold plans it accepts, the share of problems solved and the
    share whose plan the simulator executes to the goal."""
    by_domain: dict[str, list[PlanOutcome]] = {}
    for outcome in outcomes:
        by_domain.setdefault(outcome.domain, []).append(outcome)
    summary = {}
    for name, rows in by_domain.items():
        executable = [r for r in rows if r.gold_executes]
        summary[name] = {
            "tasks": len(rows),
            "gold_executes": len(executable),
            "accepted_of_executable": _share(sum(bool(r.accepted) for r in executable),
                                             len(executable)),
            "accepted": _share(sum(bool(r.accepted) for r in rows), len(rows)),
            "solved": _share(sum(r.solved for r in rows), len(rows)),
            "reaches_goal": _share(sum(r.reaches_goal for r in rows), len(rows)),
        }
    return summary


def _share(count: int, total: int) -> float:
    return round(count / total, 3) if total else 0.0


def plan_table(summary: Mapping[str, dict], labels: Mapping[str, str] | None = None) -> str:
    labels = labels or {}
    lines = ["| domain | tasks | gold plans the simulator executes | of those accepted | "
             "all gold accepted | solved (Fast Downward) | simulator reaches the goal |",
             "|---|---|---|---|---|---|---|"]
    for name, row in summary.items():
        lines.append(f"| {labels.get(name, name)} | {row['tasks']} | {row['gold_executes']} | "
                     f"{row['accepted_of_executable']:.3f} | {row['accepted']:.3f} | "
                     f"{row['solved']:.3f} | {row['reaches_goal']:.3f} |")
    return "\n".join(lines)
