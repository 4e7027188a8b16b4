"""The CLI on a task its scene cannot do: the reason comes with the problem and the verdict."""
from __future__ import annotations

import json

from .test_cli import run_cli


def test_a_plan_for_an_infeasible_task_is_refused_with_the_reason(tmp_path, capsys):
    plan = tmp_path / "k09.json"
    plan.write_text(json.dumps([{"action": "MoveTo", "object": "Mug", "target": ""},
                                {"action": "Pick", "object": "Mug", "target": ""},
                                {"action": "MoveTo", "object": "DiningTable", "target": ""},
                                {"action": "Place", "object": "DiningTable", "target": ""}]))
    code, out, err = run_cli(capsys, "gate", "ithor", "ithor#K09", str(plan), "--json")
    assert code == 1
    [violation] = json.loads(out)["violations"]
    assert violation["code"] == "unknown-object" and "DiningTable" in violation["message"]
    assert "task K09 is infeasible in its scene: FloorPlan1 has no DiningTable" in err
    assert json.loads(out)["infeasible"].startswith("FloorPlan1 has no DiningTable")


def test_the_problem_header_says_why_a_task_is_infeasible(capsys):
    code, out, _ = run_cli(capsys, "problem", "ithor#X05")
    assert code == 0
    assert "; infeasible: FloorPlan401 has no Cabinet" in out
    objects = out.split("(:objects")[1].split("(:init")[0]
    assert "Cabinet" not in objects  # no cabinet declared


def test_the_placement_setting_is_one_option_of_gate_and_problem(tmp_path, capsys):
    """B10's reference put the alarm clock on the bed with forceAction on: accepted under the
    set's default (forced), refused under typed; a setting that is none is a usage error."""
    assert run_cli(capsys, "gate", "ithor", "ithor#B10", "ithor#B10")[0] == 0
    code, out, _ = run_cli(capsys, "gate", "ithor", "ithor#B10", "ithor#B10", "--json",
                           "--placement", "typed")
    assert code == 1 and [v["code"] for v in json.loads(out)["violations"]] == ["does-not-fit"]
    code, _, err = run_cli(capsys, "gate", "ithor", "ithor#B10", "ithor#B10", "--placement",
                           "loose")
    assert code == 2 and "--placement: 'loose' is no placement setting (forced, typed)" in err
    code, out, _ = run_cli(capsys, "problem", "procthor#P31_04", "--placement", "typed")
    assert code == 0 and "; placement: typed (forceAction off" in out
    assert "(forced-placement)" not in out
