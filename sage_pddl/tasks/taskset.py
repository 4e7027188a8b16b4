"""Tasks: the `Task` value, the paper's JSON task files read into it, and step-name normalisation.

A task file is `{"samples": [...]}` (or a bare list) of records with `task_id`, `task_desc`,
`scene`, `room`, `obs`, `visible_objects`, `expected_objects`, `reference_steps`,
`difficulty`, `fail_injection` and `_meta` (REFERENCE §6.1), and optionally `goal`: the task's
PDDL goal over object types (docs/goals.md). Bundled sets, shipped inside the
package (`sage_pddl/data/sage`, see its README for attribution):

    ithor      eval_dataset_expanded.json     the paper's 75 iTHOR tasks
    ithor-gt   eval_dataset_gt.json           the 38 curated iTHOR tasks
    procthor   eval_dataset_procthor_dev.json 20 of the 70 ProcTHOR tasks
    compound   compound_tasks.json            74 compound iTHOR tasks (tools/make_compound_tasks.py)

read by `json_tasks(name_or_path)`, which reads a task-set JSON file the same way. A task's
`domain` is "procthor" when its record says so (`sim_type`, a `procthor_*` scene), else
"ithor". Compound tasks (`compound.py`) list their member task ids in `members`. The other
task sets (EAI's, ALFWorld's, folders of PDDL problems) build `Task` values of their own;
`sets.load_taskset` chooses the reader for a spec.

`normalize_steps(steps, domain)` rewrites each step's action to the domain's canonical action
name through the domain's `; @sage alias` annotations (case, spaces, `_` and `-` ignored), so
the paper's legacy `Navigate`/`Grab` steps read as `MoveTo`/`Pick`. Unknown actions are kept
as written (the gate reports them as `unknown-action`). `reference_plan(steps, domain)` reads
them, so normalised, into the program's one step type, `PlanStep`.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ..pddl.errors import SageError
from ..pddl.limits import load_json, read_text
from ..pddl.model import Domain, PlanStep, Problem
from ..pddl.plans import step_from_json
from ..pddl.vocabulary import vocabulary

BUNDLED: dict[str, str] = {
    "ithor": "eval_dataset_expanded.json",
    "ithor-gt": "eval_dataset_gt.json",
    "procthor": "eval_dataset_procthor_dev.json",
    "compound": "compound_tasks.json",
}


class TaskSetError(SageError):
    """A task file or task reference that cannot be read."""


@dataclass(frozen=True)
class Task:
    """One task: an instruction in a scene, or a PDDL problem (`problem`). Steps are JSON-style
    dicts (`{"action", "args"}` or named fields)."""

    task_id: str
    instruction: str
    scene: str
    room: str
    obs: str
    visible_objects: tuple[str, ...] = ()
    expected_objects: tuple[str, ...] = ()
    reference_steps: tuple[Mapping[str, Any], ...] = ()
    difficulty: str = ""
    fail_injection: Mapping[str, Any] | None = None
    members: tuple[str, ...] = ()
    domain: str = "ithor"
    goal: str = ""
    """The task's own PDDL goal over object types (a record's `goal`; docs/goals.md), if any."""
    placement: str = ""
    """`forced` or `typed` (tasks/placement.py); "" for its set's default."""
    source: str = field(default="", compare=False)
    """The task file (bundled name or path) the task was read from."""
    problem: Problem | None = field(default=None, compare=False, repr=False)
    """The task's own PDDL problem (problem-file task sets); None: built from the scene."""


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
                           f"({', '.join(BUNDLED)})")
    for name, file in BUNDLED.items():
        # a bundled set read by its path is still that set: it keeps its reviewed goals
        if (data_dir() / file).resolve() == path.resolve():
            return path, name
    return path, text


