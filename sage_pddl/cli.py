"""The `sage-pddl` command line: a thin layer that parses arguments and calls the library.

Exit codes everywhere: 0 success / valid, 1 invalid plan or failed check, 2 usage or input error.
Every error the library raises for bad input is a `SageError`; it is printed like a compiler
diagnostic (`file:line:col: error: ...`) and the command exits 2. `--json` prints a machine-
readable result on stdout (documented in README.md).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Callable, Sequence

from .pddl.errors import SageError

EXIT_OK, EXIT_INVALID, EXIT_INPUT = 0, 1, 2
EXIT_INTERNAL = 70  # EX_SOFTWARE


class UsageError(SageError):
    """A bad command-line setting; the message names the setting."""


def escape(text: str) -> str:
    """Text shown through rich markup: brackets in PDDL or plan text must stay literal."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def _console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


# --- shared resolution of DOMAIN / PROBLEM / PLAN arguments -----------------------------------

def _domains_dirs(args) -> list[Path]:
    return [Path(d) for d in (getattr(args, "domains_dir", None) or [])]


def _load_domain(ref: str, args):
    from .domains import load_domain

    return load_domain(ref, domains_dirs=_domains_dirs(args))


def _is_task_ref(ref: str) -> bool:
    return "#" in ref and not Path(ref).exists()


def _load_problem(ref: str, domain, args):
    """A PROBLEM argument: a .pddl path or a task reference `DATASET.json#TASK_ID`."""
    if _is_task_ref(ref):
        from .tasks import load_task, task_problem

        return task_problem(load_task(ref), domain)
    from .pddl import load_problem

    return load_problem(ref)


def _read_plan(ref: str):
    from .pddl import load_plan, parse_plan

    if ref == "-":
        return parse_plan(sys.stdin.read(), file="<stdin>")
    return load_plan(ref)


# --- commands ------------------------------------------------------------------------------------

def cmd_check(args) -> int:
    from .gate import compile_gate
    from .pddl import check_domain, check_problem
    from .pddl.errors import UnsupportedConstruct

    domain = _load_domain(args.domain, args)
    diagnostics = list(check_domain(domain))
    problem = None
    if args.problem:
        problem = _load_problem(args.problem, domain, args)
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
        out = _console()
        for d in diagnostics:
            style = "red" if d.severity == "error" else "yellow"
            out.print(f"[{style}]{escape(str(d))}[/{style}]")
        summary = (f"{domain.name}: {len(domain.actions)} actions, {len(domain.predicates)} "
                   f"predicates, {len(domain.types)} types")
        if problem is not None:
            summary += f"; problem {problem.name}: {len(problem.objects)} objects, {len(problem.init)} facts"
        out.print(("[red]FAILED[/red] " if errors else "[green]OK[/green] ") + summary)
    return EXIT_INVALID if errors else EXIT_OK


def _diagnostic_from(exc):
    from .pddl.validate import Diagnostic

    return Diagnostic(severity="error", message=exc.message, loc=exc.loc)


def _diag_json(d) -> dict:
    loc = getattr(d, "loc", None)
    return {"severity": d.severity, "message": d.message,
            "file": loc.file if loc else None, "line": loc.line if loc else None,
            "column": loc.column if loc else None}


def cmd_gate(args) -> int:
    from .gate import compile_gate

    domain = _load_domain(args.domain, args)
    problem = _load_problem(args.problem, domain, args)
    plan = _read_plan(args.plan)
    gate = compile_gate(domain, problem)
    verdict = gate.check(plan, mode="all" if args.all else "first")
    if args.json:
        print(json.dumps(verdict_json(verdict), indent=2))
    else:
        _print_verdict(verdict, plan)
    accepted = verdict.valid and (args.prefix or verdict.goal_reached is not False)
    return EXIT_OK if accepted else EXIT_INVALID


def verdict_json(verdict) -> dict:
    return {
        "valid": verdict.valid,
        "goal_reached": verdict.goal_reached,
        "steps_checked": verdict.steps_checked,
        "violations": [
            {"step": v.step, "action": v.action, "code": v.code, "literal": v.literal,
             "message": v.message}
            for v in verdict.violations
        ],
    }


def _print_verdict(verdict, plan) -> None:
    out = _console()
    steps = list(plan)
    bad = {v.step for v in verdict.violations}
    for i, step in enumerate(steps[: max(verdict.steps_checked, 1)]):
        mark = "[red]✗[/red]" if i in bad else "[green]✓[/green]"
        out.print(f" {mark} {i + 1:>3}  {escape(step.text or step.action)}")
    for v in verdict.violations:
        out.print(f"[red]step {v.step + 1}: {escape(v.code)}[/red]  {escape(v.action)}: "
                  f"{escape(v.message)}  [dim]needs {escape(v.literal)}[/dim]")
    if not verdict.valid:
        status = f"[red]INVALID[/red]: {len(verdict.violations)} violation(s)"
    elif verdict.goal_reached is False:
        status = ("[yellow]every step applicable, but the goal is NOT reached[/yellow] "
                  "(exit 1; --prefix accepts a partial plan)")
    else:
        status = "[green]VALID[/green]" + (", goal reached" if verdict.goal_reached else "")
    out.print(f"{status}; {verdict.steps_checked} steps checked")


