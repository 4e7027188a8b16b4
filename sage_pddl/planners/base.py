"""What every planner shares: the task it plans for, the result it returns, and call accounting.

A `PlanningTask` is one planning request: a natural-language instruction together with the loaded
PDDL `Domain` and `Problem` it is about (the problem supplies the objects, the initial state and,
for scoring, the goal). Build one from a dataset task with `PlanningTask.from_task`, whose problem
(`task_problem_of`) is built once per process for a domain object and a task of the same content
(its `repr`; dataclass tasks only): a problem is immutable, and building one from a scene is the
costliest step of setting a task up, repeated by every run of a benchmark in one process.

A planner implements `plan(task) -> PlanResult` and `repair(state, done, failed_step, reason) ->
PlanResult`; `repair` continues the episode of the last `plan` call.

Steps are `PlanStep`s (the one step type): an answer's JSON or text is read into them where it
enters (`parsing.py`), and they are written as JSON (`pddl.plans.written_json`: `{"action",
"args": [...]}`, or `{"action", "object", "target"}` in domains annotated `@sage fields`) only
where they leave (prompts, results rows, memory files). `PlanResult.steps` holds the steps still
to execute.

Accounting: every LLM call a planner makes goes through one `CallLog`, which records the role,
tokens and seconds of each call, successful or not. A failed call (an `LLMError`) is counted with
the tokens it spent (`error.usage`), so nothing an experiment paid for is lost.

Answers are data: a model's answer is never trusted to be usable. `CallLog.complete` refuses an
answer longer than `MAX_ANSWER_CHARS` or one whose JSON nests deeper or writes longer numbers
than `pddl.limits` allows (a call that is `ok=False` with the reason); the planner sees None, as
for a failed call, and returns a failed (empty or partial) plan. A planner run makes at most
`MAX_CALLS` calls and a hierarchical planner expands at most `MAX_SUBGOALS` sub-goals; a cap
that is hit is named in `PlanResult.limits_hit` (and so in the bench row).
"""
from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

from sage_pddl.gate import PlanChecker, Verdict, Violation
from sage_pddl.llm import LLMBackend
from sage_pddl.llm.output import Schema
from sage_pddl.pddl import limits
from sage_pddl.pddl.built_once import BuiltOnce
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import Domain, PlanStep, Problem
from sage_pddl.pddl.plans import written_json
from sage_pddl.pddl.vocabulary import step_key
from sage_pddl.tasks import Task, task_problem

MAX_CALLS = 64
"""LLM calls one `plan` or `repair` run may make (SAGE with 5 sub-goals and 3 refines needs 21)."""
MAX_SUBGOALS = 12
"""Sub-goals a hierarchical planner expands; the rest of a longer decomposition is dropped."""
MAX_ANSWER_CHARS = 200_000
"""The longest answer read (a plan of 100 steps is ~10,000 characters)."""


_PROBLEMS: BuiltOnce[tuple[int, str], Problem] = BuiltOnce(kept=512)
"""The task problems the process keeps, by domain object and task content: a run's tasks, as a
run kept them before (an iTHOR problem is about a third of a megabyte); a lock per task."""


def content_key(task: Any) -> str | None:
    """A digest of a dataclass task's content (its `repr`), None for any other object."""
    if not dataclasses.is_dataclass(task):
        return None
    return hashlib.sha256(repr(task).encode()).hexdigest()


V = TypeVar("V")


def kept_per_task(cache: BuiltOnce[tuple[int, str], V], task: Task, domain: Domain,
                  build: Callable[[], V]) -> V:
    """`build()`, kept in `cache` by domain object and task content (`content_key`; a task
    without one is built each time), the domain kept alive with it so its id names no other."""
    content = content_key(task)
    if content is None:
        return build()
    return cache.get((id(domain), content), build, domain)


def task_problem_of(task: Task, domain: Domain) -> Problem:
    """`task_problem(task, domain)`, kept for the process (see the module docstring); a task
    whose problem cannot be built raises each time it is asked for."""
    return kept_per_task(_PROBLEMS, task, domain, lambda: task_problem(task, domain))


class PlannerError(SageError):
    """A planner was misused or misconfigured (unknown name, bad option, repair before plan)."""


