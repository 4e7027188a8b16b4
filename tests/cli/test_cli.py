"""The command line: exit codes, JSON output, located errors, task references, stdin plans."""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sage_pddl.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
K19_REFERENCE = json.dumps([
    {"action": "Navigate", "object": "Cabinet"}, {"action": "Open", "object": "Cabinet"},
    {"action": "Navigate", "object": "Apple"}, {"action": "Grab", "object": "Apple"},
    {"action": "Navigate", "object": "Cabinet"}, {"action": "PutIn", "object": "Cabinet"},
    {"action": "Close", "object": "Cabinet"}])

BLOCKS_DOMAIN = """(define (domain blocks)
  (:requirements :strips)
  (:predicates (on ?x ?y) (ontable ?x) (clear ?x) (handempty) (holding ?x))
  (:action pick-up :parameters (?x)
    :precondition (and (clear ?x) (ontable ?x) (handempty))
    :effect (and (not (ontable ?x)) (not (clear ?x)) (not (handempty)) (holding ?x)))
  (:action stack :parameters (?x ?y)
    :precondition (and (holding ?x) (clear ?y))
    :effect (and (not (holding ?x)) (not (clear ?y)) (clear ?x) (handempty) (on ?x ?y))))
"""
BLOCKS_PROBLEM = """(define (problem p) (:domain blocks)
  (:objects a b)
  (:init (ontable a) (ontable b) (clear a) (clear b) (handempty))
  (:goal (on a b)))
"""


@pytest.fixture
def blocks(tmp_path):
    (tmp_path / "domain.pddl").write_text(BLOCKS_DOMAIN)
    (tmp_path / "p.pddl").write_text(BLOCKS_PROBLEM)
    return tmp_path


