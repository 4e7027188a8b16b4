"""Fault injection: fail step k, seeded random failures, disappearing objects, composition."""
from __future__ import annotations

import pytest

from sage_pddl.env.base import EnvError
from sage_pddl.env.faults import (
    Disappear,
    FailAt,
    Faults,
    FaultSpecError,
    RandomFailures,
    compose,
    from_task,
    parse_fault,
)
from sage_pddl.env.symbolic import SymbolicEnv
from tests.steps import as_step

from .conftest import HIDDEN, SOLUTION


def run(domain, problem, faults, steps=SOLUTION, task=None):
    env = SymbolicEnv(domain, hidden=HIDDEN, faults=faults, task=task)
    env.reset(problem)
    results = [env.step(as_step(step)) for step in steps]
    return env, results


def test_fail_at_step_k_fails_once_without_changing_state(kitchen_domain, kitchen_problem):
    env = SymbolicEnv(kitchen_domain, hidden=HIDDEN, faults=FailAt(2, "gripper slipped"))
    env.reset(kitchen_problem)
    assert env.step(as_step(SOLUTION[0])).success and env.step(as_step(SOLUTION[1])).success
    before = env.true_state()
    failed = env.step(as_step(SOLUTION[2]))
    assert (failed.success, failed.message, failed.code) == (False, "gripper slipped",
                                                             "injected-failure")
    assert env.true_state() == before
    assert env.step(as_step(SOLUTION[2])).success  # fires once: the retry works


def test_fail_after_counts_succeeded_steps_like_the_reference_harness(kitchen_domain,
                                                                      kitchen_problem):
    steps = ["pick Apple Fridge", *SOLUTION]  # the first step is rejected by the gate
    _, results = run(kitchen_domain, kitchen_problem,
                     from_task({"at_step": 2, "failure_reason": "Fridge stuck"}), steps)
    outcomes = [(r.success, r.code) for r in results]
    assert outcomes[:4] == [(False, "pick/requires/at"), (True, None), (True, None),
                            (False, "injected-failure")]
    assert results[3].message == "Fridge stuck"
    assert from_task({}) == Faults(()) and from_task(None) == Faults(())


def test_random_failures_are_reproducible_per_seed_and_episode(kitchen_domain, kitchen_problem):
    steps = ["moveto Counter", "moveto Table"] * 20

    def pattern(seed, task="t1"):
        _, results = run(kitchen_domain, kitchen_problem, RandomFailures(0.3, seed), steps, task)
        return [r.success for r in results]

    first = pattern(7)
    assert first == pattern(7)
    assert 0 < first.count(False) < len(first)
    assert first != pattern(8)  # 40 draws at rate 0.3: equal patterns would be a 1e-12 fluke
    assert first != pattern(7, task="t2")  # the episode key salts the stream
    assert all(pattern_of(kitchen_domain, kitchen_problem, RandomFailures(0.0, 1), steps))
    assert not any(pattern_of(kitchen_domain, kitchen_problem, RandomFailures(1.0, 1), steps))


def pattern_of(domain, problem, faults, steps):
    return [r.success for r in run(domain, problem, faults, steps)[1]]


def test_random_stream_is_independent_of_other_faults(kitchen_domain, kitchen_problem):
    steps = ["moveto Counter"] * 30
    alone = [r.success for r in run(kitchen_domain, kitchen_problem,
                                    RandomFailures(0.25, 3), steps)[1]]
    with_other = [r.success for r in run(kitchen_domain, kitchen_problem,
                                         [FailAt(5), RandomFailures(0.25, 3)], steps)[1]]
    assert with_other[5] is False
    assert [s for i, s in enumerate(with_other) if i != 5] == \
        [s for i, s in enumerate(alone) if i != 5]


def test_disappearing_object_leaves_the_state_and_later_steps_fail(kitchen_domain,
                                                                   kitchen_problem):
    env = SymbolicEnv(kitchen_domain, hidden=HIDDEN, faults=Disappear("Apple", 2))
    env.reset(kitchen_problem)
    env.step(as_step("moveto Fridge"))
    env.step(as_step("open Fridge"))
    result = env.step(as_step("pick Apple Fridge"))
    assert (result.success, result.code) == (False, "object-gone")
    assert "Apple is no longer there" == result.message
    assert all("apple" not in fact for fact in env.true_state())
    assert "Apple" not in result.observation.visible_objects
    assert env.step(as_step("pick Apple Fridge")).code == "object-gone"
    assert env.step(as_step("close Fridge")).success  # other objects are unaffected


def test_a_vanish_fault_of_no_object_of_the_problem_is_refused_at_reset(kitchen_domain,
                                                                        kitchen_problem):
    # before: it vanished nothing, and the episode ran as if no fault had been asked for
    env = SymbolicEnv(kitchen_domain, hidden=HIDDEN)
    with pytest.raises(EnvError, match="does not declare: Banana$"):
        env.reset(kitchen_problem, faults=["vanish:Banana@1", Disappear("apple", 2)])
    env.reset(kitchen_problem, faults=["vanish:APPLE@0"])  # names are case-insensitive
    assert env.step(as_step("moveto Fridge")).success
    assert all("apple" not in fact for fact in env.true_state())


def test_faults_restart_with_each_episode(kitchen_domain, kitchen_problem):
    env = SymbolicEnv(kitchen_domain, hidden=HIDDEN, faults=FailAt(0, "boom"))
    for _ in range(2):
        env.reset(kitchen_problem)
        assert env.step(as_step("moveto Fridge")).message == "boom"
    env.reset(kitchen_problem, faults=[])  # overridden at reset
    assert env.step(as_step("moveto Fridge")).success


def test_parse_fault_specs():
    assert parse_fault("fail@3") == FailAt(3, "")
    assert parse_fault("fail@3:Faucet not reachable") == FailAt(3, "Faucet not reachable")
    assert parse_fault("fail-after@1:x") == FailAt(1, "x", "succeeded")
    assert parse_fault("random:0.25:seed=9") == RandomFailures(0.25, 9)
    assert parse_fault("random:0.5:seed=abc:flaky") == RandomFailures(0.5, "abc", "flaky")
    assert parse_fault("vanish:Apple@2") == Disappear("Apple", 2)
    assert compose(["fail@1", Disappear("Mug", 0)]).specs == (FailAt(1), Disappear("Mug", 0))
    for bad in ("fail@x", "random:2", "explode", "vanish:@1", "fail@-1"):
        with pytest.raises(FaultSpecError):
            parse_fault(bad)
    with pytest.raises(FaultSpecError):
        compose([object()])
