"""How `sage-pddl bench --workers N` scales against LLM servers that take time to answer.

Starts Ollama-compatible fake servers (`sage_pddl.bench.fakellm`, each in its own process on
127.0.0.1) that answer every chat call after a fixed latency with the reference responder,
which is NOT a model: it exercises the harness. Each serves at most `--capacity` requests at
once and queues the rest, like `OLLAMA_NUM_PARALLEL`. In one run it times the same grid with
`--workers 1, 2, 4, 8, 16` against one server, then with the largest N against two servers
(`--llm-host a,b --per-host CAPACITY`: twice the capacity). It prints the wall time, the
speed-up over `--workers 1`, its ratio to the ideal (N, capped by the servers' capacity and by
the longest cell, whose calls are sequential; goal: at least 0.8), and whether the rows are
identical to those of `--workers 1` (compared after sorting, without timing fields). What the
cells share is built once per process and kept (the tasks' problems and why a task is
infeasible, the task set's memory seeds for SAGE with `--memory loo` as `bench` does by
default): the untimed warm-up runs build it, as the first cells of a `sage-pddl bench` process
do, and the tool prints how long that warm-up took, so the timed runs measure the cells
themselves (each run still compiles and grounds its own gates, and makes its own memory object
and runners, as a run does).

    python tools/bench_scale.py                  # 96 cells, 200 ms latency, capacity 8
    python tools/bench_scale.py --latency 0.5 --tasks 'ithor[:24]'
    python tools/bench_scale.py --planners SAGE,Direct,CoT --tasks 'ithor[:16]' \
        --capacity 16 --workers 1,8                # 48 cells: the small grid of issue 27
"""
from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path


def serve(tasks: str, latency: float, capacity: int, ready: multiprocessing.Queue) -> None:
    """A fake server process: puts its URL on `ready`, then serves until terminated."""
    from sage_pddl.bench.config import select_tasks
    from sage_pddl.bench.fakellm import FakeOllama
    from sage_pddl.bench.oracle import reference_responder
    from sage_pddl.domains import load_domain

    chosen = select_tasks([tasks])
    domains: dict[str, object] = {}

    def domain_for(task):
        return domains.setdefault(task.domain, load_domain(task.domain))

    server = FakeOllama(reference_responder(chosen, domain_for), latency=latency,
                        capacity=capacity, model="fake").start()
    ready.put(server.url)
    while True:
        time.sleep(3600)


def start_servers(count: int, tasks: str, latency: float, capacity: int):
    ready: multiprocessing.Queue = multiprocessing.Queue()
    processes = [multiprocessing.Process(target=serve, args=(tasks, latency, capacity, ready),
                                         daemon=True) for _ in range(count)]
    for process in processes:
        process.start()
    return processes, [ready.get(timeout=120) for _ in processes]


def rows_of(run_dir: Path) -> tuple[list[str], float]:
    """The rows without timing fields, sorted; and the longest cell's seconds."""
    from sage_pddl.bench.results import comparable_rows, read_results

    rows, bad = read_results(run_dir / "results.jsonl")
    if bad:
        raise SystemExit(f"{run_dir}: {bad} unreadable line(s)")
    return comparable_rows(rows), max(float(r["row_seconds"]) for r in rows)


def time_grid(out: Path, run_id: str, hosts: list[str], workers: int, args) -> tuple[float, Path]:
    from sage_pddl.bench import BenchConfig, run_benchmark

    config = BenchConfig(planners=tuple(args.planners.split(",")), models=("fake",),
                         tasks=(args.tasks,), seeds=(0,), llm="ollama",
                         llm_host=",".join(hosts), out=str(out), run_id=run_id,
                         workers=workers, per_host=args.capacity,
                         memory=args.memory, progress=False)
    began = time.perf_counter()
    run_dir = run_benchmark(config)
    return time.perf_counter() - began, run_dir


def grid_options(description: str, tasks: str, planners: str, capacity: int
                 ) -> argparse.ArgumentParser:
    """The options of a timed grid against fake servers, with these defaults."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--tasks", default=tasks)
    parser.add_argument("--planners", default=planners)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per call")
    parser.add_argument("--capacity", type=int, default=capacity,
                        help="requests each fake server handles at once")
    return parser


def main() -> int:
    parser = grid_options(__doc__.split("\n\n")[0], "ithor[:24]", "SAGE,Direct,ReAct,CoT", 8)
    parser.add_argument("--workers", default="1,2,4,8,16")
    parser.add_argument("--memory", default="loo", choices=("loo", "none"),
                        help="the memory SAGE retrieves from (bench's --memory)")
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",")]

    processes, urls = start_servers(2, args.tasks, args.latency, args.capacity)
    try:
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder)
            # Warm-up, timed by nobody: this process's imports (every planner on one task), and
            # every task on every server, since the responder computes a classical plan the
            # first time it is asked about a task without a reference plan (importing
            # unified-planning: seconds of CPU), which would otherwise land in whichever timed
            # run first reaches that server
            warmup = time.perf_counter()
            time_grid(out, "warmup", urls[:1], 1, argparse.Namespace(**{
                **vars(args), "tasks": f"{args.tasks.split('[')[0].split('#')[0]}[:1]"}))
            for number, url in enumerate(urls):
                time_grid(out, f"warmup-{number}", [url], args.capacity,
                          argparse.Namespace(**{**vars(args), "planners": "Direct"}))
            warmup = time.perf_counter() - warmup
            results: list[tuple[str, int, float, list[str]]] = []
            longest = 0.0
            for workers in counts:
                seconds, run_dir = time_grid(out, f"w{workers}", urls[:1], workers, args)
                rows, slowest = rows_of(run_dir)
                longest = slowest if workers == counts[0] else longest
                results.append(("1 host", workers, seconds, rows))
            top = max(counts)
            seconds, run_dir = time_grid(out, "two", urls, top, args)
            results.append(("2 hosts", top, seconds, rows_of(run_dir)[0]))
    finally:
        for process in processes:
            process.terminate()

    base_label, base_workers, base_seconds, base_rows = results[0]
    cells = len(base_rows)
    # No number of workers finishes the grid before its longest cell, whose calls are sequential.
    bound = base_seconds / longest
    print(f"grid: {args.planners} x {args.tasks} = {cells} cells; fake servers answer after "
          f"{args.latency * 1000:.0f} ms, {args.capacity} requests at once each "
          f"(reference responder, not a model)")
    print(f"warm-up (imports, what the cells share, each server's classical plans): "
          f"{warmup:.2f} s, untimed")
    print(f"longest cell {longest:.2f} s of {base_seconds:.2f} s sequential: no speed-up can "
          f"exceed {bound:.1f}x")
    print(f"{'servers':8} {'workers':>7} {'wall s':>8} {'speed-up':>9} {'ideal':>6} "
          f"{'/ ideal':>8} {'rows identical':>15}")
    for label, workers, seconds, rows in results:
        speedup = base_seconds / seconds
        ideal = min(workers, args.capacity * (2 if label == "2 hosts" else 1), bound)
        print(f"{label:8} {workers:7d} {seconds:8.2f} {speedup:8.2f}x {ideal:5.1f}x "
              f"{speedup / ideal:8.2f} {str(rows == base_rows):>15}")
    return 0 if all(rows == base_rows for *_, rows in results) else 1


if __name__ == "__main__":
    sys.exit(main())
