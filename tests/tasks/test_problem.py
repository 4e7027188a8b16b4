"""Task -> PDDL problem: objects, initial facts with provenance, goals; generated files."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.pddl import parse_problem, write_problem
from sage_pddl.tasks import load_task, task_problem, task_scene

REPO = Path(__file__).resolve().parents[2]


def _scene(ref: str):
    task = load_task(ref)
    return task_scene(task, load_domain(task.domain))


def _atoms(scene) -> set[tuple]:
    return {f.atom for f in scene.facts}


def test_objects_are_normalised_types_from_every_source():
    scene = _scene("ithor#K09")  # expected objects name "dining_table"
    assert "DiningTable" in scene.things and "dining_table" not in scene.things
    assert {"Mug", "CoffeeMachine", "CreditCard", "Fridge"} <= set(scene.things)


def test_initial_state_from_the_nearby_observation():
    atoms = _atoms(_scene("ithor#B01"))
    assert ("turned-on", "LightSwitch") in atoms and ("opened", "Box") in atoms
    assert ("reachable", "LightSwitch") in atoms  # 1.1 m away
    assert ("hand-empty",) in atoms and ("toggleable", "LightSwitch") in atoms
    assert ("closed", "Box") not in atoms


def test_procthor_rooms_and_current_room():
    scene = _scene("procthor#P04_01")
    atoms = _atoms(scene)
    assert set(scene.rooms) == {"Kitchen", "LivingRoom", "Bedroom", "Bathroom"}
    assert ("robot-in", "Kitchen") in atoms and ("here", "Apple") in atoms
    assert ("in-room", "Plunger", "Bathroom") in atoms and ("here", "Plunger") not in atoms
    assert ("here", "Bathroom") in atoms


def test_instruction_goals_of_the_templates():
    assert [g.text() for g in _scene("ithor#K19").goal] == [
        "(inside Apple Cabinet)", "(closed Cabinet)"]
    assert [g.text() for g in _scene("ithor#K15").goal] == ["(on Apple CounterTop)"]
    assert [g.text() for g in _scene("ithor#L10").goal] == ["(opened Box)"]
    assert [g.text() for g in _scene("ithor#B01").goal] == ["(not (turned-on LightSwitch))"]


def test_free_form_goals():
    x01 = _scene("ithor#X01")
    assert x01.goal_source == "instruction"
    assert {g.text() for g in x01.goal} == {"(inside Apple Microwave)", "(heated Apple)"}
    assert [g.text() for g in _scene("ithor#B08").goal] == ["(not (holding Pillow))"]
    assert [g.text() for g in _scene("ithor#K09").goal] == ["(on Mug DiningTable)"]
    k01 = _scene("ithor#K01")  # "Make a cup of coffee": nothing to match, the reference decides
    assert k01.goal_source == "reference"
    assert {g.text() for g in k01.goal} == {"(holding Mug)", "(turned-on CoffeeMachine)"}


def test_instruction_locates_objects():
    atoms = _atoms(_scene("ithor#K03"))  # "Open the fridge and retrieve a tomato"
    assert ("inside", "Tomato", "Fridge") in atoms and ("enclosed", "Tomato") in atoms


def test_reference_evidence_is_recorded_with_its_step():
    x03 = _scene("ithor#X03")  # TurnOn Faucet before any move
    facts = x03.facts_from("reference")
    assert [f.atom for f in facts] == [("reachable", "Faucet")]
    assert "step 1" in facts[0].note
    l08 = _scene("ithor#L08")  # TurnOff of an unobserved DeskLamp succeeded: it was on
    assert ("turned-on", "DeskLamp") in {f.atom for f in l08.facts_from("reference")}
    without = task_scene(load_task("ithor#X03"), load_domain("ithor"), use_reference=False)
    assert not without.facts_from("reference")


def test_unknown_types_are_reported():
    scene = _scene("ithor#A05")
    assert scene.unknown_types == ("Toothbrush",)


def test_problem_round_trips_through_the_writer():
    problem = task_problem(load_task("procthor#P14_05"), "procthor")
    assert parse_problem(write_problem(problem)) == problem


def _gen_module():
    path = REPO / "tools" / "gen_problems.py"
    spec = importlib.util.spec_from_file_location("gen_problems", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_problem_files_are_up_to_date():
    files = _gen_module().render_all()
    assert len(files) == 95
    stale = [rel for rel, text in files.items()
             if not (REPO / "problems" / rel).is_file()
             or (REPO / "problems" / rel).read_text() != text]
    assert not stale, f"regenerate with `python tools/gen_problems.py`: {stale[:5]}"


@pytest.mark.parametrize("domain,problem", [("ithor", "ithor/X01.pddl"),
                                            ("procthor", "procthor/P14_05.pddl")])
def test_unified_planning_reads_the_domains(domain, problem):
    reader = pytest.importorskip("unified_planning.io").PDDLReader
    parsed = reader().parse_problem(str(REPO / "domains" / f"{domain}.pddl"),
                                    str(REPO / "problems" / problem))
    assert {a.name.lower() for a in parsed.actions} >= {"moveto", "pick", "place", "wait"}
