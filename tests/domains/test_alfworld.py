"""The ALFWorld domain: its command semantics, ALFRED trajectories translated into it, and
agreement with unified-planning."""
from __future__ import annotations

from pathlib import Path

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.gate import compile_gate
from sage_pddl.pddl import SageError, check_domain, errors_of, parse_problem, write_problem
from sage_pddl.tasks.alfred import find_trajectories, translate_trajectory
from sage_pddl.tasks.alfworld_commands import alfworld_command, parse_alfworld_command

TRAJECTORIES = Path(__file__).resolve().parents[1] / "fixtures" / "household" / "alfred-traj"

KITCHEN = """\
(define (problem kitchen) (:domain alfworld)
  (:objects apple_1 knife_1 mug_1 - item
            countertop_1 fridge_1 microwave_1 sinkbasin_1 cabinet_1 - receptacle
            AppleType MugType - otype
            CounterTopType CabinetType - rtype)
  (:init
    (receptacleType countertop_1 CounterTopType) (receptacleType fridge_1 FridgeType)
    (receptacleType microwave_1 MicrowaveType) (receptacleType sinkbasin_1 SinkBasinType)
    (receptacleType cabinet_1 CabinetType)
    (openable fridge_1) (openable microwave_1) (openable cabinet_1)
    (objectType apple_1 AppleType) (objectType knife_1 KnifeType) (objectType mug_1 MugType)
    (pickupable apple_1) (pickupable knife_1) (pickupable mug_1)
    (heatable apple_1) (coolable apple_1) (cleanable apple_1) (sliceable apple_1)
    (inReceptacle apple_1 fridge_1) (inReceptacle knife_1 countertop_1)
    (inReceptacle mug_1 countertop_1)
    (canContain CounterTopType AppleType) (canContain CounterTopType MugType)
    (canContain CabinetType MugType))
  (:goal (and (isHot apple_1) (inReceptacle apple_1 countertop_1))))
"""


@pytest.fixture(scope="module")
def domain():
    return load_domain("alfworld")


@pytest.fixture(scope="module")
def gate(domain):
    return compile_gate(domain, parse_problem(KITCHEN))


def steps(*commands: str):
    return [parse_alfworld_command(c, i) for i, c in enumerate(commands)]


def test_domain_is_clean(domain):
    assert errors_of(check_domain(domain)) == []
    assert {a.name for a in domain.actions} == {
        "GoTo", "Open", "Close", "Take", "Put", "Toggle", "Heat", "Cool", "Clean", "Slice",
        "Examine", "Look", "Inventory"}


def test_expert_style_plan_is_valid(gate):
    verdict = gate.check(steps(
        "go to fridge 1", "open fridge 1", "take apple 1 from fridge 1", "close fridge 1",
        "go to microwave 1", "heat apple 1 with microwave 1", "go to countertop 1",
        "move apple 1 to countertop 1", "examine apple 1", "look", "inventory"))
    assert verdict.valid, verdict.violations
    assert verdict.goal_reached


@pytest.mark.parametrize("commands, code", [
    (("go to fridge 1", "take apple 1 from fridge 1"), "receptacle-closed"),
    (("take knife 1 from countertop 1",), "not-at-receptacle"),
    (("go to countertop 1", "take knife 1 from countertop 1", "take mug 1 from countertop 1"),
     "hand-full"),
    (("go to countertop 1", "take apple 1 from countertop 1"), "not-in-receptacle"),
    (("go to countertop 1", "move apple 1 to countertop 1"), "not-holding"),
    (("go to countertop 1", "take knife 1 from countertop 1", "go to sinkbasin 1",
      "heat knife 1 with sinkbasin 1"), "not-heatable"),
    (("go to fridge 1", "open fridge 1", "take apple 1 from fridge 1", "go to sinkbasin 1",
      "heat apple 1 with sinkbasin 1"), "not-a-microwave"),
    (("go to fridge 1", "open fridge 1", "take apple 1 from fridge 1",
      "cool apple 1 with microwave 1"), "not-a-fridge"),
    (("go to countertop 1", "open countertop 1"), "not-openable"),
    (("go to fridge 1", "close fridge 1"), "already-closed"),
    (("go to fridge 1", "open fridge 1", "open fridge 1"), "already-open"),
    (("go to countertop 1", "use mug 1"), "not-toggleable"),
])
def test_alfworld_rejections_name_the_reason(gate, commands, code):
    verdict = gate.check(steps(*commands))
    assert not verdict.valid
    assert verdict.violations[0].step == len(commands) - 1
    assert verdict.violations[0].code == code


def test_put_requires_a_compatible_receptacle(gate):
    verdict = gate.check(steps("go to fridge 1", "open fridge 1", "take apple 1 from fridge 1",
                               "go to cabinet 1", "open cabinet 1", "move apple 1 to cabinet 1"))
    assert not verdict.valid and verdict.violations[0].step == 5
    ok = gate.check(steps("go to countertop 1", "take mug 1 from countertop 1", "go to cabinet 1",
                          "open cabinet 1", "move mug 1 to cabinet 1"))
    assert ok.valid


