"""The placement setting (`forced`: AI2-THOR's forceAction on, `typed`: off), one for a run:
what each accepts, that it reaches the problem (facts and header), the gate and the symbolic
world, and that a sliced object counts as its sliced type (issue 42)."""
from __future__ import annotations

import dataclasses
import tomllib
from importlib import resources

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.env.symbolic import SymbolicEnv
from sage_pddl.gate import compile_gate
from sage_pddl.pddl.model import Atom
from sage_pddl.tasks import load_task, load_taskset, task_problem
from sage_pddl.tasks.catalogue import fits, selective, sliced_type
from sage_pddl.tasks.placement import (
    VERIFIED_WITH,
    task_placement,
    with_placement,
)
from sage_pddl.tasks.problem import problem_text, task_scene
from sage_pddl.tasks.taskset import TaskSetError
from tests.steps import as_step


def _step(action: str, obj: str = "") -> dict[str, str]:
    return {"action": action, "object": obj, "target": ""}


def _under(ref: str, placement: str):
    task = dataclasses.replace(load_task(ref), placement=placement)
    domain = load_domain(task.domain)
    return task, domain, task_problem(task, domain)


PENCIL_ON_BED = [_step("Find", "Pencil"), _step("Pick", "Pencil"), _step("MoveTo", "Bed"),
                 _step("Place", "Bed")]
"""A simulator-verified placement (held-out ProcTHOR references put a pencil on a bed with
forceAction on); FloorPlan301 (B01) has a Pencil and a Bed."""


def test_a_simulator_verified_placement_is_accepted_forced_and_refused_typed():
    for placement, valid in (("forced", True), ("typed", False)):
        _, domain, problem = _under("ithor#B01", placement)
        verdict = compile_gate(domain, problem).check(PENCIL_ON_BED)
        assert verdict.valid is valid, (placement, verdict.violations)
        if not valid:
            assert [(v.step, v.code) for v in verdict.violations] == [(3, "does-not-fit")]


@pytest.mark.parametrize("placement", ["forced", "typed"])
def test_a_pot_into_a_mug_is_refused_under_both(placement):
    _, domain, problem = _under("ithor#K01", placement)
    plan = [_step("Find", "Pot"), _step("Pick", "Pot"), _step("Find", "Mug"),
            _step("PutIn", "Mug")]
    verdict = compile_gate(domain, problem).check(plan)
    assert [(v.step, v.code) for v in verdict.violations] == [(3, "does-not-fit")]


@pytest.mark.parametrize("placement", ["forced", "typed"])
def test_a_non_receptacle_target_is_refused_under_both(placement):
    _, domain, problem = _under("ithor#K01", placement)
    plan = [_step("Find", "Apple"), _step("Pick", "Apple"), _step("Place", "Knife")]
    verdict = compile_gate(domain, problem).check(plan)
    assert [v.code for v in verdict.violations] == ["not-receptacle"]


def test_what_each_setting_accepts():
    # typed: AI2-THOR's default compatible receptacles
    assert not fits("Pencil", "Bed") and not fits("Apple", "Cabinet")
    assert fits("Book", "Bed") and fits("Apple", "Desk")
    # forced: everything that enters, but object-specific receptacles keep their own types
    assert fits("Pencil", "Bed", "forced") and fits("Apple", "Cabinet", "forced")
    assert fits("Candle", "Safe", "forced") and fits("Box", "Safe", "forced")
    assert fits("CellPhone", "Microwave", "forced") and fits("ButterKnife", "Fridge", "forced")
    assert fits("Candle", "GarbageCan", "forced")
    assert not fits("Pot", "Mug", "forced") and fits("Pencil", "Mug", "forced")
    assert not fits("Apple", "Toaster", "forced") and fits("BreadSliced", "Toaster", "forced")
    assert not fits("Apple", "CoffeeMachine", "forced")
    assert selective("Mug", "forced") and not selective("Bed", "forced")
    assert not selective("Cabinet", "forced") and selective("Cabinet", "typed")


