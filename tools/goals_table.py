#!/usr/bin/env python3
"""The tables of docs/goals.md, rendered from the reviewed goals and the task sets.

    python tools/goals_table.py            # print the tables (markdown)
    python tools/goals_table.py --check    # exit 1 if docs/goals.md does not hold them

1. The curated iTHOR tasks (ithor-gt): instruction, goal as written, note.
2. The tasks marked infeasible in the goals files, with their scene and reason.
3. Every bundled reference plan (ithor, procthor) checked by the gate against its task's goal:
   the steps it is refused (none expected), how many reach their goal in the simulator's view
   and in the gate's strict view (equal when nothing is refused), and, for each reference that
   does not reach its goal as the simulator runs it, the written conjuncts it leaves undone.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sage_pddl.domains import load_domain  # noqa: E402
from sage_pddl.gate import compile_gate  # noqa: E402
from sage_pddl.gate.outcome import plan_outcomes  # noqa: E402
from sage_pddl.pddl.model import And  # noqa: E402
from sage_pddl.pddl.writer import write_formula  # noqa: E402
from sage_pddl.tasks import (  # noqa: E402
    bundled_goals,
    load_taskset,
    normalize_steps,
    scene_problem,
    task_scene,
)

BEGIN, END = "<!-- goals-table:begin -->", "<!-- goals-table:end -->"


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def curated() -> list[str]:
    goals = bundled_goals("ithor-gt")
    rows = ["| task | instruction | goal | note |", "|---|---|---|---|"]
    for task in load_taskset("ithor-gt"):
        spec = goals[task.task_id.lower()]
        rows.append(f"| {task.task_id} | {_one_line(task.instruction)} | "
                    f"`{_one_line(spec.text)}` | {_one_line(spec.note)} |")
    return rows


def infeasible() -> list[str]:
    rows = ["| task | scene | instruction | why no plan can do it |", "|---|---|---|---|"]
    for set_name in ("ithor", "procthor"):
        goals = bundled_goals(set_name)
        for task in load_taskset(set_name):
            reason = goals[task.task_id.lower()].infeasible
            if reason:
                rows.append(f"| {task.task_id} | {task.scene} | {_one_line(task.instruction)} "
                            f"| {_one_line(reason)} |")
    return rows


def references() -> list[str]:
    out: list[str] = []
    for set_name in ("ithor", "procthor"):
        goals = bundled_goals(set_name)
        tasks = load_taskset(set_name)
        refused, undone, certified = [], [], 0
        for task in tasks:
            domain = load_domain(task.domain)
            scene = task_scene(task, domain)
            gate = compile_gate(domain, scene_problem(scene, domain))
            steps = normalize_steps(task.reference_steps, domain)
            verdict = gate.check(steps, mode="all")
            strict, _ = plan_outcomes(gate, steps, run=verdict)
            certified += bool(strict.goal_reached)
            if not verdict.valid:
                refused.append(task.task_id)
            if verdict.goal_reached:  # the simulator's view: refused steps are no-ops
                continue
            written = goals[task.task_id.lower()].goal
            written_parts = written.parts if isinstance(written, And) else (written,)
            held = [holds for _, holds in gate.goal_report(verdict.final_state)]  # the scene's
            missing = [_one_line(write_formula(w)) for w, h in zip(written_parts, held) if not h]
            undone.append(f"| {task.task_id} | {_one_line(task.instruction)} | "
                          f"{len(task.reference_steps)} | "
                          + "; ".join(f"`{m}`" for m in missing) + " |")
        out += [f"**{set_name}**: {len(tasks)} reference plans; the gate refuses "
                f"{len(refused)} of them{(': ' + ', '.join(refused)) if refused else ''}; "
                f"{len(tasks) - len(undone)} reach their goal as the simulator runs them "
                f"(refused steps no-ops), {len(undone)} do not; {certified} reach it in the "
                "gate's strict view (every step accepted).", ""]
        if undone:
            out += ["| task | instruction | reference steps | left undone |",
                    "|---|---|---|---|", *undone, ""]
    return out


def render() -> str:
    return "\n".join([BEGIN, "", "### The 38 curated iTHOR tasks", "", *curated(), "",
                      "### Tasks their scene cannot do", "", *infeasible(), "",
                      "### The references against the goals", "", *references(), END])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with docs/goals.md instead of printing")
    args = parser.parse_args(argv)
    text = render()
    if not args.check:
        print(text)
        return 0
    doc = (REPO / "docs" / "goals.md").read_text()
    start, end = doc.find(BEGIN), doc.find(END)
    current = doc[start:end + len(END)] if start >= 0 and end >= 0 else ""
    if current != text:
        print("docs/goals.md is stale: paste the output of `python tools/goals_table.py`")
        return 1
    print("docs/goals.md tables are current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
