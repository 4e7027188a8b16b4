"""The `virtualhome` task set: EAI's problems and gold plans, our PDDL goal beside EAI's scorer.

Needs the `virtualhome` extra (installed by the README's test command). The LLM is the scripted
backend's reference responder, which answers with EAI's gold PDDL plans: it exercises the
harness, not a model.
"""
from __future__ import annotations

import json

import pytest

from sage_pddl.bench import BenchConfig, run_benchmark
from sage_pddl.env.virtualhome import eai_available
from sage_pddl.tasks import load_taskset

pytestmark = pytest.mark.skipif(
    not eai_available(), reason="eai-eval is not installed (pip install 'sage-pddl[virtualhome]')")


def test_the_set_is_every_eai_problem_with_a_gold_plan():
    tasks = load_taskset("virtualhome")
    assert len(tasks) == 296 and tasks[0].task_id == "3_1"
    assert tasks[0].instruction.startswith("Problem EAI 3_1, Relax on sofa: make these true:")
    assert tasks[0].reference_steps[0] == {"action": "walk_towards", "args": ["character", "couch"]}
    assert all(task.problem is not None and task.domain == "virtualhome" for task in tasks)


def test_rows_carry_eais_verdict_beside_our_goal(tmp_path):
    config = BenchConfig(planners=("Direct",), models=("m",),
                         tasks=("virtualhome[#3_1,#11_1,#26_1]",), llm="scripted",
                         out=str(tmp_path), run_id="vh", progress=False, memory="none")
    run_dir = run_benchmark(config)
    rows = {r["task_id"]: r for r in map(json.loads, (run_dir / "results.jsonl").open())}
    assert all(r["gate_goal_success"] == 1.0 for r in rows.values())  # our PDDL goal: all reached
    assert rows["3_1"]["eai_success"] is True
    # EAI's action-sequencing checker refuses PLUGIN, which its own gold PDDL plan uses
    assert rows["11_1"]["eai_error"] == "hallucination error"
    assert rows["26_1"]["eai_error"] == "missing_step"


def test_an_exec_row_runs_the_task_in_eais_simulator(tmp_path):
    """The executor finds the EAI task from the problem alone (its name carries the EAI id)."""
    config = BenchConfig(planners=("Direct",), models=("m",), tasks=("virtualhome#3_1",),
                         llm="scripted", out=str(tmp_path), run_id="vhx", progress=False,
                         memory="none", mode="exec", env="virtualhome")
    run_dir = run_benchmark(config)
    (row,) = map(json.loads, (run_dir / "results.jsonl").open())
    assert row["error"] is None and row["executed"] >= 1 and row["task_success"] == 1.0
