"""Each metric on hand-made verdicts and plans whose answers are known, and on the real gate."""
from __future__ import annotations

import pytest

from sage_pddl.bench import metrics
from sage_pddl.gate import Verdict, Violation, compile_gate
from sage_pddl.planners.base import PlanningTask
from sage_pddl.tasks import load_task
from tests.steps import as_step


def violation(step: int, code: str) -> Violation:
    return Violation(step=step, step_text=f"step {step}", action="a", code=code, literal="",
                     message="")


def verdict(*violations: Violation, goal: bool | None = True) -> Verdict:
    return Verdict(valid=not violations, steps_checked=5, start_state=frozenset(),
                   changed=frozenset(), goal_reached=goal, violations=tuple(violations))


def s(action: str, obj: str = "", target: str = "") -> dict:
    return {"action": action, "object": obj, "target": target}


def test_executability_counts_rejected_steps_once():
    # two failed literals on step 1 and one structural code on step 3: 2 of 5 steps rejected
    v = verdict(violation(1, "pick/requires/reachable"), violation(1, "hand-full"),
                violation(3, "unknown-object"))
    assert metrics.executability(v, 5) == pytest.approx(0.6)
    assert metrics.executability(verdict(), 0) == 0.0


def test_precondition_violations_and_codes():
    v = verdict(violation(0, "pick/requires/reachable"), violation(0, "hand-full"),
                violation(2, "unknown-object"), violation(4, "wrong-arity"))
    assert metrics.precondition_violations(v) == 2  # structural codes are not preconditions
    assert metrics.violation_codes(v) == {"hand-full": 1, "pick/requires/reachable": 1,
                                          "unknown-object": 1, "wrong-arity": 1}


def test_hallucination_comes_from_structural_codes_not_substrings():
    v = verdict(violation(0, "unknown-object"), violation(0, "unknown-action"),
                violation(2, "unknown-action"), violation(3, "type-mismatch"),
                violation(4, "pick/requires/reachable"))
    assert metrics.hallucination(v, 4) == pytest.approx(0.5)  # steps 0 and 2
    assert metrics.hallucination(verdict(), 0) == 0.0


def test_redundancy_is_adjacent_identical_pairs():
    plan = [s("MoveTo", "Apple"), s("moveto", "apple"), s("Pick", "Apple"), s("MoveTo", "Apple")]
    assert metrics.redundancy(plan) == pytest.approx(1 / 3)
    assert metrics.redundancy(plan[:1]) == 0.0
    assert metrics.redundancy([s("Place", "Apple", "Table"), s("Place", "Apple", "Sink")]) == 0.0


def test_object_completeness_ignores_case_and_underscores():
    plan = [s("MoveTo", "DiningTable"), s("Place", "apple", "dining_table")]
    assert metrics.object_completeness(plan, ["dining_table", "Apple", "Apple", "Fridge"]) == \
        pytest.approx(2 / 3)  # duplicates in the expected list count once
    assert metrics.object_completeness(plan, []) is None
    # a substring is not a match: "Table" does not name "DiningTable"
    assert metrics.object_completeness([s("MoveTo", "Table")], ["DiningTable"]) == 0.0


def test_step_ratio():
    assert metrics.step_ratio(6, 4) == 1.5
    assert metrics.step_ratio(3, 0) is None


@pytest.fixture(scope="module")
def k19_gate(ithor):
    task = PlanningTask.from_task(load_task("ithor#K19"), ithor)
    return compile_gate(task.domain, task.problem)


def test_plan_metrics_on_the_real_gate(k19_gate):
    good = [s("MoveTo", "Cabinet"), s("Open", "Cabinet"), s("MoveTo", "Apple"), s("Pick", "Apple"),
            s("MoveTo", "Cabinet"), s("PutIn", "Cabinet"), s("Close", "Cabinet")]
    result = metrics.plan_metrics(k19_gate, good, expected_objects=["Apple", "Cabinet"],
                                  reference_length=7)
    assert result["gate_goal_success"] == result["sim_goal_success"] == 1.0
    assert result["gate_goal_conditions"] == result["sim_goal_conditions"] == 1.0
    assert result["executability"] == 1.0 and result["sim_steps_refused"] == 0
    assert result["precondition_violations"] == 0 and result["step_ratio"] == 1.0

    # forgets to open the cabinet, names an object the scene does not have, repeats a step
    broken = [s("MoveTo", "Apple"), s("Pick", "Apple"), s("MoveTo", "Cabinet"),
              s("MoveTo", "Cabinet"), s("PutIn", "Cabinet"), s("MoveTo", "Unicorn")]
    result = metrics.plan_metrics(k19_gate, broken, expected_objects=["Apple", "Cabinet"],
                                  reference_length=7)
    assert result["gate_goal_success"] == result["sim_goal_success"] == 0.0
    assert result["executability"] == pytest.approx(4 / 6)  # PutIn and MoveTo Unicorn rejected
    assert result["sim_steps_refused"] == 2
    assert result["hallucination"] == pytest.approx(1 / 6)
    assert result["redundancy"] == pytest.approx(1 / 5)
    assert result["precondition_violations"] >= 1
    assert "unknown-object" in result["violation_codes"]
    assert result["object_completeness"] == 1.0
    empty = metrics.plan_metrics(k19_gate, [], expected_objects=["Apple"], reference_length=7)
    assert empty["executability"] == 0.0 and empty["gate_goal_success"] == 0.0
    assert empty["sim_goal_success"] == 0.0 and empty["sim_goal_conditions"] == 0.0
    assert empty["object_completeness"] == 0.0 and empty["step_ratio"] == 0.0


