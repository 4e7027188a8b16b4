"""AlfworldEnv on TextWorld's PDDL engine (needs the `alfworld` extra: textworld[pddl]).

The kitchen problem below is written here for the bundled `alfworld` domain. The corpus test uses
TextWorld's own ALFWorld test game (microsoft/TextWorld @ ebae03b, MIT), read from ../shared.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from sage_pddl.env import textworld as textworld_module
from sage_pddl.env.alfworld import AlfworldEnv
from sage_pddl.env.base import EnvError
from sage_pddl.env.textworld import SETUP_COMMAND, require_textworld
from sage_pddl.env.transitions import read_transitions
from sage_pddl.pddl import parse_problem
from tests.steps import as_step

KITCHEN = """
(define (problem heat-apple)
  (:domain alfworld)
  (:objects
    countertop_1 fridge_1 microwave_1 - receptacle
    apple_1 mug_1 - item
    CounterTopType - rtype
    AppleType MugType - otype)
  (:init
    (receptacleType countertop_1 CounterTopType)
    (receptacleType fridge_1 FridgeType)
    (receptacleType microwave_1 MicrowaveType)
    (objectType apple_1 AppleType) (objectType mug_1 MugType)
    (canContain CounterTopType AppleType) (canContain CounterTopType MugType)
    (canContain FridgeType AppleType)
    (openable fridge_1) (openable microwave_1)
    (pickupable apple_1) (pickupable mug_1) (heatable apple_1)
    (inReceptacle apple_1 fridge_1)
    (inReceptacle mug_1 countertop_1))
  (:goal (and (isHot apple_1) (inReceptacle apple_1 countertop_1))))
