"""The benchmark runner: a grid of models × planners × tasks × seeds, one results row per cell.

`run_benchmark(config) -> Path` runs the grid in ONE process and returns the run folder
`<out>/<run_id>/` (`results.py`): `config.json`, `results.jsonl` (one row per cell, appended
row by row), `episodes/` (one trace per cell, `trace.py`), and `status.json`, what the last
invocation did (rows written, skipped, not run, aborted models), written when it ends; removed
when one starts, so one that fails (a full disk) never leaves an earlier one's
`"finished": true`.

The grid: the settings (`config.py`), the backend each model gets (`backend.py`, unless
`llm_factory` replaces it), what the cells of this process share (`context.py`), and one cell
(`cell.py`). Cells run on an executor (`executors.py`: inline with one worker, threads, or Ray
tasks), starting in grid order with one worker, else longest expected first (`schedule.py`);
this process is the one writer of the rows, and rows do not depend on the order.

Resumption (`resume=True`): rows already in `results.jsonl` (same key) are skipped; a truncated
last line (the process died mid-write) is cut off before appending; a line that is not a row is
skipped with a warning (`read_results`). Error rows are skipped too, unless `retry_errors=True`,
in which case they are run again and the newer row wins when the file is read (`latest_rows`).
Settings that change what a row means must match the stored `config.json`; the grid (models,
planners, tasks, seeds) may grow.

Errors: a cell's error becomes an error row (`cell.py`), excluded from every metric mean and
reported as an error rate. After `max_consecutive_errors` LLM errors in a row for one model, its
remaining rows are not run (left for a later `--resume`) rather than filled with errors.

Memory: planners that use retrieved examples get a memory built from each task's own task set;
every retrieval leaves the test task and its components out (`HybridMemory.retrieve(exclude=)`).
`memory="none"` gives no planner a memory. With `memory="loo"` (the default) no live episode pool
is used, so rows do not depend on the order they run in. `memory="live"` adds one: a cell whose
plan reaches the goal (plan mode: the gate's goal test; exec mode: the episode's) appends its
steps to `RUN_DIR/live_memory.jsonl`, which later cells retrieve from (their own task's episodes
left out, as always) and a resumed run reads again; rows then depend on the order cells ran in.
"""
from __future__ import annotations

import json
import secrets
import sys
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from tqdm import tqdm

from sage_pddl.llm import LLMBackend
from sage_pddl.pddl.built_once import BuiltOnce
from sage_pddl.pddl.files import write_text_atomic
from sage_pddl.tasks import Task
from sage_pddl.tasks.placement import with_placement

from .backend import BackendSettingError, make_backend, model_cassette
from .backend import preflight as backend_preflight
from .cell import TRACE_FIELD, LLMWatch, run_cell
from .config import (
    BenchConfig,
    BenchConfigError,
    config_from_mapping,
    load_config,
    select_tasks,
    setting_error,
)
from .context import RunContext, TaskSets
from .executors import (
    Cell,
    Executor,
    InlineExecutor,
    RayExecutor,
    RayUnavailable,
    Runner,
    ThreadExecutor,
)
from .oracle import NOT_A_MODEL
from .results import (
    CONFIG_FILE,
    LIVE_MEMORY_FILE,
    RESULTS_FILE,
    STATUS_FILE,
    ResultsWriter,
    latest_rows,
    prepare_run_dir,
    read_results,
    row_key,
    run_lock,
)
from .schedule import CellQueue
from .trace import episode_name, write_episode

LLMFactory = Callable[[str], LLMBackend]
"""model name -> its backend."""


def run_benchmark(config: BenchConfig | Mapping[str, Any] | str | Path, *,
                  llm_factory: LLMFactory | None = None,
                  first_cell_done: Callable[[], None] | None = None) -> Path:
    """Run (or resume) the grid of `config` and return the run folder (see module docstring).

    `config` is a `BenchConfig`, a mapping of its fields, or a TOML/JSON file. `llm_factory`
    (model name -> backend) replaces the backend the config names, for library use and tests;
    with `workers` > 1 its backends are called from several threads at once. `first_cell_done`
    is called once, when the first cell has finished (not at all when none is run): a caller
    starts there the work it does while the cells wait on their LLM calls (the command's
    report loads its libraries). Not earlier: the first cells are still building their
    tasks' scenes and gates, each of them on the one interpreter, and every such step
    delays a call.
    """
    if isinstance(config, (str, Path)):
        config = load_config(config)
    elif isinstance(config, Mapping):
        config = config_from_mapping(config)
    config = config.validated()
    task_sets = TaskSets()
    tasks = with_placement(select_tasks(config.tasks, load=task_sets.get), config.placement,
                           "bench setting 'placement'")
    if llm_factory is None:
        preflight(config, tasks)
    config, run_dir, stored = prepare_run_dir(config)
    if llm_factory is None and config.llm.lower() == "scripted" and not config.llm_script:
        _say(NOT_A_MODEL)  # once the run's settings, tasks and folder are found to be usable
    with run_lock(run_dir, str(config.run_id)):
        # an earlier invocation's status must not outlast one that fails (a full disk)
        (run_dir / STATUS_FILE).unlink(missing_ok=True)
        write_text_atomic(run_dir / CONFIG_FILE,
                          json.dumps(stored, indent=2, default=str) + "\n")
        return _run_locked(config, run_dir, tasks, task_sets, llm_factory, first_cell_done)


