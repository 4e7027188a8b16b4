"""A model's answer is data: unusable answers are failed plans, and runaway answers hit caps.

L1: a deeply nested JSON answer (or one with a 5,000-digit number, or 1 MB of text) used to
raise RecursionError/ValueError out of every planner that parses JSON. Now every planner
returns a plan (empty or partial) and names the reason in its notes and call log.
L2: a decomposition of 10,000 sub-goals used to cost 10,000 expand calls.

The scripted backend answers here; it exercises the planners' handling of answers, not a model.
"""
from __future__ import annotations

import pytest

from sage_pddl.planners import available_planners, get_planner
from sage_pddl.planners.base import MAX_CALLS, MAX_SUBGOALS, CallLog

from .conftest import GOOD_PLAN, steps

DEEP = "[" * 5000 + "]" * 5000
HUGE_NUMBER = '{"steps": [{"action": "MoveTo", "object": "Apple", "n": ' + "9" * 5000 + "}]}"
HUGE_TEXT = "MoveTo Apple\n" * 100_000


@pytest.mark.parametrize("answer", [DEEP, HUGE_NUMBER, HUGE_TEXT],
                         ids=["deep", "long-number", "huge"])
@pytest.mark.parametrize("name", [n for n in available_planners()])
def test_every_planner_turns_an_unusable_answer_into_a_failed_plan(name, answer, task,
                                                                  scripted):
    llm, _ = scripted({}, responder=lambda messages, role: answer)
    result = get_planner(name, llm=llm).plan(task)
    assert not result.goal_reached
    assert any("unusable" in note for note in result.notes), result.notes
    assert any(not call.ok and "unusable answer" in call.error for call in result.call_log)


def test_ten_thousand_subgoals_are_capped(task, scripted):
    subgoals = {"subgoals": [f"step {i}" for i in range(10_000)]}
    for name in ("Hierarchical", "Hierarchical Few-Shot", "SAGE"):
        llm, raw = scripted({"decompose": [subgoals]},
                            responder=lambda messages, role: steps(*GOOD_PLAN))
        result = get_planner(name, llm=llm).plan(task)
        assert "max_subgoals" in result.limits_hit, name
        assert result.calls <= MAX_SUBGOALS * 5 + 2, (name, result.calls)
        assert result.to_dict()["limits_hit"] == list(result.limits_hit)


def test_the_call_cap_stops_a_run_and_is_reported(scripted):
    llm, raw = scripted({}, responder=lambda messages, role: "[]")
    log = CallLog(llm, max_calls=3)
    answers = [log.complete([{"role": "user", "content": "x"}], role="expand")
               for _ in range(5)]
    assert answers == ["[]", "[]", "[]", None, None]
    assert len(raw.calls) == 3 and log.limits_hit == ["max_calls"]
    assert sum("call cap reached" in note for note in log.notes) == 1
    assert MAX_CALLS >= 21  # SAGE's own budget (5 sub-goals, 3 refines each) fits
