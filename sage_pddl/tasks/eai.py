"""The Embodied Agent Interface's (EAI) household problems and gold plans.

EAI (embodied-agent-interface/embodied-agent-interface, MIT) ships, for VirtualHome and for
BEHAVIOR (iGibson), one PDDL problem per task and a `gold_pddl_plan.json` mapping a problem id
to its gold plan as bare strings, one action per string: `walk_towards character laptop`,
`navigate_to cracker_n_01_4 agent_n_01_1`. Our VirtualHome domain (`domains/virtualhome.pddl`)
keeps EAI's action names and parameter lists (its `open` action is `open_object` with alias
`open`), so the plans and problems need no rewriting: this module only reads them.

* `gold_plans(path)` -> {problem id: Plan}; `eai_plan(lines)` -> Plan for one list.
* `problem_files(folder)` -> {problem id: path}: VirtualHome problems lie in one sub-folder per
  task (`problems/Drink/528_1.pddl`), BEHAVIOR problems directly in `problems/`; the id is the
  file stem either way.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..pddl.errors import PlanSyntaxError, SageError
from ..pddl.model import Plan, PlanStep


def eai_plan(lines: list[str] | tuple[str, ...], source: str | None = None) -> Plan:
    """An EAI plan (a list of `action arg ...` strings) as a `Plan`."""
    steps = []
    for index, line in enumerate(lines):
        if not isinstance(line, str) or not line.split():
            raise PlanSyntaxError(f"step {index + 1} of {source or 'EAI plan'}: expected "
                                  f"'action arg ...', got {line!r}")
        words = line.split()
        steps.append(PlanStep(action=words[0], args=tuple(words[1:]), index=index,
                              text=line.strip()))
    return Plan(tuple(steps), source=source)


def gold_plans(path: str | Path) -> dict[str, Plan]:
    """Read an EAI `gold_pddl_plan.json`: {problem id: [step, ...]} -> {problem id: Plan}."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise SageError(f"{path}: {error.strerror or error}") from error
    except json.JSONDecodeError as error:
        raise SageError(f"{path}:{error.lineno}:{error.colno}: not JSON: {error.msg}") from error
    if not isinstance(data, dict):
        raise SageError(f"{path}: expected an object mapping problem ids to step lists")
    return {problem_id: eai_plan(lines, source=f"{path}#{problem_id}")
            for problem_id, lines in data.items()}


def problem_files(folder: str | Path) -> dict[str, Path]:
    """Every EAI problem file below `folder`, keyed by problem id (the file stem)."""
    found: dict[str, Path] = {}
    for path in sorted(Path(folder).rglob("*.pddl")):
        if path.stem in found:
            raise SageError(f"two EAI problems share the id {path.stem!r}: "
                            f"{found[path.stem]} and {path}")
        found[path.stem] = path
    return found
