"""The placement setting: whether AI2-THOR places a held object with forceAction on or off.

AI2-THOR's PutObject refuses, by default, a receptacle that is not compatible with the held
object's type; `forceAction=True` lifts that restriction, and the object must still fit. The
two settings, one for a whole run:

* `forced` (forceAction on, the paper's action server): a receptacle takes what its typed row
  takes and every object that physically enters it, except an object-specific receptacle
  (CoffeeMachine, Toaster, StoveBurner, the towel and paper holders), which keeps its own types
  (`data/ai2thor/placement.toml`); a non-receptacle target is refused, as always;
* `typed` (forceAction off, AI2-THOR's default): a receptacle takes only the types AI2-THOR
  and ALFRED list as compatible with it (`data/ai2thor/receptacles.toml`).

The setting is chosen with `--placement` (cli/common.py) on gate, plan, run, bench and
thor-server, and travels with each task (`Task.placement`; "" is its set's default,
`task_placement`) into its problem, where everything reads it: the `selective`, `fits` and
`fits-sliced` facts the gate and the symbolic world check, the `(forced-placement)` fact by
which the AI2-THOR backend sends forceAction, the problem header's `; placement:` line and
each benchmark row's `placement`. So gate and executor cannot disagree about a placement.

A bundled set's default is the setting its reference plans were verified with
(`VERIFIED_WITH`): all of them were run on the paper's server, which places with
forceAction=True (REFERENCE §8.3). A task record may state its own (`"placement"`); any other
task set defaults to `forced`, the paper's server's setting and the AI2-THOR backend's.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from .taskset import Task, TaskSetError

PLACEMENTS: tuple[str, ...] = ("forced", "typed")
"""The settings, `forced` (forceAction on) and `typed` (off)."""

DEFAULT_PLACEMENT = "forced"

VERIFIED_WITH: dict[str, str] = {
    "ithor": "forced", "ithor-gt": "forced", "procthor": "forced", "compound": "forced",
}
"""Bundled set -> the setting its reference plans were verified with (the paper's server)."""

ACCEPTS: dict[str, str] = {
    "forced": "forceAction on: every receptacle takes what physically enters it, but for the "
              "object-specific ones (CoffeeMachine, Toaster, StoveBurner, towel and paper "
              "holders), which keep their own types",
    "typed": "forceAction off: a receptacle takes only the object types AI2-THOR lists as "
             "compatible with it",
}
"""What each setting accepts, in a sentence (problem headers, docs/goals.md)."""


def checked_placement(placement: str, where: str = "placement") -> str:
    """`placement` if it is a setting, else a TaskSetError naming `where` and the settings."""
    if placement not in PLACEMENTS:
        raise TaskSetError(f"{where}: {placement!r} is no placement setting "
                           f"({', '.join(PLACEMENTS)})")
    return placement


def task_placement(task: Task) -> str:
    """The task's setting: its own, else the one its bundled set was verified with, else
    `DEFAULT_PLACEMENT`."""
    if task.placement:
        return checked_placement(task.placement, f"task {task.task_id}")
    return VERIFIED_WITH.get(task.source.lower(), DEFAULT_PLACEMENT)


def with_placement(tasks: Iterable[Task], placement: str | None,
                   where: str = "placement") -> list[Task]:
    """The tasks under `placement` (None: each keeps its own or its set's default); a value
    that is no setting is a TaskSetError naming `where`."""
    if placement is None:
        return list(tasks)
    checked_placement(placement, where)
    return [dataclasses.replace(t, placement=placement) for t in tasks]
