"""Plan-level evaluation (`sage_pddl.induce.plans`): gold plans gated, problems solved by Fast
Downward, plans executed by a simulator, on the relay example; and the VirtualHome tool on a
few EAI tasks (slow: EAI's evaluator)."""
from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from sage_pddl.env.symbolic import SymbolicEnv
from sage_pddl.induce.plans import plan_outcome, plan_summary, plan_table
from sage_pddl.pddl import load_domain, load_problem
from sage_pddl.pddl.model import Atom
from tests.steps import as_step

pytest.importorskip("up_fast_downward", reason="the 'planners' extra is part of the test extra")

ROOT = Path(__file__).resolve().parents[2]
RELAY = ROOT / "examples" / "relay"


def simulator(domain, problem):
    """Executes plan steps in the symbolic world of the real relay domain: goal reached?"""
    def execute(steps) -> bool:
        env = SymbolicEnv(domain)
        env.reset(problem)
        return all(env.step(as_step(step)).success for step in steps) and bool(env.goal_reached())
    return execute


def without_effect(domain, action: str, predicate: str):
    """`domain` whose `action` no longer adds `predicate` (an induced domain that missed it)."""
    actions = []
    for a in domain.actions:
        if a.name == action:
            parts = tuple(p for p in a.effect.parts
                          if not (isinstance(p, Atom) and p.predicate == predicate))
            a = dataclasses.replace(a, effect=dataclasses.replace(a.effect, parts=parts))
        actions.append(a)
    return dataclasses.replace(domain, name="relay-missing", actions=tuple(actions))


def test_gold_plans_gated_solved_and_executed_for_each_domain():
    relay = load_domain(RELAY / "domain.pddl")
    problem = load_problem(RELAY / "problems" / "p01.pddl")
    execute = simulator(relay, problem)
    good = plan_outcome("p01", relay, problem, (), execute, True)
    assert good.solved and good.reaches_goal and good.plan
    gold = good.plan  # Fast Downward's plan in the real domain stands for the gold plan
    assert plan_outcome("p01", relay, problem, gold, execute, True).accepted
    # a domain that forgot that a pickup loads the courier refuses the gold plan at the first
    # step that needs it, and cannot plan
    broken = without_effect(relay, "pickup", "carries")
    outcome = plan_outcome("p01", broken, problem, gold, execute, execute(gold))
    assert outcome.accepted is False and "refused" in outcome.note
    assert not outcome.solved and not outcome.reaches_goal
    summary = plan_summary([good, outcome])
    assert summary["relay"]["reaches_goal"] == 1.0
    assert summary["relay-missing"]["accepted_of_executable"] == 0.0
    table = plan_table(summary, {"relay": "hand-written"})
    assert "| hand-written | 1 | 1 | 1.000 |" in table and "| relay-missing | 1 |" in table


def test_a_domain_that_cannot_read_the_problem_says_so():
    relay = load_domain(RELAY / "domain.pddl")
    problem = load_problem(RELAY / "problems" / "p01.pddl")
    other = dataclasses.replace(relay, types=(), name="untyped")
    outcome = plan_outcome("p01", other, problem, (), lambda steps: True, True)
    assert outcome.accepted is None and outcome.note.startswith("problem not read")


@pytest.mark.slow
def test_the_virtualhome_tool_on_a_few_held_out_tasks(tmp_path, capsys):
    pytest.importorskip("virtualhome_eval", reason="the 'virtualhome' extra")
    # optional extra 'virtualhome'
    from sage_pddl.env.virtualhome import VirtualHomeEnv, eai_gold_pddl_plans

    gold = eai_gold_pddl_plans()
    # logs: the gold plans of a few other tasks, executed by EAI's simulator
    logs = tmp_path / "logs"
    logs.mkdir()
    for task in ("11_1", "15_2", "23_1", "46_1", "70_1", "113_1"):
        env = VirtualHomeEnv(additional_step_fails=True)
        env.reset(task)
        records = []
        for step in gold[task]:
            env.step(as_step(step))
            # named by the task set, as collection names them, so the problem can be read
            records.append(dataclasses.replace(env.last_transition, task=f"virtualhome#{task}"))
        (logs / f"{task}.jsonl").write_text(
            "".join(json.dumps(t.to_json()) + "\n" for t in records))
    sys.path.insert(0, str(ROOT / "tools"))
    import induce_plans  # a tool, on the path only here

    out = tmp_path / "plans.jsonl"
    assert induce_plans.main(["--logs", str(logs), "--out", str(out), "--task", "3_1",
                              "--task", "6_1", "--folds", "2"]) == 0
    table = capsys.readouterr().out
    assert "| EAI's hand-written domain (bundled virtualhome) | 2 |" in table
    assert "| induced from held-out VirtualHome logs | 2 |" in table
    assert len(out.read_text().splitlines()) == 4  # two tasks, two domains
