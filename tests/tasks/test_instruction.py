"""The instruction reader: common ALFRED and AI2-THOR phrasings, the bundled sets' phrasings,
and instructions it must refuse to guess; and its agreement with the reviewed goals."""
from __future__ import annotations

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.pddl.model import Domain
from sage_pddl.pddl.writer import write_formula
from sage_pddl.tasks import load_taskset, read_instruction, task_scene
from sage_pddl.tasks.goals import compile_goal


def text(instruction: str, prefer=()) -> str | None:
    reading = read_instruction(instruction, prefer)
    return None if reading.goal is None else " ".join(write_formula(reading.goal).split())


def test_object_words_are_the_domains_synonyms_and_everyday_words():
    # `; @sage synonym SideTable BedsideTable ...`, `Television TV`: the domain's table
    assert text("Put the book on the bedside table") == "(on Book SideTable)"
    assert text("Turn on the TV") == "(turned-on Television)"
    # "lamp" names no object (a plan step "TurnOn Lamp" stays unknown): an everyday word
    assert text("Turn off the lamp", ("FloorLamp",)) == "(not (turned-on FloorLamp))"
    assert read_instruction("Turn on the TV", (), Domain(name="bare")).goal is None


@pytest.mark.parametrize("instruction,goal", [
    ("Put the apple in the fridge", "(inside Apple Fridge)"),
    ("Place a mug on the counter top", "(on Mug CounterTop)"),
    ("Put a washed apple in the fridge.", "(and (cleaned Apple) (inside Apple Fridge))"),
    ("Put a clean sponge on the counter.", "(and (cleaned DishSponge) (on DishSponge CounterTop))"),
    ("Heat the potato", "(heated Potato)"),
    ("Cool the tomato in the fridge", "(cooled Tomato)"),
    ("Rinse off the plate", "(cleaned Plate)"),
    ("Clean the mug", "(cleaned Mug)"),
    ("Slice the bread with the knife", "(sliced Bread)"),
    ("Cut the lettuce", "(sliced Lettuce)"),
    ("Fill the cup with water", "(filled Cup water)"),
    ("Fill the mug with coffee", "(filled Mug coffee)"),
    ("Fill the kettle", "(filled Kettle water)"),
    ("Cook the potato", "(cooked Potato)"),
    ("Turn on the lamp", "(turned-on DeskLamp)"),
    ("Switch the television off", "(not (turned-on Television))"),
    ("Open the drawer, then close the fridge", "(and (opened Drawer) (closed Fridge))"),
    ("Pick up the credit card", "(holding CreditCard)"),
    ("Grab the remote", "(holding RemoteControl)"),
    ("Bring the book to the sofa", "(on Book Sofa)"),
    ("Take the pillow to the bed", "(on Pillow Bed)"),
    ("Examine the alarm clock under the desk lamp",
     "(and (holding AlarmClock) (turned-on DeskLamp))"),
    ("Put the apple in the cabinet and close it",
     "(and (inside Apple Cabinet) (exists (?r - Cabinet) (and (inside Apple ?r) (closed ?r))))"),
    ("Take a towel and hang it on the rack", "(on Towel TowelHolder)"),
    ("Watch TV — turn it on and sit on the sofa", "(and (turned-on Television) (sat-on Sofa))"),
    ("Lie down on the bed", "(lying-on Bed)"),
])
def test_phrasings_it_reads(instruction, goal):
    assert text(instruction) == goal


def test_a_word_with_several_types_follows_the_scene():
    assert text("Turn on the lamp", prefer=("FloorLamp",)) == "(turned-on FloorLamp)"


@pytest.mark.parametrize("instruction,unread", [
    ("Make a cup of coffee using the coffee machine", None),
    ("Heat food in the microwave", None),  # "food" names no AI2-THOR type
    ("Place soap in the cabinet under the sink", None),  # "under the sink" cannot be said
    ("Prepare for bed: set alarm, turn off light, lie down", "set alarm"),
    ("Put the apple in the fridge and make a sandwich", "make a sandwich"),
    ("Put the toothbrush in the cup", None),  # no Toothbrush type
])
def test_it_never_guesses(instruction, unread):
    reading = read_instruction(instruction)
    assert reading.goal is None and reading.unread
    if unread:
        assert unread in reading.unread


def test_where_it_reads_a_bundled_instruction_it_agrees_with_the_reviewed_goal():
    """A second opinion on the written goals: of the 95 bundled tasks the reader reads 81 and
    agrees on all but three, whose written goals read the instruction more carefully (K02: a
    knob on also turns a burner on, where the scene does not say which; K05: 'cook' as the egg
    in a pan on a burner that is on; A01: the shower is the ShowerHead where the task's
    expected objects say Faucet)."""
    read, differ = 0, []
    for set_name in ("ithor", "procthor"):
        for task in load_taskset(set_name):
            domain = load_domain(task.domain)
            scene = task_scene(task, domain)
            reading = read_instruction(task.instruction,
                                       (*task.visible_objects, *task.expected_objects))
            if reading.goal is None:
                continue
            read += 1
            mine = compile_goal(reading.goal, dict(scene.instances), domain,
                                absent=scene.absent_types)
            if write_formula(mine) != write_formula(scene.goal):
                differ.append(task.task_id)
    assert read == 81 and differ == ["K02", "K05", "A01"]


def test_a_goal_read_from_the_instruction_is_flat_and_free_of_repeats():
    """Issue 42: "put X in the fridge and close it" compiled to (and (inside X Fridge) (and
    (inside X Fridge) (closed Fridge))), counting the placement twice."""
    import dataclasses

    from sage_pddl.domains import load_domain
    from sage_pddl.pddl.model import And
    from sage_pddl.pddl.writer import write_formula
    from sage_pddl.tasks import load_task
    from sage_pddl.tasks.problem import task_scene

    task = dataclasses.replace(load_task("ithor#K01"), task_id="T-knife", goal="",
                               instruction="Put the butter knife in the fridge and close it",
                               reference_steps=())
    scene = task_scene(task, load_domain("ithor"))
    assert scene.goal_source == "instruction"
    assert write_formula(scene.goal) == "(and (inside ButterKnife Fridge) (closed Fridge))"
    assert isinstance(scene.goal, And) and not any(isinstance(p, And) for p in scene.goal.parts)
