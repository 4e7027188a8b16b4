"""Compound tasks: two or three tasks of one scene done in sequence (REFERENCE §6.6).

The paper's generator, restated: tasks are grouped by scene; within a scene the members are
sorted by task id and combined with `itertools.combinations`, all pairs first then all
triples, keeping at most `per_scene_deg2` pairs and `per_scene_deg3` triples per scene (6 and 4
by default). A compound task:

* `task_id`: `C<d>_` + the member ids joined by `+` (`C2_K01+K10`);
* instruction: "First, <i1>. Then, <i2>." (+ " Finally, <i3>."), each member instruction
  lower-cased with its trailing period stripped;
* scene, room and observation of the first member; visible and expected objects the
  order-preserving unions; reference steps the concatenation; difficulty `compound<d>`;
  no failure injection; `members` the member ids (so leave-one-out can drop every memory item
  built from a member).

Unlike the paper's default, `require_valid` (a predicate on a Task) can keep only compounds
whose concatenated reference is valid, e.g. `lambda t: gate_of(t).check(...).valid`. With the
defaults the expanded 75-task set gives the paper's 74 compounds (45 pairs, 29 triples).
"""
from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

from .taskset import Task


def _clause(instruction: str) -> str:
    return instruction.strip().rstrip(".").strip().lower()


def compose(members: Sequence[Task]) -> Task:
    """One compound task made of `members` (in the given order)."""
    if len(members) < 2:
        raise ValueError("a compound task needs at least two members")
    degree = len(members)
    first = members[0]
    words = ["First", "Then"] + ["Then"] * (degree - 3) + (["Finally"] if degree >= 3 else [])
    instruction = " ".join(f"{word}, {_clause(m.instruction)}." for word, m in zip(words, members))

    def union(field: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys(o for m in members for o in getattr(m, field)))

    return Task(
        task_id=f"C{degree}_" + "+".join(m.task_id for m in members),
        instruction=instruction,
        scene=first.scene,
        room=first.room,
        obs=first.obs,
        visible_objects=union("visible_objects"),
        expected_objects=union("expected_objects"),
        reference_steps=tuple(step for m in members for step in m.reference_steps),
        difficulty=f"compound{degree}",
        fail_injection=None,
        members=tuple(m.task_id for m in members),
        domain=first.domain,
        source=first.source,
    )


def compound_tasks(tasks: Iterable[Task], per_scene_deg2: int = 6, per_scene_deg3: int = 4,
                   require_valid: Callable[[Task], bool] | None = None) -> list[Task]:
    """Compound tasks of `tasks`, pairs then triples, scenes in order of first appearance."""
    by_scene: dict[str, list[Task]] = defaultdict(list)
    for task in tasks:
        by_scene[task.scene].append(task)
    caps = {2: per_scene_deg2, 3: per_scene_deg3}
    compounds: list[Task] = []
    for degree in (2, 3):
        for _scene, members in by_scene.items():
            ordered = sorted(members, key=lambda t: t.task_id)
            kept = 0
            for combo in itertools.combinations(ordered, degree):
                if kept >= caps[degree]:
                    break
                task = compose(combo)
                if require_valid is not None and not require_valid(task):
                    continue
                compounds.append(task)
                kept += 1
    return compounds


def to_record(task: Task) -> dict:
    """A compound task as a task-set JSON record (`load_taskset` reads it back)."""
    return {
        "task_id": task.task_id, "task_desc": task.instruction, "room": task.room,
        "scene": task.scene, "obs": task.obs, "visible_objects": list(task.visible_objects),
        "expected_objects": list(task.expected_objects),
        "reference_steps": [dict(s) for s in task.reference_steps],
        "difficulty": task.difficulty, "fail_injection": {},
        "_meta": {"gt_source": "composition", "members": list(task.members),
                  "degree": len(task.members)},
    }
