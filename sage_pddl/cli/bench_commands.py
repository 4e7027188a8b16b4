"""CLI commands of the benchmark: `bench` (run or resume a grid) and `report` (tables, plots).

Thin like the rest of the CLI: the options become a `BenchConfig` (optionally read from
`--config FILE` first, options given on the command line win) and the library does the work.
Bad settings raise `BenchConfigError` naming the setting (exit 2 through `cli.main`).
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import json
import shlex
import signal
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from ..env.thor.protocol import port_number
from .common import (
    EXIT_INVALID,
    EXIT_OK,
    AddCommand,
    add_llm_timeout,
    add_max_context,
    add_placement,
    console,
    err,
    fraction,
    whole_number,
)

if TYPE_CHECKING:
    from ..bench.config import BenchConfig
    from ..bench.report import ReportFiles


def _list(text: str | None) -> list[str] | None:
    if text is None:
        return None
    from ..bench.config import split_specs  # start-up time: imported when the command runs

    return [part.strip() for part in split_specs(text) if part.strip()]


def config_from_args(args: argparse.Namespace) -> BenchConfig:
    """The `BenchConfig` of a `bench` command line (`--config` file first, flags on top)."""
    # start-up time: imported when the command runs
    from ..bench.config import BenchConfig, BenchConfigError, config_from_mapping, load_config

    seed_words = _list(args.seeds)
    seeds: list[int] | None = None
    if seed_words is not None:
        try:
            seeds = [int(s) for s in seed_words]
        except ValueError:
            raise BenchConfigError(f"bench setting 'seeds': expected integers such as 0,1,2, "
                                   f"got {args.seeds!r}") from None
    overrides = {
        "planners": _list(args.planners), "models": _list(args.models),
        "tasks": _list(args.tasks), "seeds": seeds, "mode": args.mode, "llm": args.llm,
        "llm_host": args.llm_host, "llm_script": args.llm_script,
        "max_context": args.max_context, "llm_timeout": args.llm_timeout,
        "cassette_dir": args.cassette_dir, "out": args.out, "run_id": args.run_id,
        "resume": True if args.resume else None,
        "retry_errors": True if args.retry_errors else None,
        "env": args.env,
        "gate_before_execute": True if args.gate_before_execute else None,
        "inject_failure": args.inject_failure, "max_replan": args.max_replan,
        "memory": "loo" if args.loo else args.memory, "domain": args.domain,
        "placement": args.placement,
        "domains_dirs": args.domains_dir or None, "max_rows": args.max_rows,
        "progress": False if args.no_progress else None,
        "workers": args.workers, "per_host": args.per_host, "executor": args.executor,
        "ray_address": args.ray_address,
    }
    if args.sim_host or args.sim_port:
        overrides["env_options"] = {k: v for k, v in (("host", args.sim_host),
                                                      ("port", args.sim_port)) if v}
    if args.config:
        return load_config(args.config, **overrides)
    return config_from_mapping({}, **overrides) if any(
        v is not None for v in overrides.values()) else BenchConfig()


def cmd_bench(args: argparse.Namespace) -> int:
    from ..bench import run_benchmark  # start-up time: imported when the command runs
    from ..bench.results import latest_rows, new_run_id, read_results  # start-up time

    config = config_from_args(args)
    late_libraries = _LateLibraries(report=not args.no_report)
    if not config.resume and not config.run_id:  # named now, so an interrupt can name it
        config = dataclasses.replace(config, run_id=new_run_id())
    try:
        with _terminate_as_interrupt():
            run_dir = run_benchmark(config, first_cell_done=partial(
                _first_cell_done, late_libraries, freeze=getattr(args, "whole_process", False)))
    except KeyboardInterrupt:
        _say_how_to_resume(args, config)
        raise
    status = json.loads((run_dir / "status.json").read_text(encoding="utf-8"))
    run_errors = sum(1 for row in latest_rows(read_results(run_dir / "results.jsonl")[0])
                     if row.get("error"))
    out = console(stderr=True)
    out.print(f"run {status['run_id']}: {status['written']} row(s) written "
              f"({status['errors']} error row(s)), {status['already_done']} already present, "
              f"{status['not_run']} not run -> {run_dir / 'results.jsonl'}", markup=False)
    if status["truncated_bytes_dropped"]:
        out.print(f"note: a truncated last line ({status['truncated_bytes_dropped']} bytes) was "
                  "removed before appending", markup=False)
    report = page = None
    if not args.no_report and (run_dir / "results.jsonl").stat().st_size > 0:
        late_libraries.wait()
        from ..bench.report import write_report  # start-up time: imported when used

        report = write_report(run_dir, resamples=args.resamples)
        page = _html(args, report)
    if args.json:
        print(json.dumps({"run_dir": str(run_dir), "status": status,
                          "report": str(report.markdown) if report else None,
                          "html": str(page) if page else None}, indent=2))
    elif report:
        print(report.markdown.read_text(encoding="utf-8"))
        _say_page(page)
    for model in status["aborted_models"]:
        out.print(f"[red]{model}: stopped after repeated LLM errors; fix the server and run "
                  f"again with --run-id {status['run_id']} --resume --retry-errors (the "
                  f"cells not run and the error rows)[/red]")
    if run_errors and not status["aborted_models"]:
        out.print(f"[red]the run holds {run_errors} error row(s): cells the LLM, the "
                  f"environment or the harness could not run (their 'error' field says why); "
                  f"run them again with --run-id {status['run_id']} --resume "
                  f"--retry-errors[/red]")
    # exit 1 when any row of this invocation could not be run: a run with error rows is not a
    # result yet (rows already present from an earlier invocation are not counted again)
    return EXIT_INVALID if status["aborted_models"] or status["errors"] else EXIT_OK


def _first_cell_done(late_libraries: _LateLibraries, freeze: bool) -> None:
    """Once the grid's first cell is done: with `freeze` (the command is the whole
    process), what the run has set up (its tasks, gates, memories, modules) lives until the
    process ends, so it is frozen out of the garbage collector's walks (`gc.freeze`: a full
    collection would otherwise walk it again and again while the cells run); and what the
    command imports after its last cell loads while the cells wait."""
    if freeze:
        gc.freeze()
    late_libraries.load_meanwhile()


class _LateLibraries:
    """What the command imports after its last cell (rich's console for its closing lines;
    with a report, the report's module with numpy and matplotlib with the figures' settings),
    imported on a thread of their own once the grid's first cell is done: the cells wait on
    their LLM calls most of the time, so the command ends without importing first. Started
    neither during the run's set-up, which has no wait to fill, nor while the first cells
    build their tasks (`run_benchmark`'s `first_cell_done`)."""

    def __init__(self, report: bool) -> None:
        self._report = report
        self._thread: threading.Thread | None = None

    def load_meanwhile(self) -> None:
        self._thread = threading.Thread(target=self._load, name="late-libraries", daemon=True)
        self._thread.start()

    def _load(self) -> None:
        import rich.console  # noqa: F401 - the closing lines' console, loaded now

        if self._report:
            from ..bench import plots, report  # noqa: F401 - what the report imports, now

            plots.load()

    def wait(self) -> None:
        """Until the libraries are loaded (at once when they never started loading)."""
        if self._thread is not None:
            self._thread.join()


def _say_how_to_resume(args: argparse.Namespace, config: BenchConfig) -> None:
    """After an interrupt: the run's id, what it holds, and the exact command that continues
    it (the same command line with `--run-id ID --resume`)."""
    from ..bench.results import latest_rows, read_results  # start-up time

    run_dir = Path(config.out) / str(config.run_id)
    held = ""
    if (run_dir / "results.jsonl").exists():
        rows = latest_rows(read_results(run_dir / "results.jsonl")[0])
        errors = sum(1 for row in rows if row.get("error"))
        held = f" ({len(rows)} row(s) written, {errors} of them error rows)"
    words: list[str] = []
    skip = False
    for word in getattr(args, "argv", None) or []:
        if skip:
            skip = False
        elif word == "--run-id":
            skip = True
        elif not word.startswith("--run-id=") and word != "--resume":
            words.append(word)
    command = shlex.join(["sage-pddl", *words, "--run-id", str(config.run_id), "--resume"])
    err(f"interrupted: run {config.run_id}{held} in {run_dir}; continue it with:\n  {command}")


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM (a scheduler or `kill` stopping the run) ends the grid the way Ctrl-C does: the
    rows written stay whole, status.json says what was done, and the exit code is 130; without
    this the process would die before writing status.json."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def cmd_report(args: argparse.Namespace) -> int:
    from ..bench.report import write_report  # start-up time: imported when the command runs

    files = write_report(args.run_dir, candidate=args.candidate,
                         baselines=_list(args.baselines), compared=_list(args.metrics),
                         resamples=args.resamples, alpha=args.alpha, plots=not args.no_plots)
    page = _html(args, files)
    if args.json:
        print(json.dumps({"summary": str(files.summary), "comparisons": str(files.comparisons),
                          "markdown": str(files.markdown),
                          "plots": [str(p) for p in files.plots], "notes": list(files.notes),
                          "html": str(page) if page else None}, indent=2))
    else:
        print(files.markdown.read_text(encoding="utf-8"))
        _say_page(page)
    return EXIT_OK


def _html(args: argparse.Namespace, files: ReportFiles) -> Path | None:
    """The HTML report of a written report when `--html` asks for it (else None)."""
    if not args.html or files.analysis is None:
        return None
    from ..bench.html_report import write_html  # start-up time: imported when used

    return write_html(files.run_dir, files.analysis)


def _say_page(page: Path | None) -> None:
    if page is not None:
        console(stderr=True).print(f"HTML report: {page.resolve().as_uri()}", markup=False)


def register(add_command: AddCommand) -> None:
    p = add_command("bench", cmd_bench,
                "Run (or resume) a benchmark grid: planners × models × tasks × seeds.")
    p.add_argument("--config", default=None, metavar="FILE",
                   help="TOML or JSON file of bench settings (options given here override it)")
    p.add_argument("--planners", default=None, help="comma-separated planners (default SAGE,Direct)")
    p.add_argument("--llm", default=None, help="LLM backend: ollama (default), openai, local, "
                                               "scripted (reference responder), replay")
    p.add_argument("--models", default=None, help="comma-separated models (default qwen2.5:7b; with --llm "
                        "scripted: 'reference responder')")
    p.add_argument("--llm-host", default=None,
                   help="LLM server URL, or several comma-separated (requests are spread over "
                        "them; a failing host is set aside)")
    add_max_context(p)
    add_llm_timeout(p, one_host=False)
    p.add_argument("--workers", type=int, default=None,
                   help="cells run at once (default 1); rows do not depend on it")
    p.add_argument("--per-host", type=int, default=None, metavar="K",
                   help="requests in flight to each LLM host at most (default: --workers)")
    p.add_argument("--executor", default=None, choices=["local", "ray"],
                   help="local threads (default) or Ray tasks (extra 'ray')")
    p.add_argument("--ray-address", default=None, metavar="ADDR",
                   help="Ray cluster to join with --executor ray (default: start a local one)")
    p.add_argument("--llm-script", default=None, metavar="FILE",
                   help="JSON script of answers per role for --llm scripted")
    p.add_argument("--cassette-dir", default=None, metavar="DIR",
                   help="record/replay every LLM call to DIR/<model>.jsonl")
    p.add_argument("--tasks", default=None,
                   help="task specs: ithor, ithor#K01, 'ithor[#K01,#K02]', 'ithor[:10]', FILE.json, "
                        "a folder of PDDL problem files or a glob such as 'problems/*.pddl' "
                        "(comma-separated; default ithor)")
    p.add_argument("--seeds", default=None, help="comma-separated seeds (default 0)")
    p.add_argument("--mode", default=None, choices=["plan", "exec"],
                   help="plan (gate-scored plans, default) or exec (plan and execute)")
    p.add_argument("--out", default=None, help="results folder (default results/)")
    p.add_argument("--run-id", default=None, help="run id (default: date_time_random)")
    p.add_argument("--resume", action="store_true",
                   help="continue the run --run-id, skipping rows already written")
    p.add_argument("--retry-errors", action="store_true",
                   help="with --resume: run error rows again (the newer row wins)")
    p.add_argument("--env", default=None, help="environment for --mode exec (default symbolic)")
    p.add_argument("--sim-host", default=None, help="thor-server host (--env thor)")
    p.add_argument("--sim-port", type=port_number, default=None, help="thor-server port (--env thor)")
    p.add_argument("--gate-before-execute", action="store_true",
                   help="exec: gate every step before dispatch (blocked steps are counted)")
    p.add_argument("--inject-failure", default=None, metavar="K|auto",
                   help="exec: fail the step at 0-based index K (0: the first step; auto: the "
                        "task's own, else the middle)")
    p.add_argument("--max-replan", type=int, default=None, help="repairs per episode (default 3)")
    p.add_argument("--loo", action="store_true",
                   help="memory planners retrieve from the task set with the test task left out "
                        "(the default; same as --memory loo)")
    p.add_argument("--memory", default=None, choices=["loo", "live", "none"],
                   help="loo (default), live (loo plus the run's successful episodes, kept in "
                        "RUN_DIR/live_memory.jsonl) or none (no planner gets a memory)")
    p.add_argument("--domain", default=None, help="domain for every task (default: the task's own)")
    add_placement(p)
    p.add_argument("--max-rows", type=int, default=None,
                   help="stop after this many new rows (resume later)")
    p.add_argument("--resamples", type=whole_number(1), default=10_000,
                   help="bootstrap / permutation resamples for the report (default 10000)")
    p.add_argument("--no-report", action="store_true", help="do not write the report at the end")
    p.add_argument("--html", action="store_true",
                   help="with the report, write RUN/html/index.html (see 'report --html')")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--json", action="store_true", help="print the run folder and status as JSON")

    p = add_command("report", cmd_report,
                "Write summary.csv, comparisons.csv, report.md and plots for a benchmark run.",
                domains=False)
    p.add_argument("run_dir", type=Path, help="the run folder, e.g. results/<run_id>")
    p.add_argument("--candidate", default=None, help="planner compared against the others "
                                                     "(default: the run's first planner)")
    p.add_argument("--baselines", default=None, help="comma-separated baselines (default: all)")
    p.add_argument("--metrics", default=None,
                   help="comma-separated metrics to compare (default: plan sim_goal_success, "
                        "sim_goal_conditions, gate_goal_success, gate_goal_conditions, "
                        "executability, hallucination; exec task_success, task_goal_conditions, "
                        "step_success, recovered)")
    p.add_argument("--resamples", type=whole_number(1), default=10_000,
                   help="bootstrap / permutation resamples (default 10000)")
    p.add_argument("--alpha", type=fraction, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--no-plots", action="store_true", help="skip the matplotlib plot")
    p.add_argument("--html", action="store_true",
                   help="also write RUN/html/index.html: the grid, tables, plots, a timeline "
                        "per episode and the domains, opened from disk in any browser")
    p.add_argument("--json", action="store_true", help="print the written files as JSON")
