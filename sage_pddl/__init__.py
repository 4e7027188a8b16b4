"""sage-pddl: declarative, PDDL-centric LLM task planning for robots.

Domains are PDDL files; the gate compiled from a domain and a problem checks a plan step by step
and names the precondition that failed. The public API is re-exported here and imported lazily,
so `import sage_pddl` stays cheap:

    load_domain(name_or_path)      a bundled/drop-in domain by name, or a file
    load_problem(path)             a PDDL problem file
    parse_plan(text)               IPC, VAL, JSON or plain-line plans
    compile_gate(domain, problem)  -> Gate; Gate.check(plan) -> Verdict
    load_task("ithor#K01")         a task of a bundled or given task set
    plan_task(task, planner=...)   plan a task with a registered planner
    run_episode(task, planner, env)  plan, execute, repair; honest accounting
    run_benchmark(config)          planners x models x tasks x seeds -> results.jsonl
    induce(paths)                  learn a PDDL domain from logged transitions
"""
from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "load_domain": "sage_pddl.domains",
    "list_domains": "sage_pddl.domains",
    "load_problem": "sage_pddl.pddl",
    "parse_domain": "sage_pddl.pddl",
    "parse_problem": "sage_pddl.pddl",
    "parse_plan": "sage_pddl.pddl",
    "load_plan": "sage_pddl.pddl",
    "compile_gate": "sage_pddl.gate",
    "Gate": "sage_pddl.gate",
    "Verdict": "sage_pddl.gate",
    "Violation": "sage_pddl.gate",
    "load_task": "sage_pddl.tasks",
    "load_taskset": "sage_pddl.tasks",
    "task_problem": "sage_pddl.tasks",
    "plan_task": "sage_pddl.planners",
    "get_planner": "sage_pddl.planners",
    "get_backend": "sage_pddl.llm",
    "get_env": "sage_pddl.env",
    "run_episode": "sage_pddl.runtime",
    "run_benchmark": "sage_pddl.bench",
    "induce": "sage_pddl.induce",
    "SageError": "sage_pddl.pddl.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'sage_pddl' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
