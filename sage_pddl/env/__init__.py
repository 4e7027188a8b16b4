"""Environments: where certified plans are executed, one registry for all of them.

`get_env(name, **options)` builds an environment by name; `register_env(name, factory)` adds one
(a factory is any callable taking the options); `list_envs()` lists them. Names follow the
rules of `pddl/registry.py` (case and punctuation ignored). Bundled names:

- `symbolic`: `SymbolicEnv` executes steps against a problem's true state with the gate
  (options: domain, hidden, true_state, faults, log, observation, domains_dirs, task).
- `thor`: `ThorClientEnv`, a client of a `sage-pddl thor-server` over ZMQ
  (options: host, port, timeout, log, ...).
- `ai2thor`: `AI2ThorEnv`, AI2-THOR in this process (needs the `thor` extra and a display/GPU).
- `virtualhome`: `VirtualHomeEnv`, EAI's VirtualHome evolving-graph simulator (extra
  `virtualhome`; see docs/virtualhome.md).
- `alfworld`: `AlfworldEnv`, ALFWorld's TextWorld games with text observations and admissible
  commands, in a worker process of their own environment (`sage-pddl env-setup alfworld`;
  see docs/alfworld.md).

Factories are imported lazily, so importing this package needs neither pyzmq nor ai2thor.
All environments follow `sage_pddl.env.base.Environment`.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..pddl.registry import Registry
from .base import (
    EnvError,
    Environment,
    Fact,
    Observation,
    StepResult,
    format_fact,
    numbered,
    parse_fact,
)

ENVIRONMENTS: Registry[Environment] = Registry("environment", EnvError, {
    "symbolic": "sage_pddl.env.symbolic:SymbolicEnv",
    "thor": "sage_pddl.env.thor.client:ThorClientEnv",
    "ai2thor": "sage_pddl.env.thor.ai2thor_backend:AI2ThorEnv",
    "virtualhome": "sage_pddl.env.virtualhome:VirtualHomeEnv",
    "alfworld": "sage_pddl.env.alfworld:AlfworldEnv",
})
"""Every environment by name: `factory(**options) -> Environment` (`pddl/registry.py`'s
rules)."""


def register_env(name: str, factory: Callable[..., Environment] | str, *,
                 replace: bool = False) -> None:
    """Register `factory(**options) -> Environment`, or "module:attribute", under `name`."""
    ENVIRONMENTS.register(name, factory, replace=replace)


def list_envs() -> list[str]:
    """The registered environments' names, in the order they were registered."""
    return ENVIRONMENTS.names()


def get_env(name: str, **options: Any) -> Environment:
    """Build the environment registered as `name` with the given options."""
    return ENVIRONMENTS.build(name, **options)


__all__ = ["ENVIRONMENTS", "EnvError", "Environment", "Fact", "Observation", "StepResult",
           "format_fact", "numbered", "get_env", "list_envs", "parse_fact", "register_env"]
