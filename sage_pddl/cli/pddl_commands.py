"""PDDL commands: `check`, `gate`, `fmt`, `domains`, `problem` (no planner, model or simulator)."""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..pddl.errors import SageError
from ..pddl.files import write_text_atomic
from ..pddl.limits import read_text
from ..pddl.model import Plan, PlanStep
from ..pddl.plans import json_step_text
from .common import (
    EXIT_INVALID,
    EXIT_OK,
    AddCommand,
    VerdictExit,
    add_placement,
    check_fit,
    console,
    domains_dirs,
    escape,
    load_domain_arg,
    load_problem_arg,
    placed,
    plan_or_reference_arg,
    plural,
    problem_and_infeasibility,
)

if TYPE_CHECKING:
    from ..gate import Verdict


def cmd_check(args: argparse.Namespace) -> int:
    from ..gate import compile_gate  # start-up time: imported when the command runs
    from ..pddl import check_domain, check_problem  # start-up time: imported when the command runs
    from ..pddl.errors import UnsupportedConstruct  # start-up time: imported when the command runs

    domain = load_domain_arg(args.domain, args)
    diagnostics = list(check_domain(domain))
    problem = None
    if args.problem:
        problem = load_problem_arg(args.problem, domain, args)
        diagnostics += check_problem(problem, domain)
    errors = [d for d in diagnostics if d.severity == "error"]
    if problem is not None and not errors:
        try:
            compile_gate(domain, problem)
        except UnsupportedConstruct as exc:
            diagnostics.append(_diagnostic_from(exc))
            errors.append(diagnostics[-1])
    if args.json:
        print(json.dumps({"ok": not errors, "diagnostics": [_diag_json(d) for d in diagnostics]},
                         indent=2))
    else:
        out = console()
        said = console(stderr=True)  # diagnostics on stderr, as a syntax error's; the verdict on stdout
        for d in diagnostics:
            style = "red" if d.severity == "error" else "yellow"
            said.print(f"[{style}]{escape(str(d))}[/{style}]")
        summary = (f"{domain.name}: {len(domain.actions)} actions, {len(domain.predicates)} "
                   f"predicates, {len(domain.types)} types")
        if problem is not None:
            summary += f"; problem {problem.name}: {len(problem.objects)} objects, {len(problem.init)} facts"
        out.print(("[red]FAILED[/red] " if errors else "[green]OK[/green] ") + summary)
    return EXIT_INVALID if errors else EXIT_OK


def _diagnostic_from(exc):
    from ..pddl.validate import Diagnostic  # start-up time: imported when the command runs

    return Diagnostic(severity="error", code="unsupported", message=exc.message, loc=exc.loc)


def _diag_json(d) -> dict:
    loc = getattr(d, "loc", None)
    return {"severity": d.severity, "code": d.code, "message": d.message,
            "file": loc.file if loc else None, "line": loc.line if loc else None,
            "column": loc.column if loc else None}


