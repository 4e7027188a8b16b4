"""Which LLM backend answers: the one place `bench` and the `plan`/`run` commands choose it.

A `BackendChoice` is what a command line or a bench config says about the backend: its name, the
host or hosts, the context window, a script, requests per host. `check()` states which settings
go together (raising `BackendSettingError` naming the setting); `make_backend(choice, model)`
builds the backend for one model:

* `replay`: answers only from the cassette (no model, no server);
* `scripted`: the answers of the script file, else the reference responder of `oracle.py` over
  the given tasks (it exercises the harness, not a model), prepared now so that its classical
  plans are not made on the clock of the first cell; `say` is told which plan answers which
  task (a reference plan, or a classical one where the reference does not reach the goal);
* several hosts, or `per_host`: a `HostPool` spreading one model's requests over the hosts
  (`llm/hosts.py`), `per_host` (default: `workers`) in flight to each at most; with
  `one_timeout`, a pool even of one host, which sets a host aside at its first timeout;
* else the named backend (`ollama` and `openai` get the host);
* with a cassette (not `replay`): record what is new, replay what the cassette holds.

`preflight(choice, models, tasks)` checks once, before a bench's first cell, what the chosen
backend needs: a backend with a `check()` method is made and checked, as `plan` does. (The
bench's settings in `config.py` name a `BackendChoice`; this module knows nothing of the
bench.)
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from sage_pddl.export.classical import require_unified_planning
from sage_pddl.llm import (
    POOLS_HOSTS,
    TAKES_HOST,
    LLMBackend,
    LLMConfigError,
    backend_has,
    backends_with,
    get_backend,
)
from sage_pddl.llm.base import check_server
from sage_pddl.llm.hosts import HostPool, address_problem, not_an_address, split_hosts
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import Domain
from sage_pddl.tasks import Task

from .oracle import reference_responder


class BackendSettingError(LLMConfigError):
    """Backend settings that do not go together; `setting` names the one to change."""

    def __init__(self, setting: str, message: str):
        super().__init__(message)
        self.setting = setting


@dataclass(frozen=True)
class BackendChoice:
    """The backend settings of a command or a bench run (see the module docstring)."""

    llm: str = "ollama"
    host: str | None = None
    """One server's address, or several, comma-separated (ollama, openai)."""
    max_context: int | None = None
    script: str | None = None
    """For llm="scripted": a JSON script file; without one the reference responder answers."""
    per_host: int | None = None
    workers: int = 1
    """Cells that run at once: a host pool's requests per host when `per_host` is not given."""
    timeout: float | None = None
    """The deadline of one model call in seconds (ollama, openai); None: the backend's own."""
    one_timeout: bool = False
    """A host that times out once is called no more (`HostPool`'s `timeout_sets_aside`: for
    `plan`, `run` and `demo`, whose calls all go to one host)."""

    @property
    def hosts(self) -> list[str]:
        return split_hosts(self.host)

    def check(self, *, cassette: bool) -> None:
        """Raise `BackendSettingError` for settings that do not go together (`cassette`: a
        cassette is given)."""
        llm = self.llm.lower()
        if self.max_context is not None:
            if llm != "ollama":
                raise BackendSettingError(
                    "max_context", "the context window is set per request for the ollama "
                    "backend; an OpenAI-compatible server's is fixed when it starts (vLLM: "
                    "--max-model-len)")
            if int(self.max_context) < 1:
                raise BackendSettingError("max_context",
                                          f"must be >= 1 token, got {self.max_context}")
        if backend_has(llm, TAKES_HOST):
            for host in self.hosts:
                problem = address_problem(host)
                if problem is not None:
                    raise BackendSettingError("llm_host", not_an_address(host, problem))
        if llm == "replay" and not cassette:
            raise BackendSettingError("llm", "replay answers only from recorded cassettes: give "
                                             "what they were recorded to (bench: --cassette-dir "
                                             "DIR; plan, run: --cassette FILE)")
        if self.timeout is not None and (not backend_has(llm, TAKES_HOST) or llm == "replay"
                                         or not 0 < float(self.timeout) < float("inf")):
            raise BackendSettingError("llm_timeout", "a deadline of seconds > 0, for the "
                                      "backends that call a server (ollama, openai)")
        if self.script and llm != "scripted":
            raise BackendSettingError("llm_script", "a script file goes with llm='scripted'")
        if len(self.hosts) > 1 and not backend_has(llm, POOLS_HOSTS):
            pooled = " and ".join(backends_with(POOLS_HOSTS))
            raise BackendSettingError("llm_host", f"several hosts are for the {pooled} "
                                                  f"backends, not {self.llm!r}")


