"""The benchmark runner: a grid of models × planners × tasks × seeds, one results row per cell.

`run_benchmark(config) -> Path` runs the grid in ONE process and returns the run folder
`<out>/<run_id>/`, which holds:

* `config.json` — the settings (`BenchConfig`) of the run;
* `results.jsonl` — one JSON object per (model, planner, task_id, seed, mode), appended and
  flushed to disk row by row, so an interrupted run loses at most the row in flight;
* `status.json` — what the last invocation did (rows written, skipped, not run, aborted models),
  written when it ends; removed when one starts, so one that fails (a full disk) never leaves
  an earlier one's `"finished": true`;
* `.lock` — held (`fcntl.flock`) while a bench runs the folder: a second bench on the same run
  refuses instead of running every cell again;
* `episodes/<name>.json` — one trace per cell (`trace.py`: every LLM call, gate verdict and
  step, in order), written with its row; the row names it in `episode`.

Modes: `plan` runs `planner.plan(task)` and scores the steps with the gate (`metrics.py`);
`exec` runs `sage_pddl.runtime.run_episode` in an environment (optionally gating every step
before dispatch and/or injecting a failure) and adds the execution metrics.

Cells start in grid order with one worker, else longest expected first (`schedule.py`); rows
do not depend on the order.

Resumption (`resume=True`): rows already in `results.jsonl` (same key) are skipped; a truncated
last line (the process died mid-write) is cut off before appending; a line that is not a row
(garbled, or JSON of another shape) is skipped with a warning (`read_results`). Error rows are
skipped too, unless `retry_errors=True`, in which case they are run again and the newer row
wins when the file is read (`latest_rows`). Settings that change what a row means (mode, LLM backend, gating,
injection, repairs, memory, environment, domain) must match the stored `config.json`; the grid
(models, planners, tasks, seeds) may grow.

Errors: an LLM infrastructure failure (server unreachable, timeout, missing model, 5xx,
exhausted script — not a model's unusable answer, which is a planning failure scored as such),
a planner or environment error, or an unexpected exception becomes a row with `error` and
`error_kind` set. Error rows are excluded from every metric mean and reported as an error rate.
After `max_consecutive_errors` LLM errors in a row for one model, its remaining rows are not run
(left for a later `--resume`) rather than filled with errors.

Memory: planners that use retrieved examples get a memory built from each task's own task set;
every retrieval leaves the test task and its components out (`HybridMemory.retrieve(exclude=)`).
`memory="none"` gives no planner a memory. With `memory="loo"` (the default) no live episode pool
is used, so rows do not depend on the order they run in. `memory="live"` adds one: a cell whose
plan reaches the goal (plan mode: the gate's goal test; exec mode: the episode's) appends its
steps to `RUN_DIR/live_memory.jsonl`, which later cells retrieve from (their own task's episodes
left out, as always) and a resumed run reads again; rows then depend on the order cells ran in.
"""
from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import secrets
import sys
import threading
import time
import tomllib
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, TypeGuard

from tqdm import tqdm

from sage_pddl.domains import load_domain
from sage_pddl.env import EnvError, get_env, list_envs
from sage_pddl.env.episode import GatedEnv
from sage_pddl.export.classical import require_unified_planning
from sage_pddl.llm import (
    InvalidOutput,
    LLMError,
    PromptTooLong,
    available_backends,
    get_backend,
)
from sage_pddl.llm.base import DEFAULT_MODEL
from sage_pddl.llm.hosts import HostPool, split_hosts
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.files import write_text_atomic
from sage_pddl.pddl.limits import bounded_lines
from sage_pddl.pddl.vocabulary import step_text
from sage_pddl.planners import MEMORY_PLANNERS, canonical_name, get_planner
from sage_pddl.planners.base import PlanningTask
from sage_pddl.planners.gating import GATES
from sage_pddl.planners.memory import HybridMemory
from sage_pddl.runtime import run_episode
from sage_pddl.tasks import Task, load_taskset, task_infeasible

from . import metrics
from .behavior_goal import bddl_available, bddl_goal
from .eai import score_plan
from .executors import (
    Cell,
    Executor,
    InlineExecutor,
    RayExecutor,
    RayUnavailable,
    Runner,
    ThreadExecutor,
)
from .oracle import reference_responder
from .schedule import CellQueue
from .trace import Recorder, episode_name, write_episode

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}")
"""A run id names one folder under the output folder: no separators, no `..`, no drive."""

MODES = ("plan", "exec")
MEMORY_MODES = ("loo", "live", "none")
EXECUTORS = ("local", "ray")
LIVE_MEMORY_FILE = "live_memory.jsonl"
KEY_FIELDS = ("model", "planner", "task_id", "seed", "mode")
TRACE_FIELD = "_trace"
"""The field a row carries its episode's trace in from the cell to the writer (never written)."""
# Settings that change what a row means: a resumed run must keep them.
ROW_SETTINGS = ("mode", "llm", "llm_script", "gate_before_execute", "inject_failure",
                "max_replan", "memory", "env", "domain")


class BenchConfigError(SageError):
    """A bad benchmark setting; the message names the setting."""


