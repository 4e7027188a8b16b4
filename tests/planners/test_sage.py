"""SAGE: call accounting (1 + K + R; repair 1 + refines), certification, refine re-gating,
uncertified blocks, and local repair bookkeeping across consecutive failures."""
from __future__ import annotations

import pytest

from sage_pddl.gate import compile_gate
from sage_pddl.llm import InvalidOutput
from sage_pddl.planners import PlannerError, get_planner
from tests.steps import as_json

from .conftest import GOOD_PLAN, assert_accounting, steps


def sub(*names):
    return {"subgoals": list(names)}


def test_plan_counts_one_plus_k_plus_r_and_certified_plan_passes_gate(task, scripted):
    llm, raw = scripted({
        "decompose": [sub("get the apple", "put it in the fridge", "close the fridge")],
        "expand": [steps(("MoveTo", "Apple"), ("Pick", "Apple")),
                   steps(("Place", "Fridge")),  # fridge closed and not reached: rejected
                   steps(("Close", "Fridge"))],
        "refine": [steps(("MoveTo", "Fridge"), ("Open", "Fridge"), ("Place", "Fridge"))],
    })
    result = get_planner("SAGE", llm=llm).plan(task)
    assert_accounting(result, llm, calls=1 + 3 + 1)
    assert [c.role for c in result.call_log] == ["decompose", "expand", "expand", "refine",
                                                 "expand"]
    assert result.certified and result.goal_reached
    assert [(x.action, x.field("object")) for x in result.steps] == GOOD_PLAN
    gate = compile_gate(task.domain, task.problem)
    assert gate.check(list(result.steps), mode="all").valid
    refined = result.blocks[1]
    assert refined.refines == 1 and refined.certified and refined.verdict.valid
    # the refine prompt carried every violation of the rejected block, with typed codes
    refine_prompt = raw.calls[3].prompt
    assert "place/forbids/closed" in refine_prompt and "place/requires/reachable" in refine_prompt


def test_refined_block_is_gated_again_and_second_refine_sees_new_violations(task, scripted):
    llm, raw = scripted({
        "decompose": [sub("get the apple", "store it")],
        "expand": [steps(("MoveTo", "Apple"), ("Pick", "Apple")), steps(("Place", "Fridge"))],
        "refine": [steps(("MoveTo", "Fridge"), ("Place", "Fridge")),  # still closed
                   steps(("MoveTo", "Fridge"), ("Open", "Fridge"), ("Place", "Fridge"),
                         ("Close", "Fridge"))],
    })
    result = get_planner("SAGE", llm=llm, max_refines=2).plan(task)
    assert_accounting(result, llm, calls=1 + 2 + 2)
    assert result.blocks[1].refines == 2 and result.certified
    second_refine = [c for c in raw.calls if c.role == "refine"][1].prompt
    assert '{"action": "MoveTo", "object": "Fridge"' in second_refine
    assert "place/forbids/closed" in second_refine
    assert "place/requires/reachable" not in second_refine.split("Problems found")[1]


def test_block_that_never_passes_is_uncertified_and_state_rolls_through_prefix(task, scripted):
    bad = steps(("Open", "Fridge"), ("MoveTo", "Fridge"))  # Open before reaching: rejected
    llm, raw = scripted({
        "decompose": [sub("open the fridge", "check the coffee machine")],
        "expand": [bad, steps(("MoveTo", "CoffeeMachine"))],
        "refine": [bad, bad],
    })
    result = get_planner("SAGE", llm=llm, max_refines=2).plan(task)
    assert_accounting(result, llm, calls=1 + 2 + 2)
    assert not result.certified
    assert [b.certified for b in result.blocks] == [False, True]
    assert result.uncertified_blocks[0].violations[0].code == "open/requires/reachable"
    assert any("uncertified" in n for n in result.notes)
    # the rejected block's later MoveTo was not rolled forward into the next sub-goal's state
    second_expand = [c for c in raw.calls if c.role == "expand"][1].prompt
    state_part = second_expand.split("State at the start of this sub-goal:")[1]
    assert "(reachable Fridge)" not in state_part
    # nothing silently dropped: the uncertified block's steps are reported
    assert as_json(result.blocks[0].steps) == bad["steps"]


def test_prefix_mode_returns_only_the_accepted_prefix(task, scripted):
    bad = steps(("MoveTo", "Fridge"), ("Pick", "Fridge"))
    llm, _ = scripted({"decompose": [sub("a", "b")], "expand": [bad, steps()],
                       "refine": [bad]})
    result = get_planner("SAGE", llm=llm, max_refines=1, uncertified_steps="prefix").plan(task)
    assert [x.action for x in result.steps] == ["MoveTo"]
    assert not result.certified


