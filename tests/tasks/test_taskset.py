"""Task sets: bundled names, references, step normalisation, compound tasks."""
from __future__ import annotations

import json

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.tasks import TaskSetError, load_task, load_taskset, normalize_steps
from sage_pddl.tasks.compound import compose, compound_tasks, to_record


def test_bundled_sets_have_the_papers_sizes():
    assert len(load_taskset("ithor")) == 75
    assert len(load_taskset("ithor-gt")) == 38
    procthor = load_taskset("procthor")
    assert len(procthor) == 20
    assert {t.domain for t in procthor} == {"procthor"}
    assert {t.domain for t in load_taskset("ithor")} == {"ithor"}


def test_task_fields_come_from_the_record():
    task = load_task("ithor#K01")
    assert task.instruction == "Make a cup of coffee using the coffee machine"
    assert task.scene == "FloorPlan1"
    assert task.expected_objects == ("Mug", "CoffeeMachine")
    assert task.reference_steps[1]["action"] == "Grab"
    assert task.fail_injection is None
    assert load_task("ithor#K04").fail_injection["at_step"] == 3


def test_load_task_by_path(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"samples": [{"task_id": "T1", "task_desc": "Open the box",
                                             "scene": "FloorPlan201", "obs": ""}]}))
    assert load_task(f"{path}#T1").instruction == "Open the box"
    assert load_taskset(path)[0].domain == "ithor"


@pytest.mark.parametrize("ref", ["ithor", "ithor#NOPE", "no-such-file.json#K01"])
def test_bad_references_raise_a_sage_error(ref):
    with pytest.raises(TaskSetError):
        load_task(ref)


def test_normalize_steps_uses_the_domain_aliases():
    domain = load_domain("ithor")
    steps = [{"action": "Navigate", "object": "Mug"}, {"action": "grab", "object": "Mug"},
             {"action": "turn_on", "object": "CoffeeMachine"}, {"action": "Put", "object": "X"},
             {"action": "Toggle", "object": "Lamp"}]
    assert [s["action"] for s in normalize_steps(steps, domain)] == [
        "MoveTo", "Pick", "TurnOn", "Place", "Toggle"]
    assert steps[0]["action"] == "Navigate"  # copies, not in place


def test_compound_tasks_follow_the_papers_generator():
    tasks = load_taskset("ithor")
    compounds = compound_tasks(tasks)
    assert len(compounds) == 74
    assert sum(len(c.members) == 2 for c in compounds) == 45
    assert sum(len(c.members) == 3 for c in compounds) == 29
    first = compounds[0]
    members = [t for t in tasks if t.task_id in first.members]
    assert first.task_id == "C2_" + "+".join(first.members)
    assert first.instruction.startswith("First, ") and ". Then, " in first.instruction
    assert first.reference_steps == members[0].reference_steps + members[1].reference_steps
    triple = next(c for c in compounds if len(c.members) == 3)
    assert " Finally, " in triple.instruction and triple.difficulty == "compound3"


def test_compound_record_round_trips(tmp_path):
    tasks = load_taskset("ithor")
    task = compose([tasks[0], tasks[1]])
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"samples": [to_record(task)]}))
    again = load_taskset(path)[0]
    assert again.members == task.members
    assert again.reference_steps == task.reference_steps
