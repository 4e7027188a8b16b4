"""What every `sage-pddl` command shares: exit codes, console output, and argument resolution.

Exit codes (the one definition; README.md documents them): 0 success or a valid plan, 1 an
invalid plan or a failed check, 2 a usage or input error (every `SageError`) or an environment
error (an `OSError`: permission denied, a full disk), 70 an internal error (a bug). Command
modules import from here and never from each other, so the CLI's imports run one way:
`cli/__init__` -> command groups -> `common`.

Argument resolution: a DOMAIN argument is a file or a bundled/drop-in domain name; a PROBLEM is a
`.pddl` file or a task reference `DATASET.json#TASK_ID`; a PLAN is a plan file in any format
(`-` for stdin) or, where a command says so, a task reference whose reference steps are the plan.

Library modules are imported inside the functions that need them: `sage-pddl --help` and the
PDDL-only commands must not pay for numpy, the planners or the environments (start-up time).
"""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..pddl.errors import SageError
from ..pddl.limits import printable
from ..pddl.model import PlanStep
from ..pddl.vocabulary import step_text

if TYPE_CHECKING:
    from rich.console import Console
    from tqdm import tqdm

    from ..pddl.model import Domain, Plan, Problem
    from ..planners.base import PlanResult
    from ..tasks.taskset import Task

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_INPUT = 2
EXIT_INTERNAL = 70  # EX_SOFTWARE: a bug in sage-pddl, not bad input
EXIT_INTERRUPTED = 130
EXIT_CODES_HELP = (f"exit codes: {EXIT_OK} success or a valid plan; {EXIT_INVALID} an invalid plan, a "
                   f"missed goal or a failed check (bench: rows that could not run); "
                   f"{EXIT_INPUT} a usage or input error; {EXIT_INTERNAL} an internal error "
                   f"(a bug); {EXIT_INTERRUPTED} interrupted")


class VerdictExit(Exception):
    """Ends a command with `code` at once, its output cut short (a closed stdout pipe) but its
    verdict kept: `cli.main` returns the code."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


Handler = Callable[[argparse.Namespace], int]


class AddCommand(Protocol):
    """What a command group's `register` receives: adds one sub-command and returns its parser
    (with `--domains-dir` unless `domains=False`: a command that reads no domain)."""

    def __call__(self, name: str, handler: Handler, help: str,
                 domains: bool = True) -> argparse.ArgumentParser: ...


# --- output ----------------------------------------------------------------------------------

def escape(text: str) -> str:
    """Text shown through rich markup: brackets in PDDL or plan text must stay literal."""
    from rich.markup import escape as rich_escape  # start-up time

    return rich_escape(text)


def console(stderr: bool = False, quiet: bool = False) -> Console:
    """A rich console whose `print` shows the control characters of the text it is given as
    escapes (`printable`): what it prints comes from data, and must not drive the terminal."""
    from rich.console import Console  # start-up time

    class _PrintableConsole(Console):
        def print(self, *objects: Any, **options: Any) -> None:
            super().print(*(printable(o) if isinstance(o, str) else o for o in objects),
                          **options)

    return _PrintableConsole(stderr=stderr, highlight=False, soft_wrap=True, quiet=quiet)


def shows_progress(args: argparse.Namespace) -> bool:
    """Progress goes to stderr only when it is a terminal, and not with `--no-progress` (or
    `--json`, whose reader wants one document and nothing beside it)."""
    return (not getattr(args, "no_progress", False) and not getattr(args, "json", False)
            and sys.stderr.isatty())


@contextlib.contextmanager
def status(args: argparse.Namespace, text: str) -> Iterator[None]:
    """A spinner with `text` on stderr while the block runs (see `shows_progress`)."""
    if not shows_progress(args):
        yield
        return
    with console(stderr=True).status(printable(text)):
        yield


def progress_bar(args: argparse.Namespace, total: int | None, what: str, unit: str = "it"
                 ) -> tqdm:
    """A tqdm bar on stderr (see `shows_progress`; a disabled bar counts and prints nothing)."""
    from tqdm import tqdm  # start-up time: imported when the command runs

    return tqdm(total=total, desc=what, unit=unit, file=sys.stderr, dynamic_ncols=True,
                disable=not shows_progress(args), leave=False)


def err(text: str) -> None:
    """One plain line on stderr (no markup, control characters as escapes)."""
    print(printable(text), file=sys.stderr)


def plural(count: int, noun: str) -> str:
    """`1 step`, `2 steps`."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def format_step(step: PlanStep) -> str:
    """A plan step as one line of words: `Place CounterTop`, `put_inside apple fridge`."""
    return step_text(step)