@dataclass(frozen=True)
class BenchConfig:
    """The settings of one benchmark run (loadable from TOML or JSON with `load_config`)."""

    planners: tuple[str, ...] = ("SAGE", "Direct")
    models: tuple[str, ...] | None = None  # None: qwen2.5:7b, or the scripted backend's label
    tasks: tuple[str, ...] = ("ithor",)
    """Task specs: `SET`, `SET#ID`, `SET[#ID,#ID]`, `SET[:N]` (first N); SET is a bundled set
    (ithor, ithor-gt, procthor) or a task-set JSON file."""
    seeds: tuple[int, ...] = (0,)
    mode: str = "plan"
    llm: str = "ollama"
    llm_host: str | None = None
    max_context: int | None = None
    """For llm="ollama": the largest context window (num_ctx) a request may ask for; each
    request asks for what its prompt needs up to this (`llm/context.py`, default 32768)."""
    llm_script: str | None = None
    """For llm="scripted": a JSON script file; without one the reference responder answers."""
    cassette_dir: str | None = None
    """Record/replay every LLM call to `<cassette_dir>/<model>.jsonl`."""
    out: str = "results"
    run_id: str | None = None
    resume: bool = False
    retry_errors: bool = False
    env: str = "symbolic"
    env_options: Mapping[str, Any] = field(default_factory=dict)
    gate_before_execute: bool = False
    inject_failure: str | None = None
    max_replan: int = 3
    memory: str = "loo"
    domain: str | None = None
    domains_dirs: tuple[str, ...] = ()
    max_rows: int | None = None
    """Stop after this many new rows (smoke runs); the run can be resumed later."""
    max_consecutive_errors: int = 3
    progress: bool = True
    workers: int = 1
    """Cells run at once (threads, or Ray tasks with executor="ray"); rows do not depend on it."""
    per_host: int | None = None
    """Requests in flight to each LLM host at most (default: `workers`); with several hosts in
    `llm_host` (comma-separated) the cells' requests are spread over them (`llm/hosts.py`)."""
    executor: str = "local"
    """local (threads of this process) or ray (Ray tasks; extra `ray`)."""
    ray_address: str | None = None
    """The Ray cluster to join (executor="ray"); without it a local Ray instance is started."""

    def validated(self) -> BenchConfig:
        """A normalised copy, or `BenchConfigError` naming the first bad setting."""
        def fail(setting: str, message: str) -> BenchConfigError:
            return BenchConfigError(f"bench setting {setting!r}: {message}")

        if self.mode not in MODES:
            raise fail("mode", f"expected plan or exec, got {self.mode!r}")
        planners = _unique(_as_strings(self.planners, "planners"))
        if not planners:
            raise fail("planners", "name at least one planner")
        try:
            planners = _unique(canonical_name(p) for p in planners)
        except SageError as error:
            raise fail("planners", str(error)) from None
        models = _unique(_as_strings(self.models if self.models is not None
                                     else (default_model(self.llm, self.llm_script),), "models"))
        if not models:
            raise fail("models", "name at least one model")
        tasks = _as_strings(self.tasks, "tasks")
        if not tasks:
            raise fail("tasks", "name at least one task set or task")
        try:
            seeds = tuple(dict.fromkeys(int(s) for s in _as_strings(self.seeds, "seeds")))
        except ValueError:
            raise fail("seeds", f"expected integers, got {self.seeds!r}") from None
        if not seeds:
            raise fail("seeds", "give at least one seed")
        if self.llm.lower() not in available_backends():
            raise fail("llm", f"unknown backend {self.llm!r}; available: "
                              f"{', '.join(available_backends())}")
        if self.max_context is not None:
            if self.llm.lower() != "ollama":
                raise fail("max_context", "the context window is set per request for the "
                                          "ollama backend; an OpenAI-compatible server's is "
                                          "fixed when it starts (vLLM: --max-model-len)")
            if int(self.max_context) < 1:
                raise fail("max_context", f"must be >= 1 token, got {self.max_context}")
        if self.llm.lower() == "replay" and not self.cassette_dir:
            raise fail("llm", "replay answers only from recorded cassettes: give the folder "
                              "they were recorded to (--cassette-dir DIR)")
        if self.llm_script and self.llm.lower() != "scripted":
            raise fail("llm_script", "a script file goes with llm='scripted'")
        if self.memory not in MEMORY_MODES:
            raise fail("memory", f"expected one of {', '.join(MEMORY_MODES)}, got "
                       f"{self.memory!r}")
        if int(self.max_replan) < 0:
            raise fail("max_replan", f"must be >= 0, got {self.max_replan}")
        if self.max_rows is not None and int(self.max_rows) < 0:
            raise fail("max_rows", f"must be >= 0, got {self.max_rows}")
        if int(self.max_consecutive_errors) < 1:
            raise fail("max_consecutive_errors", "must be >= 1")
        inject = None if self.inject_failure in (None, "") else str(self.inject_failure)
        if inject is not None:
            if self.mode != "exec":
                raise fail("inject_failure", "failure injection needs mode 'exec'")
            if inject != "auto" and not (inject.isdigit()):
                raise fail("inject_failure", f"expected a step index >= 0 or 'auto', got {inject!r}")
        if self.gate_before_execute and self.mode != "exec":
            raise fail("gate_before_execute", "gating before execution needs mode 'exec'")
        if self.mode == "exec":
            if self.env.lower() not in list_envs():
                raise fail("env", f"unknown environment {self.env!r}; known: "
                                  f"{', '.join(list_envs())}")
        workers = int(self.workers)
        if workers < 1:
            raise fail("workers", f"must be >= 1, got {self.workers}")
        if self.executor not in EXECUTORS:
            raise fail("executor", f"expected one of {', '.join(EXECUTORS)}, got "
                                   f"{self.executor!r}")
        if self.ray_address and self.executor != "ray":
            raise fail("ray_address", "a Ray cluster address goes with executor='ray'")
        if self.memory == "live" and (workers > 1 or self.executor != "local"):
            raise fail("memory", "live memory makes a row depend on the cells that ran before "
                                 "it, so it needs one worker (--workers 1, executor local)")
        if self.llm_script and (workers > 1 or self.executor != "local"):
            raise fail("llm_script", "a script's answers are handed out in the order the calls "
                                     "arrive, so with several workers a row would depend on "
                                     "which cell asked first; use one worker (--workers 1, "
                                     "executor local), or the reference responder or a "
                                     "cassette, which answer by request")
        if self.per_host is not None and int(self.per_host) < 1:
            raise fail("per_host", f"must be >= 1, got {self.per_host}")
        hosts = split_hosts(self.llm_host)
        if len(hosts) > 1 and self.llm.lower() not in ("ollama", "openai"):
            raise fail("llm_host", f"several hosts are for the ollama and openai backends, not "
                                   f"{self.llm!r}")
        if self.resume and not self.run_id:
            raise fail("resume", "resuming needs the run id of the run to continue (--run-id)")
        if self.run_id is not None and not RUN_ID.fullmatch(self.run_id):
            raise fail("run_id", "a run id is a plain folder name: a letter or digit, then "
                                 f"letters, digits, '.', '_', '+' or '-'; got {self.run_id!r}")
        return replace(self, planners=planners, models=models, tasks=tasks, seeds=seeds,
                       llm=self.llm.lower(), inject_failure=inject,
                       max_replan=int(self.max_replan), workers=workers,
                       per_host=None if self.per_host is None else int(self.per_host),
                       domains_dirs=tuple(str(d) for d in self.domains_dirs),
                       env_options=dict(self.env_options))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["env_options"] = dict(self.env_options)
        return data