def cmd_gate(args: argparse.Namespace) -> int:
    from ..gate import compile_gate  # start-up time: imported when the command runs
    from ..gate.outcome import plan_outcomes  # start-up time: imported when the command runs

    domain = load_domain_arg(args.domain, args)
    problem, infeasible = problem_and_infeasibility(args.problem, domain, args)
    check_fit(domain, problem)
    plan = list(gate_steps(plan_or_reference_arg(args.plan)))
    gate = compile_gate(domain, problem)
    verdict = gate.check(plan, mode="all" if args.all else "first")
    accepted = verdict.valid and (args.prefix or verdict.goal_reached is not False)
    code = EXIT_OK if accepted else EXIT_INVALID
    unreachable = []
    if verdict.valid and verdict.goal_reached is False:
        from ..gate.causal import unreachable_goals  # start-up time: imported when the command runs

        unreachable = unreachable_goals(gate.table, verdict.final_state)
    # both views of the goal: the gate's (after the accepted prefix) and the simulator's
    strict, simulated = plan_outcomes(gate, plan, run=verdict if args.all else None)
    with verdict_exit(code):
        if args.json:
            print(json.dumps({**verdict_json(verdict, plan),
                              "goal_conditions_met": strict.goal_conditions_met,
                              "goal_conditions_total": strict.goal_conditions_total,
                              "unreachable_goals": unreachable,
                              "simulated": simulated._asdict(),
                              "read_as": [r._asdict() for r in gate.readings(plan)],
                              "infeasible": infeasible or None},
                             indent=2), flush=True)
        else:
            _print_verdict(verdict, plan, prefix=args.prefix)
            for line in unreachable:
                console().print(f"  [magenta]unreachable[/magenta] {escape(line)}")
            for reading in gate.readings(plan):
                console().print(f"  [cyan]synonym[/cyan] {escape(str(reading))}")
            if not verdict.valid and simulated.goal_reached is not None:
                console().print(
                    f"[dim]as the simulator would run it (refused steps change nothing): goal "
                    f"{'reached' if simulated.goal_reached else 'not reached'}, "
                    f"{simulated.goal_conditions_met} of {simulated.goal_conditions_total} goal "
                    f"conditions, {simulated.steps_refused} step(s) refused[/dim]")
    return code


def gate_steps(plan: Plan | list[Mapping[str, Any]]) -> Sequence[PlanStep | Mapping[str, Any]]:
    """The steps of a plan file (a `Plan`) or of a task's reference (a list of JSON steps)."""
    return plan.steps if isinstance(plan, Plan) else plan


def step_as_written(step: PlanStep | Mapping[str, Any]) -> str:
    """One plan step as written: a plan file's text, or a JSON step in words."""
    return json_step_text(step) if isinstance(step, Mapping) else (step.text or step.action)


def action_word(step: PlanStep | Mapping[str, Any]) -> str:
    """The action word of one plan step, whatever its form."""
    return str(step.get("action", "")) if isinstance(step, Mapping) else step.action


def verdict_json(verdict: Verdict, steps: Sequence[PlanStep | Mapping[str, Any]]) -> dict:
    """`gate --json`: `action` is the step's action word as written (`Pick`, `fly`), the same
    for every violation; `step_text` is the whole step."""
    return {
        "valid": verdict.valid,
        # after a rejected step the state is not the plan's: the goal test means nothing there
        "goal_reached": verdict.goal_reached if verdict.valid else None,
        "steps_checked": verdict.steps_checked,
        "violations": [
            {"step": v.step, "action": action_word(steps[v.step]) if v.step < len(steps)
             else v.action, "step_text": step_as_written(steps[v.step]) if v.step < len(steps)
             else v.step_text, "code": v.code, "literal": v.literal, "message": v.message}
            for v in verdict.violations
        ],
    }