def make_backend(choice: BackendChoice, model: str | None, *, cassette: str | Path | None = None,
                 tasks: Sequence[Task] = (),
                 domain_for: Callable[[Task], Domain] | None = None,
                 say: Callable[[str], None] | None = None) -> LLMBackend:
    """The backend `choice` names for `model` (see the module docstring). `tasks` and
    `domain_for` are what the reference responder answers for (scripted without a script);
    `say` hears what it chose."""
    llm = choice.llm.lower()
    if llm == "replay":  # answers only from the cassette: no model, no server
        if cassette is None:
            raise BackendSettingError("llm", "replay answers only from a recorded cassette")
        return get_backend("replay", inner=None, cassette=str(cassette), mode="replay",
                           model=model)
    backend = _one_backend(choice, llm, model, tasks, domain_for, say)
    if cassette is not None:  # record what is new, replay what the cassette holds
        return get_backend("replay", inner=backend, cassette=str(cassette), mode="auto",
                           model=model)
    return backend


_DEFAULT_HOST: list[str | None] = [None]
"""No host given: the backend's own (`--llm-host` unset: OLLAMA_HOST, else the default)."""


def _one_backend(choice: BackendChoice, llm: str, model: str | None, tasks: Sequence[Task],
                 domain_for: Callable[[Task], Domain] | None,
                 say: Callable[[str], None] | None = None) -> LLMBackend:
    if llm == "scripted":
        if choice.script:
            return get_backend("scripted", model=model, script=choice.script)
        if not tasks or domain_for is None:
            raise BackendSettingError(
                "llm_script", "the scripted backend answers from a script file (answers per "
                "role, docs/llm-backends.md), or from the reference plan of a task (a task "
                "reference such as ithor#K01, or a PDDL problem file)")
        responder = reference_responder(tasks, domain_for)
        responder.prepare(say)  # classical plans now, not on the clock of the first cell
        if say is not None:
            for line in responder.summary():
                say(f"reference responder: {line}")
        return get_backend("scripted", model=model, responder=responder)
    hosts = choice.hosts
    timeout = {} if choice.timeout is None else {"timeout": float(choice.timeout)}
    if len(hosts) > 1 or (hosts and choice.per_host is not None) or (
            choice.one_timeout and backend_has(llm, POOLS_HOSTS)):
        pool: LLMBackend = HostPool(
            [(host or str(getattr(backend, "host", llm)), backend)
             for host, backend in ((host, get_backend(llm, model=model, host=host,
                                                      max_context=choice.max_context, **timeout))
                                   for host in hosts or _DEFAULT_HOST)],
            per_host=choice.per_host or choice.workers, timeout_sets_aside=choice.one_timeout)
        return pool
    return get_backend(llm, model=model, max_context=choice.max_context, **timeout,
                       host=hosts[0] if hosts and backend_has(llm, TAKES_HOST) else None)


def model_cassette(cassette_dir: str | Path, model: str) -> Path:
    """A model's cassette in a bench's cassette folder: `<cassette_dir>/<model>.jsonl`."""
    return Path(cassette_dir) / f"{re.sub(r'[^A-Za-z0-9._-]+', '_', model)}.jsonl"


def preflight(choice: BackendChoice, models: Sequence[str], tasks: Sequence[Task]) -> None:
    """What `choice` needs, checked once before a bench's first cell, so a run that cannot work
    stops at once with the reason (exit 2) instead of after a row per cell. A backend with a
    `check()` method (ollama, openai: the server answers and has the model; any registered
    backend that has one) is made for each model and each host, as `plan` makes it, and
    checked; with several hosts one that passes is enough (the pool sets the others aside).
    For the reference responder, the `planners` extra must be there when it plans tasks
    without a reference plan. A live backend is checked with a cassette too (what the
    cassette does not hold goes to its server); `replay` alone needs no server."""
    llm = choice.llm.lower()
    if llm == "scripted" and not choice.script:
        unplanned = [t.task_id for t in tasks if not t.reference_steps]
        if unplanned:
            try:
                require_unified_planning()
            except SageError as error:
                shown = ", ".join(unplanned[:3]) + (", ..." if len(unplanned) > 3 else "")
                raise BackendSettingError(
                    "llm", f"the reference responder plans the tasks without a reference plan "
                           f"({shown}) with a classical planner: {error}") from None
        return
    if llm == "replay":  # answers only from the cassette
        return
    hosts: list[str | None] = [*choice.hosts] if backend_has(llm, TAKES_HOST) else []
    for model in models:
        failures: list[SageError] = []
        for host in hosts or [None]:
            try:
                backend = _one_backend(replace(choice, host=host, per_host=None), llm, model,
                                       tasks, None)
                try:
                    check_server(backend)
                finally:
                    close = getattr(backend, "close", None)
                    if callable(close):
                        close()
            except SageError as error:
                failures.append(error)
        if failures and len(failures) == len(hosts or [None]):
            raise failures[0]
