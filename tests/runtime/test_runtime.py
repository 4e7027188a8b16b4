"""The runtime loop's accounting: goal-based success, blocked steps in the denominator,
recovery only when the goal holds, bounded repairs."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.env import get_env
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import PlanStep
from sage_pddl.pddl.vocabulary import step_key
from sage_pddl.planners.base import PlanningTask, PlanResult
from sage_pddl.runtime import injection_index, run_episode
from sage_pddl.tasks import load_task
from tests.steps import as_step


def step(action: str, obj: str = "") -> PlanStep:
    return as_step({"action": action, "object": obj})


GOOD = [step("MoveTo", "Cabinet"), step("Open", "Cabinet"), step("MoveTo", "Apple"),
        step("Pick", "Apple"), step("MoveTo", "Cabinet"), step("PutIn", "Cabinet"),
        step("Close", "Cabinet")]


@dataclass
class FixedPlanner:
    """A planner double: returns a fixed plan and, on each repair, the next fixed suffix."""

    plan_steps: list
    repairs: list = field(default_factory=list)
    name: str = "fixed"
    repair_calls: list = field(default_factory=list)

    def plan(self, task):
        return PlanResult(steps=tuple(self.plan_steps), calls=1, prompt_tokens=10,
                          output_tokens=5, planner=self.name)

    def repair(self, state, done, failed_step, reason):
        self.repair_calls.append((list(done), failed_step, reason))
        steps = self.repairs.pop(0) if self.repairs else []
        return PlanResult(steps=tuple(steps), calls=1, prompt_tokens=3, output_tokens=2,
                          planner=self.name)


@pytest.fixture(scope="module")
def task():
    domain = load_domain("ithor")
    return PlanningTask.from_task(load_task("ithor#K19"), domain)


def run(task, planner, **options):
    env = get_env("symbolic")
    try:
        return run_episode(task, planner, env, **options)
    finally:
        env.close()


def test_success_is_the_goal_not_some_step(task):
    report = run(task, FixedPlanner(GOOD[:-1]))  # never closes the cabinet
    assert report.executed == 6 and report.count("failed") == 0
    assert report.success is False
    assert run(task, FixedPlanner(GOOD)).success is True


def test_recovery_fails_when_the_goal_is_not_reached(task):
    # the repair after the injected failure forgets the Close: recovered must be False
    planner = FixedPlanner(GOOD, repairs=[[step("PutIn", "Cabinet")]])
    report = run(task, planner, inject_failure=5)
    assert report.injected_at == 5 and report.repairs == 1
    assert report.count("injected") == 1
    assert report.success is False and report.recovered is False
    # the planner saw the failure only through the reason, and got the executed steps
    done, failed, reason = planner.repair_calls[0]
    assert step_key(failed) == step_key(step("PutIn", "Cabinet")) and len(done) == 5 and "injected" in reason


def test_recovery_counts_when_the_goal_holds(task):
    planner = FixedPlanner(GOOD, repairs=[[step("PutIn", "Cabinet"), step("Close", "Cabinet")]])
    report = run(task, planner, inject_failure=5)
    assert report.success is True and report.recovered is True
    assert report.planning_calls == 1 and report.repair_calls == 1
    assert report.prompt_tokens == 13 and report.output_tokens == 7


def test_blocked_steps_stay_in_the_step_success_denominator(task):
    bad = [step("MoveTo", "Apple"), step("Pick", "Apple"), step("PutIn", "Cabinet")] + GOOD[4:]
    planner = FixedPlanner(bad, repairs=[[step("MoveTo", "Cabinet"), step("Open", "Cabinet"),
                                          step("PutIn", "Cabinet"), step("Close", "Cabinet")]])
    report = run(task, planner, gate_before_execute=True)
    assert report.blocked == 1 and report.repairs == 1
    blocked = next(r for r in report.records if r.status == "blocked")
    assert step_key(blocked.step) == step_key(step("PutIn", "Cabinet")) and blocked.code == "container-closed"
    assert report.success is True
    assert report.attempted == report.executed + 1
    assert report.step_success == pytest.approx(report.executed / (report.executed + 1))
    assert report.dispatch_success == 1.0  # the executor's view leaves the blocked step out
    assert "[gate]" in planner.repair_calls[0][2]


def test_without_the_gate_the_bad_step_fails_in_the_world(task):
    bad = [step("MoveTo", "Apple"), step("Pick", "Apple"), step("PutIn", "Cabinet")]
    report = run(task, FixedPlanner(bad), max_replan=0)
    failed = [r for r in report.records if r.status == "failed"]
    assert len(failed) == 1 and failed[0].code == "container-closed"
    assert report.blocked == 0 and report.success is False
    assert any("repair budget" in n for n in report.notes)


def test_repairs_are_bounded(task):
    always_bad = [step("PutIn", "Cabinet")]
    planner = FixedPlanner(always_bad, repairs=[always_bad] * 10)
    report = run(task, planner, max_replan=2)
    assert report.repairs == 2 and report.count("failed") == 3


def test_injection_index():
    assert injection_index(None, 6) is None
    assert injection_index(3, 6) == 3
    assert injection_index("auto", 6) == 3
    assert injection_index("auto", 6, {"at_step": 1, "failure_reason": "locked"}) == 1
    assert injection_index("auto", 1) == 1
    with pytest.raises(SageError, match="inject-failure"):
        injection_index("soon", 6)


def test_the_tasks_gate_is_the_one_the_planner_the_runtime_and_the_world_use(task, gates_made):
    """A task that carries a compiled gate (a benchmark cell's) is checked by that gate alone:
    the planner, the episode and the symbolic world compile none of their own."""
    from sage_pddl.bench.oracle import reference_responder
    from sage_pddl.gate import compile_gate
    from sage_pddl.llm import get_backend
    from sage_pddl.planners import get_planner

    responder = reference_responder([load_task("ithor#K19")], lambda _task: task.domain)
    responder.prepare()
    gate = compile_gate(task.domain, task.problem)
    planner = get_planner("Direct", llm=get_backend("scripted", responder=responder, model="r"))
    env = get_env("symbolic")
    gates_made.clear()
    report = run_episode(replace(task, gate=gate), planner, env, gate_before_execute=True)
    assert report.success is True
    assert gates_made == [] and planner.gate is gate and env.gate is gate
    env.close()


def test_an_executed_step_is_gated_once(task):
    """With gating before dispatch, the check that let a step through is the one the believed
    state moves on by: one check of the episode's gate per step, blocked or executed."""
    from sage_pddl.gate import compile_gate

    gate = compile_gate(task.domain, task.problem)
    checked: list[list] = []
    check = gate.check
    gate.check = lambda plan, **options: checked.append(list(plan)) or check(plan, **options)
    bad = [step("MoveTo", "Apple"), step("Pick", "Apple"), step("PutIn", "Cabinet")] + GOOD[4:]
    planner = FixedPlanner(bad, repairs=[[step("MoveTo", "Cabinet"), step("Open", "Cabinet"),
                                          step("PutIn", "Cabinet"), step("Close", "Cabinet")]])
    env = get_env("symbolic")
    try:
        report = run_episode(replace(task, gate=gate), planner, env, gate_before_execute=True)
    finally:
        env.close()
    assert report.success is True and report.blocked == 1
    assert len(checked) == report.attempted == report.executed + 1  # not one more per step
    assert all(len(plan) == 1 for plan in checked)


def test_a_gate_of_another_problem_is_refused(task):
    from sage_pddl.env import EnvError
    from sage_pddl.gate import compile_gate
    from sage_pddl.planners.base import PlannerError

    other = PlanningTask.from_task(load_task("ithor#K10"), task.domain)
    foreign = compile_gate(other.domain, other.problem)
    with pytest.raises(PlannerError, match="another domain or problem"):
        replace(task, gate=foreign)
    env = get_env("symbolic")
    with pytest.raises(EnvError, match="another domain or problem"):
        env.reset(task.problem, domain=task.domain, gate=foreign)
