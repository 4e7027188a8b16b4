"""A bounded fuzz run in every test run: 1,000 mutated inputs over all readers, 2,000 more in
the slow run, fixed seeds.

The long run is `python tools/fuzz.py --n 100000` (see tests/fuzz/harness.py for the mutator,
the seeds and what counts as a crash).
"""
from __future__ import annotations

import random

import pytest

from .harness import TARGETS, check, mutate, run, seeds


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow),
                                  pytest.param(2, marks=pytest.mark.slow)])
def test_no_reader_crashes_on_mutated_inputs(seed):
    summary = run(1000, seed=seed)
    crashes = [(o.kind, o.detail, o.data[:200]) for o in summary.crashes]
    assert not crashes, crashes
    kinds = {kind for kind, verdict in summary.table() if verdict == "ok"}
    assert kinds == set(TARGETS)  # every reader also accepted some inputs: the seeds work


def test_the_seeds_themselves_pass_every_reader_they_are_meant_for():
    for kind, inputs in seeds().items():
        verdicts = [check(kind, data).verdict for data in inputs]
        assert "crash" not in verdicts and verdicts.count("ok") >= len(verdicts) // 2, kind


def test_the_mutator_is_deterministic_and_damages():
    data = b"(define (domain d) (:predicates (p)))"
    first = [mutate(data, random.Random(7)) for _ in range(3)]
    assert first == [mutate(data, random.Random(7)) for _ in range(3)]
    outs = {mutate(data, random.Random(i)) for i in range(50)}
    assert len(outs) > 40 and data not in outs


def test_the_checker_calls_a_non_sage_exception_a_crash(monkeypatch):
    def boom(data: bytes) -> None:
        raise KeyError("<END-OF-FILE>")

    monkeypatch.setitem(TARGETS, "domain", boom)
    assert check("domain", b"x").verdict == "crash"
