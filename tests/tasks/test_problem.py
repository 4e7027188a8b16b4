"""Task -> PDDL problem: objects, initial facts with provenance, goals; generated files."""
from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from pathlib import Path

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.gate import compile_gate
from sage_pddl.pddl import parse_problem, write_problem
from sage_pddl.pddl.model import And
from sage_pddl.pddl.writer import write_formula
from sage_pddl.tasks import (
    TaskSetError,
    load_goals,
    load_task,
    load_taskset,
    normalize_steps,
    problem_text,
    scene_problem,
    task_problem,
    task_scene,
)

REPO = Path(__file__).resolve().parents[2]


def _scene(ref: str):
    task = load_task(ref)
    return task_scene(task, load_domain(task.domain))


def _atoms(scene) -> set[tuple]:
    return {f.atom for f in scene.facts}


def test_objects_are_normalised_types_from_every_source():
    scene = _scene("ithor#K09")  # expected objects name "dining_table"
    assert "dining_table" not in scene.things and scene.absent_types == ("DiningTable",)
    assert {"Mug", "CoffeeMachine", "CreditCard", "Fridge"} <= set(scene.things)


def test_no_object_is_invented_for_a_type_the_scene_lacks():
    """FloorPlan1 has no DiningTable (ALFRED's object list): K09's goal, expected objects and
    instruction name one, yet the problem declares none, and the task is infeasible with the
    goals file's reason; a plan that uses a dining table is refused for an unknown object."""
    scene = _scene("ithor#K09")
    assert not scene.objects_of("DiningTable")
    assert "FloorPlan1 has no DiningTable" in scene.infeasible
    domain = load_domain("ithor")
    text = problem_text(scene, domain)
    assert "; infeasible: FloorPlan1 has no DiningTable" in text
    gate = compile_gate(domain, scene_problem(scene, domain))
    assert gate.goal_conditions(gate.initial_state)[1] == 2  # the goal keeps its conjuncts
    verdict = gate.check(["MoveTo Mug", "Pick Mug", "MoveTo DiningTable", "Place DiningTable"])
    assert not verdict.valid and verdict.violations[0].code == "unknown-object"
    assert "DiningTable" in verdict.violations[0].message


@pytest.mark.parametrize("task_id, missing", [("K09", "DiningTable"), ("B06", "Cloth"),
                                              ("X05", "Cabinet"), ("B05", "SideTable")])
def test_the_issue_s_infeasible_tasks_lack_the_type_in_their_scene(task_id, missing):
    scene = _scene(f"ithor#{task_id}")
    assert missing in scene.absent_types and not scene.objects_of(missing)
    assert scene.infeasible and not scene.warnings  # marked in the goals file, with a reason


def test_every_task_whose_scene_lacks_a_goal_type_is_marked_infeasible():
    for set_name in ("ithor", "procthor"):
        for task in load_taskset(set_name):
            scene = task_scene(task, load_domain(task.domain), use_reference=False)
            assert not scene.warnings, scene.warnings  # an unmarked one warns


def test_a_goal_naming_a_type_the_scene_lacks_makes_the_task_infeasible(tmp_path):
    task = replace(load_task("ithor#K01"), task_id="Z1", source="")
    goals = tmp_path / "goals.toml"
    goals.write_text('[Z1]\ngoal = "(on Mug DiningTable)"\n', encoding="utf-8")
    scene = task_scene(task, load_domain("ithor"), goals=load_goals(goals))
    assert scene.infeasible == "the scene FloorPlan1 has no DiningTable" and scene.warnings
    assert _goal(scene) == "(or)"
    goals.write_text('[Z1]\ngoal = "(on Mug DiningTable)"\ninfeasible = "no table"\n',
                     encoding="utf-8")
    marked = task_scene(task, load_domain("ithor"), goals=load_goals(goals))
    assert marked.infeasible == "no table" and not marked.warnings


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


def _goal(scene) -> str:
    return " ".join(write_formula(scene.goal).split())


def test_every_bundled_task_takes_its_goal_from_the_reviewed_goals():
    for set_name in ("ithor", "procthor"):
        for task in load_taskset(set_name):
            scene = task_scene(task, load_domain(task.domain))
            assert scene.goal_source == "goals", task.task_id
            assert scene.goal != And(()), task.task_id