class _Record:
    """One JSON task record, read field by field: a field of the wrong type is a TaskSetError
    that names the file, the record and the field (never a TypeError further down)."""

    def __init__(self, record: Any, source: str, index: int):
        self.where = f"{source or 'task set'}: task {index + 1}"
        if not isinstance(record, Mapping):
            raise TaskSetError(f"{self.where}: a task is a JSON object, not "
                               f"{type(record).__name__}")
        self.record = record
        task_id = record.get("task_id")
        if isinstance(task_id, bool) or not isinstance(task_id, (str, int)) or not str(task_id):
            raise TaskSetError(f"{self.where}: 'task_id' must be a non-empty string, got "
                               f"{str(task_id)[:40]!r}")
        self.where = f"{source or 'task set'}: task {task_id}"

    def _bad(self, name: str, wanted: str, value: Any) -> TaskSetError:
        return TaskSetError(f"{self.where}: field {name!r} must be {wanted}, not "
                            f"{type(value).__name__} {str(value)[:40]!r}")

    def text(self, *names: str) -> str:
        for name in names:
            value = self.record.get(name)
            if value is None or value == "":
                continue
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise self._bad(name, "text", value)
            return str(value)
        return ""

    def words(self, name: str, record: Mapping[str, Any] | None = None) -> tuple[str, ...]:
        value = (self.record if record is None else record).get(name)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, (str, int)) for v in value):
            raise self._bad(name, "a list of names", value)
        return tuple(str(v) for v in value)

    def mapping(self, name: str) -> Mapping[str, Any]:
        value = self.record.get(name)
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self._bad(name, "a JSON object", value)
        return value

    def steps(self) -> tuple[dict[str, str], ...]:
        value = self.record.get("reference_steps")
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self._bad("reference_steps", "a list of steps", value)
        out = []
        for number, step in enumerate(value, 1):
            if not isinstance(step, Mapping):
                raise self._bad(f"reference_steps[{number}]", "a JSON object", step)
            fields: dict[str, str] = {}
            for key_, field_value in step.items():
                if isinstance(field_value, (list, dict)):
                    raise self._bad(f"reference_steps[{number}].{key_}", "text", field_value)
                fields[str(key_)] = "" if field_value is None else str(field_value)
            out.append(fields)
        return tuple(out)


def _domain_of(record: Mapping[str, Any], meta: Mapping[str, Any]) -> str:
    sim = str(record.get("sim_type") or meta.get("simulator_type") or "")
    scene = str(record.get("scene") or "")
    return "procthor" if sim == "procthor" or scene.lower().startswith("procthor") else "ithor"


def task_from_record(record: Mapping[str, Any], source: str = "", index: int = 0) -> Task:
    """One JSON record -> Task (missing fields get empty values; a field of the wrong type is
    a TaskSetError naming it)."""
    read = _Record(record, source, index)
    meta = read.mapping("_meta")
    injection = read.mapping("fail_injection")
    members = read.words("members", meta) or read.words("members")
    return Task(
        task_id=str(record["task_id"]),
        instruction=read.text("task_desc", "instruction"),
        scene=read.text("scene"),
        room=read.text("room"),
        obs=read.text("obs"),
        visible_objects=read.words("visible_objects"),
        expected_objects=read.words("expected_objects"),
        reference_steps=read.steps(),
        difficulty=read.text("difficulty"),
        fail_injection=dict(injection) if injection else None,
        members=members,
        domain=_domain_of(record, meta),
        goal=read.text("goal"),
        placement=read.text("placement"),
        source=source,
    )


def json_tasks(path_or_name: str | Path) -> list[Task]:
    """All tasks of a bundled set (`ithor`, `ithor-gt`, `procthor`, `compound`) or of a
    task-set JSON file."""
    path, label = _resolve(path_or_name)
    data = load_json(read_text(path, "the task set"), str(path), "task set")
    records = data.get("samples") if isinstance(data, Mapping) else data
    if not isinstance(records, list):
        raise TaskSetError(f"{path}: expected a list of tasks or {{\"samples\": [...]}}")
    return [task_from_record(r, label, i) for i, r in enumerate(records)]


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


def reference_plan(steps: Iterable[Mapping[str, Any]], domain: Domain) -> list[PlanStep]:
    """A task's reference steps (JSON, as task files write them) read into `PlanStep`s
    numbered in order, each action in the domain's spelling (`normalize_steps`); raises
    `PlanSyntaxError` for a step that names no action or whose args are not names."""
    return [step_from_json(step, index)
            for index, step in enumerate(normalize_steps(steps, domain))]
