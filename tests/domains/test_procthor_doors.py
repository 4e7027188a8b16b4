"""ProcTHOR's doors are `Doorway` objects that open (ProcTHOR's asset database: CanOpen; its
house generator writes interior doors openable), so the simulator-verified `Open Doorway` is
accepted, as AI2-THOR executes it (issue 42)."""
from __future__ import annotations

import dataclasses

from sage_pddl.domains import load_domain
from sage_pddl.gate import compile_gate
from sage_pddl.tasks import load_task, task_problem


def test_open_doorway_is_an_open_like_any_other():
    task = load_task("procthor#P14_05")
    task = dataclasses.replace(task, visible_objects=(*task.visible_objects, "Doorway"),
                               reference_steps=())
    domain = load_domain("procthor")
    gate = compile_gate(domain, task_problem(task, domain))
    opened = [{"action": "MoveTo", "object": "Doorway"}, {"action": "Open", "object": "Doorway"}]
    assert gate.check(opened).valid
    twice = gate.check([*opened, {"action": "Open", "object": "Doorway"}])
    assert [v.code for v in twice.violations] == ["already-open"]
    closed = gate.check([*opened, {"action": "Close", "object": "Doorway"}])
    assert closed.valid