def test_goals_name_types_and_the_scene_decides_the_instances():
    k15 = _scene("ithor#K15")  # FloorPlan1 has three counter tops: some counter top
    assert k15.objects_of("CounterTop") == ("CounterTop_1", "CounterTop_2", "CounterTop_3")
    assert _goal(k15) == ("(or (on Apple CounterTop_1) (on Apple CounterTop_2) "
                          "(on Apple CounterTop_3))")
    b01 = _scene("ithor#B01")
    assert _goal(b01) == "(not (turned-on LightSwitch))"
    k19 = _scene("ithor#K19")  # the closed cabinet is the one that holds the apple
    parts = k19.goal.parts
    assert len(parts) == 2 and len(parts[1].parts) == 9
    assert " ".join(write_formula(parts[1].parts[0]).split()) == (
        "(and (inside Apple Cabinet_1) (closed Cabinet_1))")


def test_nothing_is_inferred_from_the_instruction():
    scene = _scene("ithor#K03")  # "Open the fridge and retrieve a tomato"
    atoms = _atoms(scene)
    assert ("inside", "Tomato", "Fridge") not in atoms and ("shut-in", "Tomato", "Fridge") not in atoms
    assert not scene.facts_from("instruction")
    gate = compile_gate(load_domain("ithor"), scene_problem(scene, load_domain("ithor")))
    lying_out = gate.check(["MoveTo Tomato", "Pick Tomato", "MoveTo Fridge", "Open Fridge"])
    assert lying_out.valid and lying_out.goal_reached
    from_the_fridge = gate.check(["MoveTo Fridge", "Open Fridge", "Pick Tomato"])
    assert from_the_fridge.valid and from_the_fridge.goal_reached  # the reference's evidence


def test_a_type_has_as_many_instances_as_the_scene():
    k13 = _scene("ithor#K13")  # "Open the cabinet" in FloorPlan1 (9 cabinets)
    assert len(k13.objects_of("Cabinet")) == 9
    domain = load_domain("ithor")
    gate = compile_gate(domain, scene_problem(k13, domain))
    twice = gate.check(["MoveTo Cabinet", "Open Cabinet", "Open Cabinet", "Close Cabinet"])
    assert twice.valid, twice.violations
    assert {("opened", "cabinet_2")} <= twice.final_state
    x02 = _scene("ithor#X02")  # three chairs are listed nearby
    assert x02.objects_of("Chair") == ("Chair_1", "Chair_2", "Chair_3")


def test_rooms_have_their_fixed_parts():
    scene = _scene("ithor#K10")  # "You are in the kitchen": the observation lists nothing
    for fixture in ("StoveKnob", "StoveBurner", "Sink", "Faucet", "LightSwitch", "CounterTop"):
        assert scene.objects_of(fixture), fixture
    assert not any(atom[0] == "controls" for atom in _atoms(scene))  # FloorPlan1 names none
    assert _scene("ithor#B02").objects_of("LightSwitch")


def test_procthor_visible_objects_are_where_the_robot_stands():
    scene = _scene("procthor#P04_01")  # Television listed in Kitchen and LivingRoom
    atoms = _atoms(scene)
    assert scene.objects_of("Television") == ("Television_1", "Television_2")
    assert ("in-room", "Television_1", "Kitchen") in atoms
    assert ("here", "Television_1") in atoms and ("here", "Television_2") not in atoms
    task = replace(load_task("procthor#P06_01"), visible_objects=("LaundryHamper", "Doorway"))
    doorway = task_scene(task, load_domain("procthor"))
    assert ("here", "Doorway") in _atoms(doorway)
    assert ("in-room", "Doorway", "Bathroom") in _atoms(doorway)


def test_a_task_without_a_written_goal_uses_the_reader_or_says_none(caplog):
    task = replace(load_task("ithor#K19"), task_id="U1", source="mine.json",
                   instruction="Put the apple in the fridge")
    scene = task_scene(task, load_domain("ithor"), goals={})
    assert scene.goal_source == "instruction" and _goal(scene) == "(inside Apple Fridge)"
    unreadable = replace(task, task_id="U2", instruction="Make a sandwich")
    with caplog.at_level("WARNING"):
        none = task_scene(unreadable, load_domain("ithor"), goals={})
    assert none.goal_source == "none" and none.goal == And(())
    assert "Make a sandwich" in caplog.text and none.warnings
    text = problem_text(none, load_domain("ithor"))
    assert "; goal from: none" in text and "; warning: task U2: no goal" in text


