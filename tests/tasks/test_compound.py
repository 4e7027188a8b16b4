"""The bundled compound task set: the paper's 74 compounds, regenerable, and what the gate says
about their concatenated references."""
from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.gate import compile_gate
from sage_pddl.tasks import load_taskset, task_infeasible, task_problem

TOOL = Path(__file__).resolve().parents[2] / "tools" / "make_compound_tasks.py"


def _tool():
    spec = importlib.util.spec_from_file_location("make_compound_tasks", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bundled_file_is_what_the_generator_writes():
    tool = _tool()
    assert tool.TARGET.read_text(encoding="utf-8") == tool.generate()


def test_74_compounds_45_pairs_29_triples_with_members():
    tasks = load_taskset("compound")
    assert len(tasks) == 74
    assert Counter(len(t.members) for t in tasks) == {2: 45, 3: 29}
    first = tasks[0]
    assert first.task_id == "C2_K01+K03" and first.members == ("K01", "K03")
    assert first.instruction.startswith("First, ") and " Then, " in first.instruction


@pytest.mark.parametrize(("task_id", "codes"), [
    ("C2_K01+K03", ["hand-full"]),
    ("C2_K01+K07", []),
    ("C2_K01+K09", ["hand-full", "already-on"]),
    ("C2_K01+K10", ["already-on"]),
])
def test_a_concatenated_reference_is_rejected_where_the_first_member_leaves_the_world_changed(
        task_id, codes):
    """K01 (make coffee) ends with the mug in the hand and the coffee machine on: K03's Grab
    then fails (hand-full), and so does K10's or K09's TurnOn of the machine (already-on);
    K07 (the microwave) needs neither a free hand nor the machine off."""
    ithor = load_domain("ithor")
    task = next(t for t in load_taskset("compound") if t.task_id == task_id)
    verdict = compile_gate(ithor, task_problem(task, ithor)).check(
        list(task.reference_steps), mode="all")
    assert [v.code for v in verdict.violations] == codes


@pytest.mark.slow
def test_the_gate_rejects_33_concatenated_references_and_says_why():
    """Concatenating the members' references does not make a plan: the first member may leave
    an object in the hand (the next Pick fails: hand-full) or a device in the state the next
    member starts by setting (already-on, already-off, already-open); the object left in the
    hand is then put where its type does not fit (does-not-fit, always after a hand-full).
    (A01+A08 turn on "Faucet" twice; FloorPlan402 has three faucets, so the second turns on
    another one.)"""
    ithor = load_domain("ithor")
    codes: Counter[str] = Counter()
    rejected = 0
    misfit_after_full_hand = True
    for task in load_taskset("compound"):
        verdict = compile_gate(ithor, task_problem(task, ithor)).check(
            list(task.reference_steps), mode="all")
        if not verdict.valid:
            rejected += 1
            codes.update({v.code for v in verdict.violations})
            order = [v.code for v in verdict.violations]
            if "does-not-fit" in order:
                misfit_after_full_hand &= "hand-full" in order[:order.index("does-not-fit")]
    assert rejected == 33
    assert set(codes) <= {"hand-full", "already-on", "already-off", "already-open", "target-held",
                          "does-not-fit"}
    assert misfit_after_full_hand


def test_a_compound_task_with_an_infeasible_member_is_infeasible():
    task = next(t for t in load_taskset("compound") if t.task_id == "C2_K01+K09")
    assert task_infeasible(task).startswith("K09: FloorPlan1 has no DiningTable")
    feasible = next(t for t in load_taskset("compound") if t.task_id == "C2_K01+K03")
    assert task_infeasible(feasible) == ""
