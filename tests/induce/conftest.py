"""Fixtures of the induction tests.

`ithor_symbolic_logs` is the iTHOR collection `tools/induction_figures.py` makes (every task
probed in the symbolic world, default settings): the slowest thing the slow tests build, so it is
built once per run and shared out. Each test that asks collects the tasks no one has claimed yet,
one at a time (a claim is a file made with `O_EXCL` in the run's directory, which the xdist
workers share), then waits for the tasks others claimed: two workers that ask at once collect it
in about half the time, and a caller after the collection probes nothing. A task's log depends on
that task alone, so who collects which changes no log.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from . import figures_tool

WAIT_FOR_OTHERS_S = 3600.0
"""How long a test waits for the tasks another worker claimed (a worker that dies while
collecting leaves its claim: the test then fails instead of hanging)."""


@pytest.fixture(scope="session")
def ithor_symbolic_logs(run_directory: Path) -> Path:
    tool = figures_tool.load()
    logs, claims = run_directory / "ithor-symbolic-logs", run_directory / "ithor-symbolic-claims"
    claims.mkdir(exist_ok=True)
    task_ids = tool.ithor_task_ids()
    for task_id in task_ids:
        try:
            (claims / task_id).open("x").close()
        except FileExistsError:
            continue  # another test collects it
        tool.ithor_logs(logs, [task_id])
        (claims / f"{task_id}.done").touch()  # (a task collect reports failed has no log)
    deadline = time.monotonic() + WAIT_FOR_OTHERS_S
    while not all((claims / f"{task_id}.done").exists() for task_id in task_ids):
        if time.monotonic() > deadline:
            pytest.fail(f"the iTHOR tasks claimed in {claims} were not collected in time")
        time.sleep(0.5)
    return logs