def test_the_reference_goal_is_an_explicit_labelled_option():
    task = replace(load_task("ithor#K01"), task_id="U3", source="mine.json",
                   instruction="Make a cup of coffee")
    domain = load_domain("ithor")
    asked = task_scene(task, domain, goals={}, goal_from_reference=True)
    assert asked.goal_source == "reference"
    assert "(turned-on CoffeeMachine)" in _goal(asked)
    assert "reaches it by construction" in problem_text(asked, domain)
    assert task_scene(task, domain, goals={}).goal_source == "none"


def test_a_task_record_or_a_goals_file_beside_the_task_set_gives_the_goal(tmp_path):
    import json
    record = {"task_id": "T1", "task_desc": "Make coffee", "scene": "FloorPlan1",
              "room": "kitchen", "obs": "You are in the kitchen.",
              "goal": "(filled Mug coffee)"}
    other = dict(record, task_id="T2", goal="")
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"samples": [record, other]}))
    (tmp_path / "mine.goals.toml").write_text(
        '[T2]\ninstruction = "Make coffee"\ngoal = "(turned-on CoffeeMachine)"\n')
    domain = load_domain("ithor")
    own, beside = (task_scene(t, domain) for t in load_taskset(str(path)))
    assert own.goal_source == "goals" and _goal(own) == "(filled Mug coffee)"
    assert beside.goal_source == "goals" and _goal(beside) == "(turned-on CoffeeMachine)"


def test_reference_evidence_is_recorded_with_its_step():
    x03 = _scene("ithor#X03")  # TurnOn Faucet before any move
    facts = x03.facts_from("reference")
    assert [f.atom for f in facts] == [("reachable", "Faucet")]
    assert "step 1" in facts[0].note
    l08 = _scene("ithor#L08")  # TurnOff of an unobserved DeskLamp succeeded: it was on,
    # as AI2-THOR's lamps start (catalogue `starts_on`), so the reference adds nothing
    lamp = next(f for f in l08.facts if f.atom == ("turned-on", "DeskLamp"))
    assert lamp.source == "observation" and "starts on" in lamp.note
    assert not l08.facts_from("reference")
    without = task_scene(load_task("ithor#X03"), load_domain("ithor"), use_reference=False)
    assert not without.facts_from("reference")


def test_unknown_types_are_reported():
    scene = _scene("ithor#A05")  # AI2-THOR has no Toothbrush: only named, so not declared
    assert scene.absent_types == ("Toothbrush",) and scene.unknown_types == ()
    task = load_task("ithor#A05")
    shown = task_scene(replace(task, visible_objects=(*task.visible_objects, "Toothbrush")),
                       load_domain("ithor"))  # a scene that shows one declares it
    assert shown.unknown_types == ("Toothbrush",) and shown.objects_of("Toothbrush")


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


def test_an_observed_synonym_names_the_type_its_instance_was_made_under():
    # "Lamp" may be a DeskLamp or a FloorLamp; the reference names the FloorLamp, so the
    # observed lamp is that instance, and its state and distance are read onto it (the
    # reference is not used as evidence here, so only the observation can say so)
    task = replace(load_task("ithor#B01"), task_id="S", scene="FloorPlan401", visible_objects=(),
                   obs="Holding: nothing\nNearby objects:\n  - Lamp [closed, off] (0.8m)",
                   reference_steps=({"action": "TurnOn", "object": "FloorLamp"},))
    scene = task_scene(task, load_domain("ithor"), use_reference=False)
    assert "DeskLamp" not in scene.things
    atoms = _atoms(scene)
    assert ("reachable", "FloorLamp") in atoms and ("turned-on", "FloorLamp") not in atoms


def test_an_instruction_read_for_the_goal_names_the_task_s_own_type():
    # no goal is written for this task: the reader reads the instruction, and "lamp" is the
    # FloorLamp the task lists, not the DeskLamp a lamp is by default
    task = replace(load_task("ithor#B01"), task_id="S", instruction="Turn on the lamp",
                   visible_objects=("FloorLamp",), expected_objects=())
    scene = task_scene(task, load_domain("ithor"), goals={})
    assert scene.goal_source == "instruction"
    assert " ".join(write_formula(scene.goal).split()) == "(turned-on FloorLamp)"


