"""ALFWorld's TextWorld games played for real from this interpreter (marked `alfworld`).

Each test runs TextWorld in ALFWorld's own environment through the worker process; without
that environment they skip with the reason (`sage-pddl env-setup alfworld` makes it). The
ALFWorld game folder is made here from ALFWorld's own files in ../shared/corpus (alfred.pddl
and alfred.twl2, alfworld/alfworld @ ca98194, MIT) and TextWorld's ALFWorld test problem
(microsoft/TextWorld @ ebae03b, MIT), laid out as ALFWorld's download lays out its games.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sage_pddl.env.alfworld import AlfworldEnv
from sage_pddl.env.alfworld_agreement import agreement, agreement_table, disagreements
from sage_pddl.env.alfworld_setup import setup_alfworld_env
from sage_pddl.env.textworld import env_dir
from sage_pddl.tasks import load_taskset
from tests.steps import as_step

pytestmark = pytest.mark.alfworld

TASKS = ("pick_heat_then_place_in_recep-Apple-None-DiningTable-26",
         "pick_clean_then_place_in_recep-AppleSliced-None-DiningTable-27")


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sage_pddl", *argv], capture_output=True,
                          text=True, timeout=600)


@pytest.mark.parametrize("task_id", TASKS)
def test_run_plays_the_task_in_textworld_and_reports_its_answers(task_id, tmp_path):
    log = tmp_path / "steps.jsonl"
    done = _run("run", f"alfworld#{task_id}", "--env", "alfworld", "--llm", "scripted",
                "--json", "--log", str(log))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["env"] == "alfworld" and report["success"] is True
    messages = [record["message"] for record in report["records"]]
    assert all(r["status"] == "executed" for r in report["records"])
    # the world's own answers, written by the game's grammar
    assert messages[0].startswith("You arrive at diningtable_1.")
    assert any(m.startswith(("You heat the apple_1", "You clean the apple")) for m in messages)
    transitions = [json.loads(line) for line in log.read_text().splitlines()]
    assert [t["env"] for t in transitions] == ["alfworld"] * len(messages)


def test_an_alfworld_game_file_is_played_with_its_own_domain_and_grammar(corpus_dir, tmp_path):
    trial = tmp_path / "games" / "look_at_obj_in_light-CD-None-DeskLamp-1" / "trial_1"
    trial.mkdir(parents=True)
    alfworld = corpus_dir / "household" / "alfworld"
    problem = corpus_dir / "household" / "textworld-alfworld-test" / "problem.pddl"
    (trial / "game.tw-pddl").write_text(json.dumps({
        "pddl_domain": (alfworld / "alfred.pddl").read_text(),
        "grammar": (alfworld / "alfred.twl2").read_text(),
        "pddl_problem": problem.read_text(), "solvable": True}))
    [task] = load_taskset(str(tmp_path / "games"))
    assert task.scene == str(trial / "game.tw-pddl")
    env = AlfworldEnv()
    try:
        first = env.reset(task.problem, scene=task.scene)
        assert first.text.startswith("-= Welcome to TextWorld, ALFRED! =-")
        assert "Your task is to: UNKNOWN GOAL." in first.text  # ALFWorld's grammar, not ours
        assert env.step(as_step("go to desk")).observation.text.startswith("You arrive at desk.")
        assert env.step(as_step("ToggleObject desklamp")).success
        assert env.goal_reached() is False
        taken = env.step(as_step("PickupObject cd desk"))
        assert taken.success and taken.message == "You pick up the cd from the desk."
        assert env.goal_reached() is True  # the game's own goal, in TextWorld's `won`
    finally:
        env.close()


def test_setup_reuses_a_ready_environment():
    result = setup_alfworld_env(env_dir())
    assert result.reused and result.textworld.startswith("1.")


@pytest.mark.slow
def test_textworld_and_the_symbolic_world_agree_on_every_task_and_mutant():
    """tools/alfworld_agreement.py's table, held: every reference plan ends alike in both
    worlds, and every mutant the gate refuses fails in TextWorld at the same step."""
    env = AlfworldEnv()
    try:
        rows = agreement(load_taskset("alfworld"), env)
    finally:
        env.close()
    assert len(rows) == 7 and all(row.textworld.goal for row in rows), agreement_table(rows)
    assert sum(len(row.refused) for row in rows) > len(rows)  # the mutants are caught
    assert disagreements(rows) == []
