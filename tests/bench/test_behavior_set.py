"""The `behavior` task set: EAI's BEHAVIOR problems and gold plans, read from the installed
eai-eval, gated with our reading of EAI's `behavior.pddl`, planned and executed.

Needs the `virtualhome` extra (it installs eai-eval, which holds the BEHAVIOR data). The LLM is
the scripted backend's reference responder, which answers with EAI's gold PDDL plans: it
exercises the harness, not a model.
"""
from __future__ import annotations

import json

import pytest

from sage_pddl.bench import BenchConfig, run_benchmark
from sage_pddl.bench.behavior_goal import BddlError, bddl_available, bddl_goal
from sage_pddl.cli import main
from sage_pddl.domains import list_domains, load_domain
from sage_pddl.env.virtualhome import eai_available
from sage_pddl.gate import compile_gate
from sage_pddl.pddl.model import Plan
from sage_pddl.pddl.parser import parse_problem
from sage_pddl.tasks import load_taskset
from sage_pddl.tasks.eai import behavior_refused, eai_behavior_dir, gold_plans, problem_files

pytestmark = pytest.mark.skipif(
    not eai_available(), reason="eai-eval is not installed (pip install 'sage-pddl[virtualhome]')")

BOTTLING = "bottling_fruit_0_Wainscott_0_int_0_2021-05-24_19-46-46"


def test_the_domain_is_eais_file_in_the_installed_package():
    path = list_domains()["behavior"]
    assert path == eai_behavior_dir() / "behavior.pddl"
    assert load_domain("behavior").name == "igibson"


def test_the_set_is_every_eai_problem_our_checks_accept():
    tasks = load_taskset("behavior")
    assert len(tasks) == 99 and list(behavior_refused()) == [
        "cleaning_floors_0_Merom_0_int_1_2021-06-23_16-12-28"]
    assert "unknown object cleansing_agent_n_01_1" in next(iter(behavior_refused().values()))
    task = next(t for t in tasks if t.task_id == BOTTLING)
    assert task.instruction.startswith(
        "Problem BEHAVIOR bottling fruit (Slice the strawberry and the peach, put the sliced "
        "strawberry and peach in separate jars, and close the jars): make these true: ")
    assert task.domain == "behavior" and task.problem is not None
    assert task.reference_steps[0] == {"action": "navigate_to",
                                       "args": ["agent_n_01_1", "agent_n_01_1"]}


def test_every_gold_plan_is_valid_and_reaches_its_goal():
    root = eai_behavior_dir()
    domain = load_domain("behavior")
    files = problem_files(root / "problem_pddl")
    failed = []
    for problem_id, plan in gold_plans(root / "gold_pddl_plan.json").items():
        path = files[problem_id]
        verdict = compile_gate(domain, parse_problem(path.read_text(), file=str(path))).check(plan)
        if not (verdict.valid and verdict.goal_reached):
            failed.append(problem_id)
    assert len(files) == 100 and failed == []


def test_a_gold_plan_without_one_of_its_steps_is_refused():
    root = eai_behavior_dir()
    plan = gold_plans(root / "gold_pddl_plan.json")[BOTTLING]
    path = problem_files(root / "problem_pddl")[BOTTLING]
    gate = compile_gate(load_domain("behavior"), parse_problem(path.read_text(), file=str(path)))
    dropped = next(i for i, s in enumerate(plan.steps) if s.text == "open jar_n_01_1 agent_n_01_1")
    verdict = gate.check(Plan(plan.steps[:dropped] + plan.steps[dropped + 1:]))
    assert not verdict.valid
    (violation,) = verdict.violations
    # the jar is never opened, so the last step cannot put the peach in it
    assert violation.step == 28 and violation.code == "place_inside/requires/open"
    assert violation.step_text == "place_inside peach_n_03_1 jar_n_01_1 agent_n_01_1"
    assert violation.literal == "(open jar_n_01_1)"


