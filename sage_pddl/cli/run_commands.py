"""Commands that plan and execute: `plan`, `run`, `thor-server` and `demo`.

They drive the planners, LLM backends and environments; like the rest of the CLI they only parse
arguments and call the library.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..env.thor.protocol import port_number
from ..env.thor.server import add_arguments as add_server_arguments
from ..llm.base import check_server
from ..pddl.errors import PDDLSyntaxError, SageError
from ..pddl.model import Location, PlanStep
from .common import (
    EXIT_INVALID,
    EXIT_OK,
    AddCommand,
    add_llm_timeout,
    add_max_context,
    add_placement,
    console,
    err,
    escape,
    format_step,
    load_problem_arg,
    placed,
    print_plan_result,
    whole_number,
)

if TYPE_CHECKING:
    from ..gate import Gate, Verdict
    from ..llm import LLMBackend
    from ..planners.base import PlanningTask
    from ..planners.memory import HybridMemory
    from ..tasks import Task


class _ListPlanners(argparse.Action):
    """`--list-planners`: print the planners and exit, like --help."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="list the planners and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option: str | None = None) -> None:
        try:
            print_planners()
        except BrokenPipeError:  # `| head`: the reader has what it wanted
            pass
        parser.exit(EXIT_OK)


def print_planners(as_json: bool = False) -> None:
    """The registered planners with their summaries, a line each or as a JSON list."""
    # start-up time: imported when the command runs
    from ..planners import available_planners, planner_summary

    names = available_planners()
    if as_json:
        print(json.dumps([{"name": name, "summary": planner_summary(name)} for name in names],
                         indent=2))
        return
    width = max(len(n) for n in names)
    for name in names:
        print(f"{name:<{width}}  {planner_summary(name)}")


def cmd_planners(args: argparse.Namespace) -> int:
    print_planners(as_json=args.json)
    return EXIT_OK


def cmd_tasks(args: argparse.Namespace) -> int:
    """The bundled task sets with their sizes, or the tasks of one set."""
    from ..tasks import BUNDLED, TaskSetError, load_taskset  # start-up time: on use
    from ..tasks.sets import NAMED  # start-up time: imported when the command runs

    if not args.set:
        sets: list[dict[str, Any]] = [{"set": name, "file": file, "tasks": len(load_taskset(name))}
                                      for name, file in BUNDLED.items()]
        for name, named in NAMED.items():
            try:
                size: int | None = len(load_taskset(name))
            except TaskSetError:
                size = None  # its extra is not installed
            sets.append({"set": name, "file": named.description, "tasks": size})
        if args.json:
            print(json.dumps(sets, indent=2))
        else:
            for entry in sets:
                count = "  -" if entry["tasks"] is None else entry["tasks"]
                print(f"{entry['set']:<12} {count:>4} tasks  {entry['file']}")
            print("\nAlso a task set: a task-set JSON file, or PDDL problem files (a folder or "
                  "a glob such as 'problems/*.pddl').")
        return EXIT_OK
    tasks = load_taskset(args.set)
    listing = [{"task_id": t.task_id, "domain": t.domain, "difficulty": t.difficulty,
                "reference_steps": len(t.reference_steps), "members": list(t.members),
                "instruction": t.instruction} for t in tasks]
    if args.json:
        print(json.dumps(listing, indent=2))
        return EXIT_OK
    out = console()
    # columns as wide as their longest entry (BEHAVIOR's and ALFWorld's ids are long)
    widths = {field: max((len(str(entry[field])) for entry in listing), default=0)
              for field in ("task_id", "domain", "difficulty", "reference_steps")}
    for entry in listing:
        out.print(f"{entry['task_id']:<{widths['task_id']}}  {entry['domain']:<{widths['domain']}}"
                  f"  {entry['difficulty']:<{widths['difficulty']}}  "
                  f"{entry['reference_steps']:>{widths['reference_steps']}} ref  "
                  f"{entry['instruction']}", markup=False, highlight=False)
    return EXIT_OK


