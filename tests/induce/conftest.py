"""Fixtures of the induction tests.

`ithor_symbolic_logs` is the iTHOR collection `tools/induction_figures.py` makes (every task
probed in the symbolic world, the figures' settings: `--setup-budget 0`): the slowest thing the
slow tests build, so it is built once per run, in the run's directory, which the xdist workers
share. The first test that asks collects it with a second process beside it
(`figures_tool.collect_ithor_shared`: each takes the next task no one has claimed), so it takes
about half the time on two cores whatever worker xdist gives the test; a test that asks
meanwhile collects with them, and one that asks later finds every task written and probes
nothing.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from . import figures_tool

WAIT_FOR_OTHERS_S = 3600.0
"""How long a test waits for the tasks other collectors claimed (one that dies while collecting
leaves its claim: the test then fails instead of hanging)."""


@pytest.fixture(scope="session")
def ithor_symbolic_logs(run_directory: Path) -> Path:
    logs, claims = figures_tool.shared_ithor_folders(run_directory)
    second = subprocess.Popen([sys.executable, figures_tool.__file__, str(run_directory)],
                              stderr=subprocess.PIPE, text=True)
    task_ids = figures_tool.collect_ithor_shared(run_directory)
    _, errors = second.communicate(timeout=WAIT_FOR_OTHERS_S)
    if second.returncode:
        pytest.fail(f"the second iTHOR collector exited {second.returncode}: {errors}")
    deadline = time.monotonic() + WAIT_FOR_OTHERS_S
    while not all((claims / f"{task_id}.done").exists() for task_id in task_ids):
        if time.monotonic() > deadline:  # (another worker's test collects the rest)
            pytest.fail(f"the iTHOR tasks claimed in {claims} were not collected in time")
        time.sleep(0.5)
    return logs
