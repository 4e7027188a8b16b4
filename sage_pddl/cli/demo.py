"""`sage-pddl demo`: the whole pipeline on one household task, on a fresh machine, offline.

The story, on iTHOR task K19 ("Put the apple in the cabinet and close it", AI2-THOR FloorPlan1):

1. The task becomes a PDDL problem of the bundled `ithor` domain; the gate checks the task's
   reference plan (accepted) and a broken plan (rejected, with typed reasons).
2. SAGE plans it: decompose into sub-goals, expand each, gate each block. The model forgets to
   open the cabinet; the gate rejects that block with a typed reason and the Refine call fixes
   only that sub-goal.
3. The plan runs in the symbolic world with an injected failure at the PutIn step. SAGE repairs
   only the failed sub-goal's suffix (its repair is gated too) and keeps the later block.
4. Success is the PDDL goal checked against the world's true state.

The LLM is Ollama when a server answers at the default host (or `--llm-host`) and has the model;
otherwise a fixed script, labelled as such: its answers are written in advance to make the
mistakes small models make (it is not a model and does not read the prompts).
"""
from __future__ import annotations

import json
import math
from typing import Any

from ..llm.base import DEFAULT_MODEL, check_server
from ..pddl.plans import step_from_json
from .common import EXIT_INVALID, EXIT_OK, format_step, print_plan_result

TASK_REF = "ithor#K19"
BROKEN_PLAN = [step_from_json(step, index) for index, step in enumerate([
    {"action": "Pick", "object": "Apple"},
    {"action": "MoveTo", "object": "Cabinet"},
    {"action": "PutIn", "object": "Cabinet"},
    {"action": "Close", "object": "Cabinet"},
])]
INJECT_AT = 4  # 0-based: the 5th step, PutIn, of the scripted plan: MoveTo, Pick, MoveTo, Open,
# PutIn, Close. Shown to the user counted from 1, as `gate` and `run` count steps.
SCRIPT_LABEL = "a fixed script of answers (not a model; it does not read the prompts)"


GOAL_ORIGIN = {
    "goals": "the reviewed goal written for the task, data/sage/goals",
    "instruction": "read from the instruction",
    "reference": "what the reference plan changes",
    "none": "no goal",
}
"""How the demo names where the task's goal comes from (`TaskScene.goal_source`)."""


def _steps(*pairs: tuple[str, str]) -> dict:
    return {"steps": [{"action": a, "object": o} for a, o in pairs]}


def scripted_small_model():
    """A fixed script standing in for a small model, with a small model's typical mistakes:
    it forgets to open a closed container before putting something in it, and after a failure
    it starts the sub-goal again by picking up the apple it is holding."""
    from ..llm import get_backend  # start-up time: imported when the command runs

    return get_backend("scripted", model="fixed script", script={
        "decompose": [{"subgoals": ["Pick up the apple", "Put the apple in the cabinet",
                                    "Close the cabinet"]}],
        "expand": [
            _steps(("MoveTo", "Apple"), ("Pick", "Apple")),
            _steps(("MoveTo", "Cabinet"), ("PutIn", "Cabinet")),  # forgets Open
            _steps(("Close", "Cabinet"),),
        ],
        "refine": [
            _steps(("MoveTo", "Cabinet"), ("Open", "Cabinet"), ("PutIn", "Cabinet")),
            _steps(("PutIn", "Cabinet"),),
        ],
        "repair": [_steps(("Pick", "Apple"), ("PutIn", "Cabinet"))],  # the apple is in hand
    })


AUTO_CHECK_SECONDS = 2.0
"""How long `--llm auto` waits for the Ollama server's list of models (the whole exchange)."""


def choose_llm(llm: str, model: str | None, host: str | None,
               timeout: float | None = None) -> tuple[Any, str]:
    """(backend, label). `auto` uses Ollama only when it answers and has the model; the Ollama
    backend is made as `plan` and `bench` make it (`bench/backend.py`)."""
    # start-up time: imported when the command runs
    from ..bench.backend import BackendChoice, make_backend
    from ..llm.errors import LLMError  # start-up time: as above
    from ..llm.ollama import list_models  # start-up time: as above

    wanted = model or DEFAULT_MODEL
    if llm == "scripted":
        return scripted_small_model(), f"{SCRIPT_LABEL}; no LLM server used"
    served: list[str] = []
    if llm == "auto":  # one bounded request: whatever listens on the port may be no Ollama
        try:
            served = list_models(host, timeout=min(AUTO_CHECK_SECONDS, timeout or math.inf))
        except LLMError:
            pass
    if llm == "ollama" or any(m.split(":")[0] == wanted.split(":")[0] or m == wanted
                              for m in served):
        backend = make_backend(BackendChoice(llm="ollama", host=host, timeout=timeout,
                                             one_timeout=True), wanted)
        if llm == "ollama":  # asked for by name: a dead server is a setting error
            check_server(backend)
        return backend, f"Ollama model {wanted}"
    if llm != "auto":
        from ..pddl.errors import SageError  # start-up time: imported when the command runs

        raise SageError(f"demo: --llm must be auto, ollama or scripted, got {llm!r}")
    return scripted_small_model(), (f"{SCRIPT_LABEL}; no Ollama server with {wanted} "
                                    "answered")