def test_forced_accepts_every_placement_a_verified_reference_made_and_all_typed_does():
    path = resources.files("sage_pddl") / "data" / "ai2thor" / "placement.toml"
    verified = tomllib.loads(path.read_text(encoding="utf-8"))["verified"]
    pairs = [(o, r) for r, objects in verified.items() for o in objects.split()]
    assert pairs and all(fits(o, r, "forced") and not fits(o, r, "typed") for o, r in pairs)
    receptacles = tomllib.loads((resources.files("sage_pddl") / "data" / "ai2thor"
                                 / "receptacles.toml").read_text(encoding="utf-8"))["accepts"]
    for receptacle, objects in receptacles.items():
        assert all(fits(o, receptacle, "forced") for o in objects.split()), receptacle


def test_the_setting_reaches_the_problem_header_and_facts():
    task, domain, problem = _under("ithor#K01", "typed")
    assert Atom("forced-placement", ()) not in problem.init
    assert "; placement: typed (" in problem_text(task_scene(task, domain), domain)
    task, domain, problem = _under("ithor#K01", "forced")
    assert Atom("forced-placement", ()) in problem.init
    assert "; placement: forced (" in problem_text(task_scene(task, domain), domain)


def test_each_bundled_set_defaults_to_the_setting_its_references_were_verified_with():
    for name in ("ithor", "procthor"):
        task = load_taskset(name)[0]
        assert task.placement == "" and task_placement(task) == VERIFIED_WITH[name] == "forced"
    assert [t.placement for t in with_placement(load_taskset("procthor")[:2], "typed")] == [
        "typed", "typed"]
    with pytest.raises(TaskSetError, match="no placement setting"):
        with_placement(load_taskset("procthor")[:1], "loose")


def test_the_symbolic_world_refuses_what_the_gate_refuses():
    for placement, succeeds in (("forced", True), ("typed", False)):
        _, domain, problem = _under("ithor#B01", placement)
        env = SymbolicEnv(domain)
        env.reset(problem)
        results = [env.step(as_step(step)) for step in PENCIL_ON_BED]
        assert [r.success for r in results] == [True, True, True, succeeds]


SLICED_BREAD_TO_TOASTER = [
    _step("Find", "Knife"), _step("Pick", "Knife"), _step("Find", "Bread"),
    _step("Slice", "Bread"), _step("Find", "CounterTop"), _step("Place", "CounterTop"),
    _step("Pick", "Bread"), _step("MoveTo", "Toaster"), _step("PutIn", "Toaster")]


@pytest.mark.parametrize("placement", ["forced", "typed"])
def test_sliced_bread_goes_into_the_toaster_and_whole_bread_does_not(placement):
    _, domain, problem = _under("ithor#K01", placement)
    gate = compile_gate(domain, problem)
    assert gate.check(SLICED_BREAD_TO_TOASTER).valid, gate.check(SLICED_BREAD_TO_TOASTER)
    whole = [s for s in SLICED_BREAD_TO_TOASTER if s["action"] != "Slice"]
    assert [v.code for v in gate.check(whole).violations] == ["does-not-fit"]


def test_slicing_gives_ai2thors_sliced_types():
    assert sliced_type("Bread") == "BreadSliced" and sliced_type("egg") == "EggCracked"
    assert sliced_type("Mug") is None


def test_a_goal_naming_a_sliced_type_means_the_object_once_sliced():
    task = dataclasses.replace(load_task("ithor#K01"), task_id="T-toast",
                               instruction="Put a slice of bread in the toaster",
                               goal="(inside BreadSliced Toaster)")
    domain = load_domain("ithor")
    scene = task_scene(task, domain)
    assert not scene.infeasible and "BreadSliced" not in scene.things
    gate = compile_gate(domain, task_problem(task, domain))
    assert gate.check(SLICED_BREAD_TO_TOASTER).goal_reached is True
    unsliced = [_step("Find", "Bread"), _step("Pick", "Bread"), _step("MoveTo", "CounterTop"),
                _step("Place", "CounterTop")]
    assert gate.check(unsliced).goal_reached is False