"""

SOLUTION = ["GoTo fridge_1", "Open fridge_1", {"action": "Pick", "object": "apple_1",
                                                "target": "fridge_1"},
            "GotoLocation microwave_1", "Heat apple_1 microwave_1", "go to countertop_1",
            "Put apple_1 countertop_1"]


def test_a_missing_environment_names_the_setup_command(monkeypatch, tmp_path):
    monkeypatch.setenv("SAGE_PDDL_ALFWORLD_ENV", str(tmp_path / "absent"))
    monkeypatch.setattr(textworld_module, "_here_has_textworld", lambda: False)
    with pytest.raises(EnvError, match=rf"{tmp_path / 'absent'} does not exist: run "
                                       rf"`{re.escape(SETUP_COMMAND)}`"):
        AlfworldEnv()
    (tmp_path / "absent").mkdir()  # made, but setup did not finish
    with pytest.raises(EnvError, match=r"is not ready \(setup did not finish\)"):
        require_textworld()


def test_run_without_the_environment_exits_2_naming_the_setup_command(tmp_path):
    if textworld_module.textworld_available():
        pytest.skip("ALFWorld's environment is set up here")
    done = subprocess.run(
        [sys.executable, "-m", "sage_pddl", "run",
         "alfworld#pick_heat_then_place_in_recep-Apple-None-DiningTable-26", "--env", "alfworld",
         "--llm", "scripted"], capture_output=True, text=True, timeout=300,
        env={**os.environ, "SAGE_PDDL_ALFWORLD_ENV": str(tmp_path / "none")})
    assert done.returncode == 2
    assert f"run `{SETUP_COMMAND}` once" in done.stderr and "Traceback" not in done.stderr


@pytest.fixture(scope="module")
def kitchen():
    return parse_problem(KITCHEN, file="heat-apple.pddl")


@pytest.mark.alfworld
def test_solution_wins_with_real_text_and_admissible_commands(kitchen, tmp_path):
    log = tmp_path / "alfworld.jsonl"
    env = AlfworldEnv(log=log)
    first = env.reset(kitchen)
    assert "you see a countertop_1, a fridge_1, and a microwave_1" in first.text
    assert env.admissible_commands == ["go to countertop_1", "go to fridge_1",
                                       "go to microwave_1", "look"]
    assert first.facts == ()  # TextWorld knows everything; the agent is not told
    texts = []
    for step in SOLUTION:
        result = env.step(as_step(step))
        assert result.success, (step, result.message)
        texts.append(result.observation.text)
    assert texts[1] == "You open the fridge_1. The fridge_1 is open. In it, you see a apple_1."
    assert texts[2] == "You pick up the apple_1 from the fridge_1."
    assert texts[-1] == "You move the apple_1 to the countertop_1."
    assert env.goal_reached() is True
    assert ("ishot", "apple_1") in env.true_state()
    env.close()
    records = list(read_transitions(log))
    assert len(records) == len(SOLUTION) and all(r.success for r in records)
    assert ("inreceptacle", "apple_1", "countertop_1") in records[-1].post


@pytest.mark.alfworld
def test_inadmissible_steps_fail_with_textworlds_answer(kitchen):
    env = AlfworldEnv()
    env.reset(kitchen)
    closed = env.step(as_step("Take apple_1 fridge_1"))  # not at the fridge, and it is closed
    assert not closed.success and closed.code == "not-admissible"
    assert "Nothing happens." in closed.message and "take apple_1 from fridge_1" in closed.message
    env.step(as_step("go to fridge_1"))
    still_closed = env.step(as_step({"action": "Take", "object": "apple_1", "target": "fridge_1"}))
    assert not still_closed.success
    unknown = env.step(as_step({"action": "Fly", "object": "fridge_1"}))
    assert unknown.code == "unknown-action"
    assert env.step(as_step("Fly fridge_1")).code == "not-admissible"  # typed text: TextWorld's call
    typed = env.step(as_step("take apple_1 from the fridge"))
    assert typed.code == "not-admissible"
    assert env.goal_reached() is False


@pytest.mark.alfworld
def test_alfworlds_own_command_wording_is_read_as_the_step_it_says(kitchen):
    env = AlfworldEnv()
    env.reset(kitchen)
    for text, said in (("go to fridge 1", "You arrive at fridge_1."),
                       ("open fridge 1", "You open the fridge_1."),
                       ("take apple 1 from fridge 1", "You pick up the apple_1 from the fridge_1.")):
        result = env.step(as_step(text))
        assert result.success and result.observation.text.startswith(said), result.message
    env.close()


@pytest.mark.alfworld
def test_examine_describes_what_the_state_holds(kitchen):
    env = AlfworldEnv(observe_facts=True)
    env.reset(kitchen)
    env.step(as_step("go to fridge_1"))
    assert env.step(as_step("examine fridge_1")).observation.text == "The fridge_1 is closed."
    env.step(as_step("open fridge_1"))
    seen = env.step(as_step("Examine fridge_1")).observation
    assert seen.text == "The fridge_1 is open. In it, you see a apple_1."
    assert "apple_1" in seen.visible_objects and ("opened", "fridge_1") in seen.facts


@pytest.mark.alfworld
def test_alfworld_corpus_game_plays_with_alfworlds_own_vocabulary(corpus_dir):
    game = corpus_dir / "household" / "textworld-alfworld-test"
    env = AlfworldEnv(game / "domain.pddl", grammar=game / "grammar.twl2")
    env.reset(game / "problem.pddl")
    assert "go to desk" in env.admissible_commands
    assert env.step(as_step("go to desk")).observation.text.startswith("You arrive at locdesk.")
    # ALFWorld's operators carry the agent and locations; the plan names only what it means
    assert env.step(as_step("ToggleObject desklamp")).observation.text == "You turn on the desklamp."
    assert env.goal_reached() is False
    assert env.step(as_step("PickupObject cd desk")).success
    assert env.goal_reached() is True


@pytest.mark.alfworld
def test_bad_game_input_is_an_env_error(kitchen):
    env = AlfworldEnv()
    with pytest.raises(EnvError, match="TextWorld could not load the game"):
        env.reset(kitchen, grammar="grammar :: not a grammar")
    with pytest.raises(EnvError, match="call reset"):
        AlfworldEnv().step("look")


def test_a_textworld_without_the_internals_read_is_refused_with_that_reason():
    """`check_internals` runs on every game loaded, with or without TextWorld installed here:
    the game below is a stand-in with the attributes a loaded `PddlEnv` has."""
    from types import SimpleNamespace

    from sage_pddl.env.textworld_worker import INTERNALS, WorkerError, check_internals

    def game(missing: tuple[str, ...] = ()) -> SimpleNamespace:
        logic = SimpleNamespace(types=SimpleNamespace(_types={}), actions={})
        state = SimpleNamespace(_actions={}, name2type={})
        made = SimpleNamespace(_logic=logic, _pddl_state=state)
        if missing:
            *parents, last = missing
            owner = made
            for name in parents:
                owner = getattr(owner, name)
            delattr(owner, last)
        return made

    check_internals(game())
    for path in INTERNALS:
        named = re.escape(".".join(("game", *path)))
        with pytest.raises(WorkerError, match=rf"has no {named}, ") as refused:
            check_internals(game(path))
        assert refused.value.kind == "internals"