def _as_strings(value: Any, setting: str) -> tuple[str, ...]:
    """A list setting given as a list or a comma-separated string (task specs keep brackets)."""
    if value is None:
        return ()
    if isinstance(value, (str, int)):
        return tuple(p.strip() for p in _split_top(str(value)) if p.strip())
    if isinstance(value, Iterable):
        out: list[str] = []
        for item in value:
            out.extend(_as_strings(item, setting))
        return tuple(out)
    raise BenchConfigError(f"bench setting {setting!r}: expected a list or a comma-separated "
                           f"string, got {type(value).__name__}")


def _split_top(text: str) -> list[str]:
    """Split on commas outside [...]: `ithor[#K01,#K02],procthor` -> two specs."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "[":
            depth += 1
        elif char == "]":
            depth = max(0, depth - 1)
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def load_config(path: str | Path, **overrides: Any) -> BenchConfig:
    """A `BenchConfig` from a TOML or JSON file (keys are the field names; `-` reads as `_`),
    with `overrides` (not None) applied on top."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise BenchConfigError(f"bench config {path}: cannot read: {error.strerror}") from None
    try:
        if path.suffix.lower() == ".toml":
            data = tomllib.loads(text)
        else:
            data = json.loads(text)
    except ValueError as error:
        raise BenchConfigError(f"bench config {path}: not valid "
                               f"{'TOML' if path.suffix.lower() == '.toml' else 'JSON'}: {error}"
                               ) from None
    if isinstance(data.get("bench"), Mapping):  # allow a [bench] table
        data = data["bench"]
    return config_from_mapping(data, source=str(path), **overrides)


def config_from_mapping(data: Mapping[str, Any], *, source: str = "bench config",
                        **overrides: Any) -> BenchConfig:
    known = {f.name for f in fields(BenchConfig)}
    values: dict[str, Any] = {}
    for raw_key, value in data.items():
        key = str(raw_key).replace("-", "_")
        if key not in known:
            raise BenchConfigError(f"{source}: unknown setting {raw_key!r}; known: "
                                   f"{', '.join(sorted(known))}")
        values[key] = value
    values.update({k: v for k, v in overrides.items() if v is not None})
    for name in ("planners", "models", "tasks", "seeds", "domains_dirs"):
        if name in values:
            values[name] = _as_strings(values[name], name)
    return BenchConfig(**values)


# ------------------------------------------------------------------------------------ tasks
_SPEC = re.compile(r"^(?P<set>[^\[\]#]+?)(?:#(?P<one>[^\[\]#]+)|\[(?P<sel>[^\]]*)\])?$")


def select_tasks(specs: Sequence[str]) -> list[Any]:
    """The tasks named by task specs, in order, without repeats (see `BenchConfig.tasks`)."""
    chosen: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for spec in specs:
        match = _SPEC.match(spec.strip())
        if not match:
            raise BenchConfigError(f"bench setting 'tasks': cannot read {spec!r}; use SET, "
                                   "SET#ID, SET[#ID,#ID] or SET[:N]")
        name = match["set"].strip()
        try:
            tasks = load_taskset(name)
        except SageError as error:
            raise BenchConfigError(f"bench setting 'tasks': {error}") from None
        picked = _pick(tasks, match["one"], match["sel"], spec)
        for task in picked:
            key = task.task_id.lower()
            if key in chosen and origin[key] != name:
                raise BenchConfigError(
                    f"bench setting 'tasks': task id {task.task_id!r} is in both {origin[key]!r} "
                    f"and {name!r}; rows are keyed by task id, so run the sets separately")
            chosen.setdefault(key, task)
            origin.setdefault(key, name)
    return list(chosen.values())


def _pick(tasks: list[Any], one: str | None, selection: str | None, spec: str) -> list[Any]:
    if one is None and selection is None:
        return list(tasks)
    if selection is not None and re.fullmatch(r"\s*:\s*\d+\s*", selection):
        return list(tasks[: int(selection.split(":")[1])])
    wanted = [one] if one is not None else [w for w in (selection or "").split(",") if w.strip()]
    by_id = {t.task_id.lower(): t for t in tasks}
    out = []
    for word in wanted:
        task_id = word.strip().lstrip("#").strip()
        if task_id.lower() not in by_id:
            raise BenchConfigError(f"bench setting 'tasks': no task {task_id!r} in {spec!r}")
        out.append(by_id[task_id.lower()])
    return out


# ---------------------------------------------------------------------------------- results
def row_key(row: Mapping[str, Any]) -> tuple:
    return tuple(str(row.get(k)) for k in KEY_FIELDS)


_log = logging.getLogger(__name__)

MAX_ROW_BYTES = 1024 * 1024
"""The longest results line read (a row is a few KB); a longer one is skipped unread."""


