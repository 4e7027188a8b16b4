"""A scripted stand-in for an LLM that answers every planner role from the tasks' reference plans.

`reference_responder(tasks, domain_for)` returns a `responder(messages, role)` for the `scripted`
backend (`sage_pddl.llm.scripted`). It is NOT a model: it exists so the benchmark harness, its
resumption and its report can be exercised offline and deterministically (`sage-pddl bench --llm
scripted`, the tests). Its numbers measure the task set's reference plans through each planner's
control flow, nothing more.

How it answers: the task is the one whose instruction follows the last `Task:` line of the
request (retrieved examples come earlier, so the last line is the task being planned). Its
reference plan (rewritten to the domain's canonical action names) is cut into at most two parts.

* `decompose` -> the parts as sub-goals, each naming its steps; `expand`/`refine` -> the steps of
  the sub-goal named in the request ("Current sub-goal:" / "Sub-goal:").
* `repair` -> the failed step retried, then the rest of its sub-goal (or of the plan).
* `act` (ReAct) -> the next reference step after the steps so far, `done` at the end.
* `score` (SayCan) -> probability 1 for the candidate equal to the next reference step.
* `goal` (LLM+P) -> the problem's PDDL goal; `critique` -> "No problems found.".
* every other role -> `{"reasoning": ..., "steps": [...]}` with the whole reference plan.

`broken_tasks` lists task ids whose first answers leave out every `MoveTo`/`Find` step, the
mistake a small model makes, so gate-scored metrics have something to catch; answers to `refine`
and `repair` (which carry the checker's or the executor's feedback) are correct, like a model
that fixes its plan once told what is wrong.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from sage_pddl.pddl.vocabulary import bare_step, step_text

NAVIGATION = frozenset({"moveto", "find"})
_TASK_LINE = re.compile(r"^Task: (.+)$", re.MULTILINE)
_SUBGOAL_LINE = re.compile(r"^(?:Current sub-goal|Sub-goal): (.+)$", re.MULTILINE)
_FAILED_LINE = re.compile(r"^Failed step: (.+)$|^The step '(.+)' failed", re.MULTILINE)
_HISTORY_LINE = re.compile(r"^\s+\d+\. .+$", re.MULTILINE)
_CANDIDATE_LINE = re.compile(r"^\s+(\d+): (.+)$", re.MULTILINE)


def _text(step: Mapping[str, Any]) -> str:
    return step_text(step)


def _same(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


class ReferenceResponder:
    """`responder(messages, role)` answering from reference plans (see the module docstring)."""

    def __init__(self, tasks: Iterable[Any], domain_for: Callable[[Any], Any],
                 broken_tasks: Collection[str] = ()):
        from sage_pddl.tasks import normalize_steps

        self._domain_for = domain_for
        self._plans: dict[str, tuple[Any, list[dict]]] = {}
        self._fixed: dict[str, list[dict]] = {}
        broken = {t.lower() for t in broken_tasks}
        for task in tasks:
            steps = [bare_step(s) for s in normalize_steps(task.reference_steps, domain_for(task))]
            key = " ".join(str(task.instruction).split())
            self._fixed.setdefault(key, steps)
            if task.task_id.lower() in broken:
                steps = [s for s in steps if s["action"].lower() not in NAVIGATION]
            self._plans.setdefault(key, (task, steps))

    def __call__(self, messages: Sequence[Mapping[str, str]], role: str | None) -> Any:
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        task, steps = self._task_for(prompt)
        if role in ("refine", "repair"):
            return {"steps": self._corrected(prompt, task, steps, role)}
        parts = _split(steps)
        if role == "decompose":
            return {"subgoals": [self._subgoal(task, i, part) for i, part in enumerate(parts)]}
        if role == "expand":
            return {"steps": self._part_named(prompt, task, parts, steps)}
        if role == "act":
            done = len(_HISTORY_LINE.findall(prompt.split("Steps so far:", 1)[-1]
                                             .split("Latest observation:", 1)[0]))
            if done >= len(steps):
                return {"thought": "the task is finished", "done": True}
            return {"thought": "next reference step", "done": False, "step": steps[done]}
        if role == "score":
            return self._scores(prompt, steps)
        if role == "goal":
            return {"goal": self._goal(task)}
        if role == "critique":
            return "No problems found."
        return {"reasoning": "follow the reference plan", "steps": steps}

    # ----------------------------------------------------------------------------- helpers
    def _task_for(self, prompt: str) -> tuple[Any, list[dict]]:
        found = _TASK_LINE.findall(prompt)
        for line in reversed(found):
            hit = self._plans.get(" ".join(line.split()))
            if hit is not None:
                return hit
        from sage_pddl.llm.scripted import ScriptExhausted

        raise ScriptExhausted("the reference responder knows no task in this request "
                              f"(Task lines: {found[-3:]})")

    def _goal(self, task: Any) -> str:
        from sage_pddl.pddl.writer import write_formula
        from sage_pddl.tasks import task_problem

        goal = task_problem(task, self._domain_for(task)).goal
        return write_formula(goal) if goal is not None else "(and)"

    @staticmethod
    def _subgoal(task: Any, index: int, part: Sequence[dict]) -> str:
        words = ", ".join(_text(s) for s in part) or "nothing left to do"
        return f"[{task.task_id} part {index + 1}] {words}"

    def _part_named(self, prompt: str, task: Any, parts: list[list[dict]],
                    steps: list[dict]) -> list[dict]:
        named = _SUBGOAL_LINE.findall(prompt)
        for index, part in enumerate(parts):
            if named and _same(named[-1], self._subgoal(task, index, part)):
                return part
        return steps  # a sub-goal it did not write (e.g. the instruction as fallback)

    def _corrected(self, prompt: str, task: Any, steps: list[dict], role: str) -> list[dict]:
        """The correct steps of the named sub-goal (refine), or from the failed step on
        (repair). Sub-goals were named after the plan as first answered, so the correct steps
        of a sub-goal are looked up through the first answer's parts."""
        fixed = self._fixed[" ".join(str(task.instruction).split())]
        named = _SUBGOAL_LINE.findall(prompt)
        scope = fixed
        for index, part in enumerate(_split(steps)):
            if named and _same(named[-1], self._subgoal(task, index, part)):
                scope = _correct_part(part, fixed, index, _split(steps))
        if role == "refine":
            return scope
        failed = ["".join(groups) for groups in _FAILED_LINE.findall(prompt)]
        if failed:
            for index, step in enumerate(scope):
                if _same(_text(step), failed[-1]):
                    return scope[index:]
        return scope

    @staticmethod
    def _scores(prompt: str, steps: list[dict]) -> dict:
        history = prompt.split("Steps so far:", 1)[-1].split("State:", 1)[0]
        done = len([line for line in history.splitlines() if re.match(r"^\s+\d+\. ", line)])
        candidates = _CANDIDATE_LINE.findall(prompt.split("Candidates:", 1)[-1])
        if done >= len(steps):
            return {"scores": {}, "done": True}
        wanted = _text(steps[done])
        return {"scores": {index: (1.0 if _same(text, wanted) else 0.0)
                           for index, text in candidates}, "done": False}