def run_cli(capsys, *argv, stdin: str | None = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_gate_valid_plan_exits_0_with_json(blocks, capsys):
    (blocks / "good.plan").write_text("(pick-up a)\n(stack a b)\n; cost = 2 (unit cost)\n")
    code, out, _ = run_cli(capsys, "gate", str(blocks / "domain.pddl"), str(blocks / "p.pddl"),
                           str(blocks / "good.plan"), "--json")
    assert code == 0
    assert json.loads(out) == {"valid": True, "goal_reached": True, "steps_checked": 2,
                               "violations": [], "goal_conditions_met": 1,
                               "goal_conditions_total": 1, "unreachable_goals": [],
                               "simulated": {"goal_reached": True, "goal_conditions_met": 1,
                                             "goal_conditions_total": 1, "steps_refused": 0},
                               "read_as": [], "infeasible": None}


def test_gate_invalid_plan_exits_1_and_names_the_literal(blocks, capsys):
    (blocks / "bad.plan").write_text("(pick-up a)\n(pick-up b)\n")
    code, out, _ = run_cli(capsys, "gate", str(blocks / "domain.pddl"), str(blocks / "p.pddl"),
                           str(blocks / "bad.plan"), "--json")
    assert code == 1
    verdict = json.loads(out)
    assert verdict["valid"] is False and verdict["steps_checked"] == 2
    [violation] = verdict["violations"]
    assert violation["step"] == 1 and violation["code"] == "pick-up/requires/handempty"
    assert violation["literal"] == "(handempty)"


def test_goal_not_reached_exits_1_unless_prefix(blocks, capsys):
    (blocks / "partial.plan").write_text("(pick-up a)\n")
    args = ["gate", str(blocks / "domain.pddl"), str(blocks / "p.pddl"), str(blocks / "partial.plan")]
    assert run_cli(capsys, *args)[0] == 1
    assert run_cli(capsys, *args, "--prefix")[0] == 0


def test_gate_all_reports_every_violation(blocks, capsys):
    (blocks / "bad.plan").write_text("(stack a b)\n(stack b a)\n")
    code, out, _ = run_cli(capsys, "gate", str(blocks / "domain.pddl"), str(blocks / "p.pddl"),
                           str(blocks / "bad.plan"), "--json", "--all")
    assert code == 1
    assert [v["step"] for v in json.loads(out)["violations"]] == [0, 1]


def test_syntax_error_is_located_and_exits_2(blocks, capsys):
    broken = blocks / "broken.pddl"
    broken.write_text(BLOCKS_DOMAIN.replace("(clear ?x) (ontable ?x)", "(clear ?x)) (ontable ?x)"))
    code, _, err = run_cli(capsys, "check", str(broken))
    assert code == 2
    first = err.splitlines()[0]
    assert first.startswith(f"{broken}:5:36: error:")
    assert "Traceback" not in err


def test_unknown_predicate_is_a_located_semantic_error(blocks, capsys):
    bad = blocks / "bad-domain.pddl"
    bad.write_text(BLOCKS_DOMAIN.replace("(holding ?x)))\n  (:action stack",
                                         "(grasped ?x)))\n  (:action stack"))
    code, out, err = run_cli(capsys, "check", str(bad))
    assert code in (1, 2)
    assert "grasped" in out + err and f"{bad}:" in out + err


def test_bad_plan_step_names_the_step(blocks, capsys):
    (blocks / "p.json").write_text('[{"action": "pick-up", "object": "a"}, {"object": "b"}]')
    code, _, err = run_cli(capsys, "gate", str(blocks / "domain.pddl"), str(blocks / "p.pddl"),
                           str(blocks / "p.json"))
    assert code == 2 and "step" in err.lower() and "Traceback" not in err


def test_missing_file_is_an_input_error(capsys, tmp_path):
    code, _, err = run_cli(capsys, "check", str(tmp_path / "nope.pddl"))
    assert code == 2 and "nope.pddl" in err


def test_task_reference_and_dataset_steps_from_stdin(capsys, monkeypatch):
    code, out, _ = run_cli(capsys, "gate", "ithor", "ithor#K19", "-", "--json",
                           stdin=K19_REFERENCE, monkeypatch=monkeypatch)
    assert code == 0 and json.loads(out)["goal_reached"] is True


def test_gate_json_scores_a_plan_in_both_views(capsys, monkeypatch):
    # K04 (boil water: water in the pot, the pot on a burner, that burner on) with a harmless
    # first step naming what the kitchen does not have
    plan = json.dumps([{"action": "MoveTo", "object": "Dishwasher"},
                       {"action": "MoveTo", "object": "Pot"}, {"action": "Pick", "object": "Pot"},
                       {"action": "MoveTo", "object": "Sink"}, {"action": "Fill", "object": "Pot"},
                       {"action": "MoveTo", "object": "StoveBurner"},
                       {"action": "Place", "object": "StoveBurner"},
                       {"action": "TurnOn", "object": "StoveBurner"}])
    for extra in ((), ("--all",)):
        code, out, _ = run_cli(capsys, "gate", "ithor", "ithor#K04", "-", "--json", *extra,
                               stdin=plan, monkeypatch=monkeypatch)
        verdict = json.loads(out)
        assert code == 1 and verdict["valid"] is False
        # the gate's view: refused at step 1, nothing done
        assert (verdict["goal_reached"], verdict["goal_conditions_met"],
                verdict["goal_conditions_total"]) == (None, 0, 3)
        assert [v["code"] for v in verdict["violations"]] == ["unknown-object"]
        # the simulator's view: the step is a no-op, the rest boils the water
        assert verdict["simulated"] == {"goal_reached": True, "goal_conditions_met": 3,
                                        "goal_conditions_total": 3, "steps_refused": 1}
    code, out, _ = run_cli(capsys, "gate", "ithor", "ithor#K04", "-", stdin=plan,
                           monkeypatch=monkeypatch)
    assert code == 1 and "as the simulator would run it" in out
    assert "goal reached, 3 of 3 goal conditions, 1 step(s) refused" in out


def test_household_violation_has_a_friendly_code(capsys, monkeypatch):
    plan = json.dumps([{"action": "MoveTo", "object": "Apple"}, {"action": "Pick", "object": "Apple"},
                       {"action": "PutIn", "object": "Cabinet"}])
    code, out, _ = run_cli(capsys, "gate", "ithor", "ithor#K19", "-", "--json", "--prefix",
                           stdin=plan, monkeypatch=monkeypatch)
    assert code == 1
    [violation] = json.loads(out)["violations"]
    assert violation["step"] == 2 and violation["code"] == "container-closed"


def test_fmt_output_parses_to_the_same_model(blocks, capsys):
    from sage_pddl.pddl import parse_domain

    code, out, _ = run_cli(capsys, "fmt", str(blocks / "domain.pddl"))
    assert code == 0 and parse_domain(out) == parse_domain(BLOCKS_DOMAIN)


def test_domains_lists_the_bundled_ones(capsys):
    code, out, _ = run_cli(capsys, "domains", "--json")
    names = {row["name"] for row in json.loads(out)}
    assert code == 0 and {"ithor", "procthor", "alfworld", "virtualhome"} <= names


def test_problem_prints_pddl(capsys):
    code, out, _ = run_cli(capsys, "problem", "ithor#K19")
    assert code == 0 and "(define (problem" in out.lower() and "cabinet" in out.lower()


def test_problem_says_where_its_goal_comes_from(tmp_path, capsys):
    code, out, _ = run_cli(capsys, "problem", "ithor#K08")
    assert code == 0 and "; goal from: goals" in out and "; goal note: The plurals" in out
    tasks = tmp_path / "mine.json"
    tasks.write_text(json.dumps([{"task_id": "M1", "task_desc": "Make a cup of coffee",
                                  "scene": "FloorPlan1", "room": "kitchen", "obs": "",
                                  "reference_steps": [
                                      {"action": "MoveTo", "object": "CoffeeMachine"},
                                      {"action": "TurnOn", "object": "CoffeeMachine"}]}]))
    code, out, err = run_cli(capsys, "problem", f"{tasks}#M1")
    assert code == 0 and "; goal from: none" in out and "(:goal (and))" in out
    assert "no goal" in err and "Make a cup of coffee" in err
    code, out, _ = run_cli(capsys, "problem", f"{tasks}#M1", "--goal-from-reference")
    assert code == 0 and "; goal from: reference (the reference plan's effects" in out
    assert "(turned-on CoffeeMachine)" in out


def test_unknown_task_is_an_input_error(capsys):
    code, _, err = run_cli(capsys, "problem", "ithor#NOPE")
    assert code == 2 and "NOPE" in err


def test_plan_with_a_scripted_model(tmp_path, capsys):
    script = {"decompose": [{"subgoals": ["Put the apple away", "Close the cabinet"]}],
              "expand": [{"steps": [{"action": "MoveTo", "object": "Cabinet"},
                                    {"action": "Open", "object": "Cabinet"},
                                    {"action": "MoveTo", "object": "Apple"},
                                    {"action": "Pick", "object": "Apple"},
                                    {"action": "PutIn", "object": "Cabinet"}]},
                         {"steps": [{"action": "Close", "object": "Cabinet"}]}]}
    (tmp_path / "script.json").write_text(json.dumps(script))
    code, out, _ = run_cli(capsys, "plan", "ithor#K19", "--planner", "SAGE-NoMemory",
                           "--llm", "scripted", "--llm-script", str(tmp_path / "script.json"),
                           "--json")
    assert code == 0
    result = json.loads(out)
    assert result["calls"] == 3 and result["certified"] is True and result["goal_reached"] is True


def test_bad_setting_is_named(capsys):
    code, _, err = run_cli(capsys, "plan", "ithor#K19", "--llm", "nosuch")
    assert code == 2 and "nosuch" in err


def test_demo_runs_offline_and_reaches_the_goal(capsys):
    code, out, _ = run_cli(capsys, "demo", "--llm", "scripted", "--json")
    assert code == 0
    summary = json.loads(out[out.index("{"):])
    assert summary["reference_valid"] is True
    assert "container-closed" in summary["broken_plan_violations"]
    episode = summary["episode"]
    assert episode["success"] is True and episode["recovered"] is True
    assert episode["repairs"] == 1 and episode["planning_calls"] == 5
    # the scripted repair re-picks the apple in hand: the gate rejects it and one refine fixes it
    assert episode["repair_calls"] == 2 and episode["executed"] == 6


def test_console_entry_point_has_no_traceback_on_bad_input(tmp_path):
    bad = tmp_path / "x.pddl"
    bad.write_text("(define (domain d) (:predicates (p))")
    done = subprocess.run([sys.executable, "-m", "sage_pddl", "check", str(bad)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith(f"{bad}:") and "Traceback" not in done.stderr


def test_unreachable_llm_server_is_a_setting_error(capsys):
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, out, err = run_cli(capsys, "plan", "ithor#K19", "--llm", "ollama",
                             "--llm-host", f"http://127.0.0.1:{port}")
    assert code == 2 and "ollama serve" in err and out == ""


def test_bad_injection_setting_fails_before_planning(capsys):
    code, out, err = run_cli(capsys, "run", "ithor#K19", "--llm", "scripted",
                             "--inject-failure", "soon")
    assert code == 2 and "--inject-failure" in err and out == ""
