"""What a run pays before its first cell: one SAGE cell as a whole command against one Direct cell.

Times, in one run, the whole command a user types (a new process each time, start-up included):

    sage-pddl bench --planners SAGE   --llm scripted --tasks 'ithor[:1]'
    sage-pddl bench --planners Direct --llm scripted --tasks 'ithor[:1]'

SAGE retrieves examples from the memory of the task set (every task's seed gated on its own
problem); Direct takes none, so the difference between the two is mostly that memory. The
scripted backend is the reference responder, NOT a model: it answers at once, so what is timed
is the harness. Each command runs with a private cache directory of this run
(`SAGE_PDDL_CACHE`; bytecode kept beside it, as an installed package keeps it, also where
`PYTHONDONTWRITEBYTECODE` is set): first once each on an empty one (a user's very first run: Lark's tables,
the parsed domain and the memory are built and kept), then `--repeat` times each, alternating,
on the directory the first runs filled (every later run). Prints each median and the ratio of
SAGE's to Direct's (goal: at least as fast as 1.5x Direct's).

    python tools/bench_start.py
    python tools/bench_start.py --repeat 9 --tasks 'ithor[:1]'
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def user_environment(cache: Path) -> dict[str, str]:
    """The environment of a command as a user's later runs have it: this checkout first on the
    path, the private cache directory `cache`, and bytecode kept (beside `cache`, as an
    installed package has its `__pycache__`) even where `PYTHONDONTWRITEBYTECODE` is set."""
    env = {**os.environ, "SAGE_PDDL_CACHE": str(cache),
           "PYTHONPYCACHEPREFIX": str(cache.parent / "pycache"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                        os.environ.get("PYTHONPATH")]))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def timed_command(planner: str, tasks: str, cache: Path, out: Path) -> float:
    """Seconds of one whole `sage-pddl bench` command (its own process)."""
    env = user_environment(cache)
    command = [sys.executable, "-m", "sage_pddl", "bench", "--planners", planner,
               "--llm", "scripted", "--tasks", tasks, "--out", str(out), "--no-progress"]
    began = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default="ithor[:1]")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-start-") as scratch:
        root = Path(scratch)
        cold = {planner: timed_command(planner, args.tasks, root / planner / "cache",
                                       root / "out") for planner in ("SAGE", "Direct")}
        warm_cache = root / "SAGE" / "cache"  # what SAGE's first run kept
        warm: dict[str, list[float]] = {"SAGE": [], "Direct": []}
        for _ in range(args.repeat):
            for planner in warm:
                warm[planner].append(timed_command(planner, args.tasks, warm_cache,
                                                   root / "out"))
    print(f"one cell as a whole command, --tasks {args.tasks!r}, load {os.getloadavg()[0]:.2f}")
    print(f"{'':8} {'first run (empty cache)':>24} {'later runs (median of ' + str(args.repeat) + ')':>26}")
    for planner in ("SAGE", "Direct"):
        print(f"{planner:8} {cold[planner]:>23.2f}s {statistics.median(warm[planner]):>25.2f}s")
    ratio_cold = cold["SAGE"] / cold["Direct"]
    ratio_warm = statistics.median(warm["SAGE"]) / statistics.median(warm["Direct"])
    print(f"SAGE / Direct: first run {ratio_cold:.2f}x, later runs {ratio_warm:.2f}x "
          f"(goal: later runs <= 1.5x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