def print_plan_result(out: Console, result: PlanResult) -> None:
    """A planner's `PlanResult`: its sub-goal blocks with the gate's judgement, then a summary.
    Model and PDDL text is escaped: a bracket in a step must not be read as rich markup."""
    if result.blocks:
        for number, block in enumerate(result.blocks, 1):
            mark = "[green]certified[/green]" if block.certified else "[red]UNCERTIFIED[/red]"
            refines = f", {block.refines} refine(s)" if block.refines else ""
            out.print(f"[bold]{number}. {escape(block.subgoal)}[/bold]  "
                      f"({mark}{refines}, {block.origin})")
            for attempt, violations in block.rejected:
                out.print("     [dim]rejected: "
                          + escape(" → ".join(format_step(s) for s in attempt)) + "[/dim]")
                for v in violations:
                    out.print(f"       [red]✗ step {v.step + 1} {escape(v.code)}[/red]: "
                              f"{escape(v.message)}")
            for step in block.steps:
                out.print(f"     {escape(format_step(step))}")
            for v in block.violations:
                out.print(f"     [red]{escape(v.code)}[/red] {escape(v.message)}")
    else:
        for step in result.steps:
            out.print(f"  {escape(format_step(step))}")
    out.print(f"[dim]{escape(result.planner)}: {len(result.steps)} steps, {result.calls} LLM "
              f"calls, {result.prompt_tokens}+{result.output_tokens} tokens, "
              f"{result.seconds:.2f} s; certified={result.certified}, "
              f"goal_reached={result.goal_reached}[/dim]")
    for note in result.notes:
        out.print(f"[dim]note: {escape(note)}[/dim]")


# --- numeric options ---------------------------------------------------------------------------
# argparse `type`s: a value out of range is a usage error naming the flag (`argument --limit:
# expected a whole number >= 1, not '-1'`, exit 2), as a malformed number already is, instead
# of a count that Python's slicing or `range` would silently read another way.

def whole_number(minimum: int) -> Callable[[str], int]:
    """An argparse `type`: a whole number at least `minimum`."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {minimum}, not {text!r}")
        return value
    return parse


def _number(text: str, accept: Callable[[float], bool], expected: str) -> float:
    """`text` as a number `accept` takes (never NaN), or `ArgumentTypeError` naming what is
    `expected`."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not accept(value):
        raise argparse.ArgumentTypeError(f"expected {expected}, not {text!r}")
    return value


def seconds(text: str) -> float:
    """An argparse `type`: a time limit, a number of seconds above 0."""
    return _number(text, lambda value: 0 < value < math.inf, "a number of seconds > 0")


def fraction(text: str) -> float:
    """An argparse `type`: a number strictly between 0 and 1 (a significance level)."""
    return _number(text, lambda value: 0 < value < 1, "a number between 0 and 1")


# --- options shared by the commands that call an LLM ------------------------------------------

def add_max_context(p: argparse.ArgumentParser) -> None:
    from ..llm.context import DEFAULT_MAX_CONTEXT  # light: the llm package imports no client

    p.add_argument("--max-context", type=int, default=None, metavar="TOKENS",
                   help="--llm ollama: the largest context window (num_ctx) a request may ask "
                        "for; each asks for what its prompt needs up to this (default "
                        f"{DEFAULT_MAX_CONTEXT}). A prompt the server had to cut fails the call")


def add_llm_timeout(p: argparse.ArgumentParser, *, one_host: bool = True) -> None:
    """`--llm-timeout SECONDS`, of every command that calls a model (`one_host`: its calls go
    to one host, which is called no more after its first timeout)."""
    after = (" A host that times out is not called again by this command." if one_host
             else "")
    p.add_argument("--llm-timeout", type=seconds, default=None, metavar="SECONDS",
                   help="the longest one model call may take, whole: connecting, waiting and "
                        "reading the answer (ollama default 120, openai 60)." + after)


# --- the placement setting ----------------------------------------------------------------------

PLACEMENT_HELP = ("how AI2-THOR places a held object, for the problems made from tasks: "
                  "'forced' (forceAction on, the paper's action server: a receptacle takes "
                  "what physically enters it, object-specific ones their own types) or 'typed' "
                  "(forceAction off: only AI2-THOR's compatible receptacles per object type); "
                  "default: the setting each task set's references were verified with (forced "
                  "for the bundled sets). docs/goals.md, 'Placement'")


