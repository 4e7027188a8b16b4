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

Precision at the plan level. Accepting gold plans is half the measure: a domain without
preconditions accepts them all. `edited_plans(gold, objects, rng)` makes mutants of a gold
plan (a step dropped, two adjacent steps swapped, one argument other than the first changed to
another object of the problem of the same type), which a simulator then labels by running
them; `gate_accepts(domain, problem, steps)` gates a plan; `precision_summary(rows)` gives, per
domain, the share of the gold plans the simulator executes that the domain accepts, the
share of the mutants the simulator refuses that the domain refuses, and their mean (the
balance); `precision_table` writes it. `without_preconditions(domain)` is the reference domain
that accepts everything well typed.
"""
from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from sage_pddl.export.classical import ClassicalPlannerError, solve_result
from sage_pddl.gate import compile_gate
from sage_pddl.pddl import check_problem
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import And, Domain, Problem

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


MUTATION_KINDS = ("drop", "swap", "argument")


def edited_plans(gold: Sequence[str], objects: Mapping[str, str], rng: random.Random,
                 per_kind: int = 1) -> list[tuple[str, tuple[str, ...]]]:
    """Up to `per_kind` distinct mutants of each kind of `gold` (steps as `action arg ...`):
    (kind, steps). `objects`: object -> type, the candidates of a changed argument (the first
    argument, the agent in a VirtualHome step, is kept)."""
    steps = [tuple(step.split()) for step in gold]
    made: list[tuple[str, tuple[str, ...]]] = []
    seen = {tuple(gold)}
    for kind in MUTATION_KINDS:
        options: list[list[tuple[str, ...]]] = []
        if kind == "drop":
            options = [steps[:i] + steps[i + 1:] for i in range(len(steps))]
        elif kind == "swap":
            options = [steps[:i] + [steps[i + 1], steps[i]] + steps[i + 2:]
                       for i in range(len(steps) - 1) if steps[i] != steps[i + 1]]
        else:
            for i, step in enumerate(steps):
                for position in range(2, len(step)):
                    kind_of = objects.get(step[position].lower())
                    for other in sorted(o for o, t in objects.items()
                                        if t == kind_of and o != step[position].lower()):
                        changed = step[:position] + (other,) + step[position + 1:]
                        options.append(steps[:i] + [changed] + steps[i + 1:])
        rng.shuffle(options)
        taken = 0
        for option in options:
            text = tuple(" ".join(s) for s in option)
            if taken >= per_kind:
                break
            if text and text not in seen:
                seen.add(text)
                made.append((kind, text))
                taken += 1
    return made


def without_preconditions(domain: Domain) -> Domain:
    """`domain` with every precondition removed: it accepts every well-typed step."""
    return dataclasses.replace(domain, name=f"{domain.name}-no-preconditions", actions=tuple(
        dataclasses.replace(a, precondition=And(())) for a in domain.actions))


def gate_accepts(domain: Domain, problem: Problem, steps: Sequence[str]) -> bool | None:
    """Whether `domain`'s gate accepts the plan on `problem` (re-labelled with the domain's
    name); None when the domain cannot read the problem."""
    mine = dataclasses.replace(problem, domain_name=domain.name)
    try:
        if any(d.severity == "error" for d in check_problem(mine, domain)):
            return None
        return compile_gate(domain, mine).check(list(steps)).valid
    except SageError:
        return None


@dataclass(frozen=True)
class PlanVerdict:
    """One plan (a gold plan, or a mutant of one) of one task: whether the simulator executes
    it and whether each domain accepts it (None: the domain cannot read the problem)."""

    task: str
    kind: str
    steps: tuple[str, ...]
    executes: bool
    accepted: Mapping[str, bool | None]

    def to_json(self) -> dict:
        return {"task": self.task, "kind": self.kind, "steps": list(self.steps),
                "executes": self.executes, "accepted": dict(self.accepted)}


def precision_summary(rows: Iterable[PlanVerdict]) -> dict[str, dict]:
    """Per domain: gold plans the simulator executes and the share it accepts; mutants the
    simulator refuses and the share it refuses; the balance (their mean). A plan whose
    problem the domain cannot read counts as refused."""
    rows = list(rows)
    names = sorted({name for r in rows for name in r.accepted})
    gold = [r for r in rows if r.kind == "gold" and r.executes]
    refused = [r for r in rows if r.kind != "gold" and not r.executes]
    summary = {}
    for name in names:
        accepted = sum(bool(r.accepted.get(name)) for r in gold)
        caught = sum(not r.accepted.get(name) for r in refused)
        gold_share, refused_share = _share(accepted, len(gold)), _share(caught, len(refused))
        summary[name] = {"gold_executes": len(gold), "gold_accepted": gold_share,
                         "mutants_refused_by_simulator": len(refused),
                         "of_those_refused": refused_share,
                         "balance": round((gold_share + refused_share) / 2, 3)}
    return summary


def precision_table(summary: Mapping[str, dict], labels: Mapping[str, str] | None = None) -> str:
    labels = labels or {}
    lines = ["| domain | gold plans the simulator executes | accepted | mutants the simulator "
             "refuses | refused | balance |", "|---|---|---|---|---|---|"]
    for name, row in summary.items():
        lines.append(f"| {labels.get(name, name)} | {row['gold_executes']} | "
                     f"{row['gold_accepted']:.3f} | {row['mutants_refused_by_simulator']} | "
                     f"{row['of_those_refused']:.3f} | {row['balance']:.3f} |")
    return "\n".join(lines)