def read_results(path: str | Path) -> tuple[list[dict], int]:
    """(rows, unreadable lines) of a results.jsonl. A line that is not a row (truncated,
    garbled, longer than `MAX_ROW_BYTES`, JSON that is not an object with scalar key fields
    and a model, planner and task id) is skipped, with one logged warning for the file; a row of
    an older file has its fields renamed to today's (`metrics.upgrade_row`)."""
    path = Path(path)
    if not path.exists():
        return [], 0
    rows, bad = [], 0
    with path.open("rb") as handle:
        for raw in bounded_lines(handle, MAX_ROW_BYTES):
            if raw is not None and not raw.strip():
                continue
            try:
                value = json.loads(raw.decode("utf-8", "replace")) if raw is not None else None
            except (ValueError, RecursionError):  # (deep nesting: RecursionError)
                value = None
            if _is_row(value):
                rows.append(metrics.upgrade_row(value))
            else:
                bad += 1
    if bad:
        _log.warning("%s: %d line(s) that are not result rows were skipped", path, bad)
    return rows, bad


def _is_row(value: Any) -> TypeGuard[dict]:
    """A results line's JSON is a row: an object whose key fields are scalars, with a model,
    a planner and a task id."""
    return (isinstance(value, dict)
            and all(isinstance(value.get(k), (str, int, float, type(None))) for k in KEY_FIELDS)
            and all(isinstance(value.get(k), (str, int)) and str(value[k])
                    for k in ("model", "planner", "task_id")))


CIRCUMSTANCE_FIELDS = ("run_id", "row_seconds", "finished_at", "latency_s", "planning_s",
                       "repair_s", "llm_hosts")
"""Row fields that say in which run, when, how fast or through which server a row was made, not
what the planner did."""


