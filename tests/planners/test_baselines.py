"""Baselines: documented call counts (exact accounting), repair behaviour, ReAct observations,
LLM+P through unified-planning, SayCan's gate feasibility."""
from __future__ import annotations

import pytest

from sage_pddl.env.base import Observation, StepResult
from sage_pddl.planners import PlannerError, available_planners, get_planner
from sage_pddl.planners.memory import HybridMemory, MemoryItem

from .conftest import GOOD_PLAN, assert_accounting, ps, s, steps

GOOD = steps(*GOOD_PLAN)


def test_registry_lists_every_planner_and_matches_loose_names(scripted):
    llm, _ = scripted({})
    assert len(available_planners()) == 13
    assert get_planner("few-shot-cot", llm=llm).name == "Few-Shot CoT"
    assert get_planner("llmp", llm=llm).name == "LLM+P"
    assert get_planner("HierarchicalFewShot", llm=llm).name == "Hierarchical Few-Shot"
    with pytest.raises(PlannerError, match="unknown planner"):
        get_planner("Oracle", llm=llm)
    with pytest.raises(PlannerError, match="unknown option"):
        get_planner("Direct", llm=llm, bogus=1)


def test_direct_one_call_and_repair_with_executed_steps(task, scripted):
    llm, raw = scripted({"direct": [GOOD], "repair": [steps(*GOOD_PLAN[3:])]})
    planner = get_planner("Direct", llm=llm)
    result = planner.plan(task)
    assert_accounting(result, llm, calls=1)
    assert result.goal_reached and not result.certified  # Direct never consults the gate
    repaired = planner.repair(None, [ps(*x) for x in GOOD_PLAN[:3]], ps("Open", "Fridge"), "stuck")
    assert_accounting(repaired, llm, calls=1)
    assert "Pick Apple" in raw.calls[-1].prompt and "stuck" in raw.calls[-1].prompt
    assert repaired.goal_reached


def test_direct_failed_call_counted(task, scripted):
    from sage_pddl.llm import LLMTimeout

    llm, _ = scripted({"direct": [LLMTimeout("slow")]})
    result = get_planner("Direct", llm=llm).plan(task)
    assert_accounting(result, llm, calls=1)
    assert result.steps == () and not result.call_log[0].ok


def test_cot_reads_json_and_tags(task, scripted):
    tagged = ("<reasoning>apple first</reasoning><plan>" + __import__("json").dumps(GOOD)
              + "</plan>")
    llm, _ = scripted({"cot": [{"reasoning": "think", **GOOD}], "repair": [tagged]})
    planner = get_planner("CoT", llm=llm)
    result = planner.plan(task)
    assert_accounting(result, llm, calls=1)
    assert len(result.steps) == 6 and any("reasoning: think" in n for n in result.notes)
    assert len(planner.repair(None, [], None, "retry").steps) == 6


def test_fewshot_uses_memory_with_leave_one_out(task, scripted):
    memory = HybridMemory(seeds=[
        MemoryItem("T01", "Put the apple in the fridge and close it", (ps("Wait"),)),
        MemoryItem("K05", "Put the mug in the fridge", (ps("MoveTo", "Mug"),))])
    llm, raw = scripted({"fewshot": [GOOD]})
    result = get_planner("Few-Shot CoT", llm=llm, memory=memory).plan(task)
    assert_accounting(result, llm, calls=1)
    prompt = raw.calls[0].prompt
    assert "Put the mug in the fridge" in prompt and "Wait" not in prompt.split("Solved")[1]


def test_self_refine_one_plus_two_n(task, scripted):
    llm, raw = scripted({"direct": [steps(("Pick", "Apple"))],
                         "critique": ["- the apple is not reached", "NO_ISSUES"],
                         "self-refine": [GOOD]})
    planner = get_planner("Self-Refine", llm=llm)
    result = planner.plan(task)
    assert_accounting(result, llm, calls=1 + 2 + 1)
    assert result.goal_reached
    # repair gives the executed steps to the model (the reference dropped them)
    llm2, raw2 = scripted({"repair": [steps(*GOOD_PLAN[2:])], "critique": ["NO_ISSUES"]})
    planner.llm = llm2
    repaired = planner.repair(None, [ps(*x) for x in GOOD_PLAN[:2]], ps("MoveTo", "Fridge"), "x")
    assert_accounting(repaired, llm2, calls=2)
    assert "Pick Apple" in raw2.calls[0].prompt


def test_self_refine_empty_refinement_never_overwrites(task, scripted):
    llm, _ = scripted({"direct": [GOOD], "critique": ["- looks odd"], "self-refine": ["{}"]})
    result = get_planner("Self-Refine", llm=llm).plan(task)
    assert_accounting(result, llm, calls=3)
    assert len(result.steps) == 6


def test_react_symbolic_observations_change_and_rejections_are_reported(task, scripted):
    turns = [{"thought": "t", "done": False, "step": s("Pick", "Apple")},  # rejected
             {"thought": "t", "done": False, "step": s("MoveTo", "Apple")},
             {"thought": "t", "done": False, "step": s("Pick", "Apple")},
             {"thought": "t", "done": True}]
    llm, raw = scripted({"act": turns})
    result = get_planner("ReAct", llm=llm).plan(task)
    assert_accounting(result, llm, calls=4)
    assert [x.action for x in result.steps] == ["MoveTo", "Pick"]
    assert "pick/requires/reachable" in raw.calls[1].prompt
    assert "(holding Apple)" in raw.calls[3].prompt  # a fresh observation after each step
    assert any("failed" in n for n in result.notes)


