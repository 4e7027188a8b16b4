#!/usr/bin/env python3
"""The bundled reference plans under each placement setting: how many the gate refuses, and which.

    python tools/placement_refusals.py                 # ithor and procthor, forced and typed
    python tools/placement_refusals.py --sets procthor

Every bundled set's references were verified on the paper's server (forceAction on), so under
its default, `forced`, the gate should refuse none (a refusal there is a false rejection); the
list under `typed` is what AI2-THOR's default per-type restrictions would refuse
(docs/goals.md, "Placement"). Exit 1 when a reference is refused under its set's default.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys

from sage_pddl.domains import load_domain
from sage_pddl.gate import compile_gate
from sage_pddl.tasks import load_taskset, task_problem
from sage_pddl.tasks.placement import PLACEMENTS, task_placement


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=["ithor", "procthor"])
    args = parser.parse_args(argv)
    false_rejections = 0
    for name in args.sets:
        tasks = load_taskset(name)
        for placement in PLACEMENTS:
            refused = []
            for task in tasks:
                task = dataclasses.replace(task, placement=placement)
                domain = load_domain(task.domain)
                verdict = compile_gate(domain, task_problem(task, domain)).check(
                    list(task.reference_steps))
                if not verdict.valid:
                    first = verdict.violations[0]
                    refused.append(f"{task.task_id} step {first.step + 1} {first.code} "
                                   f"({first.step_text})")
            default = placement == task_placement(dataclasses.replace(tasks[0], placement=""))
            if default:
                false_rejections += len(refused)
            print(f"{name} {placement}{' (default)' if default else ''}: {len(tasks)} "
                  f"references, {len(refused)} refused")
            for line in refused:
                print(f"  {line}")
    return 1 if false_rejections else 0


if __name__ == "__main__":
    sys.exit(main())