def test_slice_needs_a_held_knife_where_the_object_is(gate):
    sliced = gate.check(steps("go to countertop 1", "take knife 1 from countertop 1",
                              "go to fridge 1", "open fridge 1", "slice apple 1 with knife 1"))
    assert sliced.valid and ("issliced", "apple_1") in sliced.final_state
    away = gate.check(steps("go to countertop 1", "take knife 1 from countertop 1",
                            "slice apple 1 with knife 1"))
    assert not away.valid


def test_aliases_and_json_steps(gate):
    verdict = gate.check([
        {"action": "GotoLocation", "object": "countertop_1", "target": ""},
        {"action": "PickupObject", "object": "mug_1", "target": "countertop_1"},
        {"action": "MoveTo", "object": "cabinet_1", "target": ""},
        {"action": "OpenObject", "object": "cabinet_1", "target": ""},
        {"action": "Place", "object": "mug_1", "target": "cabinet_1"},
    ])
    assert verdict.valid, verdict.violations


def test_command_text_round_trip():
    for text in ("go to countertop 1", "take apple 1 from fridge 1", "move apple 1 to countertop 1",
                 "use desklamp 1", "heat apple 1 with microwave 1", "slice apple 1 with knife 2",
                 "examine drawer 3", "look", "inventory"):
        assert alfworld_command(parse_alfworld_command(text)) == text
    put = parse_alfworld_command("put apple 1 in/on countertop 1")
    assert (put.action, put.args) == ("Put", ("apple_1", "countertop_1"))
    with pytest.raises(SageError, match="not an ALFWorld command"):
        parse_alfworld_command("dance with the fridge")


# --- ALFRED expert trajectories ------------------------------------------------------------------

def episodes():
    return {p.parent.name.split("-")[0]: translate_trajectory(p) for p in find_trajectories(TRAJECTORIES)}


@pytest.fixture(scope="module")
def alfred():
    found = episodes()
    assert len(found) == 7
    return found


def test_alfred_expert_plans_pass_the_gate(domain, alfred):
    passing = []
    for task_type, episode in alfred.items():
        verdict = compile_gate(domain, episode.problem).check(episode.plan)
        if verdict.valid and verdict.goal_reached:
            passing.append(task_type)
    assert sorted(passing) == [
        "look_at_obj_in_light", "pick_and_place_simple", "pick_clean_then_place_in_recep",
        "pick_cool_then_place_in_recep", "pick_heat_then_place_in_recep", "pick_two_obj_and_place"]


def test_movable_receptacle_task_is_outside_alfworld(domain, alfred):
    # ALFWorld leaves this task type out: its domain cannot put an item into a carried pan.
    episode = alfred["pick_and_place_with_movable_recep"]
    verdict = compile_gate(domain, episode.problem).check(episode.plan)
    assert not verdict.valid
    assert verdict.violations[0].code == "type-mismatch"
    assert episode.commands[verdict.violations[0].step] == "move apple 1 to pan 1"


def test_alfred_translation_uses_low_level_open_close(alfred):
    cool = alfred["pick_cool_then_place_in_recep"]
    assert cool.commands == (
        "go to microwave 1", "open microwave 1", "take apple 1 from microwave 1",
        "close microwave 1", "go to fridge 1", "cool apple 1 with fridge 1", "go to countertop 1",
        "move apple 1 to countertop 1")
    assert cool.notes == ()
    look = alfred["look_at_obj_in_light"]
    assert any("desklamp_1" in note for note in look.notes)


def test_breaking_an_alfred_plan_is_caught(domain, alfred):
    episode = alfred["pick_cool_then_place_in_recep"]
    without_open = [s for s in episode.plan if s.action != "Open"]
    verdict = compile_gate(domain, episode.problem).check(without_open)
    assert not verdict.valid and verdict.violations[0].code == "receptacle-closed"


def _up_verdicts(problem, *plans) -> list[str]:
    """unified-planning's verdicts on plans for one problem (its PDDL reader takes ~2 s a file)."""
    up_io = pytest.importorskip("unified_planning.io")
    engines = pytest.importorskip("unified_planning.engines")
    domain_text = (Path(__file__).resolve().parents[2] / "domains" / "alfworld.pddl").read_text()
    reader = up_io.PDDLReader()
    up_problem = reader.parse_problem_string(domain_text, write_problem(problem))
    verdicts = []
    with engines.SequentialPlanValidator() as validator:
        for plan in plans:
            up_plan = reader.parse_plan_string(
                up_problem, "\n".join(f"({' '.join((s.action, *s.args))})" for s in plan))
            verdicts.append(validator.validate(up_problem, up_plan).status.name)
    return verdicts


def test_unified_planning_reads_the_domain_and_agrees():
    # Without the scene's distractor objects, to keep unified-planning's reader quick.
    episode = translate_trajectory(
        next(TRAJECTORIES.glob("pick_cool_then_place_in_recep-*")), distractors=False)
    without_open = [s for s in episode.plan if s.action != "Open"]
    assert _up_verdicts(episode.problem, episode.plan, without_open) == ["VALID", "INVALID"]


@pytest.mark.slow
def test_unified_planning_agrees_on_every_alfred_trajectory(domain, alfred):
    for task_type, episode in alfred.items():
        if task_type == "pick_and_place_with_movable_recep":
            continue  # unified-planning refuses the plan text itself (pan_1 is no receptacle)
        ours = compile_gate(domain, episode.problem).check(episode.plan)
        assert _up_verdicts(episode.problem, episode.plan) == ["VALID" if ours.valid else "INVALID"]
