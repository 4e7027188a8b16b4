"""LLM planners behind one interface, found by name through one registry.

`get_planner(name, llm, **options)` builds a planner: `SAGE`, `Direct`, `CoT`, `Few-Shot CoT`,
`Self-Refine`, `ReAct`, `Hierarchical`, `Hierarchical Few-Shot`, `LLM+P`, `SayCan`, and the
ablations `SAGE-NoVerifier`, `SAGE-NoRepair`, `SAGE-NoMemory`. Names match ignoring case, spaces,
`-`, `_` and `+` (`few-shot-cot`, `llmp`, `HierarchicalFewShot`). `register_planner(name, factory)`
adds one (`uses_memory=True`: its prompts take retrieved examples, and it is given a memory as the
bundled ones are); `available_planners()` lists them. Every planner implements `plan(task) ->
PlanResult` and `repair(state, done, failed_step, reason) -> PlanResult` (see `base.py`).

`plan_task(task_ref_or_task, planner="SAGE", llm=..., domain=...)` is the one-call entry point for
the CLI: it loads a dataset task (`"ithor#K01"`, `"path.json#ID"`) or takes a `Task` or
`PlanningTask`, loads the domain, builds the memory (the task's own task set, leave-one-out) for
planners that use one, and returns the `PlanResult`.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sage_pddl import tasks as task_module
from sage_pddl.domains import load_domain
from sage_pddl.llm import LLMBackend
from sage_pddl.pddl.model import Domain
from sage_pddl.pddl.registry import Registry

from .base import CallLog, CallRecord, Planner, PlannerError, PlanningTask, PlanResult, SubgoalBlock
from .memory import HybridMemory

MEMORY = "memory"
"""The trait of a planner whose prompts use retrieved examples (`uses_memory`)."""

PLANNERS: Registry[Planner] = Registry("planner", PlannerError, {
    "SAGE": "sage_pddl.planners.sage:sage",
    "SAGE-NoVerifier": "sage_pddl.planners.sage:sage_no_verifier",
    "SAGE-NoRepair": "sage_pddl.planners.sage:sage_no_repair",
    "SAGE-NoMemory": "sage_pddl.planners.sage:sage_no_memory",
    "Direct": "sage_pddl.planners.direct:DirectPlanner",
    "CoT": "sage_pddl.planners.cot:CoTPlanner",
    "Few-Shot CoT": "sage_pddl.planners.fewshot:FewShotCoTPlanner",
    "Self-Refine": "sage_pddl.planners.self_refine:SelfRefinePlanner",
    "ReAct": "sage_pddl.planners.react:ReActPlanner",
    "Hierarchical": "sage_pddl.planners.hierarchical:HierarchicalPlanner",
    "Hierarchical Few-Shot": "sage_pddl.planners.hierarchical:HierarchicalFewShotPlanner",
    "LLM+P": "sage_pddl.planners.llmp:LLMPPlanner",
    "SayCan": "sage_pddl.planners.saycan:SayCanPlanner",
}, traits={name: {MEMORY} for name in ("SAGE", "SAGE-NoVerifier", "SAGE-NoRepair",
                                       "Few-Shot CoT", "Hierarchical Few-Shot")})
"""Every planner by name: `factory(llm, **options) -> Planner` (`pddl/registry.py`'s rules),
with the trait `MEMORY` where its prompts use retrieved examples."""


def uses_memory(name: str) -> bool:
    """Whether the planner `name`'s prompts use retrieved examples: `plan_task` and the bench
    give it a memory (`memory=`)."""
    return PLANNERS.has(name, MEMORY)


def available_planners() -> list[str]:
    """The registered planners' names, in the order they were registered."""
    return PLANNERS.names()


def canonical_name(name: str) -> str:
    """The planner's name as registered (`few-shot-cot` -> `Few-Shot CoT`)."""
    return PLANNERS.canonical(name)


def register_planner(name: str, factory: Callable[..., Planner] | str, *,
                     replace: bool = False, uses_memory: bool = False) -> None:
    """Register `factory(llm, **options) -> Planner`, or "module:attribute", under `name`;
    `uses_memory`: the factory takes `memory=` (a `HybridMemory`) and is given one."""
    PLANNERS.register(name, factory, replace=replace, traits={MEMORY} if uses_memory else ())


def planner_summary(name: str) -> str:
    """The first line of the docstring of the planner's factory (or its module)."""
    factory = PLANNERS.factory(name)
    doc = factory.__doc__ or inspect.getmodule(factory).__doc__ or ""
    return doc.strip().split("\n")[0]


def get_planner(name: str, llm: LLMBackend | None = None, **options: Any) -> Planner:
    """Build the planner registered as `name` with backend `llm` and its options."""
    canonical = canonical_name(name)
    if llm is None:
        raise PlannerError(f"planner {canonical!r} needs an LLM backend: pass llm=...")
    planner = PLANNERS.build(canonical, llm, **options)
    if getattr(planner, "name", None) in (None, "", "LLMPlanner"):
        planner.name = canonical
    return planner


def plan_task(task_ref_or_task: str | task_module.Task | PlanningTask, planner: str = "SAGE",
              llm: LLMBackend | None = None, domain: Domain | str | None = None, *,
              memory: HybridMemory | None = None, live_memory: Path | str | None = None,
              **options: Any) -> PlanResult:
    """Plan one task with the named planner (see the module docstring)."""
    canonical = canonical_name(planner)
    dataset_tasks = None
    if isinstance(task_ref_or_task, PlanningTask):
        planning_task = task_ref_or_task
    else:
        task = task_ref_or_task
        if isinstance(task, str):
            ref = task
            task = task_module.load_task(ref)
            dataset_ref = ref.rsplit("#", 1)[0]
            try:
                dataset_tasks = task_module.load_taskset(dataset_ref)
            except Exception:  # memory is an aid: a task set that will not load just skips it
                dataset_tasks = None
        if not isinstance(domain, Domain):
            domain = load_domain(domain or getattr(task, "domain", None) or "ithor")
        planning_task = PlanningTask.from_task(task, domain)
    if memory is None and uses_memory(canonical) and dataset_tasks:
        memory = HybridMemory.from_tasks(dataset_tasks, planning_task.domain,
                                         live_path=live_memory)
    if memory is not None and uses_memory(canonical):
        options.setdefault("memory", memory)
    return get_planner(canonical, llm, **options).plan(planning_task)


__all__ = ["PLANNERS", "CallLog", "CallRecord", "Planner", "PlannerError", "PlanningTask", "PlanResult",
           "SubgoalBlock", "available_planners", "canonical_name", "get_planner", "plan_task",
           "register_planner", "uses_memory"]
