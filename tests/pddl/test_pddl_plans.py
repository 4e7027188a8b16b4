"""Plan formats: IPC, VAL timestamps, JSON (steps, strings, EAI id maps) and plain lines."""
from __future__ import annotations

import json

import pytest

from sage_pddl.pddl import PlanSyntaxError, SageError, load_plan, parse_plan, write_plan


def _words(plan):
    return [(step.action, step.args) for step in plan]


def test_ipc_lines_with_comments_and_cost():
    plan = parse_plan("; a plan\n(pick-up b)  ; first\n\n(STACK b a)(put-down c)\n"
                      "; cost = 3 (unit cost)\n", "p.plan")
    assert _words(plan) == [("pick-up", ("b",)), ("STACK", ("b", "a")), ("put-down", ("c",))]
    assert [s.index for s in plan] == [0, 1, 2]
    assert plan.steps[1].text == "(STACK b a)"
    assert (plan.steps[2].loc.line, plan.steps[2].loc.column) == (4, 12)


def test_val_timestamps_with_shared_times_and_durations():
    text = "0.00100: (load h0 c1 t1 d0)\n0.00100: (drive t1 d0 d1) [1.5]\n0.00200: (unload h1 c1 t1 d1)"
    plan = parse_plan(text)
    assert _words(plan) == [("load", ("h0", "c1", "t1", "d0")), ("drive", ("t1", "d0", "d1")),
                            ("unload", ("h1", "c1", "t1", "d1"))]
    assert plan.steps[0].loc.column == 10


def test_json_dict_steps_keep_fields():
    text = json.dumps([{"action": "Place", "object": "", "target": "CounterTop"},
                       {"action": "Pick", "object": "Apple", "target": ""}])
    plan = parse_plan(text)
    assert _words(plan) == [("Place", ("CounterTop",)), ("Pick", ("Apple",))]
    assert plan.steps[0].field("target") == "CounterTop" and plan.steps[0].field("object") == ""
    assert dict(plan.steps[1].fields) == {"object": "Apple", "target": ""}


def test_json_steps_object_and_string_list():
    steps = {"steps": [{"action": "PickupObject", "args": ["alarmclock"]}]}
    assert _words(parse_plan(json.dumps(steps))) == [("PickupObject", ("alarmclock",))]
    strings = ["walk_towards character shower", "(grab character towel)"]
    assert _words(parse_plan(json.dumps(strings))) == [
        ("walk_towards", ("character", "shower")), ("grab", ("character", "towel"))]


def test_plain_lines():
    plan = parse_plan("Navigate Fridge\nOpen Fridge\n\nPick Apple, Fridge\n", format="auto")
    assert _words(plan) == [("Navigate", ("Fridge",)), ("Open", ("Fridge",)),
                            ("Pick", ("Apple", "Fridge"))]


def test_eai_id_map_needs_an_id(tmp_path):
    path = tmp_path / "gold.json"
    path.write_text(json.dumps({"60_1": ["walk_towards character computer"], "61_1": []}))
    with pytest.raises(PlanSyntaxError, match=r"name one as .*gold\.json#ID"):
        load_plan(path)
    assert _words(load_plan(f"{path}#60_1")) == [("walk_towards", ("character", "computer"))]
    with pytest.raises(PlanSyntaxError, match="no plan '99'"):
        load_plan(f"{path}#99")


def test_fixture_plans(fixtures_dir):
    root = fixtures_dir / "corpus"
    gold = json.loads((root / "eai-virtualhome" / "gold_pddl_plan.subset.json").read_text())
    plan = load_plan(f"{root / 'eai-virtualhome' / 'gold_pddl_plan.subset.json'}#60_1")
    assert [s.text for s in plan] == gold["60_1"]
    depots = load_plan(root / "val-depots" / "pfile1.plan")
    assert len(depots) > 5 and all(s.action for s in depots)


@pytest.mark.parametrize("text, format, match, line", [
    ("(pick a)\n(stack a b\n", "auto", "never closed", 2),
    ("(pick a)\n(stack (a) b)\n", "auto", "nested", 2),
    ("(pick a)\nstack a b\n", "ipc", "expected '\\('", 2),
    ("0.1: (pick a)\n(stack a b)\n", "auto", "timestamped", 2),
    ("(pick a)\n()\n", "auto", "empty plan step", 2),
    ("Pick (Apple\n", "plain", "unbalanced", 1),
])
def test_bad_line_plans_name_the_line(text, format, match, line):
    with pytest.raises(PlanSyntaxError, match=match) as raised:
        parse_plan(text, "bad.plan", format=format)
    assert raised.value.loc.line == line and raised.value.loc.file == "bad.plan"


@pytest.mark.parametrize("text, match", [
    ('[{"action": "Pick"}, {"object": "Apple"}]', "step 2 has no \"action\""),
    ('[{"action": "Pick"}, 3]', "step 2 is int"),
    ('{"plan": 1}', "list of steps"),
    ('[{"action": "Pick",]', "invalid JSON"),
    ('["pick a", ""]', "step 2 is an empty string"),
])
def test_bad_json_plans_name_the_step(text, match):
    with pytest.raises(PlanSyntaxError, match=match):
        parse_plan(text)


def test_unknown_format_is_a_sage_error():
    with pytest.raises(SageError, match="unknown plan format"):
        parse_plan("(a)", format="pddl4")


def test_write_plan_round_trips():
    plan = parse_plan('[{"action": "Put", "object": "Apple", "target": "Fridge"}]')
    assert write_plan(plan) == "(Put Apple Fridge)\n"
    again = parse_plan(write_plan(plan))
    assert _words(again) == _words(plan)


@pytest.mark.parametrize("text, where", [
    ("(pick a)\n" * 100_001, "plan.txt:100001:1"),
    ("pick a\n" * 100_001, "plan.txt:100001:1"),
    ("0.0: (pick a) [1]\n" * 100_001, "plan.txt:100001:1"),
    (json.dumps([{"action": "pick", "args": ["a"]}] * 100_001), "plan.json:1:1")])
def test_a_plan_past_the_step_limit_is_refused_where_it_passes_it(text, where):
    """A million-step plan was read and gated whole; the limit is `limits.MAX_PLAN_STEPS`."""
    file = "plan.json" if where.startswith("plan.json") else "plan.txt"
    with pytest.raises(PlanSyntaxError) as refused:
        parse_plan(text, file=file)
    assert "a plan of more than 100,000 steps; sage-pddl reads at most 100,000" in str(refused.value)
    assert str(refused.value).startswith(where)
