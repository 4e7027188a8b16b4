"""SayCan-style greedy decoding: the LLM rates candidate steps, the gate supplies feasibility.

Each turn the candidates are every grounding of every action over the problem's objects of the
right types: every feasible one (the gate accepts it in the current state), then infeasible ones
while there are fewer than `max_candidates` (default 60). Feasible steps are never cut, since a
scene with many objects has more places to go than the cap (FloorPlan1: 9 cabinets, 9 drawers),
and cutting them would hide the step the task needs. One call rates them: `{"scores":
{"<index>": p}, "done": bool}`; a missing or unreadable score counts 0.3 (as in the reference).
The chosen step maximises score x affordance, where the affordance is 1.0 for a step the gate
accepts and 0.001 otherwise (first index wins ties). Decoding stops when the model says done,
when the best candidate is infeasible ("stuck"), when a call fails, or after `max_steps`
(default 18) turns. Every chosen step is feasible, so the plan is gate-valid by construction and
is certified. Calls: one per turn. Repair: decoding continues from the state at the failure with
the executed steps as history.
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from sage_pddl.llm import LLMBackend
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import PlanStep
from sage_pddl.pddl.plans import step_from_json
from sage_pddl.pddl.vocabulary import vocabulary

from .base import CallLog, PlannerError, PlanningTask, PlanResult
from .gating import feasible
from .parsing import parse_json_value
from .prompts import saycan_messages
from .schema import scores_schema
from .session import LLMPlanner

DEFAULT_SCORE = 0.3
INFEASIBLE = 0.001
# a number is tried only where it begins (not inside a run of digits): linear time
_PAIR = re.compile(r'(?<!\d)(\d+)"?\s*:\s*([0-9]*\.?[0-9]+)')


def read_scores(text: str | None, count: int) -> tuple[list[float], bool]:
    scores = [DEFAULT_SCORE] * count
    if not text:
        return scores, False
    value = parse_json_value(text)
    done = False
    raw: Mapping[str, Any] = {}
    if isinstance(value, Mapping):
        done = bool(value.get("done"))
        raw = value.get("scores") if isinstance(value.get("scores"), Mapping) else {}  # type: ignore[assignment]
    else:
        raw = {m.group(1): m.group(2) for m in _PAIR.finditer(text)}
    for index, score in raw.items():
        try:
            position, number = int(index), float(score)
        except (TypeError, ValueError):
            continue
        if 0 <= position < count:
            scores[position] = number
    return scores, done


class SayCanPlanner(LLMPlanner):
    name = "SayCan"
    gated = True

    def __init__(self, llm: LLMBackend, *, max_steps: int = 18, max_candidates: int = 60,
                 **options: Any):
        super().__init__(llm, **options)
        if max_steps < 1 or max_candidates < 1:
            raise PlannerError("max_steps and max_candidates must be >= 1")
        self.max_steps = max_steps
        self.max_candidates = max_candidates

    def candidates(self, state: frozenset) -> list[tuple[PlanStep, bool]]:
        gate = self.gate
        names = gate.objects
        feasible_steps: list = []
        blocked: list = []
        vocab = vocabulary(self.task.domain)
        for action in self.task.domain.actions:
            pools = [gate.objects_of(p.types) for p in action.parameters]
            for args in itertools.islice(itertools.product(*pools), 5000):
                # the arguments are typed objects, so only whether the step applies is
                # needed here: not why not, nor its effects (`precondition_holds`)
                try:
                    ok = gate.precondition_holds(action, args, state)
                except SageError:  # a quantifier too large to ground: not a candidate to take
                    ok = False
                step = step_from_json(vocab.written_step(action.name,
                                                         [names.get(a, a) for a in args]))
                (feasible_steps if ok else blocked).append((step, ok))
        return feasible_steps + blocked[:max(0, self.max_candidates - len(feasible_steps))]

    def plan(self, task: PlanningTask) -> PlanResult:
        log, start = self.begin_plan(task)
        return self.finish(log, self._decode(log, start, []), start)

    def _decode(self, log: CallLog, state: frozenset, history: list[PlanStep]) -> list[PlanStep]:
        chosen: list[PlanStep] = []
        for _ in range(self.max_steps):
            options = self.candidates(state)
            if not options:
                log.note("no candidate steps")
                break
            steps = [s for s, _ in options]
            text = self.ask(log, saycan_messages(self.task, history + chosen, steps,
                                                 self.state_text(state)),
                            role="score", schema=scores_schema(len(steps)), temperature=0.0)
            if text is None:
                break
            scores, done = read_scores(text, len(steps))
            if done:
                log.note("the model declared the task done")
                break
            combined = [s * (1.0 if ok else INFEASIBLE) for s, (_, ok) in zip(scores, options)]
            best = max(range(len(combined)), key=lambda i: (combined[i], -i))
            step, ok = options[best]
            if not ok:
                log.note("stuck: every candidate is infeasible or scored 0")
                break
            judged = feasible(self.gate, state, step)  # as its words read, which ok did not
            if judged.ground is None or not judged.applicable:
                log.note(f"the gate refuses the chosen step: {judged.violation}")
                break
            state = self.gate.apply(state, judged.ground)
            chosen.append(step)
        else:
            log.note(f"stopped after {self.max_steps} steps")
        return chosen

    def repair(self, state: frozenset | None, done: Sequence[PlanStep],
               failed_step: PlanStep | None, reason: str) -> PlanResult:
        # decoding does not use the failed step, so it is not read (None)
        point = self.begin_repair(state, done, None, reason)
        point.log.note(f"repair after failure: {reason}")
        return self.finish(point.log, self._decode(point.log, point.state, list(point.done)),
                           point.state)
