"""Prompts are stable at the front (planners/prompts.py): every call a planner makes in a domain
starts with the same text, the domain, so a server with prefix caching evaluates it once."""
from __future__ import annotations

import os

from sage_pddl.bench.oracle import reference_responder
from sage_pddl.domains import load_domain
from sage_pddl.llm import get_backend
from sage_pddl.planners import get_planner
from sage_pddl.planners.base import PlanningTask
from sage_pddl.planners.prompts import domain_text
from sage_pddl.tasks import load_task


def _system_prompts(planner: str, task_ids: list[str]) -> list[str]:
    domain = load_domain("ithor")
    tasks = [load_task(f"ithor#{task_id}") for task_id in task_ids]
    seen: list[str] = []
    responder = reference_responder(tasks, lambda _task: domain)

    def answer(messages, role):
        seen.append(messages[0]["content"])
        return responder(messages, role)

    llm = get_backend("scripted", model="reference responder", responder=answer)
    for task in tasks:
        get_planner(planner, llm=llm, seed=0).plan(PlanningTask.from_task(task, domain))
    return seen


def test_every_sage_call_on_every_task_opens_with_the_same_domain_text():
    prompts = _system_prompts("SAGE-NoMemory", ["K01", "K10"])
    front = domain_text(load_domain("ithor"))
    assert len(prompts) >= 4 and all(p.startswith(front) for p in prompts)
    assert len(os.path.commonprefix(prompts)) >= len(front)
    # the task is in the user message: the system prompts of one role do not depend on it
    assert len(set(prompts)) < len(prompts)


def test_baselines_open_with_the_domain_text_too():
    front = domain_text(load_domain("ithor"))
    for planner in ("Direct", "CoT", "ReAct"):
        assert all(p.startswith(front) for p in _system_prompts(planner, ["K01"])), planner