def cmd_fmt(args) -> int:
    from .pddl import parse_domain, parse_problem, write_domain, write_problem

    path = Path(args.file)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"fmt: cannot read {path}: {exc.strerror}") from None
    if _looks_like_problem(text):
        formatted = write_problem(parse_problem(text, file=str(path)))
    else:
        formatted = write_domain(parse_domain(text, file=str(path)))
    if args.in_place:
        path.write_text(formatted, encoding="utf-8")
    else:
        sys.stdout.write(formatted)
    return EXIT_OK


def _looks_like_problem(text: str) -> bool:
    import re

    return re.search(r"\(\s*define\s*\(\s*problem\b", text, re.IGNORECASE) is not None


def cmd_domains(args) -> int:
    from .domains import list_domains, load_domain

    found = list_domains(domains_dirs=_domains_dirs(args))
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
    from rich.table import Table

    table = Table("domain", "actions", "file")
    for row in rows:
        table.add_row(row["name"], ", ".join(row.get("actions", [])) or f"[red]{row.get('error')}[/red]",
                      row["path"])
    _console().print(table)
    return EXIT_OK


def cmd_problem(args) -> int:
    from .pddl import write_problem

    domain = _load_domain(args.domain, args)
    problem = _load_problem(args.task, domain, args)
    sys.stdout.write(write_problem(problem))
    return EXIT_OK


# --- parser --------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sage-pddl",
        description="PDDL-centric LLM task planning: parse, gate, plan, execute, evaluate.")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, handler: Callable, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help)
        p.add_argument("--domains-dir", action="append", metavar="DIR",
                       help="extra folder of drop-in .pddl domains (repeatable; also SAGE_PDDL_DOMAINS)")
        p.set_defaults(handler=handler)
        return p

    p = command("check", cmd_check, "Parse and check a domain (and a problem); name constructs outside the gate's scope.")
    p.add_argument("domain", help="domain file or bundled/drop-in domain name")
    p.add_argument("problem", nargs="?", help="problem file or DATASET.json#TASK_ID")
    p.add_argument("--json", action="store_true", help="print diagnostics as JSON")

    p = command("gate", cmd_gate, "Check a plan step by step against a domain and problem.")
    p.add_argument("domain", help="domain file or bundled/drop-in domain name")
    p.add_argument("problem", help="problem file or DATASET.json#TASK_ID")
    p.add_argument("plan", help="plan file (IPC, VAL, JSON steps, plain lines; FILE.json#ID) or - for stdin")
    p.add_argument("--all", action="store_true", help="report every violation, not only the first")
    p.add_argument("--prefix", action="store_true",
                   help="the plan is a prefix: exit 0 when every step is applicable, goal or not")
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")

    p = command("fmt", cmd_fmt, "Print a PDDL domain or problem in canonical layout.")
    p.add_argument("file")
    p.add_argument("-i", "--in-place", action="store_true", help="rewrite the file")

    p = command("domains", cmd_domains, "List the bundled and drop-in domains.")
    p.add_argument("--json", action="store_true")

    p = command("problem", cmd_problem, "Print the PDDL problem generated from a task.")
    p.add_argument("task", help="DATASET.json#TASK_ID, or a bundled set: ithor#K01, procthor#P0_1")
    p.add_argument("--domain", default="ithor", help="domain name or file (default: ithor)")

    for extra in _extra_commands():
        extra(command)
    return parser


def _extra_commands() -> list[Callable]:
    """Commands that live beside the library pieces they drive (planning, execution, demo)."""
    from . import cli_bench, cli_run, cli_tools

    return cli_run.COMMANDS + cli_bench.COMMANDS + cli_tools.COMMANDS


def _version() -> str:
    from . import __version__

    return f"sage-pddl {__version__}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return EXIT_INPUT
    try:
        return args.handler(args)
    except SageError as exc:
        _console(stderr=True).print(str(exc), markup=False)
        return EXIT_INPUT
    except KeyboardInterrupt:
        _console(stderr=True).print("interrupted", markup=False)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # a bug, not bad input: say so plainly, keep the trace on request
        if os.environ.get("SAGE_PDDL_DEBUG"):
            raise
        _console(stderr=True).print(
            f"internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug in sage-pddl; run again with SAGE_PDDL_DEBUG=1 for the traceback "
            "and report it.", markup=False)
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
