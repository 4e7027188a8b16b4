"""Mutants of every reference plan are rejected with their class's code; the baseline is not."""
from __future__ import annotations

import sys
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.gate import compile_gate
from sage_pddl.pddl import load_problem
from sage_pddl.tasks import load_task, load_taskset, normalize_steps
from sage_pddl.tasks.mutations import MUTATION_CLASSES, detect, plan_mutants

REPO = Path(__file__).resolve().parents[2]


@cache
def _results(every: int = 1):
    """Mutants of every `every`-th task of the iTHOR and ProcTHOR sets, and which the gate
    detects with their code."""
    total, detected, misses = Counter(), Counter(), []
    for set_name in ("ithor", "procthor"):
        for task in load_taskset(set_name)[::every]:
            domain = load_domain(task.domain)
            problem = load_problem(REPO / "problems" / set_name / f"{task.task_id}.pddl")
            gate = compile_gate(domain, problem)
            steps = normalize_steps(task.reference_steps, domain)
            for mutant in plan_mutants(domain, problem, steps, task.task_id, 1, gate):
                _, ok, code = detect(gate, mutant)
                total[mutant.kind] += 1
                detected[mutant.kind] += ok
                if not ok:
                    misses.append((task.task_id, mutant.kind, code, mutant.description))
    return total, detected, misses


@pytest.mark.parametrize("every", [3, pytest.param(1, marks=pytest.mark.slow)])
@pytest.mark.parametrize("kind", MUTATION_CLASSES)
def test_every_mutant_is_rejected_with_its_code(kind, every):
    """On every third task (every task in the slow run)."""
    total, detected, misses = _results(every)
    assert total[kind] > 0, f"no {kind} mutant could be built"
    assert detected[kind] == total[kind], [m for m in misses if m[1] == kind][:5]


@pytest.mark.slow
def test_mutants_cover_most_plans():
    total, _, _ = _results()
    assert sum(total.values()) >= 500
    assert total["no-locate"] >= 50 and total["pick-from-closed-container"] >= 5


def test_mutants_break_exactly_one_step():
    task = load_task("ithor#K19")  # Navigate Cabinet; Open Cabinet; ...; PutIn; Close Cabinet
    domain = load_domain("ithor")
    problem = load_problem(REPO / "problems" / "ithor" / f"{task.task_id}.pddl")
    gate = compile_gate(domain, problem)
    mutants = plan_mutants(domain, problem, task.reference_steps, task.task_id)
    assert len({m.kind for m in mutants}) >= 9
    for mutant in mutants:
        assert gate.check(list(mutant.steps[:mutant.step])).valid, mutant.description
        assert not gate.check(list(mutant.steps[:mutant.step + 1])).valid, mutant.description


def test_the_baseline_verifier_rejects_references_that_the_gate_accepts(shared_dir):
    sys.path.insert(0, str(shared_dir / "tools"))
    try:
        from baseline_verifier import check
    finally:
        sys.path.pop(0)
    tasks = load_taskset("ithor")
    baseline_rejected = sum(not check([dict(s) for s in t.reference_steps])[0] for t in tasks)
    assert baseline_rejected == 54  # REFERENCE §6.5: 54/75
    domain = load_domain("ithor")
    ours = 0
    for task in tasks:
        problem = load_problem(REPO / "problems" / "ithor" / f"{task.task_id}.pddl")
        ours += not compile_gate(domain, problem).check(
            normalize_steps(task.reference_steps, domain)).valid
    assert ours == 0
