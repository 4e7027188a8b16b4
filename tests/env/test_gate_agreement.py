"""The symbolic environment agrees with the gate: a step succeeds iff the gate accepts it from
the true state. Checked on random step sequences (hypothesis) over the test kitchen, and on the
bundled household task references plus mutations of them when the task bridge is available."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sage_pddl.env.symbolic import SymbolicEnv
from sage_pddl.gate import StepRejected, compile_gate
from tests.steps import as_step

from .conftest import HIDDEN

ACTIONS = ["moveto", "open", "close", "pick", "place", "putin", "turnon", "wait"]
OBJECTS = ["Counter", "Table", "Stove", "Fridge", "Apple", "Mug", "Banana"]


def agree(env, gate, steps) -> int:
    """Run `steps`, asserting agreement with an independent gate walk; returns accepted count."""
    state = env.true_state()
    accepted = 0
    for index, step in enumerate(steps):
        result = env.step(as_step(step))
        try:
            ground = gate.ground(step, index, state)  # the instance the step acts on now
            violation = gate.applicable(state, ground)
        except StepRejected as rejected:
            violation = rejected.violation
        assert result.success == (violation is None), (step, result.message)
        if violation is None:
            state = gate.apply(state, ground)
            accepted += 1
        else:
            assert (result.code, result.message) == (violation.code, violation.message)
        assert env.true_state() == state
    assert env.goal_reached() == gate.goal_holds(state)
    return accepted


step_text = st.builds(lambda a, args: " ".join([a, *args]), st.sampled_from(ACTIONS),
                      st.lists(st.sampled_from(OBJECTS), min_size=0, max_size=2))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(step_text, max_size=12))
def test_random_step_sequences_agree_with_the_gate(kitchen_domain, kitchen_problem, steps):
    env = SymbolicEnv(kitchen_domain, hidden=HIDDEN)
    env.reset(kitchen_problem)
    gate = compile_gate(kitchen_domain, kitchen_problem)
    agree(env, gate, steps)


def _household_cases():
    from sage_pddl.domains import load_domain
    from sage_pddl.tasks import load_taskset, normalize_steps, task_problem

    return load_domain, load_taskset, normalize_steps, task_problem


@pytest.mark.parametrize(("taskset", "every"), [
    ("ithor", 5), ("procthor", 1), pytest.param("ithor", 1, marks=pytest.mark.slow)])
def test_household_references_and_mutations_agree_with_the_gate(taskset, every):
    """Every `every`-th task of the set (all of them in the slow run)."""
    load_domain, load_taskset, normalize_steps, task_problem = _household_cases()
    tasks = load_taskset(taskset)[::every]
    checked = accepted = 0
    for task in tasks:
        domain = load_domain(task.domain or taskset)
        problem = task_problem(task, domain)
        gate = compile_gate(domain, problem)
        reference = normalize_steps(task.reference_steps, domain)
        mutations = [reference, reference[::-1], reference[1:], reference + reference[:2],
                     [s for i, s in enumerate(reference) if i % 2 == 0]]
        env = SymbolicEnv(domain)
        for steps in mutations:
            env.reset(problem)  # same problem object: the environment reuses its gate
            accepted += agree(env, gate, steps)
            checked += len(steps)
    assert checked > 0 and accepted > 0