def _add_llm_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--planner", default="SAGE", help="planner name (see --list-planners); default SAGE")
    p.add_argument("--list-planners", action=_ListPlanners)
    p.add_argument("--llm", default="ollama", help="LLM backend: ollama, openai, local, scripted, replay")
    p.add_argument("--model", default=None, help="model name for the backend (ollama default: qwen2.5:7b)")
    p.add_argument("--llm-host", default=None, help="LLM server URL (default: $OLLAMA_HOST or http://localhost:11434)")
    add_max_context(p)
    add_llm_timeout(p)
    p.add_argument("--cassette", default=None,
                   help="record/replay every LLM call to this JSONL cassette (wraps --llm)")
    p.add_argument("--llm-script", default=None, metavar="FILE",
                   help="JSON script of answers per role for --llm scripted (offline runs, tests)")
    p.add_argument("--seed", type=int, default=None, help="sampling seed passed to the model")
    p.add_argument("--domain", default=None,
                   help="domain name or file (default: the task set's own domain, else ithor)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--memory", default="none", choices=["none", "loo"],
                   help="memory planners (SAGE, Hierarchical Few-Shot, ...): none (default), "
                        "or loo: retrieve from the task's own set with the task left out, as "
                        "bench does (so a cassette recorded by bench replays)")


def make_llm(args: argparse.Namespace, planning: PlanningTask, dataset_task: Task | None = None
             ) -> LLMBackend:
    """The LLM backend the command line names (`bench/backend.py` chooses it, as for `bench`).
    `--llm scripted` without `--llm-script` answers from `dataset_task`'s reference plan (the
    bench's reference responder)."""
    # start-up time: imported when the command runs
    from ..bench.backend import BackendChoice, BackendSettingError, make_backend
    from ..bench.config import default_model  # start-up time: imported when the command runs
    from ..bench.oracle import NOT_A_MODEL  # start-up time: imported when the command runs

    choice = BackendChoice(llm=args.llm, host=args.llm_host, max_context=args.max_context,
                           script=args.llm_script, timeout=args.llm_timeout,
                           one_timeout=True)
    llm = args.llm.lower()
    model = args.model
    if llm == "replay" and args.cassette:
        model = model or cassette_model(args.cassette)
    elif llm == "scripted" and not args.llm_script:
        model = model or default_model(llm, None)
    noted: list[str] = []

    def say(line: str) -> None:
        """The reference responder's notes, after the note that it is no model (and only once
        the settings were found to go together)."""
        if not noted:
            print(f"note: {NOT_A_MODEL}", file=sys.stderr)
        noted.append(line)
        print(f"note: {line}", file=sys.stderr)

    try:
        choice.check(cassette=bool(args.cassette))
        backend = make_backend(choice, model, cassette=args.cassette,
                               tasks=[dataset_task] if dataset_task is not None else [],
                               domain_for=lambda _task: planning.domain, say=say)
    except BackendSettingError as error:
        raise SageError(f"--{error.setting.replace('_', '-')}: {error}") from None
    if llm == "scripted" and not args.llm_script and not noted:
        print(f"note: {NOT_A_MODEL}", file=sys.stderr)
    # A server that is down or lacks the model is a setting error: say so before planning,
    # instead of a plan whose every call failed (with a cassette too: what it does not hold
    # goes to the server).
    if llm != "replay":
        check_server(backend)
    return backend


def cassette_model(path: str) -> str:
    """The model a cassette was recorded with (its first record's), for replaying it."""
    from ..pddl.limits import load_json, read_text  # start-up time: imported when the command runs

    for number, line in enumerate(read_text(path, "the cassette").splitlines(), start=1):
        if line.strip():
            try:
                record = load_json(line, path, "cassette record")
            except PDDLSyntaxError as error:  # located in the line: moved to the file's line
                column = error.loc.column if error.loc else 1
                raise PDDLSyntaxError(error.message, Location(path, number, column),
                                      source_line=error.source_line) from None
            model = record.get("request", {}).get("model") if isinstance(record, dict) else None
            if isinstance(model, str) and model:
                return model
            break
    raise SageError(f"{path}: no model recorded in the cassette's first record; pass --model")


def planning_task(args: argparse.Namespace) -> tuple[PlanningTask, Task | None]:
    """The PlanningTask named by the command line: a task reference, or an instruction with
    --domain and --problem."""
    from ..domains import load_domain  # start-up time: imported when the command runs
    from ..planners.base import PlanningTask  # start-up time: imported when the command runs

    dirs = [os.fspath(d) for d in (getattr(args, "domains_dir", None) or [])]
    if ("#" in args.task and not os.path.exists(args.task)) or args.task.lower().endswith(".pddl"):
        from ..tasks import load_task  # start-up time: imported when the command runs

        task = placed(load_task(args.task), args)
        domain = load_domain(args.domain or getattr(task, "domain", None) or "ithor", domains_dirs=dirs)
        return PlanningTask.from_task(task, domain), task
    if not getattr(args, "problem", None):
        raise SageError("plan: an instruction needs --problem PROBLEM (a .pddl file or "
                        "DATASET.json#TASK_ID); or give a task reference such as ithor#K01")
    domain = load_domain(args.domain or "ithor", domains_dirs=dirs)
    problem = load_problem_arg(args.problem, domain, args)
    planning = PlanningTask(instruction=args.task, domain=domain, problem=problem)
    return planning, _instructed_task(args.problem, planning)