@dataclass(frozen=True)
class PlanningTask:
    """One planning request: an instruction about a loaded domain and problem.

    `task_id` and `members` (the component task ids of a compound task) let memory leave the task
    out of its own retrieval; `observation` is the text the robot perceives at the start.
    """

    instruction: str
    domain: Domain
    problem: Problem
    task_id: str | None = None
    members: tuple[str, ...] = ()
    observation: str = ""
    scene: str = ""
    """The simulator scene the task is set in (`FloorPlan1`), for environments that load one."""
    gate: PlanChecker | None = field(default=None, compare=False, repr=False)
    """A gate compiled from `domain` and `problem`, for the planner, the runtime and the world
    to share (one compile per benchmark cell); None: each compiles its own."""

    def __post_init__(self) -> None:
        if self.gate is not None and (self.gate.domain is not self.domain
                                      or self.gate.problem is not self.problem):
            raise PlannerError("PlanningTask: the gate given was compiled from another domain "
                               "or problem than the task's")

    @classmethod
    def from_task(cls, task: Task, domain: Domain) -> PlanningTask:
        """From a dataset `Task` (sage_pddl.tasks): its problem is `task_problem_of(task)`."""
        return cls(instruction=str(task.instruction), domain=domain,
                   problem=task_problem_of(task, domain), task_id=task.task_id,
                   members=tuple(getattr(task, "members", ()) or ()),
                   observation=str(getattr(task, "obs", "") or ""),
                   scene=str(getattr(task, "scene", "") or ""))


@dataclass(frozen=True)
class CallRecord:
    """One LLM call: its role, what it cost, and whether it failed (and why)."""

    role: str
    prompt_tokens: int
    output_tokens: int
    seconds: float
    ok: bool = True
    error: str = ""


@dataclass(frozen=True)
class SubgoalBlock:
    """The steps that achieve one sub-goal, with the gate's judgement of them.

    `certified` is True only when the gate accepted every step of `steps` from the state the
    block starts in; `verdict` is the last gate verdict (None when no gate ran); `refines` counts
    the Refine calls spent on the block; `origin` says where the steps came from: "expand",
    "repair" (regenerated after a failure), "kept" (an untouched future block re-gated after a
    repair) or "replan".
    """

    subgoal: str
    steps: tuple[PlanStep, ...]
    certified: bool
    refines: int = 0
    verdict: Verdict | None = None
    origin: str = "expand"
    done: int = 0
    """How many of `steps` were executed before the last repair (bookkeeping only)."""
    rejected: tuple[tuple[tuple[PlanStep, ...], tuple[Violation, ...]], ...] = ()
    """The attempts the gate rejected before `steps`, oldest first: (steps, violations) pairs,
    so a report can show what the gate caught and what the refine changed."""

    @property
    def violations(self) -> tuple[Violation, ...]:
        return tuple(getattr(self.verdict, "violations", ()) or ())


@dataclass(frozen=True)
class PlanResult:
    """What `plan` or `repair` returns.

    `steps` are the steps to execute (for `repair`: only the remaining ones, completed steps are
    not repeated); `blocks` the sub-goal blocks behind them (hierarchical planners); `calls`,
    `prompt_tokens`, `output_tokens` and `seconds` total every LLM call made, failed ones
    included (`call_log` itemises them); `certified` is True only when a gate checked every
    returned step and accepted all of them; `goal_reached` is the gate's goal test on the final
    state of the returned steps (None when no gate ran).
    """

    steps: tuple[PlanStep, ...]
    blocks: tuple[SubgoalBlock, ...] = ()
    calls: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    notes: tuple[str, ...] = ()
    certified: bool = False
    goal_reached: bool | None = None
    call_log: tuple[CallRecord, ...] = ()
    planner: str = ""
    limits_hit: tuple[str, ...] = ()

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.output_tokens

    @property
    def uncertified_blocks(self) -> tuple[SubgoalBlock, ...]:
        return tuple(b for b in self.blocks if not b.certified)

    def to_dict(self) -> dict[str, Any]:
        return {
            "planner": self.planner, "steps": [written_json(s) for s in self.steps],
            "blocks": [{"subgoal": b.subgoal, "steps": [written_json(s) for s in b.steps],
                        "certified": b.certified, "refines": b.refines, "origin": b.origin,
                        "violations": [getattr(v, "code", str(v)) for v in b.violations]}
                       for b in self.blocks],
            "calls": self.calls, "prompt_tokens": self.prompt_tokens,
            "output_tokens": self.output_tokens, "seconds": round(self.seconds, 6),
            "notes": list(self.notes), "certified": self.certified,
            "goal_reached": self.goal_reached, "limits_hit": list(self.limits_hit),
            "call_log": [{"role": c.role, "prompt_tokens": c.prompt_tokens,
                          "output_tokens": c.output_tokens, "ok": c.ok, "error": c.error}
                         for c in self.call_log]}


