"""Fixtures for the benchmark tests: a handful of bundled iTHOR tasks and a scripted LLM that
answers from their reference plans (`sage_pddl.bench.oracle`), broken for some tasks."""
from __future__ import annotations

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.llm import get_backend

TASKS = "ithor[#K10,#K19,#L01]"
TASK_IDS = ("K10", "K19", "L01")


@pytest.fixture(scope="session")
def ithor():
    return load_domain("ithor")


@pytest.fixture(scope="session")
def tasks():
    from sage_pddl.bench.config import select_tasks

    return select_tasks([TASKS])


@pytest.fixture
def oracle_factory(tasks, ithor):
    """factory(broken=(), fail=None) -> llm_factory(model) for run_benchmark.

    `fail(call_number, role)` may return an exception to raise from the responder."""
    from sage_pddl.bench.oracle import reference_responder

    def make(broken=(), fail=None):
        answer = reference_responder(tasks, lambda task: ithor, broken_tasks=broken)
        answer.prepare()  # its plans chosen now (a gate per task), not inside a counted run
        calls = {"n": 0}

        def responder(messages, role):
            calls["n"] += 1
            if fail is not None:
                error = fail(calls["n"], role)
                if error is not None:
                    raise error
            return answer(messages, role)

        return lambda model: get_backend("scripted", responder=responder, model=model)

    return make
