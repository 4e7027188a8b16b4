"""Export to standard PDDL tools, and classical planners/validators through unified-planning.

* `ipc`: `export_files(domain, problem, plan, out_dir)` writes domain.pddl, problem.pddl and
  plan.ipc; `ground_plan(gate, plan)` maps any plan (JSON steps, aliases) to ground actions.
* `classical`: `solve(domain, problem, planner=...)` (Fast Downward, pyperplan) and
  `validate(domain, problem, plan)` (unified-planning's plan validator).

unified-planning is imported only when `classical` is used.
"""
from __future__ import annotations

from .ipc import (
    ExportedFiles,
    ExportError,
    export_domain_text,
    export_files,
    ground_plan,
    ipc_plan_text,
)

__all__ = ["ExportError", "ExportedFiles", "export_domain_text", "export_files", "ground_plan",
           "ipc_plan_text", "solve", "validate"]


def solve(*args, **kwargs):
    # optional extra 'planners': `classical` runs unified-planning
    from .classical import solve as _solve

    return _solve(*args, **kwargs)


def validate(*args, **kwargs):
    # optional extra 'planners': `classical` runs unified-planning
    from .classical import validate as _validate

    return _validate(*args, **kwargs)