@contextlib.contextmanager
def verdict_exit(code: int) -> Iterator[None]:
    """The verdict's exit code even when the reader of stdout has gone (`gate ... | true`): a
    closed pipe ends the output, never the verdict."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        # stdout is closed: point it at devnull so the interpreter's exit flush stays quiet
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        raise VerdictExit(code) from None



def _print_verdict(verdict, plan, prefix: bool = False) -> None:
    out = console()
    steps = list(plan)
    if not steps:
        out.print("[yellow]the plan is empty[/yellow]: only the initial state is checked "
                  "against the goal")
    bad = {v.step for v in verdict.violations}
    for i, step in enumerate(steps[: max(verdict.steps_checked, 1)]):
        mark = "[red]✗[/red]" if i in bad else "[green]✓[/green]"
        out.print(f" {mark} {i + 1:>3}  {escape(step_as_written(step))}")
    for v in verdict.violations:
        needs = f"  [dim]needs {escape(v.literal)}[/dim]" if v.literal else ""
        out.print(f"[red]step {v.step + 1}: {escape(v.code)}[/red]  {escape(v.action)}: "
                  f"{escape(v.message)}{needs}")
    if not verdict.valid:
        status = f"[red]INVALID[/red]: {len(verdict.violations)} violation(s)"
    elif verdict.goal_reached is False and prefix:
        status = "[green]VALID prefix[/green]: every step applicable, the goal not reached yet"
    elif verdict.goal_reached is False:
        status = ("[yellow]every step applicable, but the goal is NOT reached[/yellow] "
                  "(exit 1; --prefix accepts a partial plan)")
    else:
        status = "[green]VALID[/green]" + (", goal reached" if verdict.goal_reached else "")
    out.print(f"{status}; {plural(verdict.steps_checked, 'step')} checked")


def cmd_fmt(args: argparse.Namespace) -> int:
    # start-up time: imported when the command runs
    from ..pddl import parse_domain, parse_problem, write_domain, write_problem

    path = Path(args.file)
    if not path.is_file():  # a domain name, as everywhere else
        from ..domains import resolve_domain  # start-up time: imported when the command runs

        path = resolve_domain(args.file, domains_dirs(args))
        if args.in_place:
            raise SageError(f"fmt -i {args.file}: {args.file!r} names the domain file {path}, "
                            "not a file of yours; format a copy: sage-pddl fmt "
                            f"{args.file} > {path.name}")
    if args.in_place and _bundled(path):
        raise SageError(f"fmt -i {path}: the file belongs to the installed sage-pddl package; "
                        f"format a copy: sage-pddl fmt {path} > {path.name}")
    text = read_text(path, "the file")
    if _looks_like_problem(text):
        formatted = write_problem(parse_problem(text, file=str(path)))
    else:
        formatted = write_domain(parse_domain(text, file=str(path)))
    header = _header_comments(text)
    formatted = "".join(line + "\n" for line in header) + formatted
    if args.in_place:
        dropped = _dropped_comment(text, len(header))
        if dropped is not None:
            line, column, comment = dropped
            raise SageError(f"{path}:{line}:{column}: error: fmt -i would drop this comment "
                            f"({comment[:60]!r}): the formatted file keeps the comments above "
                            "`(define` and the `; @sage` annotations, not comments inside it. "
                            "Move it above `(define`, or run without -i to see the formatted "
                            "text; the file is left as it is")
        write_text_atomic(path.resolve(), formatted)  # through a link, as an editor saves
    else:
        sys.stdout.write(formatted)
    return EXIT_OK


def _bundled(path: Path) -> bool:
    """Whether `path` is inside the installed sage_pddl package (its bundled domains; the
    folders are resolved one by one, as a source checkout may link them from elsewhere)."""
    package = Path(__file__).resolve().parents[1]
    roots = {package, *(child.resolve() for child in package.iterdir() if child.is_dir())}
    return any(root in path.resolve().parents for root in roots)


def _is_annotation(comment: str) -> bool:
    return comment.lstrip(";").strip().startswith("@sage")


def _header_comments(text: str) -> list[str]:
    """The comment lines (and blank lines between them) above `(define`, which the writer does
    not see; `; @sage` annotations among them are the writer's to place."""
    header: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith(";"):
            break
        if not _is_annotation(stripped):
            header.append(line.rstrip())
    while header and not header[-1]:
        header.pop()
    return header


def _dropped_comment(text: str, header_lines: int) -> tuple[int, int, str] | None:
    """(line, column, text) of the first comment below the header that is not a `; @sage`
    annotation: formatting drops it. PDDL has no strings, so a `;` always starts a comment."""
    seen_code = False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped and not stripped.startswith(";"):
            seen_code = True
        column = line.find(";")
        if column < 0 or not seen_code:
            continue
        comment = line[column:].strip()
        if not _is_annotation(comment):
            return number, column + 1, comment
    return None


def _looks_like_problem(text: str) -> bool:
    return re.search(r"\(\s*define\s*\(\s*problem\b", text, re.IGNORECASE) is not None