def test_the_gate_command_resolves_the_domain_by_name(tmp_path, capsys):
    root = eai_behavior_dir()
    plan_file = tmp_path / "plan.txt"
    plan_file.write_text("\n".join(step.text for step in
                                   gold_plans(root / "gold_pddl_plan.json")[BOTTLING].steps))
    problem = problem_files(root / "problem_pddl")[BOTTLING]
    assert main(["gate", "behavior", str(problem), str(plan_file)]) == 0
    assert "VALID, goal reached" in capsys.readouterr().out


def test_one_problem_is_planned_gated_and_executed_by_every_planner(tmp_path):
    config = BenchConfig(planners=("SAGE", "Direct"), models=("m",), tasks=(f"behavior#{BOTTLING}",),
                         llm="scripted", out=str(tmp_path), run_id="bh", progress=False,
                         memory="none", mode="exec")
    run_dir = run_benchmark(config)
    rows = list(map(json.loads, (run_dir / "results.jsonl").open()))
    assert {r["planner"] for r in rows} == {"SAGE", "Direct"}
    for row in rows:
        assert row["error"] is None and row["task_success"] == 1.0 and row["executed"] == 30
        if bddl_available():  # BEHAVIOR's goal also closes the jars: EAI's problem does not
            assert row["bddl_success"] is False and row["bddl_goal_conditions"] == 3 / 5


@pytest.mark.skipif(not bddl_available(), reason="bddl or future is not installed")
def test_plan_rows_carry_bddls_goal_test_beside_ours(tmp_path):
    tasks = ("behavior[#bringing_in_wood_0_Benevolence_1_int_0_2021-09-15_18-42-25,"
             f"#{BOTTLING},#boxing_books_up_for_storage_0_Benevolence_1_int_0_2021-09-10_15-35-47]")
    config = BenchConfig(planners=("Direct",), models=("m",), tasks=(tasks,), llm="scripted",
                         out=str(tmp_path), run_id="bb", progress=False, memory="none")
    rows = {r["task_id"].split("_0_")[0]: r
            for r in map(json.loads, (run_benchmark(config) / "results.jsonl").open())}
    assert all(r["error"] is None and r["gate_goal_success"] == r["sim_goal_success"] == 1.0
               for r in rows.values())
    assert rows["bringing_in_wood"]["bddl_success"] is True
    # BDDL's goal also closes the jars and puts the strawberry in a jar: EAI's problem does not
    assert rows["bottling_fruit"]["bddl_success"] is False
    assert rows["bottling_fruit"]["bddl_goal_conditions"] == 3 / 5
    assert rows["bottling_fruit"]["bddl_unstated"] == 0
    # every book in the carton: EAI's problem leaves three of BDDL's seven books out
    assert rows["boxing_books_up_for_storage"]["bddl_unstated"] == 1


@pytest.mark.skipif(not bddl_available(), reason="bddl or future is not installed")
def test_bddl_reads_the_state_it_is_given():
    state = {("inside", f"book_n_02_{i}", "carton_n_02_1") for i in range(1, 8)}
    verdict = bddl_goal("boxing_books_up_for_storage_0_Benevolence_1_int_0_2021-09-10_15-35-47",
                        state)
    assert verdict.success and verdict.satisfied == verdict.total == 1
    state.discard(("inside", "book_n_02_4", "carton_n_02_1"))
    assert not bddl_goal("boxing_books_up_for_storage_0_Benevolence_1_int_0_2021-09-10_15-35-47",
                         state).success
    with pytest.raises(BddlError, match="not in behavior_eval"):
        bddl_goal("no_such_demo", state)


def test_without_bddl_the_columns_are_empty_not_errors(tmp_path, monkeypatch):
    monkeypatch.setattr("sage_pddl.bench.cell.bddl_available", lambda: False)
    config = BenchConfig(planners=("Direct",), models=("m",), tasks=(f"behavior#{BOTTLING}",),
                         llm="scripted", out=str(tmp_path), run_id="nb", progress=False,
                         memory="none")
    (row,) = map(json.loads, (run_benchmark(config) / "results.jsonl").open())
    assert row["error"] is None and row["gate_goal_success"] == row["sim_goal_success"] == 1.0
    assert row["bddl_success"] is None and row["bddl_goal_conditions"] is None
