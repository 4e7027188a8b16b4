"""The process's pool of compiled gates (`planners.gating.GatePool`)."""
from __future__ import annotations

import dataclasses

from sage_pddl.planners.gating import GatePool


def test_a_gate_is_lent_to_one_user_at_a_time_and_reused_once_given_back(domain, problem):
    pool = GatePool(kept=1)
    first = pool.take(domain, problem)
    second = pool.take(domain, problem)  # the first is lent: another is compiled
    assert second is not first and second.problem is problem
    pool.give_back(first)
    assert pool.take(domain, problem) is first
    pool.give_back(first)
    other = pool.take(domain, dataclasses.replace(problem))  # equal, another object
    assert other is not first
    pool.give_back(other)  # keeps one problem: the least recently used is dropped
    assert pool.take(domain, problem) is not first