def _run_locked(config: BenchConfig, run_dir: Path, tasks: list[Task], task_sets: TaskSets,
                llm_factory: LLMFactory | None,
                first_cell_done: Callable[[], None] | None = None) -> Path:
    """`run_benchmark` once the run folder is prepared and locked."""
    live_path = run_dir / LIVE_MEMORY_FILE if config.memory == "live" else None

    results = run_dir / RESULTS_FILE
    # the writer cuts a partial last line first, so that the rows read are the ones kept: a
    # cut row is not counted done, and a huge unterminated line is never read forward
    writer = ResultsWriter(results)
    existing, _ = read_results(results)
    done = {row_key(r) for r in latest_rows(existing)
            if not (config.retry_errors and r.get("error"))}
    cells = [Cell(m, p, t, s) for m in config.models or () for p in config.planners
             for t in tasks for s in config.seeds]
    todo = CellQueue((c for c in cells if _key(c, config.mode) not in done),
                     longest_first=(config.workers > 1 or config.executor == "ray")
                     and config.max_rows is None,
                     timed=((r["model"], r["planner"], r["row_seconds"]) for r in existing
                            if isinstance(r.get("row_seconds"), (int, float))))
    status: dict[str, Any] = {
        "run_id": config.run_id, "cells": len(cells), "already_done": len(cells) - len(todo),
        "written": 0, "errors": 0, "not_run": 0, "aborted_models": [],
        "truncated_bytes_dropped": 0, "finished": False, "workers": config.workers,
        "executor": config.executor}
    status["truncated_bytes_dropped"] = writer.dropped_bytes
    progress: _Progress | None = None
    executor: Executor | None = None
    try:
        context = RunContext(config, tasks, live_path, task_sets) if todo else None
        executor = _executor(config, context, llm_factory) if context else None
        # after the backends are made (the reference responder's classical plans take
        # seconds): the bar's clock and its ETA start with the first cell
        progress = _Progress(len(cells), len(cells) - len(todo), config.progress)
        streak: dict[str, int] = {}
        submitted = 0

        def start_cells() -> None:
            """Fill the executor with the next cells to start."""
            nonlocal submitted
            assert context is not None and executor is not None  # there are cells to start
            while todo and executor.in_flight < executor.capacity:
                cell = todo.pop(ready=context.ready)
                if config.max_rows is not None and submitted >= config.max_rows:
                    status["not_run"] += 1 + len(todo)
                    todo.clear()
                elif cell.model in status["aborted_models"]:
                    status["not_run"] += 1
                else:
                    executor.submit(cell)
                    submitted += 1

        while todo or (executor is not None and executor.in_flight):
            start_cells()
            assert executor is not None  # made when there are cells to run
            progress.show(status, executor.in_flight)
            if not executor.in_flight:
                break
            cell, row = executor.next_done()
            if first_cell_done is not None:
                first_cell_done()
                first_cell_done = None
            todo.finished(cell, row.get("row_seconds"))
            model = cell.model
            streak[model] = streak.get(model, 0) + 1 if row["error_kind"] == "llm" else 0
            if streak[model] >= config.max_consecutive_errors \
                    and model not in status["aborted_models"]:
                status["aborted_models"].append(model)
                progress.say(f"{model}: {streak[model]} LLM errors in a row ({row['error']}); "
                             "its remaining rows are not run (continue later with --resume)")
            # the next cell starts before this row is written (two fsyncs): with several
            # workers, no thread waits for the disk
            start_cells()
            trace = row.pop(TRACE_FIELD, None)
            if trace is not None:
                row["episode"] = episode_name(row)
                write_episode(run_dir, row["episode"], trace)
            writer.append(row)
            status["written"], status["errors"] = writer.written, writer.errors
            progress.show(status, executor.in_flight)
            progress.advance()
        status["finished"] = not status["aborted_models"] and not status["not_run"]
        progress.show(status, 0)
    finally:
        status["written"], status["errors"] = writer.written, writer.errors
        if executor is not None:
            executor.close()
        writer.close()
        if progress is not None:
            progress.close()
        write_text_atomic(run_dir / STATUS_FILE, json.dumps(status, indent=2) + "\n")
    return run_dir


