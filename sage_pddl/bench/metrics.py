"""The benchmark's metrics: one implementation of each, defined on gate verdicts and PDDL goals.

Every number in a results row comes from a function here (the exec-mode step counts come from
`sage_pddl.runtime.EpisodeReport`, which is their one implementation). `docs/benchmark.md`
states each definition; `METRICS` lists them with their direction and mode for the report.

Plan metrics score the steps a planner returned from the problem's initial state, with ONE gate
check of the whole plan in mode "all" (a rejected step's effects are skipped and checking goes
on, so a missing step can also reject later steps that depended on it), whose verdict also
holds where a check in mode "first" stops (`Verdict.first_refusal`). The goal is scored in two
views (`sage_pddl.gate.outcome`), and the row names the view in each field, so that the two are
never mixed up:

* `gate_goal_success` (the gate's strict view): 1 when every step is accepted AND the PDDL goal
  holds in the final state; None when the problem has no goal (excluded from the mean, never a
  0 or a 1). This certifies a plan.
* `gate_goal_conditions`: the fraction of the goal's top-level conjuncts that hold after the
  plan's accepted prefix (checking stops at the first rejected step); None without a goal.
* `sim_goal_success` (the simulator's view): 1 when the PDDL goal holds after the plan is run
  open-loop, each step the world refuses a no-op and the later steps still run, as AI2-THOR
  runs a plan and as people and the SAGE paper judge it; None without a goal.
* `sim_goal_conditions`: goal-condition success in the simulator's view: the fraction of the
  goal's top-level conjuncts (as ALFRED and the Embodied Agent Interface score it) that hold
  after that run; None without a goal. `sim_steps_refused` counts the no-op steps.
* `executability`: accepted steps / steps (a step is rejected when it has any violation);
  0 for an empty plan (a plan that does nothing is not executable progress).
* `precondition_violations`: violations whose code is a failed precondition literal
  (`<action>/requires|forbids/<predicate>` or a friendlier `@sage reason` code) — every failed
  literal counts; structural codes are not preconditions. `violation_codes` counts every code.
* `hallucination`: steps that name an action or an object the domain/problem does not have
  (gate codes `unknown-action`, `unknown-object`) / steps; 0 for an empty plan.
* `redundancy`: adjacent pairs of identical steps (action, object, target; case-insensitive)
  / adjacent pairs; 0 for plans of fewer than two steps.
* `step_ratio`: steps / reference steps; None when the task has no reference plan.
* `object_completeness`: expected objects (deduplicated) named by some step's words, names
  compared without case, spaces, `_` or `-` (`dining_table` == `DiningTable`); None when the
  task expects no objects.
* `calls`, `prompt_tokens`, `output_tokens`, `total_tokens`, `latency_s`: the planner's own
  accounting of its LLM calls (failed calls included) and its wall-clock time.

Exec metrics (plan + execute with `run_episode`, closed loop: the episode's repairs included;
success is judged on the environment's true state, never on a proxy; an exec row also has the
plan metrics of the planner's first plan, both views included):

* `task_success`: the PDDL goal holds in the environment's true state at the end.
* `task_goal_conditions`: the fraction of goal conjuncts true in it, for environments whose goal
  test is the PDDL goal (the symbolic world and AI2-THOR), else None.
* `step_success`: executed / attempted, where attempted includes gate-blocked and injected
  steps; `dispatch_success`: executed / dispatched (the executor's view, blocked steps left out).
* `blocked`, `repairs`, `attempted`, `executed`, `failed`.
* `recovered`: only for episodes with an injected failure: 1 iff the goal holds at the end.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from sage_pddl.gate import PlanChecker, Verdict
from sage_pddl.gate.outcome import plan_outcomes
from sage_pddl.pddl.model import PlanStep
from sage_pddl.pddl.vocabulary import name_key, step_key
from sage_pddl.runtime import EpisodeReport

STRUCTURAL_CODES = frozenset({"unknown-action", "wrong-arity", "unknown-object", "type-mismatch",
                              "unparsable-step"})
HALLUCINATION_CODES = frozenset({"unknown-action", "unknown-object"})


@dataclass(frozen=True)
class MetricSpec:
    """A metric as the report shows it: its name, which modes have it, whether higher is better,
    whether it is a rate in [0, 1], and a one-line definition."""

    name: str
    modes: tuple[str, ...]
    higher_is_better: bool | None
    rate: bool
    description: str


METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("sim_goal_success", ("plan", "exec"), True, True,
               "simulator's view: the PDDL goal holds after the plan run open-loop, refused "
               "steps no-ops (exec: the first plan)"),
    MetricSpec("sim_goal_conditions", ("plan", "exec"), True, True,
               "simulator's view: goal conjuncts holding after the plan run open-loop / goal "
               "conjuncts (exec: the first plan)"),
    MetricSpec("gate_goal_success", ("plan", "exec"), True, True,
               "gate's view: every step accepted and the PDDL goal reached (exec: the first "
               "plan)"),
    MetricSpec("gate_goal_conditions", ("plan", "exec"), True, True,
               "gate's view: goal conjuncts holding after the accepted prefix / goal conjuncts "
               "(exec: the first plan)"),
    MetricSpec("task_success", ("exec",), True, True,
               "PDDL goal holds in the environment's true state at the end of the episode"),
    MetricSpec("task_goal_conditions", ("exec",), True, True,
               "goal conjuncts holding in the environment's true state at the end of the "
               "episode / goal conjuncts"),
    MetricSpec("executability", ("plan", "exec"), True, True, "accepted steps / steps"),
    MetricSpec("precondition_violations", ("plan", "exec"), False, False,
               "failed precondition literals per plan"),
    MetricSpec("hallucination", ("plan", "exec"), False, True,
               "steps naming an unknown action or object / steps"),
    MetricSpec("redundancy", ("plan", "exec"), False, True,
               "adjacent identical step pairs / adjacent pairs"),
    MetricSpec("object_completeness", ("plan", "exec"), True, True,
               "expected objects named by the plan / expected objects"),
    MetricSpec("step_ratio", ("plan", "exec"), None, False, "steps / reference steps"),
    MetricSpec("step_success", ("exec",), True, True,
               "executed / attempted (blocked and injected steps included)"),
    MetricSpec("dispatch_success", ("exec",), True, True, "executed / dispatched"),
    MetricSpec("blocked", ("exec",), False, False, "steps the gate blocked before dispatch"),
    MetricSpec("repairs", ("exec",), None, False, "repair calls of the planner"),
    MetricSpec("recovered", ("exec",), True, True,
               "goal holds after an injected failure (injected episodes only)"),
    MetricSpec("calls", ("plan", "exec"), False, False, "LLM calls"),
    MetricSpec("total_tokens", ("plan", "exec"), False, False, "prompt + output tokens"),
    MetricSpec("latency_s", ("plan", "exec"), False, False, "wall-clock seconds"),
)
METRIC_BY_NAME = {spec.name: spec for spec in METRICS}


def metrics_for(mode: str) -> tuple[MetricSpec, ...]:
    return tuple(spec for spec in METRICS if mode in spec.modes)


def primary_metric(mode: str) -> str:
    """The metric a comparison is about first: the goal, judged as the mode can judge it (a
    plan as the simulator would run it; an episode in the environment's true state)."""
    return "sim_goal_success" if mode == "plan" else "task_success"


RENAMED = {"goal_success": ("gate_goal_success", "gate_goal_success"),
           "goal_conditions": ("gate_goal_conditions", "task_goal_conditions")}
"""Row fields of results files written before the two views were named: old name -> (its
name in a plan row, its name in an exec row). An exec row's `goal_success` was its first
plan's gate view and its `goal_conditions` the episode's true state."""


def current_name(name: str, mode: str) -> str:
    """A metric's name today, given the name an older results file or command used."""
    renamed = RENAMED.get(name)
    return name if renamed is None else renamed[mode == "exec"]


def upgrade_row(row: dict[str, Any]) -> dict[str, Any]:
    """`row` with the fields of an older results file renamed (`RENAMED`), in place; a row
    written today is returned as it is."""
    mode = str(row.get("mode") or "plan")
    for old in RENAMED:
        if old in row:
            row.setdefault(current_name(old, mode), row.pop(old))
    return row


# ------------------------------------------------------------------------------ plan metrics
def rejected_steps(verdict: Verdict) -> frozenset[int]:
    return frozenset(v.step for v in verdict.violations)


def _rate(reached: bool | None) -> float | None:
    return None if reached is None else float(reached)


def executability(verdict: Verdict, n_steps: int) -> float:
    if n_steps <= 0:
        return 0.0
    return 1.0 - len(rejected_steps(verdict)) / n_steps


def is_precondition_code(code: str) -> bool:
    return code not in STRUCTURAL_CODES


def precondition_violations(verdict: Verdict) -> int:
    return sum(1 for v in verdict.violations if is_precondition_code(v.code))


def violation_codes(verdict: Verdict) -> dict[str, int]:
    return dict(sorted(Counter(v.code for v in verdict.violations).items()))


def hallucination(verdict: Verdict, n_steps: int) -> float:
    if n_steps <= 0:
        return 0.0
    steps = {v.step for v in verdict.violations if v.code in HALLUCINATION_CODES}
    return len(steps) / n_steps


def redundancy(steps: Sequence[PlanStep]) -> float:
    if len(steps) < 2:
        return 0.0
    repeats = sum(1 for a, b in zip(steps, steps[1:]) if step_key(a) == step_key(b))
    return repeats / (len(steps) - 1)


def step_ratio(n_steps: int, n_reference: int) -> float | None:
    return n_steps / n_reference if n_reference > 0 else None


def object_completeness(steps: Sequence[PlanStep], expected: Iterable[str]
                        ) -> float | None:
    wanted = {name_key(o) for o in expected if name_key(o)}
    if not wanted:
        return None
    # a step's named fields: steps written with `args` name no object here (as before the
    # one step type, when only string values of a JSON step were read)
    named = {name_key(value) for step in steps for _, value in step.fields}
    return len(wanted & named) / len(wanted)


class PlanCheck(NamedTuple):
    """The gate's check of a plan in mode "all" (`run`), made once and read by the plan metrics
    and by the episode trace, and the plan's steps as checked (`plain`)."""

    plain: list[PlanStep]
    run: Verdict


def check_plan(gate: PlanChecker, steps: Sequence[PlanStep],
               state: Iterable[tuple[Any, ...]] | None = None) -> PlanCheck:
    """The plan's check in mode "all" from `state` (default: the initial state)."""
    plain = list(steps)
    return PlanCheck(plain, gate.check(plain, state=state, mode="all"))


def plan_metrics(gate: PlanChecker, steps: Sequence[PlanStep], *,
                 expected_objects: Iterable[str] = (), reference_length: int = 0,
                 state: Iterable[tuple[Any, ...]] | None = None,
                 checked: PlanCheck | None = None) -> dict[str, Any]:
    """Every plan metric of `steps`, from one gate check in mode "all" (`checked` when the caller
    made it, from the same state; see the module docstring)."""
    plain, verdict = checked if checked is not None else check_plan(gate, steps, state)
    strict, simulated = plan_outcomes(gate, plain, state, run=verdict)
    n = len(plain)
    return {
        "n_steps": n,
        "ref_steps": reference_length,
        "gate_goal_success": _rate(strict.goal_reached),
        "gate_goal_conditions": strict.goal_conditions,
        "sim_goal_success": _rate(simulated.goal_reached),
        "sim_goal_conditions": simulated.goal_conditions,
        "sim_steps_refused": simulated.steps_refused,
        "executability": executability(verdict, n),
        "precondition_violations": precondition_violations(verdict),
        "violation_codes": violation_codes(verdict),
        "hallucination": hallucination(verdict, n),
        "redundancy": redundancy(plain),
        "step_ratio": step_ratio(n, reference_length),
        "object_completeness": object_completeness(plain, expected_objects),
    }


def cost_metrics(calls: int, prompt_tokens: int, output_tokens: int, seconds: float
                 ) -> dict[str, Any]:
    return {"calls": int(calls), "prompt_tokens": int(prompt_tokens),
            "output_tokens": int(output_tokens),
            "total_tokens": int(prompt_tokens) + int(output_tokens),
            "latency_s": round(float(seconds), 6)}


# ------------------------------------------------------------------------------ exec metrics
def exec_metrics(report: EpisodeReport) -> dict[str, Any]:
    """The execution metrics of an `EpisodeReport` (its properties are the one implementation
    of the step counts and rates)."""
    return {
        "task_success": None if report.success is None else float(bool(report.success)),
        "step_success": float(report.step_success),
        "dispatch_success": float(report.dispatch_success),
        "attempted": report.attempted,
        "executed": report.executed,
        "dispatched": report.dispatched,
        "failed": report.count("failed"),
        "blocked": report.blocked,
        "repairs": report.repairs,
        "injected_at": report.injected_at,
        "recovered": None if report.recovered is None else float(bool(report.recovered)),
        "planning_calls": report.planning_calls,
        "repair_calls": report.repair_calls,
        "planning_s": round(float(report.planning_seconds), 6),
        "repair_s": round(float(report.repair_seconds), 6),
    }