def _correct_part(part: list[dict], fixed: list[dict], index: int,
                  parts: list[list[dict]]) -> list[dict]:
    """The correct steps covering `part`: from just after the previous part's last step up to
    and including this part's last step, located in the correct plan (navigation included)."""
    if not part:
        return []
    texts = [_text(s) for s in fixed]
    end = _find(texts, _text(part[-1]), 0)
    begin = 0
    if index > 0 and parts[index - 1]:
        begin = _find(texts, _text(parts[index - 1][-1]), 0) + 1
    if end < begin:
        return list(part)
    return list(fixed[begin:end + 1])


def _find(texts: list[str], wanted: str, start: int) -> int:
    for position in range(start, len(texts)):
        if _same(texts[position], wanted):
            return position
    return -1


def _split(steps: list[dict]) -> list[list[dict]]:
    """At most two parts (SAGE asks for at least two sub-goals); one when the plan has one step."""
    if len(steps) < 2:
        return [list(steps)]
    middle = (len(steps) + 1) // 2
    return [list(steps[:middle]), list(steps[middle:])]


def reference_responder(tasks: Iterable[Any], domain_for: Callable[[Any], Any],
                        broken_tasks: Collection[str] = ()) -> ReferenceResponder:
    """The responder described in the module docstring."""
    return ReferenceResponder(tasks, domain_for, broken_tasks)
