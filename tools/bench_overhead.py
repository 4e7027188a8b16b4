"""The benchmark harness's own time per cell, without LLM latency, per planner.

Runs a grid (default: every planner x the 75 iTHOR tasks, 975 cells, one worker) with the
reference responder, which is NOT a model: it answers instantly from the tasks' reference plans,
so what remains of a cell's time is the harness (prompt rendering, schema, parsing, gating,
memory retrieval, the planner's own work such as LLM+P's classical planner or SayCan's candidate
enumeration, metrics). The time spent inside the responder is measured and subtracted, and the
time to write each row is measured apart. Prints, per planner: cells, mean and median
harness µs per cell, the responder's share, and the whole grid's wall time.

    python tools/bench_overhead.py                         # 975 cells
    python tools/bench_overhead.py --tasks 'ithor[:20]' --planners SAGE,LLM+P
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path


class Timed:
    """Wraps a backend and sums the seconds spent inside `complete` per planner cell."""

    def __init__(self, inner, spent):
        self.inner, self.spent = inner, spent
        self.name, self.model = inner.name, inner.model

    def complete(self, *args, **kwargs):
        began = time.perf_counter()
        try:
            return self.inner.complete(*args, **kwargs)
        finally:
            self.spent[threading.get_ident()] += time.perf_counter() - began


def main() -> int:
    from sage_pddl.bench import BenchConfig, run_benchmark
    from sage_pddl.bench import runner as runner_module
    from sage_pddl.bench.config import select_tasks
    from sage_pddl.bench.oracle import reference_responder
    from sage_pddl.bench.results import ResultsWriter, read_results
    from sage_pddl.domains import load_domain
    from sage_pddl.llm import get_backend
    from sage_pddl.planners import available_planners

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default="ithor")
    parser.add_argument("--planners", default=",".join(available_planners()))
    args = parser.parse_args()

    tasks = select_tasks([args.tasks])
    domain = load_domain("ithor")
    responder = reference_responder(tasks, lambda task: domain)
    spent: dict[int, float] = defaultdict(float)
    per_cell_llm: list[float] = []

    def factory(model):
        return Timed(get_backend("scripted", responder=responder, model=model), spent)

    # the responder's time of each cell, read when its row is made
    original = runner_module.run_cell

    def run_cell(context, llm, *cell):
        spent[threading.get_ident()] = 0.0
        row = original(context, llm, *cell)
        per_cell_llm.append(spent[threading.get_ident()])
        row["_llm_s"] = per_cell_llm[-1]
        return row

    write_seconds: list[float] = []
    original_append = ResultsWriter.append

    def append(self, row):
        began = time.perf_counter()
        original_append(self, row)
        write_seconds.append(time.perf_counter() - began)

    runner_module.run_cell = run_cell
    ResultsWriter.append = append
    planners = tuple(p.strip() for p in args.planners.split(",") if p.strip())
    with tempfile.TemporaryDirectory() as folder:
        config = BenchConfig(planners=planners, models=("reference responder",),
                             tasks=(args.tasks,), seeds=(0,), llm="scripted", out=folder,
                             run_id="overhead", memory="loo", progress=False)
        began = time.perf_counter()
        run_dir = run_benchmark(config, llm_factory=factory)
        wall = time.perf_counter() - began
        rows, _ = read_results(Path(run_dir) / "results.jsonl")

    by_planner: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for row in rows:
        by_planner[row["planner"]].append((row["row_seconds"] - row["_llm_s"], row["_llm_s"]))
    print(f"{len(rows)} cells ({len(planners)} planners x {args.tasks}), one worker, reference "
          f"responder (not a model); wall {wall:.1f} s; row write median "
          f"{statistics.median(write_seconds) * 1e6:.0f} µs")
    print(f"{'planner':18} {'cells':>5} {'harness mean µs':>16} {'median µs':>10} "
          f"{'responder µs':>13} {'share of grid':>14}")
    total = sum(h for values in by_planner.values() for h, _ in values)
    for planner in planners:
        values = by_planner.get(planner, [])
        if not values:
            continue
        harness = [h for h, _ in values]
        llm = [t for _, t in values]
        print(f"{planner:18} {len(values):5d} {statistics.mean(harness) * 1e6:16.0f} "
              f"{statistics.median(harness) * 1e6:10.0f} {statistics.mean(llm) * 1e6:13.0f} "
              f"{sum(harness) / total:14.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
