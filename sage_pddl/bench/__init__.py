"""The benchmark harness: run a grid, score it with one set of metrics, report with statistics.

* `runner`: `run_benchmark(config) -> Path` (grid of models × planners × tasks × seeds, rows
  appended to `results.jsonl`, resumable); its parts: `config` (`BenchConfig`, `load_config`,
  task specs), `results` (the run folder and `results.jsonl`), `backend` (which LLM backend
  answers), `context` (what a process's cells share), `cell` (one cell -> one row).
* `metrics`: the one implementation of every metric (gate verdicts, PDDL goals, episodes).
* `stats`: task-level bootstrap CIs, paired sign-flip permutation tests, Holm–Bonferroni.
* `report`: `write_report(run_dir)` -> summary.csv, comparisons.csv, report.md, plots.
* `oracle`: a scripted responder that answers from reference plans (offline runs, tests).

See docs/benchmark.md.
"""
from __future__ import annotations

from .config import BenchConfig, BenchConfigError, load_config
from .runner import run_benchmark

__all__ = ["BenchConfig", "BenchConfigError", "load_config", "run_benchmark", "write_report"]


def write_report(run_dir, **options):
    """See `sage_pddl.bench.report.write_report` (imported lazily: it needs numpy)."""
    from .report import write_report as _write_report  # start-up time: the report needs numpy

    return _write_report(run_dir, **options)
