"""The settings of a benchmark run: `BenchConfig`, read from TOML or JSON, and the task specs.

`BenchConfig` is immutable; `validated()` returns a normalised copy (planner names made
canonical, list settings given as comma-separated strings split, the backend's name lower-case)
or raises `BenchConfigError` naming the first bad setting (`bench setting 'workers': ...`),
which the CLI turns into exit 2. `load_config(path)` reads a TOML file (`[bench]` table or top
level) or a JSON object whose keys are the field names (`-` reads as `_`); an unknown key is an
error naming it. `select_tasks(specs)` resolves the `tasks` setting into the grid's tasks.
"""
from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from sage_pddl.env import list_envs
from sage_pddl.llm import available_backends
from sage_pddl.llm.base import DEFAULT_MODEL
from sage_pddl.pddl.errors import SageError
from sage_pddl.planners import canonical_name
from sage_pddl.tasks import Task, load_taskset

from .backend import BackendChoice, BackendSettingError

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}")
"""A run id names one folder under the output folder: no separators, no `..`, no drive."""

MODES = ("plan", "exec")
MEMORY_MODES = ("loo", "live", "none")
EXECUTORS = ("local", "ray")


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
    llm_timeout: float | None = None
    """The deadline of one model call in seconds (ollama, openai); None: the backend's own."""
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
    placement: str | None = None
    """`forced` or `typed` for every task made from a scene (tasks/placement.py); None: each
    task set's default (the setting its references were verified with)."""
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
        try:
            self.backend_choice().check(cassette=bool(self.cassette_dir))
        except BackendSettingError as error:
            raise setting_error(error) from None
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

    def backend_choice(self) -> BackendChoice:
        """The backend these settings name (`backend.py`)."""
        return BackendChoice(llm=self.llm, host=self.llm_host, max_context=self.max_context,
                             timeout=self.llm_timeout,
                             script=self.llm_script, per_host=self.per_host,
                             workers=int(self.workers))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["env_options"] = dict(self.env_options)
        return data


def setting_error(error: BackendSettingError) -> BenchConfigError:
    """A backend setting's error, as a bench setting's."""
    return BenchConfigError(f"bench setting {error.setting!r}: {error}")


def _as_strings(value: Any, setting: str) -> tuple[str, ...]:
    """A list setting given as a list or a comma-separated string (task specs keep brackets)."""
    if value is None:
        return ()
    if isinstance(value, (str, int)):
        return tuple(p.strip() for p in split_specs(str(value)) if p.strip())
    if isinstance(value, Iterable):
        out: list[str] = []
        for item in value:
            out.extend(_as_strings(item, setting))
        return tuple(out)
    raise BenchConfigError(f"bench setting {setting!r}: expected a list or a comma-separated "
                           f"string, got {type(value).__name__}")


def split_specs(text: str) -> list[str]:
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


def select_tasks(specs: Sequence[str],
                 load: Callable[[str], Sequence[Task]] = load_taskset) -> list[Task]:
    """The tasks named by task specs, in order, without repeats (see `BenchConfig.tasks`);
    `load` reads a task set by name (a run reads each once: `context.TaskSets`)."""
    chosen: dict[str, Task] = {}
    origin: dict[str, str] = {}
    for spec in specs:
        match = _SPEC.match(spec.strip())
        if not match:
            raise BenchConfigError(f"bench setting 'tasks': cannot read {spec!r}; use SET, "
                                   "SET#ID, SET[#ID,#ID] or SET[:N]")
        name = match["set"].strip()
        try:
            tasks = list(load(name))
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


def _pick(tasks: list[Task], one: str | None, selection: str | None, spec: str
          ) -> list[Task]:
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


def default_model(llm: str, llm_script: str | None) -> str:
    """The model a row names when --models is not given: the scripted backend is no model."""
    if llm.lower() == "scripted":
        return "scripted script" if llm_script else "reference responder"
    return DEFAULT_MODEL