def test_a_refused_plan_is_scored_from_one_check(ithor):
    """Both views of the goal and every plan metric come from the plan's one check in mode
    "all", which holds where a check in mode "first" stops."""
    task = PlanningTask.from_task(load_task("ithor#K19"), ithor)
    gate = compile_gate(task.domain, task.problem)
    broken = [s("MoveTo", "Apple"), s("Pick", "Apple"), s("MoveTo", "Cabinet"),
              s("PutIn", "Cabinet"), s("Open", "Cabinet"), s("PutIn", "Cabinet")]
    checks: list[str] = []
    check = gate.check
    gate.check = lambda plan, **options: checks.append(options.get("mode")) or check(plan,
                                                                                     **options)
    result = metrics.plan_metrics(gate, broken, reference_length=7)
    assert checks == ["all"]
    first = check(broken, mode="first")
    met, total = gate.goal_conditions(first.final_state)
    assert result["gate_goal_conditions"] == met / total
    assert result["sim_steps_refused"] == 1 and result["gate_goal_success"] == 0.0


def test_goal_conditions_count_conjuncts_met_after_the_accepted_prefix():
    from pathlib import Path

    from sage_pddl.domains import load_domain
    from sage_pddl.gate import compile_gate
    from sage_pddl.pddl import load_problem

    relay = Path(__file__).resolve().parents[2] / "examples" / "relay"
    domain = load_domain(str(relay / "domain.pddl"))
    gate = compile_gate(domain, load_problem(relay / "problems" / "p03.pddl"))
    assert gate.goal_conditions(gate.initial_state) == (0, 2)
    # p03: c1 and p1 start at h1, p1 goes to h3 by h4 (r4, r3 open); p2 (h3 -> h4) stays put
    one = [{"action": "pickup", "args": ["c1", "p1", "h1"]},
           {"action": "travel", "args": ["c1", "h1", "h4", "r4"]},
           {"action": "travel", "args": ["c1", "h4", "h3", "r3"]},
           {"action": "dropoff", "args": ["c1", "p1", "h3"]}]
    assert gate.check(one).valid, gate.check(one).violations
    row = metrics.plan_metrics(gate, one)
    assert row["gate_goal_success"] == 0.0 and row["gate_goal_conditions"] == 0.5
    assert row["sim_goal_success"] == 0.0 and row["sim_goal_conditions"] == 0.5
    rejected_first = [{"action": "dropoff", "args": ["c1", "p1", "h3"]}, *one]
    row = metrics.plan_metrics(gate, rejected_first)
    assert row["gate_goal_conditions"] == 0.0  # the gate's view stops at step 1
    assert row["sim_goal_conditions"] == 0.5  # the simulator skips it and goes on
    assert row["sim_steps_refused"] == 1
    from sage_pddl.env.symbolic import SymbolicEnv  # exec mode: the same count on the true state

    env = SymbolicEnv(domain)
    env.reset(load_problem(relay / "problems" / "p03.pddl"))
    assert all(env.step(as_step(step)).success for step in one)
    assert env.goal_conditions() == (1, 2) and env.goal_reached() is False


def test_rows_of_older_results_files_read_with_todays_names():
    plan_row = {"mode": "plan", "goal_success": 1.0, "goal_conditions": 0.5}
    assert metrics.upgrade_row(plan_row) == {"mode": "plan", "gate_goal_success": 1.0,
                                             "gate_goal_conditions": 0.5}
    # an exec row's goal_conditions was the episode's true state, its goal_success the first
    # plan's gate view
    exec_row = {"mode": "exec", "goal_success": 0.0, "goal_conditions": 1.0,
                "task_success": 1.0}
    assert metrics.upgrade_row(exec_row) == {"mode": "exec", "gate_goal_success": 0.0,
                                             "task_goal_conditions": 1.0, "task_success": 1.0}
    today = {"mode": "plan", "gate_goal_success": 1.0, "sim_goal_success": 1.0}
    assert metrics.upgrade_row(dict(today)) == today
    assert metrics.current_name("goal_conditions", "exec") == "task_goal_conditions"
    assert metrics.current_name("goal_success", "plan") == "gate_goal_success"
    assert metrics.current_name("sim_goal_success", "plan") == "sim_goal_success"