def run_demo(llm: str = "auto", model: str | None = None, host: str | None = None,
             json_output: bool = False, timeout: float | None = None) -> int:
    from rich.console import Console  # start-up time: imported when the command runs
    from rich.panel import Panel  # start-up time: imported when the command runs
    from rich.table import Table  # start-up time: imported when the command runs

    from ..domains import load_domain  # start-up time: imported when the command runs
    from ..env import get_env  # start-up time: imported when the command runs
    from ..gate import compile_gate  # start-up time: imported when the command runs
    from ..planners import get_planner  # start-up time: imported when the command runs
    from ..planners.base import PlanningTask  # start-up time: imported when the command runs
    from ..runtime import run_episode  # start-up time: imported when the command runs
    from ..tasks import load_task, normalize_steps, task_scene  # start-up time: as above

    out = Console(highlight=False, soft_wrap=True, quiet=json_output)
    domain = load_domain("ithor")
    task = load_task(TASK_REF)
    planning = PlanningTask.from_task(task, domain)
    backend, label = choose_llm(llm, model, host, timeout)
    out.print(Panel(f"[bold]{task.instruction}[/bold]\n{TASK_REF}, AI2-THOR {task.scene}\n"
                    f"LLM: {label}", title="sage-pddl demo"), soft_wrap=False)

    out.rule("1. The gate: the domain file, compiled")
    gate = compile_gate(domain, planning.problem)
    # the goal as written for the task (types, not the scene's instances it expands to)
    scene = task_scene(task, domain)
    out.print(f"domain [bold]ithor[/bold]: {len(domain.actions)} actions; problem: "
              f"{len(planning.problem.objects)} objects, {len(gate.initial_state)} facts; "
              f"goal {' '.join(scene.goal_text.split())} ({GOAL_ORIGIN[scene.goal_source]})")
    reference = normalize_steps(task.reference_steps, domain)
    good = gate.check(reference)
    out.print(f"reference plan ({len(reference)} steps): "
              + ("[green]accepted[/green]" if good.valid else "[red]rejected[/red]")
              + f", goal reached: {good.goal_reached}")
    broken = gate.check(BROKEN_PLAN, mode="all")
    out.print("broken plan: " + " → ".join(format_step(s) for s in BROKEN_PLAN))
    for v in broken.violations:
        out.print(f"  [red]✗ step {v.step + 1}[/red] {v.step_text}: [bold]{v.code}[/bold] — "
                  f"{v.message} [dim]needs {v.literal}[/dim]")

    out.rule("2. SAGE plans: decompose, expand, gate, refine")
    planner = get_planner("SAGE", llm=backend)
    events: list[tuple[str, Any]] = []

    def show(kind: str, payload: Any) -> None:
        events.append((kind, payload))
        if kind == "plan":
            print_plan_result(out, payload)
            out.rule("3. Execute in the symbolic world, with a failure injected at step "
                     f"{INJECT_AT + 1}")
        elif kind == "repair":
            out.print("[yellow]local repair of the failed sub-goal:[/yellow]")
            print_plan_result(out, payload)
        else:
            colour = {"executed": "green", "failed": "red", "blocked": "magenta",
                      "injected": "red"}[payload.status]
            extra = "" if payload.status == "executed" else f"  [dim]{payload.message}[/dim]"
            out.print(f"  [{colour}]{payload.status:>8}[/{colour}] {format_step(payload.step)}{extra}")

    env = get_env("symbolic")
    try:
        report = run_episode(planning, planner, env, max_replan=2, inject_failure=INJECT_AT,
                             on_event=show)
    finally:
        env.close()

    out.rule("4. Summary")
    table = Table(show_header=False)
    table.add_row("goal reached (PDDL goal, true state)", str(report.success))
    table.add_row("recovered from the injected failure", str(report.recovered))
    table.add_row("steps executed / attempted", f"{report.executed} / {report.attempted}")
    table.add_row("repairs", str(report.repairs))
    table.add_row("LLM calls: planning + repair", f"{report.planning_calls} + {report.repair_calls}")
    table.add_row("tokens (prompt + output)", f"{report.prompt_tokens} + {report.output_tokens}")
    table.add_row("time", f"{report.seconds:.2f} s")
    out.print(table)
    if json_output:
        print(json.dumps({"llm": label, "task": TASK_REF,
                          "reference_valid": good.valid,
                          "broken_plan_violations": [v.code for v in broken.violations],
                          "episode": report.to_dict()}, indent=2, default=str))
    return EXIT_OK if report.success else EXIT_INVALID