def test_a_reference_fact_does_not_let_k04_fill_the_pot_without_a_sink():
    """K04's reference turned the Faucet on right after reaching the Pot, so the faucet stood
    within reach of the pot (`beside`): that reaches the faucet, and gives no water. A plan
    that fills the pot without going to a sink is refused, as the scene-only world refuses it."""
    domain = load_domain("ithor")
    task = load_task("ithor#K04")
    with_reference = task_scene(task, domain)
    assert ("beside", "Faucet", "Pot") in _atoms(with_reference)
    assert not any(f.atom[0] == "near" for f in with_reference.facts_from("reference"))
    scene_only = task_scene(task, domain, use_reference=False)
    sinkless = ["MoveTo Pot", "Pick Pot", "Fill Pot", "MoveTo StoveBurner", "Place StoveBurner"]
    verdicts = [compile_gate(domain, scene_problem(scene, domain)).check(sinkless, mode="all")
                for scene in (with_reference, scene_only)]
    for verdict in verdicts:
        assert [(v.step, v.code) for v in verdict.violations] == [(2, "no-water")]
    assert not any(("filled", "pot", "water") in v.final_state for v in verdicts)
    gate = compile_gate(domain, scene_problem(with_reference, domain))
    assert gate.check(normalize_steps(task.reference_steps, domain)).valid
    at_the_sink = ["MoveTo Pot", "Pick Pot", "MoveTo Sink", "Fill Pot"]
    assert gate.check(at_the_sink).valid


BOIL = ["MoveTo Pot", "Pick Pot", "MoveTo Sink", "Fill Pot", "MoveTo StoveBurner",
        "Place StoveBurner"]
"""K04 (FloorPlan2: six burners, six knobs): water in the pot, the pot on a burner; then that
burner on is the goal's third condition."""


def _k04_gate(domain):
    return compile_gate(domain, task_problem(load_task("ithor#K04"), domain))


def test_a_knob_whose_burner_the_scene_does_not_name_heats_no_particular_burner():
    domain = load_domain("ithor")
    scene = _scene("ithor#K04")
    assert not any(atom[0] == "controls" for atom in _atoms(scene))
    reason = next(n for n in scene.notes if "StoveKnob" in n)
    assert "not known for FloorPlan2" in reason and "TurnOn StoveBurner" not in reason
    assert "switching that StoveBurner itself" in reason
    assert f"; note: {reason}" in problem_text(scene, domain)
    gate = _k04_gate(domain)
    by_knob = gate.check([*BOIL, "TurnOn StoveKnob"])
    assert by_knob.valid and not by_knob.goal_reached  # AI2-THOR runs the step; which burner?
    assert gate.goal_conditions(by_knob.final_state) == (2, 3)
    assert ("turned-on", "stoveknob_1") in by_knob.final_state
    assert not any(a[0] == "turned-on" and a[1].startswith("stoveburner")
                   for a in by_knob.final_state)
    by_burner = gate.check([*BOIL, "TurnOn StoveBurner"])
    assert by_burner.valid and by_burner.goal_reached


def test_a_pairing_the_scene_names_is_the_one_the_world_uses(monkeypatch):
    from sage_pddl.tasks import catalogue

    scenes = catalogue._scenes()
    named = replace(scenes["floorplan2"], controls=(("StoveKnob_3", "StoveBurner_1"),))
    monkeypatch.setitem(scenes, "floorplan2", named)
    domain = load_domain("ithor")
    scene = _scene("ithor#K04")
    assert ("controls", "StoveKnob_3", "StoveBurner_1") in _atoms(scene)
    assert next(f for f in scene.facts if f.atom[0] == "controls").source == "catalogue"
    gate = _k04_gate(domain)
    knob_3 = [*BOIL, "MoveTo StoveKnob_3", "TurnOn StoveKnob_3"]
    assert gate.check(knob_3).goal_reached  # the pot is on burner 1, which knob 3 switches
    not_its_knob = gate.check([*BOIL, "TurnOn StoveKnob_1"])  # no index rule
    assert not_its_knob.valid and not not_its_knob.goal_reached
    both = gate.check([*knob_3, "TurnOff StoveBurner"])
    assert not {("turned-on", "stoveknob_3"), ("turned-on", "stoveburner_1")} & both.final_state
    wrong = replace(named, controls=(("StoveKnob_9", "StoveBurner_1"),))
    monkeypatch.setitem(scenes, "floorplan2", wrong)
    with pytest.raises(TaskSetError, match=r"scenes.toml \[FloorPlan2\] controls: StoveKnob_9"):
        _scene("ithor#K04")
    monkeypatch.setitem(scenes, "floorplan2", replace(named, controls=(("StoveKnob_1", "Pot"),)))
    with pytest.raises(TaskSetError, match="a StoveKnob does not switch a Pot"):
        _scene("ithor#K04")