def test_decompose_is_clamped_to_five_and_noted(task, scripted):
    names = [f"phase {i}" for i in range(7)]
    places = ["Apple", "Mug", "Fridge", "CounterTop", "CoffeeMachine"]
    llm, raw = scripted({"decompose": [sub(*names)],
                         "expand": [steps(("MoveTo", place)) for place in places]})
    result = get_planner("SAGE", llm=llm).plan(task)
    assert_accounting(result, llm, calls=1 + 5)
    assert len(result.blocks) == 5 and "phase 6" in result.blocks[-1].subgoal
    assert any("clamped" in n for n in result.notes)


def test_failed_calls_are_counted_with_their_tokens(task, scripted):
    llm, _ = scripted({"decompose": [sub("get the apple", "store it")],
                       "expand": [InvalidOutput("garbage"), steps(*GOOD_PLAN)],
                       "refine": [steps(("MoveTo", "Apple"))]})
    result = get_planner("SAGE", llm=llm, max_refines=1).plan(task)
    assert_accounting(result, llm, calls=1 + 2 + 1)
    assert [c.ok for c in result.call_log] == [True, False, True, True]


def test_exact_no_op_repeat_is_dropped_before_gating(task, scripted):
    llm, _ = scripted({"decompose": [sub("reach", "take")],
                       "expand": [steps(("MoveTo", "Apple")),
                                  steps(("MoveTo", "Apple"), ("Pick", "Apple"))]})
    result = get_planner("SAGE", llm=llm).plan(task)
    assert [x.action for x in result.steps] == ["MoveTo", "Pick"]
    assert any("no-op" in n for n in result.notes)


# ------------------------------------------------------------------------------------- repair
FOUR_BLOCKS = {
    "decompose": [sub("open the fridge", "get the apple", "put the apple in the fridge",
                      "close the fridge")],
    "expand": [steps(("MoveTo", "Fridge"), ("Open", "Fridge")),
               steps(("MoveTo", "Apple"), ("Pick", "Apple")),
               steps(("MoveTo", "Fridge"), ("Place", "Fridge")),
               steps(("Close", "Fridge"))],
}


def test_repair_keeps_future_blocks_including_close_and_relocates_after_two_failures(
        task, scripted):
    script = dict(FOUR_BLOCKS)
    script["repair"] = [steps(("MoveTo", "Apple"), ("Pick", "Apple")),
                        steps(("Place", "Fridge"))]
    llm, raw = scripted(script)
    planner = get_planner("SAGE", llm=llm)
    plan = planner.plan(task)
    assert_accounting(plan, llm, calls=1 + 4)
    executed = [x for x in plan.steps]

    # failure 1: "Pick Apple" (position 3) fails in the executor
    done = executed[:3]
    first = planner.repair(None, done, executed[3], "the apple slipped")
    assert_accounting(first, llm, calls=1)
    assert "Current sub-goal: get the apple" in raw.calls[-1].prompt
    assert [(x.action, x.field("object")) for x in first.steps] == [
        ("Pick", "Apple"), ("MoveTo", "Fridge"), ("Place", "Fridge"), ("Close", "Fridge")]
    assert first.certified and first.goal_reached
    assert [b.origin for b in first.blocks] == ["repair", "kept", "kept"]

    # failure 2: after executing Pick Apple and MoveTo Fridge, "Place Fridge" fails
    done = done + [x for x in first.steps[:2]]
    second = planner.repair(None, done, first.steps[2], "the shelf is full")
    assert_accounting(second, llm, calls=1)
    assert "Current sub-goal: put the apple in the fridge" in raw.calls[-1].prompt
    assert [(x.action, x.field("object")) for x in second.steps] == [("Place", "Fridge"),
                                                                  ("Close", "Fridge")]
    assert second.certified
    gate = compile_gate(task.domain, task.problem)
    assert gate.check(done + list(second.steps), mode="all").goal_reached


def test_repair_refines_and_regates_the_suffix(task, scripted):
    script = dict(FOUR_BLOCKS)
    script["repair"] = [steps(("Pick", "Apple"))]  # apple not reached after the replay
    script["refine"] = [steps(("MoveTo", "Apple"), ("Pick", "Apple"))]
    llm, _ = scripted(script)
    planner = get_planner("SAGE", llm=llm)
    plan = planner.plan(task)
    llm.reset()
    done = [x for x in plan.steps[:2]]
    result = planner.repair(None, done, plan.steps[2], "path blocked")
    assert_accounting(result, llm, calls=1 + 1)
    assert result.blocks[0].refines == 1 and result.blocks[0].verdict.valid
    assert result.certified


