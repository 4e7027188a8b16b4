"""A gate is a value threads share: many threads checking plans on one fresh gate at once get
exactly the verdicts one thread gets on a gate of its own, and every thread asking for the
unpruned form of the gate gets the same one.

The threads are switched as often as the interpreter allows (`sys.setswitchinterval`) so that
their misses (steps resolved, atoms given bits, ground actions, explanations) interleave.
"""
from __future__ import annotations

import random
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.gate import compile_gate
from sage_pddl.pddl.plans import written_json
from sage_pddl.tasks import load_taskset, task_problem
from sage_pddl.tasks.mutations import plan_mutants

REPO = Path(__file__).resolve().parents[2]
THREADS = 8


@pytest.fixture
def often_switched() -> Iterator[None]:
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _cases(count: int):
    domain = load_domain("ithor")
    tasks = load_taskset(REPO / "data" / "sage" / "eval_dataset_expanded.json")[:count]
    for task in tasks:
        problem = task_problem(task, domain)
        steps = [dict(s) for s in task.reference_steps]
        mutants = [[written_json(s) for s in m.steps]
                   for m in plan_mutants(domain, problem, steps, task.task_id, per_class=2)]
        yield domain, problem, [steps, *mutants]


def _checks(gate, plans):
    """Every check a thread makes: each plan in both modes, from the initial state and from
    the state after the first plan's first half."""
    middle = gate.check(plans[0][:len(plans[0]) // 2]).final_state
    return [(index, mode, start) for index in range(len(plans)) for mode in ("first", "all")
            for start in (None, middle)]


def _run(gate, plans, checks):
    return {(index, mode, start is None): gate.check(plans[index], state=start, mode=mode)
            for index, mode, start in checks}


def test_threads_sharing_a_fresh_gate_get_the_verdicts_of_a_gate_of_their_own(often_switched):
    for domain, problem, plans in _cases(6):
        alone = compile_gate(domain, problem)
        checks = _checks(alone, plans)
        expected = _run(alone, plans, checks)
        shared = compile_gate(domain, problem)
        results: list[dict] = []
        errors: list[BaseException] = []
        start = threading.Barrier(THREADS)

        def work(seed: int, shared=shared, plans=plans, checks=checks, start=start,
                 results=results, errors=errors) -> None:
            order = list(checks)
            random.Random(seed).shuffle(order)  # each thread meets the steps in its own order
            start.wait()  # every thread's first check at once
            try:
                results.append(_run(shared, plans, order))
            except BaseException as error:  # reported below, with the thread's verdicts
                errors.append(error)

        threads = [threading.Thread(target=work, args=(seed,)) for seed in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors
        assert len(results) == THREADS
        for found in results:
            assert found == expected, problem.name


def test_every_thread_gets_the_same_unpruned_form_of_a_gate(often_switched, monkeypatch):
    """Its table is made slowly here, so that every thread asks while the first builds it."""
    from sage_pddl.gate import gate as gate_module

    domain, problem, _ = next(_cases(1))
    gate = compile_gate(domain, problem)
    made = gate_module.PreconditionTable

    def slowly_made(*args, **options):
        time.sleep(0.05)
        return made(*args, **options)

    monkeypatch.setattr(gate_module, "PreconditionTable", slowly_made)
    static = next(a for a in gate.initial_state if a[0] not in gate.table.dynamic)
    other = gate.initial_state - {static}  # another static fact: the unpruned form
    found: list[object] = []
    start = threading.Barrier(THREADS)

    def work() -> None:
        start.wait()
        found.append(gate.for_state(other))

    threads = [threading.Thread(target=work) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(found) == THREADS and found[0] is not gate
    assert all(form is found[0] for form in found)
    assert gate.for_state(gate.initial_state) is gate