def _instructed_task(ref: str, planning: PlanningTask) -> Task | None:
    """The task of the PROBLEM argument (a task reference or a PDDL problem file) with the
    instruction given, so the reference responder answers for it; and a note on stderr that
    the plan is scored against the problem's goal, not read from the instruction, with what
    the instruction reads as when it differs."""
    from ..pddl.writer import write_formula  # start-up time: imported when the command runs
    from ..tasks import TaskSetError, load_task, read_instruction  # start-up time

    goal = planning.problem.goal
    try:
        task = load_task(ref)
    except (TaskSetError, SageError):
        task = None
    if goal is None or (task is not None and _words(task.instruction) == _words(planning.instruction)):
        return task
    written = write_formula(goal)
    about = f"task {task.task_id} ({task.instruction!r})" if task is not None else ref
    scene_types = [t for o in planning.problem.objects for t in o.types]
    try:
        reading = read_instruction(planning.instruction, scene_types, domain=planning.domain)
    except SageError:  # a domain the household reader has no words for
        reading = None
    read = write_formula(reading.goal) if reading is not None and reading.goal is not None \
        else None
    err(f"note: the plan is scored against the goal of {about}: {written}; the instruction "
        "given is not read for a goal"
        + (f" (it reads as {read}, which differs)" if read is not None and read != written
           else ""))
    if task is None:
        return None
    return dataclasses.replace(task, instruction=planning.instruction)


def _words(text: object) -> str:
    return " ".join(str(text).lower().split())


def cmd_plan(args: argparse.Namespace) -> int:
    from ..planners import get_planner  # start-up time: imported when the command runs

    task, dataset_task = planning_task(args)
    memory = _live_memory(args, task, dataset_task)
    planner = get_planner(args.planner, llm=make_llm(args, task, dataset_task), seed=args.seed,
                          **({"memory": memory} if memory is not None else {}))
    result = planner.plan(task)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print_plan_result(console(), result)
    from ..gate import compile_gate  # start-up time: imported when the command runs

    gate = compile_gate(task.domain, task.problem)
    verdict = gate.check(list(result.steps))
    if not args.json:
        for line in why_not_accepted(gate, result.steps, verdict):
            console(stderr=True).print(line, markup=False)
    return EXIT_OK if plan_accepted(result.steps, verdict) else EXIT_INVALID


def plan_accepted(steps: Sequence[PlanStep], verdict: Verdict) -> bool:
    """The exit contract of `plan`: the gate accepts every step and the goal holds after them
    (a problem without a goal needs only the steps)."""
    return bool(steps) and verdict.valid and verdict.goal_reached is not False


def why_not_accepted(gate: Gate, steps: Sequence[PlanStep], verdict: Verdict
                     ) -> list[str]:
    """Why `plan` exits 1, in words: no steps, the first rejected step, or the goal's literals
    that do not hold after the plan."""
    if not steps:
        return ["exit 1: the planner returned no steps (its notes above say why)"]
    if not verdict.valid:
        first = verdict.violations[0]
        return [f"exit 1: the gate rejects step {first.step + 1} ({first.step_text}): "
                f"{first.message}"]
    if verdict.goal_reached is False:
        unmet = gate.goal_unmet(verdict.final_state)
        return ["exit 1: every step is applicable, but the goal does not hold after the plan; "
                "not true at the end:", *(f"  {text}" for text in unmet)]
    return []


def _live_memory(args: argparse.Namespace, task: PlanningTask, dataset_task: Task | None
                 ) -> HybridMemory | None:
    """The memory of a memory planner with --memory loo (the task's own set, the task left
    out, as `bench` gives it) or --live-memory (that, plus the episodes in the file); None
    otherwise."""
    # start-up time: imported when the command runs
    from ..planners import uses_memory

    wanted = getattr(args, "live_memory", None) or getattr(args, "memory", "none") == "loo"
    if not wanted or not uses_memory(args.planner):
        return None
    from ..planners.memory import HybridMemory  # start-up time: imported when the command runs
    from ..tasks import load_taskset  # start-up time: imported when the command runs

    source = getattr(dataset_task, "source", "") if dataset_task is not None else ""
    pool = load_taskset(source) if source else []
    return HybridMemory.from_tasks(pool, task.domain,
                                   live_path=getattr(args, "live_memory", None))


