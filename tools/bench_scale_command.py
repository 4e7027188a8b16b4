"""How the whole `sage-pddl bench` command scales with `--workers`, start-up included.

Where `bench_scale.py` times grids inside one warmed process, this times the command a user
types, each run a new process:

    sage-pddl bench --planners SAGE,Direct,CoT --tasks 'ithor[:16]' --llm ollama \
        --models fake --llm-host URL --workers N

against one Ollama-compatible fake server (`sage_pddl.bench.fakellm`, its own process, started
by `bench_scale.start_servers`) that answers every chat call after `--latency` seconds with the
reference responder (NOT a model: it exercises the harness), `--capacity` calls at once. A
first run, untimed, fills a private cache directory of this run (`SAGE_PDDL_CACHE`: Lark's
tables, the parsed domain, the task set's memory) and lets the server compute what it answers,
as a user's earlier runs would have; then `--workers 1` and `--workers N` are timed in turn,
`--repeat` times each. Prints each wall time (median), the cells' own seconds added up and what
the command spent outside its cells with one worker (start-up, scheduling, writing, the
report), the speed-up, the longest cell (whose calls are sequential: no number of workers
finishes before it), the bound those set with the time outside the cells (paid whatever the
workers; the cells at best spread perfectly over the workers), and whether the rows of every run are identical (sorted, timing fields
dropped, `results.comparable_rows`).

    python tools/bench_scale_command.py                 # 48 cells, 200 ms, 16 at once
    python tools/bench_scale_command.py --repeat 3 --workers 8
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
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_scale, beside this file

from bench_scale import grid_options, start_servers  # noqa: E402 - a tool beside this one, not a package
from bench_start import user_environment  # noqa: E402 - the same


def run_command(args: argparse.Namespace, url: str, workers: int, out: Path, run_id: str,
                cache: Path) -> tuple[float, Path]:
    """(wall seconds of the command, the run's folder)."""
    env = user_environment(cache)
    command = [sys.executable, "-m", "sage_pddl", "bench", "--planners", args.planners,
               "--tasks", args.tasks, "--llm", "ollama", "--models", "fake",
               "--llm-host", url, "--workers", str(workers), "--out", str(out),
               "--run-id", run_id, "--no-progress", *(["--no-report"] if args.no_report else [])]
    began = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - began
    if done.returncode not in (0, 1):  # 1: some row is an error row (its field says why)
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr}")
    return seconds, out / run_id


def rows_of(run_dir: Path) -> tuple[list[str], float, float, int]:
    """The rows without timing fields, sorted; the longest cell's seconds; every cell's
    seconds added up; the error rows."""
    from sage_pddl.bench.results import comparable_rows, read_results

    rows, bad = read_results(run_dir / "results.jsonl")
    if bad:
        raise SystemExit(f"{run_dir}: {bad} unreadable line(s)")
    seconds = [float(r["row_seconds"]) for r in rows]
    return (comparable_rows(rows), max(seconds), sum(seconds),
            sum(1 for r in rows if r.get("error")))


def main() -> int:
    parser = grid_options(__doc__.split("\n\n")[0], "ithor[:16]", "SAGE,Direct,CoT", 16)
    parser.add_argument("--workers", type=int, default=8, help="compared with --workers 1")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--no-report", action="store_true",
                        help="time the command without its report (bench's --no-report)")
    args = parser.parse_args()

    processes, urls = start_servers(1, args.tasks, args.latency, args.capacity)
    timed: dict[int, list[tuple[float, float]]] = {1: [], args.workers: []}
    rows: dict[str, list[str]] = {}
    longest, errors = 0.0, 0
    try:
        with tempfile.TemporaryDirectory(prefix="bench-scale-command-") as folder:
            out, cache = Path(folder) / "runs", Path(folder) / "cache"
            warmup, run_dir = run_command(args, urls[0], args.workers, out, "warmup", cache)
            rows["warmup"] = rows_of(run_dir)[0]
            for round_number in range(args.repeat):
                for workers in timed:
                    run_id = f"w{workers}-{round_number}"
                    seconds, run_dir = run_command(args, urls[0], workers, out, run_id, cache)
                    rows[run_id], slowest, in_cells, failed = rows_of(run_dir)
                    timed[workers].append((seconds, in_cells))
                    errors = max(errors, failed)
                    if workers == 1:
                        longest = max(longest, slowest)
    finally:
        for process in processes:
            process.terminate()

    cells = len(rows["warmup"])
    same = all(found == rows["warmup"] for found in rows.values())
    one = statistics.median(s for s, _ in timed[1])
    many = statistics.median(s for s, _ in timed[args.workers])
    print(f"sage-pddl bench --planners {args.planners} --tasks {args.tasks!r}"
          f"{' --no-report' if args.no_report else ''}: {cells} cells; "
          f"a fake server answers after {args.latency * 1000:.0f} ms, {args.capacity} calls "
          f"at once (reference responder, not a model); load {os.getloadavg()[0]:.2f}")
    print(f"untimed first run (fills the cache directory, the server's answers): {warmup:.2f} s")
    print(f"{'workers':>7} {'wall s':>8} {'cells s':>8} {'speed-up':>9}")
    for workers, runs in timed.items():
        wall = statistics.median(s for s, _ in runs)
        in_cells = statistics.median(c for _, c in runs)
        print(f"{workers:7d} {wall:8.2f} {in_cells:8.2f} {one / wall:8.2f}x")
    outside = one - statistics.median(c for _, c in timed[1])
    print(f"with one worker, outside its cells (start-up, scheduling, rows, report): "
          f"{outside:.2f} s")
    print(f"longest cell {longest:.2f} s: no speed-up can exceed {one / longest:.1f}x")
    # what the command spends outside its cells is paid whatever the workers; with the cells
    # perfectly spread over the workers and no slower than alone, the wall time is at least:
    cells_one = statistics.median(c for _, c in timed[1])
    best = outside + max(longest, cells_one / args.workers)
    print(f"with {outside:.2f} s outside the cells, --workers {args.workers} takes at least "
          f"{best:.2f} s: no speed-up can exceed {one / best:.2f}x on this command")
    print(f"--workers {args.workers} vs --workers 1: {one / many:.2f}x (goal: at least 6.4x); "
          f"rows identical in every run: {same}; error rows: {errors}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
