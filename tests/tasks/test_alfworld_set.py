"""The `alfworld` task set: ALFRED trajectories of ALFWorld's six task types through the ALFRED
translator with the reviewed goals of `data/sage/goals/alfworld.toml`, and TextWorld's ALFWorld
test game; a folder of ALFWorld game data as a task set."""
from __future__ import annotations

import json
import shutil

import pytest

from sage_pddl.bench import BenchConfig, run_benchmark
from sage_pddl.domains import load_domain
from sage_pddl.gate import compile_gate
from sage_pddl.pddl.model import And, Exists
from sage_pddl.tasks import TaskSetError, load_taskset
from sage_pddl.tasks.alfred import translate_trajectory
from sage_pddl.tasks.alfworld import alfworld_data_dir, type_goals

SIX = {"pick_and_place_simple", "pick_two_obj_and_place", "look_at_obj_in_light",
       "pick_clean_then_place_in_recep", "pick_heat_then_place_in_recep",
       "pick_cool_then_place_in_recep"}
HEAT = "pick_heat_then_place_in_recep-Apple-None-DiningTable-26"


def test_the_set_has_one_task_of_each_type_and_the_textworld_game():
    tasks = load_taskset("alfworld")
    assert set(type_goals()) == SIX
    assert {t.difficulty for t in tasks} == SIX | {""} and len(tasks) == 7
    heat = next(t for t in tasks if t.task_id == HEAT)
    assert heat.instruction == "put a hot apple in diningtable." and heat.domain == "alfworld"
    game = tasks[-1]
    assert game.task_id == "textworld-test" and game.domain.endswith("textworld-test/domain.pddl")


@pytest.mark.parametrize("task", load_taskset("alfworld"), ids=lambda t: t.task_id)
def test_every_reference_plan_is_valid_and_reaches_the_written_goal(task):
    gate = compile_gate(load_domain(task.domain), task.problem)
    verdict = gate.check([dict(step) for step in task.reference_steps])
    assert verdict.valid and verdict.goal_reached, verdict.violations
    # the plan without its last step leaves the goal undone
    shorter = gate.check([dict(step) for step in task.reference_steps[:-1]])
    assert not (shorter.valid and shorter.goal_reached)


def _unordered(node):
    """A formula with every conjunction's parts as a set (the order of conjuncts aside)."""
    if isinstance(node, And):
        return ("and", frozenset(_unordered(part) for part in node.parts))
    if isinstance(node, Exists):
        return ("exists", node.variables, _unordered(node.body))
    return node


def test_the_written_goals_agree_with_the_translators_on_the_bundled_trajectories():
    """Two readings of ALFWorld's goals, reviewed data and the translator's code, agree."""
    for task in load_taskset("alfworld")[:-1]:
        (path,) = (alfworld_data_dir() / "alfred-traj" / task.task_id).glob("*/traj_data.json")
        translated = translate_trajectory(path).problem
        assert _unordered(translated.goal) == _unordered(task.problem.goal), task.task_id


def test_one_task_is_planned_gated_and_executed_by_every_planner(tmp_path):
    config = BenchConfig(planners=("SAGE", "Direct"), models=("m",), tasks=(f"alfworld#{HEAT}",),
                         llm="scripted", out=str(tmp_path), run_id="aw", progress=False,
                         memory="none", mode="exec")
    rows = list(map(json.loads, (run_benchmark(config) / "results.jsonl").open()))
    assert {r["planner"] for r in rows} == {"SAGE", "Direct"}
    assert all(r["error"] is None and r["task_success"] == 1.0 for r in rows)


def test_a_folder_of_downloaded_game_data_is_a_task_set(tmp_path):
    shutil.copytree(alfworld_data_dir() / "alfred-traj" / HEAT, tmp_path / "json_2.1.1" / HEAT)
    game = tmp_path / "json_2.1.1" / "tw-game" / "trial_1"
    game.mkdir(parents=True)
    problem = (alfworld_data_dir() / "textworld-test" / "problem.pddl").read_text()
    (game / "game.tw-pddl").write_text(json.dumps({"pddl_problem": problem}))
    trajectory, played = load_taskset(str(tmp_path))
    assert trajectory.task_id == HEAT and trajectory.reference_steps
    assert played.task_id == "tw-game" and played.domain == "alfred"
    assert played.problem is not None and not played.reference_steps
    (game / "game.tw-pddl").write_text("{}")
    with pytest.raises(TaskSetError, match="pddl_problem"):
        load_taskset(str(tmp_path))
    (game / "game.tw-pddl").unlink()
    (game / "traj_data.json").write_text("[]")
    with pytest.raises(TaskSetError, match="a JSON object"):
        load_taskset(str(tmp_path))
    (game / "traj_data.json").write_text('{"task_type": "pick_and_place_with_movable_recep"}')
    with pytest.raises(TaskSetError, match="not one of ALFWorld's"):
        load_taskset(str(tmp_path))