def comparable_rows(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """The rows without their `CIRCUMSTANCE_FIELDS`, as sorted JSON texts: equal for two runs
    of the same grid however many workers, hosts or machines ran them, and in whatever order."""
    return sorted(json.dumps({k: v for k, v in row.items() if k not in CIRCUMSTANCE_FIELDS},
                             sort_keys=True, default=str) for row in rows)


def latest_rows(rows: Iterable[Mapping[str, Any]]) -> list[dict]:
    """One row per key, the last one written (a retried error row is replaced by its retry)."""
    latest: dict[tuple, dict] = {}
    for row in rows:
        latest.pop(row_key(row), None)  # re-insert so order follows the latest write
        latest[row_key(row)] = dict(row)
    return list(latest.values())


class ResultsWriter:
    """Appends rows to results.jsonl, one flushed and fsynced line each, and counts them (an
    interrupt during the slow fsync lands after the count, so the counts match the file)."""

    def __init__(self, path: Path):
        self.path = path
        self.dropped_bytes = _cut_partial_line(path)
        self._handle = path.open("a", encoding="utf-8")
        self.written = 0
        self.errors = 0

    def append(self, row: Mapping[str, Any]) -> None:
        line = json.dumps(row, ensure_ascii=False, default=str) + "\n"
        self._handle.write(line)
        self.written, self.errors = self.written + 1, self.errors + bool(row.get("error"))
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()


def _cut_partial_line(path: Path) -> int:
    """Remove an unterminated last line (a write cut short); returns the bytes removed."""
    if not path.exists() or path.stat().st_size == 0:
        return 0
    with path.open("rb+") as handle:
        data = handle.read()
        if data.endswith(b"\n"):
            return 0
        keep = data.rfind(b"\n") + 1
        handle.truncate(keep)
        return len(data) - keep


# ------------------------------------------------------------------------------ LLM errors
class _ErrorWatch:
    """Wraps an LLM backend for ONE cell and remembers the infrastructure errors raised through
    it and the hosts that answered.

    Planners swallow failed calls (they count them and treat them as unusable answers), so the
    runner watches the backend itself to tell "the model answered badly" (a planning failure,
    scored; so is a prompt too long for the context window, a limit of the planner with this
    model) from "the LLM could not be asked" (an error row, excluded). A watch per cell keeps
    cells that run at once from seeing each other's errors."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.errors: list[BaseException] = []
        self.hosts: set[str] = set()
        self.recorder = Recorder()

    @property
    def name(self) -> str:
        return getattr(self.inner, "name", "?")

    @property
    def model(self) -> str:
        return getattr(self.inner, "model", "")

    def complete(self, messages: Any, schema: Any = None, temperature: float = 0.2,
                 seed: int | None = None, role: str | None = None) -> Any:
        began = time.perf_counter()
        try:
            completion = self.inner.complete(messages, schema=schema, temperature=temperature,
                                             seed=seed, role=role)
        except LLMError as error:
            if not isinstance(error, (InvalidOutput, PromptTooLong)):
                self.errors.append(error)
            self.recorder.call(role, messages, seconds=time.perf_counter() - began,
                               error=f"{type(error).__name__}: {error}")
            raise
        self.recorder.call(role, messages, completion.text, completion.prompt_tokens,
                           completion.output_tokens, completion.seconds)
        host = getattr(completion, "host", "") or getattr(self.inner, "host", "")
        if host:
            self.hosts.add(str(host))
        return completion


# ----------------------------------------------------------------------------------- runner
class _BuiltOnce:
    """key -> value, each built once by the first thread that asks, under a lock of its own key
    (threads asking for the same key wait for that build; other keys build meanwhile). A build
    that raises is not kept: the next thread to ask builds it again (and meets the error)."""

    def __init__(self) -> None:
        self._values: dict[Any, Any] = {}
        self._building: dict[Any, threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, key: Any, build: Callable[[], Any]) -> Any:
        with self._guard:
            if key in self._values:
                return self._values[key]
            lock = self._building.setdefault(key, threading.Lock())
        with lock:
            with self._guard:
                if key in self._values:  # built while this thread waited
                    return self._values[key]
            value = build()
            with self._guard:
                self._values[key] = value
            return value


class _Shared:
    """What every runner of a run in this process shares, each thing built once (`_BuiltOnce`):
    the planning tasks (immutable) and the memories of the task sets (only read while cells run,
    except with `memory="live"`, which runs one cell at a time). Domains are shared through
    `load_domain`'s own cache. A compiled gate grounds and interns lazily, so no two threads
    may use one at once: a runner takes a gate no other holds (`take_gate`) and gives it back
    after its cell (`give_back`), for the next cell of the task to reuse what it grounded (the
    process's `planners.gating.GATES`, so a later run in the process reuses it too)."""

    def __init__(self, config: BenchConfig, tasks: list[Any], live_path: Path | None = None):
        self.config = config
        self.tasks = tasks
        self.live_path = live_path
        self._planning = _BuiltOnce()
        self._memories = _BuiltOnce()
        self._infeasibility = _BuiltOnce()
        self._memories_built = threading.Event()
        self._memories_built.set()  # until `build_memories_meanwhile` starts building them

    def domain_for(self, task: Any) -> Any:
        name = self.config.domain or getattr(task, "domain", None) or "ithor"
        return load_domain(name, domains_dirs=list(self.config.domains_dirs) or None)

    def planning_task(self, task: Any) -> Any:
        return self._planning.get(task.task_id,
                                  lambda: PlanningTask.from_task(task, self.domain_for(task)))

    def infeasible(self, task: Any) -> str:
        """Why the task's scene cannot reach its goal ("" when it can)."""
        return self._infeasibility.get(
            task.task_id, lambda: (task_infeasible(task, self.domain_for(task))
                                   if isinstance(task, Task) else ""))

    def memory(self, task: Any) -> Any:
        """The memory of the task's own task set (retrieval leaves the task out)."""
        source = getattr(task, "source", "") or ""

        def build() -> HybridMemory:
            pool = load_taskset(source) if source else self.tasks
            return HybridMemory.from_tasks(pool, self.domain_for(task), live_path=self.live_path)

        return self._memories.get(self._memory_key(task), build)

    def take_gate(self, task: Any) -> Any:
        """A compiled gate of the task's problem that no other thread holds (compiled when
        every one is taken); hand it back with `give_back`."""
        planning = self.planning_task(task)
        return GATES.take(planning.domain, planning.problem)

    def give_back(self, task_id: str, gate: Any) -> None:
        GATES.give_back(gate)

    def _memory_key(self, task: Any) -> str:
        return f"{getattr(task, 'source', '') or ''}|{self.config.domain or task.domain}"

    def build_memories_meanwhile(self) -> None:
        """Start building, on a thread of its own, the memories the grid's planners will read,
        so that the first cells that need one find it built or being built, while cells that
        need none wait on their LLM server. A build that fails is left to the cells, which
        build it again and record the error in their rows."""
        if self.config.memory == "none" or not MEMORY_PLANNERS & set(self.config.planners):
            return
        one_task_each: dict[str, Any] = {}
        for task in self.tasks:
            one_task_each.setdefault(self._memory_key(task), task)

        def build_all() -> None:
            try:
                for task in one_task_each.values():
                    try:
                        self.memory(task)
                    except Exception:  # the cells meet the error again (see the docstring)
                        pass
            finally:
                self._memories_built.set()

        self._memories_built.clear()
        threading.Thread(target=build_all, daemon=True, name="bench-memories").start()

    def ready(self, cell: Cell) -> bool:
        """False while the cell would only wait for a memory still being built."""
        return (self._memories_built.is_set() or self.config.memory == "none"
                or cell.planner not in MEMORY_PLANNERS)


@dataclass
class _Context:
    """What one runner uses: the run's shared things, and the gates it holds for its cell."""

    shared: _Shared
    held_gates: dict[str, Any] = field(default_factory=dict)

    @property
    def config(self) -> BenchConfig:
        return self.shared.config

    def domain_for(self, task: Any) -> Any:
        return self.shared.domain_for(task)

    def planning_task(self, task: Any) -> Any:
        return self.shared.planning_task(task)

    def infeasible(self, task: Any) -> str:
        return self.shared.infeasible(task)

    def gate(self, task: Any) -> Any:
        """The task's compiled gate, this runner's until `give_back_gates`."""
        if task.task_id not in self.held_gates:
            self.held_gates[task.task_id] = self.shared.take_gate(task)
        return self.held_gates[task.task_id]

    def give_back_gates(self) -> None:
        for task_id, gate in self.held_gates.items():
            self.shared.give_back(task_id, gate)
        self.held_gates.clear()

    def memory(self, task: Any) -> Any:
        return self.shared.memory(task)


def default_llm_factory(config: BenchConfig, tasks: Sequence[Any],
                        domain_for: Callable[[Any], Any]) -> Callable[[str], Any]:
    """model name -> backend, as the config says (scripted without a script: the reference
    responder of `oracle.py`; several hosts or `per_host`: a `HostPool` over them; with
    `cassette_dir`: record/replay around the backend)."""
    hosts = split_hosts(config.llm_host)

    def make(model: str) -> Any:
        if config.llm == "replay":  # answers only from the cassettes: no model, no server
            cassette = Path(str(config.cassette_dir)) / f"{_safe(model)}.jsonl"
            return get_backend("replay", inner=None, cassette=str(cassette), mode="replay",
                               model=model)
        backend = one_backend(model)
        if config.cassette_dir:
            cassette = Path(config.cassette_dir) / f"{_safe(model)}.jsonl"
            return get_backend("replay", inner=backend, cassette=str(cassette), mode="auto",
                               model=model)
        return backend

    def one_backend(model: str) -> Any:
        if config.llm == "scripted":
            if config.llm_script:
                return get_backend("scripted", model=model, script=config.llm_script)

            responder = reference_responder(tasks, domain_for)
            responder.prepare()  # classical plans now, not on the clock of the first cell
            return get_backend("scripted", model=model, responder=responder)
        if len(hosts) > 1 or (hosts and config.per_host is not None):
            return HostPool([(host, get_backend(config.llm, model=model, host=host,
                                                max_context=config.max_context))
                             for host in hosts], per_host=config.per_host or config.workers)
        takes_host = config.llm in ("ollama", "openai", "replay")
        return get_backend(config.llm, model=model, max_context=config.max_context,
                           host=hosts[0] if hosts and takes_host else None)

    return make


def preflight(config: BenchConfig, tasks: Sequence[Any]) -> None:
    """What the default backends need, checked once before the first cell, so a run that cannot
    work stops at once with the reason (exit 2) instead of after a row per cell: the server
    answers (ollama, openai: every host of `llm_host`, unless one of several answers) and has
    the model (ollama), and the `planners` extra is there when the reference responder must
    plan tasks without a reference plan. Not with `cassette_dir`: a cassette may hold every
    answer."""
    if config.cassette_dir:
        return
    if config.llm == "scripted" and not config.llm_script:
        unplanned = [t.task_id for t in tasks if not t.reference_steps]
        if unplanned:
            try:
                require_unified_planning()
            except SageError as error:
                shown = ", ".join(unplanned[:3]) + (", ..." if len(unplanned) > 3 else "")
                raise BenchConfigError(
                    f"bench setting 'llm': the reference responder plans the tasks without a "
                    f"reference plan ({shown}) with a classical planner: {error}") from None
        return
    if config.llm not in ("ollama", "openai"):
        return
    for model in config.models or ():
        failures: list[SageError] = []
        hosts: list[str | None] = [*split_hosts(config.llm_host)] or [None]
        for host in hosts:
            try:
                get_backend(config.llm, model=model, host=host).check()  # type: ignore[attr-defined]
            except SageError as error:
                failures.append(error)
        if len(failures) == len(hosts):
            raise failures[0]


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)


def default_model(llm: str, llm_script: str | None) -> str:
    """The model a row names when --models is not given: the scripted backend is no model."""
    if llm.lower() == "scripted":
        return "scripted script" if llm_script else "reference responder"
    return DEFAULT_MODEL


def new_run_id() -> str:
    return f"{datetime.now():%Y%m%d_%H%M%S}_{secrets.token_hex(3)}"


def _prepare_run_dir(config: BenchConfig) -> tuple[BenchConfig, Path, dict[str, Any]]:
    """The run's config with its id, its folder (made), and the `config.json` to write once
    the folder is locked; BenchConfigError when the run cannot go on with these settings."""
    run_id = config.run_id or new_run_id()
    config = replace(config, run_id=run_id)
    run_dir = Path(config.out) / run_id
    results = run_dir / "results.jsonl"
    stored_path = run_dir / "config.json"
    created = datetime.now(UTC).isoformat(timespec="seconds")
    if results.exists() and results.stat().st_size > 0:
        if not config.resume:
            raise BenchConfigError(f"bench setting 'run_id': run {run_id!r} already has results "
                                   f"in {results}; pass --resume to continue it or choose "
                                   "another --run-id")
        if stored_path.exists():
            stored = read_run_config(run_dir)
            created = stored.get("created", created)
            for name in ROW_SETTINGS:
                mine, theirs = getattr(config, name), stored.get("config", {}).get(name)
                if _comparable(mine) != _comparable(theirs):
                    raise BenchConfigError(
                        f"bench setting {name!r}: run {run_id!r} was started with {theirs!r}, "
                        f"not {mine!r}; rows with different {name} cannot share a run")
    run_dir.mkdir(parents=True, exist_ok=True)
    stored = {"run_id": run_id, "created": created,
              "updated": datetime.now(UTC).isoformat(timespec="seconds"),
              "config": config.to_json()}
    return config, run_dir, stored


def read_run_config(run_dir: str | Path) -> dict[str, Any]:
    """The stored `config.json` of a run folder ({} when there is none); BenchConfigError
    naming the file when it is damaged."""
    path = Path(run_dir) / "config.json"
    if not path.exists():
        return {}
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise BenchConfigError(f"{path}: the run's stored settings cannot be read ({error}); "
                               "restore the file, or delete it to continue the run without "
                               "checking its settings") from None
    if not isinstance(stored, dict) or not isinstance(stored.get("config", {}), dict):
        raise BenchConfigError(f"{path}: the run's stored settings are not a JSON object with "
                               "a 'config' object; restore or delete the file")
    return stored


def _comparable(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_comparable(v) for v in value]
    return value


def run_benchmark(config: BenchConfig | Mapping[str, Any] | str | Path, *,
                  llm_factory: Callable[[str], Any] | None = None) -> Path:
    """Run (or resume) the grid of `config` and return the run folder (see module docstring).

    `config` is a `BenchConfig`, a mapping of its fields, or a TOML/JSON file. `llm_factory`
    (model name -> backend) replaces the backend the config names, for library use and tests;
    with `workers` > 1 its backends are called from several threads at once.
    """
    if isinstance(config, (str, Path)):
        config = load_config(config)
    elif isinstance(config, Mapping):
        config = config_from_mapping(config)
    config = config.validated()
    tasks = select_tasks(config.tasks)
    if llm_factory is None:
        preflight(config, tasks)
    config, run_dir, stored = _prepare_run_dir(config)
    with _run_lock(run_dir, str(config.run_id)):
        # an earlier invocation's status must not outlast one that fails (a full disk)
        (run_dir / "status.json").unlink(missing_ok=True)
        write_text_atomic(run_dir / "config.json",
                          json.dumps(stored, indent=2, default=str) + "\n")
        return _run_locked(config, run_dir, tasks, llm_factory)


LOCK_FILE = ".lock"
"""The file in a run folder a running bench holds a lock on (`fcntl.flock`)."""


@contextmanager
def _run_lock(run_dir: Path, run_id: str) -> Iterator[None]:
    """Hold the run folder's lock while this process runs it: a second bench on the same run
    would run every cell again, so it refuses (BenchConfigError). The lock goes with the
    process, however it ends."""
    with (run_dir / LOCK_FILE).open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BenchConfigError(f"bench setting 'run_id': run {run_id!r} is being run by "
                                   f"another bench process now (it holds "
                                   f"{run_dir / LOCK_FILE}); wait for it to end, or choose "
                                   "another --run-id") from None
        yield


def _run_locked(config: BenchConfig, run_dir: Path, tasks: list[Any],
                llm_factory: Callable[[str], Any] | None) -> Path:
    """`run_benchmark` once the run folder is prepared and locked."""
    live_path = run_dir / LIVE_MEMORY_FILE if config.memory == "live" else None

    results = run_dir / "results.jsonl"
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
    writer = ResultsWriter(results)
    status["truncated_bytes_dropped"] = writer.dropped_bytes
    progress = _Progress(len(cells), len(cells) - len(todo), config.progress)
    executor: Any = None
    try:
        shared = _Shared(config, tasks, live_path) if todo else None
        executor = _executor(config, shared, llm_factory) if shared else None
        streak: dict[str, int] = {}
        submitted = 0
        while todo or (executor is not None and executor.in_flight):
            while todo and executor.in_flight < executor.capacity:
                cell = todo.pop(ready=shared.ready if shared else None)
                if config.max_rows is not None and submitted >= config.max_rows:
                    status["not_run"] += 1 + len(todo)
                    todo.clear()
                elif cell.model in status["aborted_models"]:
                    status["not_run"] += 1
                else:
                    executor.submit(cell)
                    submitted += 1
            progress.show(status, executor.in_flight)
            if not executor.in_flight:
                break
            cell, row = executor.next_done()
            todo.finished(cell, row.get("row_seconds"))
            trace = row.pop(TRACE_FIELD, None)
            if trace is not None:
                row["episode"] = episode_name(row)
                write_episode(run_dir, row["episode"], trace)
            writer.append(row)
            status["written"], status["errors"] = writer.written, writer.errors
            progress.show(status, executor.in_flight)
            progress.advance()
            model = cell.model
            streak[model] = streak.get(model, 0) + 1 if row["error_kind"] == "llm" else 0
            if streak[model] >= config.max_consecutive_errors \
                    and model not in status["aborted_models"]:
                status["aborted_models"].append(model)
                progress.say(f"{model}: {streak[model]} LLM errors in a row ({row['error']}); "
                             "its remaining rows are not run (continue later with --resume)")
        status["finished"] = not status["aborted_models"] and not status["not_run"]
        progress.show(status, 0)
    finally:
        status["written"], status["errors"] = writer.written, writer.errors
        if executor is not None:
            executor.close()
        writer.close()
        progress.close()
        write_text_atomic(run_dir / "status.json", json.dumps(status, indent=2) + "\n")
    return run_dir


def _executor(config: BenchConfig, shared: _Shared, llm_factory: Callable[[str], Any] | None
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
    make_runner = _runner_factory(shared, llm_factory)
    if config.workers == 1:
        return InlineExecutor(make_runner)
    return ThreadExecutor(config.workers, make_runner)


class _Backends:
    """model -> its backend, made once and shared by every thread of the run."""

    def __init__(self, factory: Callable[[str], Any]):
        self._factory = factory
        self._made = _BuiltOnce()

    def __call__(self, model: str) -> Any:
        return self._made.get(model, lambda: self._factory(model))


def _runner_factory(shared: _Shared, llm_factory: Callable[[str], Any] | None
                    ) -> Callable[[], Runner]:
    """Makes the runners of this process's threads, once the memories are being built."""
    shared.build_memories_meanwhile()
    backends = _Backends(llm_factory or default_llm_factory(shared.config, shared.tasks,
                                                            shared.domain_for))
    return partial(_runner, shared, backends)


def _runner(shared: _Shared, backends: _Backends) -> Runner:
    """A runner: the run's shared things, and the gates it holds while a cell runs."""
    context = _Context(shared)

    def run(cell: Cell) -> dict[str, Any]:
        try:
            return run_cell(context, _ErrorWatch(backends(cell.model)), *cell)
        finally:
            context.give_back_gates()

    return run


def _fresh_runner(config: BenchConfig, llm_factory: Callable[[str], Any] | None) -> Runner:
    """A runner made from the config alone (a Ray worker process: tasks and backends are
    loaded there)."""
    return _runner_factory(_Shared(config, select_tasks(config.tasks)), llm_factory)()


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


# ------------------------------------------------------------------------------------ one row
def run_cell(context: _Context, llm: _ErrorWatch, model: str, planner_name: str, task: Any,
             seed: int) -> dict[str, Any]:
    """One results row: plan (and execute) `task` once; never raises for an error of the LLM,
    the planner or the environment (those become error rows)."""
    config = context.config
    row: dict[str, Any] = {
        "run_id": config.run_id, "model": model, "planner": planner_name,
        "task_id": task.task_id, "seed": seed, "mode": config.mode,
        "taskset": getattr(task, "source", ""), "domain": config.domain or task.domain,
        "difficulty": task.difficulty, "room": task.room, "llm": config.llm,
        "error": None, "error_kind": None, "infeasible": None,
    }
    began = time.perf_counter()
    stage = "setup"
    recorder = llm.recorder
    planning = gate = None
    try:
        row["infeasible"] = context.infeasible(task) or None
        planning = context.planning_task(task)
        gate = context.gate(task)
        planner = _build_planner(context, llm, planner_name, task, seed)
        stage = "planner"
        if config.mode == "plan":
            result = planner.plan(planning)
            recorder.plan(result, "plan")
            row.update(_plan_part(result, gate, task))
            recorder.scored(gate, row["steps"])
            solved_steps = row["steps"]
            if getattr(task, "source", "") == "virtualhome":
                stage = "eai-scorer"
                row.update(_eai_part(task.task_id, row["steps"]))
            elif getattr(task, "source", "") == "behavior":
                stage = "bddl-goal"
                row.update(_bddl_part(task, gate, row["steps"]))
        else:
            stage = "exec"
            part, solved_steps = _exec_part(context, planner, planning, gate, task, recorder)
            row.update(part)
            if getattr(task, "source", "") == "behavior":
                stage = "bddl-goal"
                row.update(_bddl_part(task, gate, solved_steps))
        if config.memory == "live" and planner_name in MEMORY_PLANNERS:
            # a plan joins the memory when the gate certifies it (every step accepted, goal
            # reached), an episode when its goal holds in the world
            reached = row.get("gate_goal_success" if config.mode == "plan" else "task_success")
            if reached == 1.0:
                context.memory(task).add_episode(planning, solved_steps)
    except KeyboardInterrupt:
        raise
    except SageError as error:
        kind = ("llm" if isinstance(error, LLMError) else "env" if isinstance(error, EnvError)
                else stage)
        row.update(error=f"{type(error).__name__}: {error}", error_kind=kind)
    except (Exception, SystemExit) as error:  # a bug below (a library calling sys.exit
        # included): keep the run going, keep the evidence
        row.update(error=f"{type(error).__name__}: {error}", error_kind="internal",
                   traceback=traceback.format_exc(limit=6))
    if llm.errors and not row["error"]:
        first = llm.errors[0]
        row.update(error=f"{type(first).__name__}: {first}", error_kind="llm")
    row["llm_hosts"] = sorted(llm.hosts)
    if planning is not None and gate is not None:
        row[TRACE_FIELD] = recorder.trace(row, task, planning, gate)
    row["row_seconds"] = round(time.perf_counter() - began, 6)
    row["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    return row


def _eai_part(task_id: str, steps: list[dict[str, Any]]) -> dict[str, Any]:
    """EAI's own verdict on a VirtualHome plan, beside our PDDL goal test: `eai_counted` is
    False when EAI skips the task (its gold program fails its own goals)."""
    verdict = score_plan(task_id, steps)
    return {"eai_counted": verdict.counted, "eai_executable": verdict.executable,
            "eai_success": verdict.success if verdict.counted else None,
            "eai_error": verdict.error_type}


def _bddl_part(task: Any, gate: Any, steps: list[dict[str, Any]]) -> dict[str, Any]:
    """BEHAVIOR's own goal test (BDDL, the one iGibson's `check_success` runs) on the state the
    domain gives `steps` (a plan's executable prefix, or the steps an episode executed), beside
    our PDDL goal test (`behavior_goal`); empty (None) where bddl or future is not installed."""
    if not bddl_available():
        return {"bddl_success": None, "bddl_goal_conditions": None, "bddl_unstated": None}
    state = gate.check(steps).final_state
    verdict = bddl_goal(task.task_id, state, [o.name for o in task.problem.objects])
    return {"bddl_success": verdict.success, "bddl_goal_conditions": verdict.conditions,
            "bddl_unstated": verdict.unstated}


def _build_planner(context: _Context, llm: Any, name: str, task: Any, seed: int) -> Any:
    options: dict[str, Any] = {"seed": seed}
    if context.config.memory in ("loo", "live") and name in MEMORY_PLANNERS:
        options["memory"] = context.memory(task)
    return get_planner(name, llm=llm, **options)


def _plan_part(result: Any, gate: Any, task: Any) -> dict[str, Any]:
    steps = [dict(s) for s in result.steps]
    part = {"steps": steps, "certified": bool(result.certified),
            "failed_calls": sum(1 for c in result.call_log if not c.ok),
            "notes": _notes(result.notes), "limits_hit": list(result.limits_hit)}
    part.update(metrics.plan_metrics(gate, steps, expected_objects=task.expected_objects,
                                     reference_length=len(task.reference_steps)))
    part.update(metrics.cost_metrics(result.calls, result.prompt_tokens, result.output_tokens,
                                     result.seconds))
    return part


def _exec_part(context: _Context, planner: Any, planning: Any, gate: Any, task: Any,
               recorder: Recorder) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The exec-mode part of a row, and the steps the episode executed (as written)."""
    config = context.config
    first_plan: list[Any] = []

    def on_event(kind: str, payload: Any) -> None:
        recorder.on_event(kind, payload)
        if kind == "plan" and not first_plan:
            first_plan.append(payload)

    env = get_env(config.env, **dict(config.env_options))
    conditions: float | None = None
    try:
        report = run_episode(planning, planner, env, max_replan=config.max_replan,
                             gate_before_execute=config.gate_before_execute,
                             inject_failure=config.inject_failure,
                             fail_injection=task.fail_injection, on_event=on_event)
        if isinstance(env, GatedEnv):  # its goal test is the PDDL goal on the true state
            met, total = env.goal_conditions()
            conditions = met / total if total else None
            recorder.final_state = env.true_state()
    finally:
        close = getattr(env, "close", None)
        if callable(close):
            close()
    part: dict[str, Any] = {}
    if first_plan:
        part.update(_plan_part(first_plan[0], gate, task))
    part.update(metrics.exec_metrics(report))
    part["task_goal_conditions"] = conditions
    part.update(metrics.cost_metrics(report.planning_calls + report.repair_calls,
                                     report.prompt_tokens, report.output_tokens, report.seconds))
    part["trace"] = [{"status": r.status, "step": step_text(r.step), "code": r.code}
                     for r in report.records]
    part["notes"] = _notes(report.notes)  # the episode's notes include the first plan's
    return part, report.executed_steps


def _notes(notes: Iterable[str], limit: int = 20, width: int = 300) -> list[str]:
    out = [str(n)[:width] for n in notes]
    return out[:limit] + ([f"... {len(out) - limit} more"] if len(out) > limit else [])
