"""Write a domain, a problem and a plan as standard PDDL files for other planning tools.

`export_files(domain, problem, plan, out_dir)` writes `domain.pddl`, `problem.pddl` and (with a
plan) `plan.ipc`, files that VAL, unified-planning and Fast Downward read:

* `domain.pddl`: `write_domain`; `; @sage ...` annotations are comments, which every PDDL
  tool ignores, and `strip_annotations=True` leaves them out.
* `problem.pddl`: `write_problem` (a task's generated problem, or a problem file re-written).
* `plan.ipc`: one `(action arg ...)` per line, the IPC plan format. Every step is grounded by the
  gate first (`ground_plan`), so aliases, dataset-style JSON steps and `@sage step` field
  mappings become the domain's own action and its parameters: `{"action": "Navigate",
  "object": "Mug"}` is written `(moveto mug)`. Names are written in lower case, as planners
  print them (PDDL names are case-insensitive).

A step the gate cannot ground (unknown action or object, wrong arity) is an `ExportError`
naming the step. Preconditions are not checked: exporting an invalid plan is allowed (the other
tools are then asked to reject it).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sage_pddl.gate import Gate, StepRejected, compile_gate
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.files import write_text_atomic
from sage_pddl.pddl.model import Domain, Plan, PlanStep, Problem, key
from sage_pddl.pddl.writer import write_domain, write_problem


class ExportError(SageError):
    """A plan step that cannot become a ground action, or an output folder that cannot be used."""


@dataclass(frozen=True)
class ExportedFiles:
    domain: Path
    problem: Path
    plan: Path | None = None

    def to_json(self) -> dict:
        return {"domain": str(self.domain), "problem": str(self.problem),
                "plan": str(self.plan) if self.plan else None}


def plan_steps(plan: Any) -> list:
    """The steps of a Plan, a `{"steps": [...]}` object or a list of step dicts/PlanSteps."""
    if isinstance(plan, Plan):
        return list(plan.steps)
    if isinstance(plan, dict) and isinstance(plan.get("steps"), list):
        return list(plan["steps"])
    return list(plan)


def ground_plan(gate: Gate, plan: Any) -> Plan:
    """The plan as ground actions of the gate's domain: `PlanStep(action, objects)` in the
    domain's and problem's lower-case names. Raises ExportError for a step that cannot ground."""
    steps = []
    for index, step in enumerate(plan_steps(plan)):
        try:
            ground = gate.ground(step, index)
        except StepRejected as rejected:
            v = rejected.violation
            loc = getattr(step, "loc", None)
            where = f"{loc}: error: " if loc is not None and loc.file else ""
            written = v.step_text if v.step_text.startswith("(") else f"({v.step_text})"
            raise ExportError(f"{where}plan step {index + 1} {written}: [{v.code}] "
                              f"{v.message}") from None
        action = key(ground.schema.name)
        args = tuple(key(a) for a in ground.args)
        steps.append(PlanStep(action, args, index, "(" + " ".join([action, *args]) + ")"))
    return Plan(tuple(steps))


def ipc_plan_text(plan: Plan) -> str:
    """IPC plan text: `(action arg ...)` per line, lower case."""
    return "".join("(" + " ".join([key(s.action), *(key(a) for a in s.args)]) + ")\n"
                   for s in plan.steps)


def export_domain_text(domain: Domain, strip_annotations: bool = False) -> str:
    if strip_annotations:
        domain = dataclasses.replace(domain, annotations=())
    return write_domain(domain)


def export_files(domain: Domain, problem: Problem, plan: Any | None, out_dir: str | Path, *,
                 strip_annotations: bool = False, inputs: Iterable[str | Path] = ()
                 ) -> ExportedFiles:
    """Write domain.pddl, problem.pddl and plan.ipc (when a plan is given) into `out_dir`.

    Each file is written whole (`write_text_atomic`). A target that is one of the files read
    (`inputs`, and the files the domain and problem were parsed from) is refused before
    anything is written: an export never overwrites its own source."""
    grounded = ground_plan(compile_gate(domain, problem), plan) if plan is not None else None
    out = Path(out_dir)
    texts = {out / "domain.pddl": export_domain_text(domain, strip_annotations),
             out / "problem.pddl": write_problem(problem)}
    if grounded is not None:
        texts[out / "plan.ipc"] = ipc_plan_text(grounded)
    sources = [*inputs, *(m.loc.file for m in (domain, problem) if m.loc and m.loc.file)]
    read = {Path(p).resolve() for p in sources if Path(p).is_file()}
    for target in texts:
        if target.resolve() in read:
            raise ExportError(f"--out {out}: {target.name} would overwrite the input file "
                              f"{target.resolve()}; choose another --out folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        for target, text in texts.items():
            write_text_atomic(target, text)
    except OSError as error:
        raise ExportError(f"--out {out}: cannot write: {error.strerror or error}") from None
    paths = list(texts)
    return ExportedFiles(paths[0], paths[1], paths[2] if grounded is not None else None)


__all__ = ["ExportError", "ExportedFiles", "export_domain_text", "export_files", "ground_plan",
           "ipc_plan_text", "plan_steps"]