def test_repair_flags_kept_blocks_that_no_longer_pass(task, scripted):
    script = dict(FOUR_BLOCKS)
    # the repair closes the fridge early, so the kept "Place Fridge" block is now rejected
    script["repair"] = [steps(("MoveTo", "Apple"), ("Pick", "Apple"), ("MoveTo", "Fridge"),
                              ("Close", "Fridge"))]
    llm, _ = scripted(script)
    planner = get_planner("SAGE", llm=llm, max_refines=0)
    plan = planner.plan(task)
    llm.reset()
    result = planner.repair(None, [x for x in plan.steps[:2]], plan.steps[2], "dropped")
    assert_accounting(result, llm, calls=1)
    kept = result.blocks[1]
    assert kept.origin == "kept" and not kept.certified
    assert not result.certified
    assert any("no longer passes" in n for n in result.notes)


def test_repair_uses_the_given_state(task, scripted):
    script = dict(FOUR_BLOCKS)
    script["repair"] = [steps(("Pick", "Apple"))]
    llm, _ = scripted(script)
    planner = get_planner("SAGE", llm=llm)
    plan = planner.plan(task)
    gate = compile_gate(task.domain, task.problem)
    state = gate.check(list(plan.steps[:3]), mode="all").final_state
    result = planner.repair(state, [], plan.steps[3], "slipped")
    assert result.blocks[0].certified and result.blocks[0].steps[0].action == "Pick"


def test_repair_before_plan_is_an_error(scripted):
    llm, _ = scripted({})
    with pytest.raises(PlannerError, match="before plan"):
        get_planner("SAGE", llm=llm).repair(None, [], None, "x")


def test_no_repair_ablation_replans_globally(task, scripted):
    script = dict(FOUR_BLOCKS)
    script["decompose"] = FOUR_BLOCKS["decompose"] + [sub("get the apple", "store it")]
    script["expand"] = FOUR_BLOCKS["expand"] + [
        steps(("MoveTo", "Apple"), ("Pick", "Apple")),
        steps(("MoveTo", "Fridge"), ("Place", "Fridge"), ("Close", "Fridge"))]
    llm, raw = scripted(script)
    planner = get_planner("SAGE-NoRepair", llm=llm)
    plan = planner.plan(task)
    llm.reset()
    result = planner.repair(None, [x for x in plan.steps[:2]], plan.steps[2], "blocked")
    assert_accounting(result, llm, calls=1 + 2)
    assert result.certified and result.goal_reached
    assert "Put the apple in the fridge" in raw.calls[-3].prompt  # original task kept


def test_no_verifier_ablation_never_refines_or_certifies(task, scripted):
    llm, _ = scripted({"decompose": [sub("store it", "done")],
                       "expand": [steps(("Place", "Fridge")), steps()]})
    result = get_planner("SAGE-NoVerifier", llm=llm).plan(task)
    assert_accounting(result, llm, calls=1 + 2)
    assert not result.certified and result.planner == "SAGE-NoVerifier"
    assert all(not b.certified for b in result.blocks)


def test_schema_ignoring_backend_gets_typed_codes_for_unknown_names(task, scripted):
    llm, raw = scripted({"decompose": [sub("x", "y")],
                         "expand": [steps(("Teleport", "Apple")), steps(("Pick", "Banana"))]})
    result = get_planner("SAGE", llm=llm, max_refines=0).plan(task)
    codes = [b.violations[0].code for b in result.blocks]
    assert codes == ["unknown-action", "unknown-object"]
    assert not result.certified
    schema = raw.calls[1].schema
    assert "Teleport" not in schema["properties"]["steps"]["items"]["properties"]["action"]["enum"]


def test_an_empty_expansion_certifies_nothing(task, scripted):
    # the gate accepts the empty plan vacuously: an expanded sub-goal with no steps is refined,
    # and stays uncertified when the refines give nothing either
    llm, raw = scripted({"decompose": [sub("get the apple")], "expand": [steps()],
                         "refine": [steps(), steps()]})
    result = get_planner("SAGE", llm=llm).plan(task)
    assert_accounting(result, llm, calls=1 + 1 + 2)
    assert result.steps == () and result.certified is False
    assert result.blocks[0].certified is False
    assert any("no steps" in n for n in result.notes)
    assert [c.role for c in raw.calls] == ["decompose", "expand", "refine", "refine"]
    assert "gave no steps for this sub-goal" in raw.calls[-1].prompt
