"""PDDL problem files as a task set: each file is a task, its instruction the goal in words.

A problem-set spec names PDDL problem files in one of three ways: a directory (its `*.pddl`
files that define a problem; domain files beside them are skipped), a glob
(`problems/*.pddl`), or one `.pddl` file. `is_problem_spec(spec)` says whether a task-set spec
is one of these; `load_taskset` reads it with `problem_tasks`.

Each file becomes a `Task` whose `problem` is the parsed problem (a file that does not parse is
a `PDDLSyntaxError` naming its file, line and column), whose `task_id` is the file's stem, whose
instruction is the goal in plain words (`pddl.plain.goal_instruction`: "Problem p01: make these
true: on a b; on b c."), and whose `domain` is the problem's `(:domain NAME)`; a command's `--domain`
overrides it, as for any task. The files are read in name order, so the ids and their order
are stable; two files with one stem are refused, because rows and memory are keyed by id.
"""
from __future__ import annotations

import glob
from pathlib import Path

from ..pddl.limits import read_text
from ..pddl.parser import parse_problem
from ..pddl.plain import goal_instruction
from .taskset import Task, TaskSetError

MAX_PROBLEMS = 10_000
"""More files than this in one spec is refused (a glob over a whole disk is a mistake)."""


def is_problem_spec(spec: str | Path) -> bool:
    """A directory, a glob, or a `.pddl` file (a `#ID` suffix aside)."""
    text = str(spec)
    return (text.lower().endswith(".pddl") or Path(text).is_dir()
            or any(ch in text for ch in "*?"))


def problem_files(spec: str | Path) -> list[Path]:
    """The problem files a spec names, sorted by name."""
    text = str(spec)
    if Path(text).is_dir():
        paths = sorted(Path(text).glob("*.pddl"))
        paths = [p for p in paths if not _defines_domain(p)]
    elif any(ch in text for ch in "*?"):
        paths = sorted(Path(p) for p in glob.glob(text) if Path(p).is_file())
    else:
        paths = [Path(text)] if Path(text).is_file() else []
        if not paths:
            raise TaskSetError(f"problem file {text}: no such file")
    if not paths:
        raise TaskSetError(f"task set {text!r}: no PDDL problem files there (a directory, a "
                           "glob such as 'problems/*.pddl', or a .pddl file)")
    if len(paths) > MAX_PROBLEMS:
        raise TaskSetError(f"task set {text!r}: {len(paths):,} files, more than the "
                           f"{MAX_PROBLEMS:,} one task set may have")
    return paths


def _defines_domain(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(4096).decode("utf-8", "replace").lower()
    except OSError:
        return False
    return "(domain" in head.replace("( ", "(") and "(problem" not in head.replace("( ", "(")


def problem_tasks(spec: str | Path) -> list[Task]:
    """One task per problem file of `spec` (see the module docstring)."""
    tasks: list[Task] = []
    seen: dict[str, Path] = {}
    for path in problem_files(spec):
        problem = parse_problem(read_text(path, "the problem file"), file=str(path))
        task_id = path.stem
        if task_id.lower() in seen:
            raise TaskSetError(f"task set {str(spec)!r}: {path} and {seen[task_id.lower()]} "
                               f"both give the task id {task_id!r}")
        seen[task_id.lower()] = path
        tasks.append(Task(task_id=task_id, instruction=goal_instruction(problem, task_id),
                          scene="",
                          room="", obs="", domain=problem.domain_name, source=str(spec),
                          problem=problem))
    return tasks