def cmd_run(args: argparse.Namespace) -> int:
    from ..env import get_env  # start-up time: imported when the command runs
    from ..env.thor.client import ThorClientEnv  # start-up time: imported when the command runs
    from ..planners import get_planner  # start-up time: imported when the command runs

    # start-up time: imported when the command runs
    from ..runtime import injection_index, run_episode

    injection_index(args.inject_failure, 0)  # a bad --inject-failure fails before any planning
    reset_options: dict[str, Any] = {}  # (so does a bad --fault)
    if args.fault:
        if args.env != "symbolic":
            raise SageError("--fault works with --env symbolic; use --inject-failure elsewhere")
        # start-up time: imported when the command runs
        from ..env.faults import FaultSpecError, parse_fault

        faults = []
        for spec in args.fault:
            try:
                faults.append(parse_fault(spec))
            except FaultSpecError as error:
                raise SageError(f"--fault {spec}: {error}") from None
        reset_options["faults"] = faults
    task, dataset_task = planning_task(args)
    memory = _live_memory(args, task, dataset_task)
    planner = get_planner(args.planner, llm=make_llm(args, task, dataset_task), seed=args.seed,
                          **({"memory": memory} if memory is not None else {}))
    env_options: dict[str, Any] = {}
    if args.env == "thor":
        env_options.update(host=args.sim_host, port=args.sim_port)
    if args.env == "virtualhome" and getattr(args, "problem", None):
        env_options["task"] = os.path.splitext(os.path.basename(args.problem))[0]  # EAI id, e.g. 60_1
    if args.log:
        env_options["log"] = args.log
    env = get_env(args.env, **env_options)
    out = console()
    if isinstance(env, ThorClientEnv):  # say what we wait for; fail fast when nothing listens
        console(stderr=True).print(f"checking the thor-server at {env.endpoint} ...",
                                   markup=False)
        try:
            env.check()
        except SageError:
            env.close()
            raise

    shown_notes: set[str] = set()

    def show(kind: str, payload: Any) -> None:
        if args.json:
            return
        if kind == "plan":
            print_plan_result(out, payload)
            shown_notes.update(payload.notes)
        elif kind == "repair":
            out.print(f"[yellow]repair[/yellow]: {len(payload.steps)} steps, {payload.calls} call(s)")
        else:
            colour = {"executed": "green", "failed": "red", "blocked": "magenta",
                      "injected": "red"}[payload.status]
            out.print(f"  [{colour}]{payload.status:>8}[/{colour}] {format_step(payload.step)}"
                      + (f"  [dim]{payload.message}[/dim]" if payload.status != "executed" else ""))

    unmet: list[str] = []
    try:
        report = run_episode(task, planner, env, max_replan=args.max_replan,
                             reset_options=reset_options,
                             gate_before_execute=args.gate_before_execute,
                             inject_failure=args.inject_failure,
                             fail_injection=getattr(dataset_task, "fail_injection", None),
                             on_event=show)
        if report.success is False and not args.json:
            unmet = _unmet_at_the_end(task, env)
    finally:
        env.close()
    if memory is not None and report.success:
        memory.add_episode(task, report.executed_steps)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, default=str))
    else:
        verdict = {True: "[green]goal reached[/green]", False: "[red]goal NOT reached[/red]",
                   None: "no goal"}[report.success]
        out.print(f"{verdict}; step success {report.step_success:.2f} over {report.attempted} "
                  f"attempted ({report.blocked} blocked), {report.dispatch_success:.2f} of "
                  f"dispatched; {report.repairs} repair(s)")
        notes = [n for n in report.notes if n not in shown_notes]  # budget spent, ...
        if args.inject_failure is not None and report.injected_at is None:
            notes.append(f"no failure injected: the episode ended after "
                         f"{len(report.executed_steps)} executed step(s), before the step "
                         f"--inject-failure {args.inject_failure} names")
        for note in notes:
            out.print(f"[dim]note: {escape(note)}[/dim]")
        if unmet:
            err("exit 1: the goal does not hold in the environment at the end; not true there:")
            for text in unmet:
                err(f"  {text}")
    return EXIT_OK if report.success else EXIT_INVALID


