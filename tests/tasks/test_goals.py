"""The reviewed goals (data/sage/goals/*.toml): complete, in step with the task sets, written
in the domain's vocabulary, and read with located errors."""
from __future__ import annotations

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.gate import compile_gate
from sage_pddl.pddl.errors import PDDLError
from sage_pddl.pddl.model import Atom, Constant, walk
from sage_pddl.tasks import (
    TaskSetError,
    bundled_goals,
    load_goals,
    load_task,
    load_taskset,
    task_problem,
)
from sage_pddl.tasks.catalogue import affordances
from sage_pddl.tasks.taskset import BUNDLED, data_dir


@pytest.mark.parametrize("set_name", ["ithor", "ithor-gt", "procthor"])
def test_every_task_has_a_goal_written_for_its_own_instruction(set_name):
    goals = bundled_goals(set_name)
    tasks = load_taskset(set_name)
    assert {t.task_id.lower() for t in tasks} <= set(goals)
    for task in tasks:
        assert goals[task.task_id.lower()].instruction == task.instruction, task.task_id


@pytest.mark.parametrize("set_name", ["ithor", "procthor"])
def test_goals_use_the_domains_predicates_and_placement_kinds(set_name):
    domain = load_domain(set_name)
    predicates = {p.name.lower(): len(p.parameters) for p in domain.predicates}
    for spec in bundled_goals(set_name).values():
        for node in walk(spec.goal):
            if not isinstance(node, Atom):
                continue
            assert predicates.get(node.predicate.lower()) == len(node.args), (spec.task_id, node)
            if node.predicate in ("on", "inside") and isinstance(node.args[1], Constant):
                container = affordances(node.args[1].name).container
                assert node.predicate == ("inside" if container else "on"), spec.task_id


def test_a_broken_goal_is_located_in_its_file(tmp_path):
    path = tmp_path / "goals.toml"
    path.write_text('[A]\ninstruction = "x"\ngoal = "(holding Apple)"\n\n'
                    '[B]\ninstruction = "y"\ngoal = \'\'\'\n(and (holding Apple)\n'
                    '     (on Apple CounterTop)\'\'\'\n')
    with pytest.raises(PDDLError) as error:
        load_goals(path)
    assert str(error.value).startswith(f"{path}:8:1: error: goal: this '(' is never closed")
    assert "(and (holding Apple)" in str(error.value)  # the offending line of the file
    path.write_text('[A]\ninstruction = "x"\ngoal = "(holding Apple) (on"\n')
    with pytest.raises(PDDLError, match=r"goals.toml:3:"):
        load_goals(path)
    path.write_text('[A]\ninstruction = "x"\ngoal = ""\n')
    with pytest.raises(TaskSetError, match="needs goal"):
        load_goals(path)
    path.write_text('[A]\ngoal = "(holding Apple)"\nnotes = "typo"\n')
    with pytest.raises(TaskSetError, match="unknown field"):
        load_goals(path)