def cmd_domains(args: argparse.Namespace) -> int:
    from ..domains import list_domains, load_domain  # start-up time: imported when the command runs

    found = list_domains(domains_dirs=domains_dirs(args))
    rows = []
    for name, path in sorted(found.items()):
        try:
            domain = load_domain(str(path))
            rows.append({"name": name, "path": str(path), "actions": [a.name for a in domain.actions]})
        except SageError as exc:
            rows.append({"name": name, "path": str(path), "error": str(exc).splitlines()[0]})
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    from rich.table import Column, Table  # start-up time: imported when the command runs

    table = Table("domain", "actions", Column("file", overflow="fold"))
    for row in rows:
        if "error" in row:
            actions = f"[red]{escape(str(row['error']))}[/red]"
        else:
            actions = escape(", ".join(row["actions"])) or "[dim](no actions)[/dim]"
        table.add_row(str(row["name"]), actions, str(row["path"]))
    console().print(table)
    return EXIT_OK


def cmd_problem(args: argparse.Namespace) -> int:
    from ..pddl import write_problem  # start-up time: imported when the command runs
    from ..tasks import (  # start-up time: imported when the command runs
        load_task,
        problem_header,
        scene_problem,
        task_problem,
        task_scene,
    )

    task = placed(load_task(args.task), args)
    domain = load_domain_arg(args.domain or task.domain, args)
    if task.problem is not None:  # a task that is a PDDL problem file: printed as it is
        problem = task_problem(task, domain)
        check_fit(domain, problem)
        sys.stdout.write(write_problem(problem))
        return EXIT_OK
    scene = task_scene(task, domain, goal_from_reference=args.goal_from_reference)
    problem = scene_problem(scene, domain)
    check_fit(domain, problem, made_from=args.task)  # another domain's types, predicates, ...
    sys.stdout.write(problem_header(scene) + write_problem(problem))
    return EXIT_OK


def register(add_command: AddCommand) -> None:
    p = add_command("check", cmd_check, "Parse and check a domain (and a problem); name "
                    "constructs outside the gate's scope.")
    p.add_argument("domain", help="domain file or bundled/drop-in domain name")
    p.add_argument("problem", nargs="?", help="problem file or DATASET.json#TASK_ID")
    p.add_argument("--json", action="store_true", help="print diagnostics as JSON")

    p = add_command("gate", cmd_gate, "Check a plan step by step against a domain and problem.")
    p.add_argument("domain", help="domain file or bundled/drop-in domain name")
    p.add_argument("problem", help="problem file or DATASET.json#TASK_ID")
    p.add_argument("plan", help="plan file (IPC, VAL, JSON steps, plain lines; FILE.json#ID), - "
                                "for stdin, or a task reference (ithor#K01) for its reference plan")
    p.add_argument("--all", action="store_true", help="report every violation, not only the first")
    p.add_argument("--prefix", action="store_true",
                   help="the plan is a prefix: exit 0 when every step is applicable, goal or not")
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")
    add_placement(p)

    p = add_command("fmt", cmd_fmt, "Print a PDDL domain or problem in canonical layout.")
    p.add_argument("file", help="a domain or problem file, or a bundled/drop-in domain name "
                                "(printed; -i needs a file of yours)")
    p.add_argument("-i", "--in-place", action="store_true", help="rewrite the file")

    p = add_command("domains", cmd_domains, "List the bundled and drop-in domains.")
    p.add_argument("--json", action="store_true",
                   help="print a list of {name, path, actions} (or error) as JSON")

    p = add_command("problem", cmd_problem, "Print the PDDL problem generated from a task, with "
                    "a header saying where its goal and inferred facts come from.")
    p.add_argument("task", help="DATASET.json#TASK_ID, or a bundled set: ithor#K01, procthor#P04_01")
    p.add_argument("--domain", default=None,
                   help="domain name or file (default: the task's own, ithor or procthor)")
    p.add_argument("--goal-from-reference", action="store_true",
                   help="for a task with no written goal and an instruction the reader cannot "
                        "read: take the goal from what its reference plan changes (labelled in "
                        "the header; the reference reaches it by construction)")
    add_placement(p)
