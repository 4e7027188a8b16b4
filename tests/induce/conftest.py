"""Fixtures of the induction tests.

`ithor_symbolic_logs` is the iTHOR collection `tools/induction_figures.py` makes (every task
probed in the symbolic world, default settings): the slowest thing the slow tests build, so it is
built once per run, by the first test that asks. The tests that read it share a module, so xdist
runs them on one worker; under another distribution a test on a second worker waits on the lock
meanwhile, and `collect` resumes, so a caller after the first finds every task's log written and
probes nothing.
"""
from __future__ import annotations

import fcntl
from pathlib import Path

import pytest

from . import figures_tool


@pytest.fixture(scope="session")
def ithor_symbolic_logs(run_directory: Path) -> Path:
    logs = run_directory / "ithor-symbolic-logs"
    with open(run_directory / "ithor-symbolic-logs.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        figures_tool.load().ithor_logs(logs)
    return logs
