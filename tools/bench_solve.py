"""How much of a `sage-pddl solve` command is the classical planner's own time.

Runs `sage-pddl solve DOMAIN PROBLEM --json` as a user runs it (a new process: start-up,
imports, parsing, the planner, the checks of its plan) `--repeat` times, and for each run
compares the command's wall-clock time with Fast Downward's own, timed in the same run (the
`seconds` the command reports for its planner subprocess). Prints the median of each and of
their ratio: 1.00 would be a command that costs nothing beyond its planner. `--also-up`
measures the same with `--up-validate` (unified-planning's validator checking the plan too,
which `solve` did on every call before it became an option). `--baseline DIR` times the same
command from another source tree (say an export of an earlier commit: `git archive COMMIT |
tar -x -C DIR`) in the same run, for a before/after ratio.

    python tools/bench_solve.py                     # ithor ithor#K19, 3 runs
    python tools/bench_solve.py ithor ithor#K02 --repeat 5 --also-up --baseline /tmp/before
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def one_run(domain: str, problem: str, extra: list[str], tree: Path) -> tuple[float, float]:
    """(the command's wall-clock seconds, the planner's own seconds) of one `solve` run from
    the source `tree`."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "sage_pddl", "solve", domain, problem,
                           "--json", *extra], capture_output=True, text=True, env=env,
                          cwd=tree, check=False)  # `-m` puts the working folder first
    wall = time.perf_counter() - began
    if done.returncode != 0:
        sys.exit(f"solve exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return wall, float(json.loads(done.stdout)["classical"]["seconds"])


def measure(label: str, domain: str, problem: str, extra: list[str], repeat: int,
            tree: Path = REPO) -> float:
    runs = [one_run(domain, problem, extra, tree) for _ in range(repeat)]
    wall = statistics.median(w for w, _ in runs)
    planner = statistics.median(p for _, p in runs)
    ratio = statistics.median(w / p for w, p in runs)
    print(f"{label:<22} command {wall:6.2f} s   planner {planner:6.2f} s   "
          f"command/planner {ratio:5.2f}   ({repeat} runs)")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("domain", nargs="?", default="ithor")
    parser.add_argument("problem", nargs="?", default="ithor#K19")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--also-up", action="store_true",
                        help="also measure with --up-validate")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another source tree to time the same command from")
    args = parser.parse_args()
    print(f"sage-pddl solve {args.domain} {args.problem}; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    default = measure("solve", args.domain, args.problem, [], args.repeat)
    if args.also_up:
        checked = measure("solve --up-validate", args.domain, args.problem, ["--up-validate"],
                          args.repeat)
        print(f"--up-validate costs {checked / default:.2f} times the default command")
    if args.baseline is not None:
        before = measure("solve (baseline tree)", args.domain, args.problem, [], args.repeat,
                         args.baseline)
        print(f"baseline/this tree, command/planner: {before / default:.2f}")


if __name__ == "__main__":
    main()
