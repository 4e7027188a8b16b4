"""Task sets: the paper's JSON task files as frozen `Task` values, and step-name normalisation.

A task file is `{"samples": [...]}` (or a bare list) of records with `task_id`, `task_desc`,
`scene`, `room`, `obs`, `visible_objects`, `expected_objects`, `reference_steps`,
`difficulty`, `fail_injection` and `_meta` (REFERENCE §6.1). Bundled sets, shipped inside the
package (`sage_pddl/data/sage`, see its README for attribution):

    ithor      eval_dataset_expanded.json     the paper's 75 iTHOR tasks
    ithor-gt   eval_dataset_gt.json           the 38 curated iTHOR tasks
    procthor   eval_dataset_procthor_dev.json 20 of the 70 ProcTHOR tasks

`load_task("ithor#K01")` or `load_task("path/to/file.json#K01")` picks one task. A task's
`domain` is "procthor" when its record says so (`sim_type`, a `procthor_*` scene), else
"ithor". Compound tasks (`compound.py`) list their member task ids in `members`.

`normalize_steps(steps, domain)` rewrites each step's action to the domain's canonical action
name through the domain's `; @sage alias` annotations (case, spaces, `_` and `-` ignored), so
the paper's legacy `Navigate`/`Grab` steps read as `MoveTo`/`Pick`. Unknown actions are kept
as written (the gate reports them as `unknown-action`).
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ..pddl.errors import SageError
from ..pddl.model import Domain
from ..pddl.vocabulary import vocabulary

BUNDLED: dict[str, str] = {
    "ithor": "eval_dataset_expanded.json",
    "ithor-gt": "eval_dataset_gt.json",
    "procthor": "eval_dataset_procthor_dev.json",
}


class TaskSetError(SageError):
    """A task file or task reference that cannot be read."""


@dataclass(frozen=True)
class Task:
    """One household task. Steps are JSON-style dicts (`action`, `object`, `target`, ...)."""

    task_id: str
    instruction: str
    scene: str
    room: str
    obs: str
    visible_objects: tuple[str, ...] = ()
    expected_objects: tuple[str, ...] = ()
    reference_steps: tuple[Mapping[str, str], ...] = ()
    difficulty: str = ""
    fail_injection: Mapping[str, Any] | None = None
    members: tuple[str, ...] = ()
    domain: str = "ithor"
    source: str = field(default="", compare=False)
    """The task file (bundled name or path) the task was read from."""


def data_dir() -> Path:
    """The bundled task-set folder (`sage_pddl/data/sage`)."""
    return Path(str(resources.files("sage_pddl") / "data" / "sage"))


def _resolve(path_or_name: str | Path) -> tuple[Path, str]:
    text = str(path_or_name)
    if text.lower() in BUNDLED:
        return data_dir() / BUNDLED[text.lower()], text.lower()
    path = Path(text)
    if not path.is_file():
        raise TaskSetError(f"task set {text!r}: no such file and not a bundled set "
                           f"(bundled: {', '.join(BUNDLED)})")
    return path, text


def _domain_of(record: Mapping[str, Any]) -> str:
    sim = str(record.get("sim_type") or (record.get("_meta") or {}).get("simulator_type") or "")
    scene = str(record.get("scene") or "")
    return "procthor" if sim == "procthor" or scene.lower().startswith("procthor") else "ithor"


def task_from_record(record: Mapping[str, Any], source: str = "") -> Task:
    """One JSON record -> Task (missing fields get empty values)."""
    if not isinstance(record, Mapping) or not record.get("task_id"):
        raise TaskSetError(f"{source or 'task set'}: a record without task_id: {str(record)[:80]}")
    meta = record.get("_meta") or {}
    steps = tuple(
        {k: ("" if v is None else str(v)) for k, v in step.items()}
        for step in (record.get("reference_steps") or []) if isinstance(step, Mapping))
    return Task(
        task_id=str(record["task_id"]),
        instruction=str(record.get("task_desc") or record.get("instruction") or ""),
        scene=str(record.get("scene") or ""),
        room=str(record.get("room") or ""),
        obs=str(record.get("obs") or ""),
        visible_objects=tuple(str(o) for o in record.get("visible_objects") or ()),
        expected_objects=tuple(str(o) for o in record.get("expected_objects") or ()),
        reference_steps=steps,
        difficulty=str(record.get("difficulty") or ""),
        fail_injection=dict(record["fail_injection"]) if record.get("fail_injection") else None,
        members=tuple(str(m) for m in (meta.get("members") or record.get("members") or ())),
        domain=_domain_of(record),
        source=source,
    )


def load_taskset(path_or_name: str | Path) -> list[Task]:
    """All tasks of a bundled set (`ithor`, `ithor-gt`, `procthor`) or of a JSON file."""
    path, label = _resolve(path_or_name)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise TaskSetError(f"{path}: cannot read task set: {exc}") from exc
    records = data.get("samples") if isinstance(data, Mapping) else data
    if not isinstance(records, list):
        raise TaskSetError(f"{path}: expected a list of tasks or {{\"samples\": [...]}}")
    return [task_from_record(r, label) for r in records]


def load_task(ref: str) -> Task:
    """`SET#TASK_ID` where SET is a bundled name or a JSON path: `ithor#K01`."""
    if "#" not in ref:
        raise TaskSetError(f"task reference {ref!r}: expected SET#TASK_ID, e.g. ithor#K01")
    where, task_id = ref.rsplit("#", 1)
    for task in load_taskset(where):
        if task.task_id.lower() == task_id.lower():
            return task
    raise TaskSetError(f"task reference {ref!r}: no task {task_id!r} in {where}")


# --- step names ------------------------------------------------------------------------------

def normalize_steps(steps: Iterable[Mapping[str, Any]], domain: Domain) -> list[dict]:
    """Copies of `steps` whose `action` is the domain's canonical name (aliases resolved)."""
    vocab = vocabulary(domain)
    normalized = []
    for step in steps:
        copy = dict(step)
        copy["action"] = vocab.action_name(str(copy.get("action") or ""))
        normalized.append(copy)
    return normalized