@pytest.mark.slow
def test_docs_goals_md_holds_the_current_tables():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "tools" / "goals_table.py"
    spec = importlib.util.spec_from_file_location("goals_table", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--check"]) == 0, "regenerate with `python tools/goals_table.py`"


def test_a_bundled_set_read_by_its_path_keeps_its_reviewed_goals():
    by_path = load_taskset(data_dir() / BUNDLED["ithor"])
    by_name = load_taskset("ithor")
    domain = load_domain("ithor")
    assert task_problem(by_path[2], domain).goal == task_problem(by_name[2], domain).goal
    assert task_problem(by_path[2], domain).goal.parts  # the written goal, not `none`


def _compiled(goal: str, instances: dict[str, list[str]]) -> str:
    from sage_pddl.pddl.writer import write_formula
    from sage_pddl.tasks.goals import compile_goal, parse_goal

    return " ".join(write_formula(compile_goal(parse_goal(goal), instances,
                                               load_domain("ithor"))).split())


def test_a_type_under_a_negation_means_every_instance():
    scene = {"StoveBurner": ["B1", "B2"], "Pot": ["Pot"], "Cabinet": ["C1", "C2"],
             "Apple": ["Apple"]}
    # "turn off the stove": no burner is on (one goal condition, so the goal is a conjunction
    # of it); "turn on a burner": some burner
    assert _compiled("(not (turned-on StoveBurner))", scene) == (
        "(and (and (not (turned-on B1)) (not (turned-on B2))))")
    assert _compiled("(turned-on StoveBurner)", scene) == "(or (turned-on B1) (turned-on B2))"
    # a type also named outside the negation is that one instance inside it too
    assert _compiled("(and (on Pot StoveBurner) (not (turned-on StoveBurner)))", scene) == (
        "(and (or (on Pot B1) (on Pot B2)) (and (not (turned-on B1)) (not (turned-on B2))))")
    assert _compiled("(or (on Pot StoveBurner) (not (turned-on StoveBurner)))", scene) == (
        "(or (or (on Pot B1) (not (turned-on B1))) (or (on Pot B2) (not (turned-on B2))))")
    # "no burner under the pot is on"; "some cabinet is not open" says so with exists
    assert _compiled("(not (and (on Pot StoveBurner) (turned-on StoveBurner)))", scene) == (
        "(and (and (not (and (on Pot B1) (turned-on B1))) "
        "(not (and (on Pot B2) (turned-on B2)))))")
    assert _compiled("(exists (?c - Cabinet) (not (opened ?c)))", scene) == (
        "(or (not (opened C1)) (not (opened C2)))")


def test_turn_off_the_stove_is_not_reached_while_any_burner_is_on():
    from dataclasses import replace

    from sage_pddl.gate import compile_gate
    from sage_pddl.tasks import load_task, task_scene

    domain = load_domain("ithor")
    task = replace(load_task("ithor#K02"), instruction="Turn off the stove",
                   goal="(not (turned-on StoveBurner))")
    scene = task_scene(task, domain)
    assert len(scene.objects_of("StoveBurner")) > 1  # FloorPlan1: several burners
    gate = compile_gate(domain, task_problem(task, domain))
    assert gate.check([]).goal_reached  # every burner starts off
    # two burners on, one off again: one is still on, and waiting does not change that
    two_on_one_off = ["MoveTo StoveBurner", "TurnOn StoveBurner", "TurnOn StoveBurner",
                      "TurnOff StoveBurner"]
    waited = gate.check([*two_on_one_off, "Wait"])
    assert waited.valid and waited.goal_reached is False
    assert gate.goal_conditions(waited.final_state) == (0, 1)
    both_off = gate.check([*two_on_one_off, "TurnOff StoveBurner"])
    assert both_off.valid and both_off.goal_reached


def test_a_copy_of_a_bundled_task_file_keeps_its_reviewed_goals(tmp_path, capsys):
    import shutil

    from sage_pddl.cli import main
    from sage_pddl.tasks import load_task, task_scene

    domain = load_domain("ithor")
    for name in ("ithor", "compound"):
        copy = tmp_path / f"{name}-copy.json"
        shutil.copyfile(data_dir() / BUNDLED[name], copy)
        # the first tasks of each set: each copied task is matched on its own (id, instruction)
        pairs = list(zip(load_taskset(name), load_taskset(str(copy))))[:3]
        for original, copied in pairs:
            assert copied.source == str(copy)  # read from the copy, not taken for the set
            assert task_problem(copied, domain).goal == task_problem(original, domain).goal
            assert task_scene(copied, domain).goal_source == "goals", copied.task_id
    assert main(["problem", f"{tmp_path / 'ithor-copy.json'}#K08"]) == 0
    out = capsys.readouterr().out
    assert "; goal from: goals" in out and "(on Plate DiningTable" in out.replace("_1", "")
    scene = task_scene(load_task(f"{tmp_path / 'ithor-copy.json'}#K08"), domain)
    assert scene.goal_note.startswith("The plurals are read")


def test_a_changed_copy_says_why_it_has_not_the_reviewed_goal(tmp_path, caplog):
    import json

    from sage_pddl.tasks import load_task, task_scene

    data = json.loads((data_dir() / BUNDLED["ithor"]).read_text())
    records = data["samples"] if isinstance(data, dict) else data
    k08 = next(r for r in records if r["task_id"] == "K08")
    k08["task_desc"] = "Set the table"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    with caplog.at_level("WARNING"):
        scene = task_scene(load_task(f"{edited}#K08"), load_domain("ithor"))
    assert scene.goal_source != "goals"
    assert (f"task K08 of {edited}: not the bundled task ithor#K08 (its instruction is "
            "'Set the table', the bundled task's 'Set up the dining table with plates and "
            "cups'), so that task's reviewed goal is not used") in caplog.text
    # the other tasks of the file are the bundled ones: their goals are kept
    assert task_scene(load_task(f"{edited}#K09"), load_domain("ithor")).goal_source == "goals"


def _reached(ref: str, steps: list[str]):
    task = load_task(ref)
    domain = load_domain(task.domain)
    gate = compile_gate(domain, task_problem(task, domain))
    verdict = gate.check(steps)
    assert verdict.valid, verdict.violations
    return gate.goal_conditions(verdict.final_state)


def test_the_floor_is_neither_away_nor_nearby():
    """L07 ("place items away") and A08 ("place towel nearby"): an item dropped on the floor
    is not put away; on a receptacle of the room it is."""
    book = ["MoveTo Book", "Pick Book", "MoveTo Floor", "Place Floor"]
    remote = ["MoveTo RemoteControl", "Pick RemoteControl", "MoveTo Sofa", "Place Sofa"]
    assert _reached("ithor#L07", book + remote) == (1, 2)
    assert _reached("ithor#L07", [*book[:2], "MoveTo CoffeeTable", "Place CoffeeTable",
                                  *remote]) == (2, 2)
    towel = ["MoveTo Towel", "Pick Towel"]
    assert _reached("ithor#A08", [*towel, "MoveTo Floor", "Place Floor"]) == (0, 2)
    assert _reached("ithor#A08", [*towel, "MoveTo TowelHolder", "Place TowelHolder"]) == (1, 2)


def test_k01_asks_for_coffee_not_for_the_mug_to_stay_at_the_machine():
    brew = ["MoveTo Mug", "Pick Mug", "MoveTo CoffeeMachine", "Place CoffeeMachine",
            "TurnOn CoffeeMachine"]
    assert _reached("ithor#K01", brew) == (1, 1)
    assert _reached("ithor#K01", [*brew, "Pick Mug", "MoveTo CounterTop",
                                  "Place CounterTop"]) == (1, 1)


def test_infeasible_is_a_reason(tmp_path):
    goals = tmp_path / "g.toml"
    goals.write_text('[T1]\ngoal = "(holding Apple)"\ninfeasible = "no apple here"\n')
    assert load_goals(goals)["t1"].infeasible == "no apple here"
    goals.write_text('[T1]\ngoal = "(holding Apple)"\ninfeasible = true\n')
    with pytest.raises(TaskSetError, match="infeasible must be the reason"):
        load_goals(goals)