def test_any_knob_or_burner_on_turns_the_stove_on_and_off_means_every_one_off():
    domain = load_domain("ithor")
    k02 = compile_gate(domain, task_problem(load_task("ithor#K02"), domain))
    for switch in ("TurnOn StoveKnob", "TurnOn StoveBurner"):
        assert k02.check(["MoveTo StoveBurner", switch]).goal_reached, switch
    off = replace(load_task("ithor#K02"), instruction="Turn off the stove",
                  goal="(not (or (turned-on StoveBurner) (turned-on StoveKnob)))")
    gate = compile_gate(domain, task_problem(off, domain))
    assert gate.check([]).goal_reached
    knob_on = gate.check(["MoveTo StoveBurner", "TurnOn StoveKnob", "Wait"])
    assert knob_on.valid and not knob_on.goal_reached  # some burner is on, which is unknown
    assert gate.check(["MoveTo StoveBurner", "TurnOn StoveKnob", "TurnOff StoveKnob"]).goal_reached


def test_a_tasks_objects_and_its_scenes_list_never_disagree_silently():
    """Issue 42: FloorPlan401's list lacked the SideTable that A15 and A17 observe (AI2-THOR 5
    has it: data/ai2thor/scenes.toml says where from). Every bundled task agrees with its
    scene's data; a task that does not is built with a warning naming the type."""
    import dataclasses

    from sage_pddl.tasks import load_task, load_taskset

    for name in ("ithor", "ithor-gt"):
        for task in load_taskset(name):
            scene = task_scene(task, load_domain(task.domain), use_reference=False)
            assert not [w for w in scene.warnings if "does not list" in w], task.task_id
    a15 = task_scene(load_task("ithor#A15"), load_domain("ithor"))
    assert "SideTable" in a15.things
    odd = dataclasses.replace(load_task("ithor#A15"), task_id="T-odd",
                              visible_objects=("Candle", "SideTable", "Fridge"))
    warned = task_scene(odd, load_domain("ithor"), use_reference=False).warnings
    assert any("observation shows Fridge, which data/ai2thor/scenes.toml does not list for "
               "FloorPlan401" in w for w in warned)


def test_what_a_reference_proves_is_kept_across_processes_and_read_back_equal(
        monkeypatch, tmp_path):
    """Each task's explanation of its reference is kept in the private cache directory, one file
    per domain and package; a new process (an empty in-process table here) reads it back and
    builds every bundled scene equal to the one worked out, without checking a reference; a
    broken file or entry costs the work again, never an error."""
    from sage_pddl.tasks import evidence

    monkeypatch.setenv("SAGE_PDDL_CACHE", str(tmp_path / "cache"))
    tasks = [*load_taskset("ithor"), *load_taskset("procthor")]
    domains = {name: load_domain(name) for name in {t.domain for t in tasks}}
    worked: list[str] = []
    real = evidence._explain
    monkeypatch.setattr(evidence, "_explain",
                        lambda task, *rest: worked.append(task.task_id) or real(task, *rest))

    def new_process() -> list:
        monkeypatch.setattr(evidence, "_KEPT", {})
        worked.clear()
        return [task_scene(t, domains[t.domain]) for t in tasks]

    first = new_process()
    assert len(worked) == len(tasks)
    assert any(f.source == "reference" for scene in first for f in scene.facts)
    kept = sorted((tmp_path / "cache").glob("evidence-*.json"))
    assert len(kept) == len(domains)
    assert new_process() == first and not worked
    kept[0].write_bytes(b'{"x": [1')
    assert new_process() == first and worked
    entries = json.loads(kept[1].read_text())
    kept[1].write_text(json.dumps({key: {"removed": 3} for key in entries}))
    assert new_process() == first and worked