def _executor(config: BenchConfig, context: RunContext, llm_factory: LLMFactory | None
              ) -> Executor:
    """The executor the config asks for, with a runner factory for its threads or workers."""
    if config.executor == "ray":
        try:
            return RayExecutor(config.workers if config.workers > 1 else None,
                               partial(_fresh_runner, config, llm_factory),
                               key=(config.run_id, secrets.token_hex(4)),
                               address=config.ray_address)
        except RayUnavailable as error:
            raise BenchConfigError(f"bench setting 'executor': {error}") from None
    make_runner = _runner_factory(context, llm_factory, say=_say)
    if config.workers == 1:
        return InlineExecutor(make_runner)
    return ThreadExecutor(config.workers, make_runner)


def _runner_factory(context: RunContext, llm_factory: LLMFactory | None,
                    say: Callable[[str], None] | None = None) -> Callable[[], Runner]:
    """Makes the runners of this process's threads, once the memories are being built; each
    model's backend is made once and shared by every thread of the process. With `say` (the
    runner's own process), the config's backends are made now and tell it what they chose
    (the reference responder's plans), before the first cell."""
    context.build_memories_meanwhile()
    made: BuiltOnce[str, LLMBackend] = BuiltOnce(kept=None)  # one per model, a lock per model
    factory = llm_factory or _config_backends(context, say)

    def backend(model: str) -> LLMBackend:
        return made.get(model, lambda: factory(model))

    if say is not None and llm_factory is None:
        for model in context.config.models or ():
            backend(model)

    def make_runner() -> Runner:
        return lambda cell: run_cell(context, LLMWatch(backend(cell.model)), *cell)

    return make_runner


def _config_backends(context: RunContext, say: Callable[[str], None] | None = None
                     ) -> LLMFactory:
    """model name -> the backend the config names (`backend.py`): with `cassette_dir`, the
    model's cassette there; the reference responder answers for the grid's tasks."""
    config = context.config
    choice = config.backend_choice()

    def make(model: str) -> LLMBackend:
        cassette = model_cassette(config.cassette_dir, model) if config.cassette_dir else None
        return make_backend(choice, model, cassette=cassette, tasks=context.tasks,
                            domain_for=context.domain_for, say=say)

    return make


def _fresh_runner(config: BenchConfig, llm_factory: LLMFactory | None) -> Runner:
    """A runner made from the config alone (a Ray worker process: tasks and backends are
    loaded there)."""
    task_sets = TaskSets()
    tasks = with_placement(select_tasks(config.tasks, load=task_sets.get), config.placement,
                           "bench setting 'placement'")
    return _runner_factory(RunContext(config, tasks, task_sets=task_sets), llm_factory)()


def preflight(config: BenchConfig, tasks: list[Task]) -> None:
    """What the config's backend needs, checked once before the first cell (`backend.py`),
    with `cassette_dir` too: what its cassettes do not hold goes to the server."""
    try:
        backend_preflight(config.backend_choice(), config.models or (), tasks)
    except BackendSettingError as error:
        raise setting_error(error) from None


def _say(text: str) -> None:
    """A note of the run's set-up on stderr (before the progress bar starts)."""
    print(f"note: {text}", file=sys.stderr)


def _key(cell: Cell, mode: str) -> tuple:
    return row_key({"model": cell.model, "planner": cell.planner, "task_id": cell.task.task_id,
                    "seed": cell.seed, "mode": mode})


class _Progress:
    """The progress bar on stderr: rows done of the grid, error rows, cells in flight, and an
    ETA from the rate observed in this invocation. Rows not run (an aborted model, --max-rows)
    are never counted as done, so the bar stops short and says how many are left."""

    def __init__(self, total: int, initial: int, enabled: bool):
        self._bar = tqdm(total=total, initial=initial, file=sys.stderr, disable=not enabled,
                         desc="bench", unit="row", dynamic_ncols=True, smoothing=0.1)

    def show(self, status: Mapping[str, Any], in_flight: int) -> None:
        parts = [f"errors={status['errors']}"]
        if in_flight:
            parts.append(f"running={in_flight}")
        if status["not_run"]:
            why = (f"{', '.join(status['aborted_models'])} aborted"
                   if status["aborted_models"] else "--max-rows reached")
            parts.append(f"{status['not_run']} left ({why}; --resume runs them)")
        self._bar.set_postfix_str(" ".join(parts), refresh=False)

    def advance(self) -> None:
        self._bar.update(1)

    def say(self, text: str) -> None:
        if self._bar.disable:
            print(text, file=sys.stderr)
        else:
            tqdm.write(text, file=sys.stderr)

    def close(self) -> None:
        self._bar.refresh()
        self._bar.close()