def _unmet_at_the_end(task: PlanningTask, env: Any) -> list[str]:
    """The goal's literals that do not hold in the environment's true state (as `plan` names
    them after its plan); none when the environment cannot say its state."""
    from ..gate import compile_gate  # start-up time: imported when the command runs

    try:
        gate = task.gate if task.gate is not None else compile_gate(task.domain, task.problem)
        return gate.goal_unmet(frozenset(env.true_state()))
    except (SageError, NotImplementedError):
        return []


def cmd_thor_server(args: argparse.Namespace) -> int:
    from ..env.thor.server import serve_from_args  # start-up time: imported when the command runs

    return serve_from_args(args)


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo  # start-up time: imported when the command runs

    return run_demo(llm=args.llm, model=args.model, host=args.llm_host, json_output=args.json,
                    timeout=args.llm_timeout)


def register(add_command: AddCommand) -> None:
    p = add_command("plan", cmd_plan, "Plan a task with an LLM planner and print the gated sub-goal blocks.")
    p.add_argument("task", help="a task reference (DATASET.json#TASK_ID, ithor#K01), a PDDL "
                                "problem file (its domain: --domain), or an instruction with "
                                "--problem")
    p.add_argument("--problem", help="problem file or DATASET.json#TASK_ID (with an instruction)")
    add_placement(p)
    _add_llm_options(p)

    p = add_command("run", cmd_run, "Plan and execute a task in an environment, repairing on failure.")
    p.add_argument("task", help="a task reference (DATASET.json#TASK_ID, ithor#K01), a PDDL "
                                "problem file (its domain: --domain), or an instruction with "
                                "--problem")
    p.add_argument("--problem", help="problem file (with an instruction)")
    add_placement(p)
    p.add_argument("--env", default="symbolic", help="symbolic (default), thor, virtualhome, alfworld")
    p.add_argument("--max-replan", type=whole_number(0), default=3,
                   help="repairs allowed per episode (default 3)")
    p.add_argument("--gate-before-execute", action="store_true",
                   help="gate every step against the believed state before dispatch; blocked "
                        "steps are repaired and counted")
    p.add_argument("--inject-failure", default=None, metavar="K|auto",
                   help="fail the step at 0-based index K (0: the first step), or with 'auto' the "
                        "task's own or the middle step")
    p.add_argument("--sim-host", default="127.0.0.1", help="thor-server host (--env thor)")
    p.add_argument("--sim-port", type=port_number, default=5555, help="thor-server port (--env thor)")
    p.add_argument("--fault", action="append", default=[], metavar="SPEC",
                   help="inject a fault in the symbolic world: fail@K:REASON, random:RATE:seed=N, "
                        "vanish:OBJECT@K (repeatable)")
    p.add_argument("--log", default=None, help="append every transition to this JSONL file")
    p.add_argument("--live-memory", default=None, metavar="FILE",
                   help="memory planners retrieve from the task's set and the episodes in FILE "
                        "(the task's own left out); a run that reaches the goal is appended")
    _add_llm_options(p)

    p = add_command("planners", cmd_planners,
                    "List the planners (baselines and ablations included).", domains=False)
    p.add_argument("--json", action="store_true", help="print a list of {name, summary} as JSON")

    p = add_command("tasks", cmd_tasks, "List the bundled task sets, or the tasks of one set.",
                    domains=False)
    p.add_argument("set", nargs="?", default=None,
                   help="a bundled set (without SET: the list), a task-set JSON file, or PDDL "
                        "problem files (folder or glob)")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = add_command("thor-server", cmd_thor_server,
                "Serve an environment over ZMQ (AI2-THOR, or the symbolic world for testing).")
    add_server_arguments(p)
    add_placement(p)

    p = add_command("demo", cmd_demo, "Plan, gate, repair and execute a household task, no "
                    "server needed.", domains=False)
    p.add_argument("--llm", default="auto",
                   help="auto (Ollama if one answers with the model, else a fixed script that "
                        "is not a model), ollama, scripted (the script)")
    p.add_argument("--model", default=None, help="Ollama model (default qwen2.5:7b)")
    p.add_argument("--llm-host", default=None,
                   help="Ollama server URL (default: $OLLAMA_HOST or http://localhost:11434)")
    add_llm_timeout(p)
    p.add_argument("--json", action="store_true", help="print the demo's results as JSON")
