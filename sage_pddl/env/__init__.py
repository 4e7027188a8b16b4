"""Environments: where certified plans are executed, one registry for all of them.

`get_env(name, **options)` builds an environment by name; `register_env(name, factory)` adds one
(a factory is any callable taking the options). Bundled names:

- `symbolic`: `SymbolicEnv` executes steps against a problem's true state with the gate
  (options: domain, hidden, true_state, faults, log, observation, domains_dirs, task).
- `thor`: `ThorClientEnv`, a client of a `sage-pddl thor-server` over ZMQ
  (options: host, port, timeout, log, ...).
- `ai2thor`: `AI2ThorEnv`, AI2-THOR in this process (needs the `thor` extra and a display/GPU).
- `virtualhome`: `VirtualHomeEnv`, EAI's VirtualHome evolving-graph simulator (extra
  `virtualhome`; see docs/virtualhome.md).
- `alfworld`: `AlfworldEnv`, TextWorld's PDDL engine with text observations and admissible
  commands (extra `alfworld`; see docs/alfworld.md).

Factories are imported lazily, so importing this package needs neither pyzmq nor ai2thor.
All environments follow `sage_pddl.env.base.Environment`.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from importlib import import_module
from typing import Any

from .base import (
    EnvError,
    Environment,
    Fact,
    Observation,
    StepResult,
    as_plan_step,
    format_fact,
    parse_fact,
)

_FACTORIES: dict[str, Callable[..., Any] | str] = {
    "symbolic": "sage_pddl.env.symbolic:SymbolicEnv",
    "thor": "sage_pddl.env.thor.client:ThorClientEnv",
    "ai2thor": "sage_pddl.env.thor.ai2thor_backend:AI2ThorEnv",
    "virtualhome": "sage_pddl.env.virtualhome:VirtualHomeEnv",
    "alfworld": "sage_pddl.env.alfworld:AlfworldEnv",
}


def register_env(name: str, factory: Callable[..., Any] | str) -> None:
    """Register an environment factory (a callable, or "module:attribute" to import lazily)."""
    _FACTORIES[name.lower()] = factory


def list_envs() -> list[str]:
    return sorted(_FACTORIES)


def get_env(name: str, **options: Any) -> Environment:
    """Build the environment registered as `name` with the given options."""
    factory = _FACTORIES.get(name.lower())
    if factory is None:
        raise EnvError(f"unknown environment {name!r}; known: {', '.join(list_envs())}")
    if isinstance(factory, str):
        module, _, attribute = factory.partition(":")
        factory = getattr(import_module(module), attribute)
    try:
        inspect.signature(factory).bind(**options)
    except TypeError as error:
        raise EnvError(f"environment {name!r}: bad options {sorted(options)}: {error}") from error
    return factory(**options)


__all__ = ["EnvError", "Environment", "Fact", "Observation", "StepResult", "as_plan_step",
           "format_fact", "get_env", "list_envs", "parse_fact", "register_env"]