class RecordingEnv:
    def __init__(self):
        self.executed = []

    def step(self, step):
        self.executed.append(step)
        n = len(self.executed)
        return StepResult(True, "ok", Observation(f"OBS-{n}: the robot sees things"))


def test_react_with_env_receives_real_observations(task, scripted):
    env = RecordingEnv()
    turns = [{"thought": "t", "done": False, "step": s("MoveTo", "Apple")},
             {"thought": "t", "done": False, "step": s("Pick", "Apple")},
             {"thought": "t", "done": True}]
    llm, raw = scripted({"act": turns})
    result = get_planner("ReAct", llm=llm, env=env).plan(task)
    assert_accounting(result, llm, calls=3)
    assert len(env.executed) == 2
    assert "OBS-1" in raw.calls[1].prompt and "OBS-2" in raw.calls[2].prompt
    assert "executed in env" in result.notes


def test_react_repair_continues_with_history(task, scripted):
    llm, raw = scripted({"act": [{"thought": "t", "done": False, "step": s("Pick", "Apple")},
                                 {"thought": "t", "done": True}]})
    planner = get_planner("ReAct", llm=llm)
    planner.current = None
    planner.start(task)
    result = planner.repair(None, [ps("MoveTo", "Apple")], ps("Pick", "Apple"), "slipped")
    assert_accounting(result, llm, calls=2)
    assert [x.action for x in result.steps] == ["Pick"]
    assert "slipped" in raw.calls[0].prompt


def test_hierarchical_one_plus_k_and_global_repair(task, scripted):
    llm, raw = scripted({"decompose": [{"subgoals": ["get", "store"]},
                                       {"subgoals": ["finish"]}],
                         "expand": [steps(*GOOD_PLAN[:2]), steps(*GOOD_PLAN[2:]),
                                    steps(*GOOD_PLAN[4:])]})
    planner = get_planner("Hierarchical", llm=llm)
    result = planner.plan(task)
    assert_accounting(result, llm, calls=1 + 2)
    assert result.goal_reached and not result.certified
    repaired = planner.repair(None, [ps(*x) for x in GOOD_PLAN[:4]], ps("Place", "Fridge"), "x")
    assert_accounting(repaired, llm, calls=1 + 1)
    assert "Put the apple in the fridge" in raw.calls[-2].prompt


def test_hierarchical_fewshot_prepends_examples(task, scripted):
    memory = HybridMemory(seeds=[MemoryItem("K05", "Put the mug in the fridge",
                                            (ps("MoveTo", "Mug"),))])
    llm, raw = scripted({"decompose": [{"subgoals": ["all"]}], "expand": [GOOD]})
    result = get_planner("Hierarchical Few-Shot", llm=llm, memory=memory).plan(task)
    assert_accounting(result, llm, calls=2)
    assert all("Put the mug in the fridge" in c.prompt for c in raw.calls)


def test_llmp_goal_solved_by_classical_planner(task, scripted):
    llm, raw = scripted({"goal": [{"goal": "(and (inside Apple Fridge) (closed Fridge))"}]})
    result = get_planner("LLM+P", llm=llm, solve_timeout=None).plan(task)
    assert_accounting(result, llm, calls=1)
    assert result.certified and result.goal_reached
    assert "(inside ?o - thing ?c - thing)" in raw.calls[0].prompt


def test_llmp_retries_a_bad_goal_then_falls_back(task, scripted):
    llm, raw = scripted({"goal": [{"goal": "(and (in Apple Fridge))"},
                                  {"goal": "(inside Banana Fridge)"}],
                         "direct": [GOOD]})
    result = get_planner("LLM+P", llm=llm, solve_timeout=None).plan(task)
    assert_accounting(result, llm, calls=3)
    assert "rejected" in raw.calls[1].prompt
    assert any("fallback" in n for n in result.notes) and result.goal_reached


def test_llmp_repair_solves_from_the_failure_state(task, scripted):
    goal = {"goal": "(and (inside Apple Fridge) (closed Fridge))"}
    llm, _ = scripted({"goal": [goal, goal]})
    planner = get_planner("LLM+P", llm=llm, solve_timeout=None)
    planner.plan(task)
    llm.reset()
    done = [ps(*x) for x in GOOD_PLAN[:4]]
    result = planner.repair(None, done, ps("Place", "Fridge"), "slipped")
    assert_accounting(result, llm, calls=1)
    assert result.certified and result.goal_reached
    assert [x.action for x in result.steps] == ["Place", "Close"]


def test_saycan_scores_times_feasibility(task, scripted):
    def answer(messages, role):
        prompt = messages[-1]["content"]
        options = [line.strip() for line in prompt.split("Candidates:")[1].splitlines()
                   if line.strip()]
        wanted = {0: "MoveTo Apple", 1: "Pick Apple"}
        turn = prompt.count("\n  ") and len([line_ for line_ in prompt.split("Steps so far:")[1]
                                             .split("State:")[0].splitlines()
                                             if line_.strip().startswith(("1.", "2.", "3."))])
        if turn >= 2:
            return {"scores": {}, "done": True}
        scores = {}
        for line in options:
            index, text = line.split(":", 1)
            # the infeasible Pick gets a high score on turn 0 but must lose to feasible MoveTo
            scores[index] = 0.9 if text.strip() == "Pick Apple" else (
                0.5 if text.strip() == wanted[turn] else 0.01)
        return {"scores": scores, "done": False}

    llm, raw = scripted({}, responder=answer)
    result = get_planner("SayCan", llm=llm).plan(task)
    assert [(x.action, x.field("object")) for x in result.steps] == [("MoveTo", "Apple"),
                                                                  ("Pick", "Apple")]
    assert_accounting(result, llm, calls=3)
    assert result.certified