def add_placement(p: argparse.ArgumentParser) -> None:
    """`--placement forced|typed`, the one definition of the option (gate, problem, plan, run,
    bench, thor-server); its meaning is `tasks/placement.py`."""
    p.add_argument("--placement", default=None, metavar="forced|typed", help=PLACEMENT_HELP)


def placed(task: Task, args: argparse.Namespace) -> Task:
    """`task` under the command's `--placement` (none given: the task's own or its set's)."""
    from ..tasks.placement import with_placement  # start-up time: imported when used

    return with_placement([task], getattr(args, "placement", None), "--placement")[0]


# --- DOMAIN / PROBLEM / PLAN arguments ---------------------------------------------------------

def domains_dirs(args: argparse.Namespace) -> list[Path]:
    return [Path(d) for d in (getattr(args, "domains_dir", None) or [])]


def load_domain_arg(ref: str, args: argparse.Namespace) -> Domain:
    from ..domains import load_domain  # start-up time: imported when the command runs

    return load_domain(ref, domains_dirs=domains_dirs(args))


def is_task_ref(ref: str) -> bool:
    return "#" in ref and not Path(ref).exists()


def load_problem_arg(ref: str, domain: Domain, args: argparse.Namespace) -> Problem:
    """A PROBLEM argument: a .pddl path or a task reference `DATASET.json#TASK_ID`; a task
    that its scene cannot do is said on stderr, with the reason."""
    return problem_and_infeasibility(ref, domain, args)[0]


def problem_and_infeasibility(ref: str, domain: Domain, args: argparse.Namespace
                              ) -> tuple[Problem, str]:
    """`load_problem_arg`'s problem and why its task's scene cannot reach the goal ("" when it
    can, or for a problem file), which is also said on stderr."""
    if is_task_ref(ref):
        # start-up time: imported when the command runs
        from ..tasks import load_task, task_infeasible, task_problem

        task = placed(load_task(ref), args)
        reason = task_infeasible(task, domain)
        if reason:
            err(f"note: task {task.task_id} is infeasible in its scene: {reason}")
        return task_problem(task, domain), reason
    from ..pddl import load_problem  # start-up time: imported when the command runs

    return load_problem(ref), ""


def read_plan_arg(ref: str) -> Plan:
    """A PLAN argument: a plan file in any format (FILE.json#ID), or `-` for stdin."""
    from ..pddl import load_plan, parse_plan  # start-up time: imported when the command runs

    if ref == "-":
        return parse_plan(sys.stdin.read(), file="<stdin>")
    return load_plan(ref)


def plan_or_reference_arg(ref: str) -> Plan | list[Mapping[str, Any]]:
    """A PLAN argument that may also be a task reference, whose reference steps are the plan."""
    if is_task_ref(ref):
        from ..tasks import TaskSetError, load_task  # start-up time: imported when the command runs

        try:
            return list(load_task(ref).reference_steps)
        except TaskSetError:
            pass  # not a task set: a JSON file of plans, FILE.json#ID
    return read_plan_arg(ref)


def domain_and_problem(args: argparse.Namespace) -> tuple[Domain, Problem]:
    domain = load_domain_arg(args.domain, args)
    problem = load_problem_arg(args.problem, domain, args)
    check_fit(domain, problem)
    return domain, problem


def check_fit(domain: Domain, problem: Problem, made_from: str | None = None) -> None:
    """What `check` says of a problem for a domain, for the commands that take both: a problem
    written for another domain is a warning on stderr, and the first error (a type or object the
    domain does not know, ...) is raised with its file:line:col, naming the mismatch. A problem
    made here from the task `made_from`, which has no file, is named by that task."""
    from ..pddl import check_problem  # start-up time: imported when the command runs

    diagnostics = check_problem(problem, domain)
    if made_from is not None:
        first = next((d for d in diagnostics if d.is_error), None)
        if first is not None:
            raise SageError(f"{made_from} does not fit domain {domain.name}: {first.message}")
        return
    mismatch = next((d for d in diagnostics if d.code == "domain-mismatch"), None)
    if mismatch is not None:
        err(f"{mismatch}")
    first = next((d for d in diagnostics if d.severity == "error"), None)
    if first is not None:
        why = (f" (problem {problem.name} is for domain {problem.domain_name}, not "
               f"{domain.name})" if mismatch is not None else "")
        raise SageError(f"{first}{why}")


def debug_enabled() -> bool:
    """`SAGE_PDDL_DEBUG=1`: let internal errors raise with their traceback."""
    return bool(os.environ.get("SAGE_PDDL_DEBUG"))