@runtime_checkable
class Planner(Protocol):
    """The interface every planner provides."""

    name: str

    def plan(self, task: PlanningTask) -> PlanResult: ...

    def repair(self, state: frozenset | None, done: Sequence[PlanStep],
               failed_step: PlanStep | None, reason: str) -> PlanResult: ...


class CallLog:
    """Counts the LLM calls of one `plan` or `repair` run.

    `complete` forwards to the backend and returns the text, or None when the call failed with
    an `LLMError`/`SageError`, when the answer is unusable (see the module docstring) or when
    the run has made `max_calls` calls already (the failure is recorded with whatever tokens it
    spent). Planners treat None like an unusable answer.
    """

    def __init__(self, llm: LLMBackend, max_calls: int = MAX_CALLS):
        if llm is None:
            raise PlannerError("this planner needs an LLM backend: pass llm=get_backend(...)")
        self.llm = llm
        self.max_calls = max_calls
        self.records: list[CallRecord] = []
        self.notes: list[str] = []
        self.limits_hit: list[str] = []
        self.started = time.perf_counter()

    def hit(self, limit: str, note: str) -> None:
        """Record that a cap was reached (once per cap and run)."""
        if limit not in self.limits_hit:
            self.limits_hit.append(limit)
            self.notes.append(note)

    def complete(self, messages: Sequence[Mapping[str, str]], *, role: str,
                 schema: Schema = None, temperature: float = 0.2, seed: int | None = None
                 ) -> str | None:
        if len(self.records) >= self.max_calls:
            self.hit("max_calls", f"call cap reached: this run made {self.max_calls} LLM calls "
                                  f"(MAX_CALLS); later {role} calls were not made")
            return None
        began = time.perf_counter()
        try:
            completion = self.llm.complete(list(messages), schema=schema,
                                           temperature=temperature, seed=seed, role=role)
        except SageError as error:
            usage = getattr(error, "usage", None)
            self.records.append(CallRecord(
                role=role, prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
                seconds=time.perf_counter() - began, ok=False,
                error=f"{type(error).__name__}: {error}"))
            self.notes.append(f"{role} call failed: {type(error).__name__}: {error}")
            return None
        problem = unusable_answer(completion.text)
        self.records.append(CallRecord(role=role, prompt_tokens=int(completion.prompt_tokens),
                                       output_tokens=int(completion.output_tokens),
                                       seconds=float(completion.seconds), ok=problem is None,
                                       error=f"unusable answer: {problem}" if problem else ""))
        if problem is not None:
            self.notes.append(f"{role} answer unusable: {problem}")
            return None
        return completion.text

    def note(self, text: str) -> None:
        self.notes.append(text)

    def result(self, steps: Sequence[PlanStep], *, planner: str, blocks: Sequence[SubgoalBlock] = (),
               certified: bool = False, goal_reached: bool | None = None,
               notes: Sequence[str] = ()) -> PlanResult:
        return PlanResult(
            steps=tuple(steps), blocks=tuple(blocks),
            calls=len(self.records),
            prompt_tokens=sum(r.prompt_tokens for r in self.records),
            output_tokens=sum(r.output_tokens for r in self.records),
            seconds=time.perf_counter() - self.started,
            notes=tuple(self.notes) + tuple(notes), certified=certified,
            goal_reached=goal_reached, call_log=tuple(self.records), planner=planner,
            limits_hit=tuple(self.limits_hit))


def unusable_answer(text: Any) -> str | None:
    """Why an answer cannot be read (not text, too long, JSON too deep or numbers too long),
    or None when it can be."""
    if not isinstance(text, str):
        return f"the backend returned {type(text).__name__}, not text"
    if len(text) > MAX_ANSWER_CHARS:
        return f"{len(text):,} characters, more than the {MAX_ANSWER_CHARS:,} read"
    try:
        limits.check_json_shape(text, None, "answer")
    except SageError as error:
        return getattr(error, "message", str(error))
    return None


def same_step(a: PlanStep, b: PlanStep) -> bool:
    """Two steps name the same action and words (case-insensitive), in either step form."""
    return step_key(a) == step_key(b)
