"""Collect transition logs by probing an environment (the input of induction).

`collect(..., env=NAME)` probes any environment through its interface (`probe.py`: the
environment alone decides every outcome, so the logs of VirtualHome or ALFWorld owe nothing to
our PDDL). Without `env`, the symbolic world is probed as below, guided by the gate of the same
domain: its logs recover that domain from its own transitions, which checks the learner, not the
domain (circular evidence, and labelled so in docs/induction.md).

For every task of a task set, with a random generator seeded by (seed, task reference;
`probe.task_random`):

1. **reference**: reset to the task's problem and execute its reference plan (action names
   normalised through the domain's aliases), failed steps included;
2. **walks**: from states on that trajectory, `walks` short walks of applicable steps
   (`walk_steps` steps each; each step's action the one with the fewest successes in this task
   so far among the applicable ones, ties drawn at random, then its arguments), for states
   the reference plan never visits; then the last walk goes on from where it stopped (from
   a state seen so far when it is stuck) until every action of the domain has succeeded in
   this task or `walk_budget` walk steps are spent in all: an action that needs a set-up of
   several steps, such as two couriers meeting for a handover, is reached by walking on
   towards what has not happened yet. Past the first walks, when no step of an action that has
   not succeeded yet is applicable, the walk first takes the shortest *set-up* the domain
   shows (`set_up`: a breadth-first search over the domain's gate from the current state,
   at most `setup_depth` steps and `setup_states` states, through the actions the causal graph
   says can contribute to that action's precondition) to a state where one is, so an action
   whose precondition needs several others first (a tool in the hand, a filled container) is
   reached whatever the other actions' counts;
3. **set-up refusals**: for each action no step of which has been refused in this task, the
   same search from the reached states to a state where one of its steps is refused (through
   the actions that can make its precondition false), then that step: an action refused only
   in states a few steps away (an object shut in a closed container) is seen failing too. An
   action whose precondition nothing can make false (no precondition) is never refused;
4. **probes**: from up to `states` of the reachable states seen so far (the initial and final
   ones always among them), single steps each from a fresh reset to that state:
   `successes` applicable steps (actions drawn uniformly), and for every distinct reason the
   environment would refuse a step there, `per_reason` step(s) refused for that reason (the
   adversarial probes: a wrong object without the affordance, an object not located yet, a
   pick while holding, a closed container, an already open door, ...), plus `random`
   uniformly random steps.

Candidates are every domain action applied to the problem's objects of its parameters' types
(every tuple, or `max_tuples` sampled ones when there are more), none naming one object for two
parameters of different declared types (`probe.types_allow`); a candidate's reason is the
environment's own answer in that state, asked through the same gate before sampling.

Every executed step is logged by the environment (docs/transitions.md). Logs are written per
task to `<out>/<TASK_ID>.jsonl`: first to `<TASK_ID>.jsonl.part`, renamed when the task is done,
so an interrupted run resumes where it stopped (finished tasks are skipped, a partial file is
redone). The same settings and seed give the same transitions (timestamps aside).
"""
from __future__ import annotations

import itertools
import random
import sys
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from sage_pddl.env import get_env
from sage_pddl.env.symbolic import SymbolicEnv
from sage_pddl.env.transitions import TransitionLog
from sage_pddl.gate import PlanChecker, StepRejected
from sage_pddl.gate.causal import CausalGraph, condition_literals
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.limits import file_name
from sage_pddl.pddl.model import Domain, PlanStep
from sage_pddl.pddl.plans import step_of
from sage_pddl.tasks import reference_plan, task_problem

from .probe import (
    ProbeSettings,
    TypedObjects,
    probe_task,
    task_random,
    types_allow,
)
from .setup import Grounded, grounded, set_up_step


@dataclass(frozen=True)
class CollectSettings:
    seed: int = 0
    states: int = 5
    walks: int = 2
    walk_steps: int = 3
    walk_budget: int = 60
    """Walk steps in all, spent on further walks while some action has not succeeded."""
    successes: int = 3
    """Applicable steps probed per state, their actions drawn uniformly."""
    per_reason: int = 1
    random: int = 2
    max_tuples: int = 400
    """Argument tuples per action: all of them up to this many, else this many sampled."""
    setup_depth: int = 3
    """Levels of sub-goals a set-up (`means_ends`), or steps a refusal search (`set_up`),
    may take, at most."""
    setup_states: int = 300
    """States a set-up search may visit, at most (it gives up beyond)."""


@dataclass(frozen=True)
class CollectSummary:
    files: tuple[Path, ...]
    written: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    failed: tuple[tuple[str, str], ...] = ()
    transitions: int = 0

    def to_json(self) -> dict:
        return {"files": [str(f) for f in self.files], "written": list(self.written),
                "skipped": list(self.skipped), "transitions": self.transitions,
                "failed": [{"task": t, "error": e} for t, e in self.failed]}


@dataclass
class _Probe:
    """The candidate steps of one state, grouped by the environment's answer."""

    applicable: list[PlanStep] = field(default_factory=list)
    refused: dict[str, list[PlanStep]] = field(default_factory=dict)


def _candidates(domain: Domain, objects: TypedObjects, rng: random.Random,
                max_tuples: int) -> list[PlanStep]:
    """Every action of `domain` with its parameters filled by the problem's objects of the
    parameters' types: every tuple when there are at most `max_tuples`, else that many sampled
    (so a 4-parameter action of a problem with a dozen objects is not sampled among the
    ill-typed tuples, where an applicable one is rare)."""
    steps = []
    for action in domain.actions:
        pools = [objects.of(p.types) for p in action.parameters]
        size = 1
        for pool in pools:
            size *= len(pool)
        if size <= max_tuples:
            tuples: list[tuple[str, ...]] = list(itertools.product(*pools))
        else:
            tuples = sorted({tuple(rng.choice(pool) for pool in pools)
                             for _ in range(max_tuples * 3)})[:max_tuples]
        for args in tuples:
            if types_allow(action, args):
                steps.append(step_of(action.name, args))
    return steps


def _by_action(rng: random.Random, steps: Sequence[PlanStep], count: int) -> list[PlanStep]:
    """`count` distinct steps among `steps`, each one's action drawn first, uniformly over the
    actions not drawn yet (so an action with few applicable groundings is probed as often as
    one with many)."""
    groups: dict[str, list[PlanStep]] = {}
    for step in steps:
        groups.setdefault(step.action, []).append(step)
    names = sorted(groups)
    rng.shuffle(names)
    chosen: list[PlanStep] = []
    while names and len(chosen) < count:
        for name in list(names):
            if len(chosen) == count:
                break
            left = [step for step in groups[name] if step not in chosen]
            if not left:
                names.remove(name)
                continue
            chosen.append(rng.choice(left))
    return chosen


def _least_succeeded(rng: random.Random, steps: Sequence[PlanStep],
                     successes: Mapping[str, int]) -> PlanStep:
    """A random step of the action among `steps` with the fewest `successes` (ties drawn at
    random), so walks head for what has not happened yet."""
    names = sorted({step.action for step in steps})
    fewest = min(successes.get(name, 0) for name in names)
    name = rng.choice([n for n in names if successes.get(n, 0) == fewest])
    return rng.choice([step for step in steps if step.action == name])


def _classify(gate: PlanChecker, state: frozenset, steps: Sequence[PlanStep]) -> _Probe:
    probe = _Probe()
    for step in steps:
        try:
            ground = gate.ground(step)
        except StepRejected as rejected:
            probe.refused.setdefault(rejected.violation.code, []).append(step)
            continue
        violation = gate.applicable(state, ground)
        if violation is None:
            probe.applicable.append(step)
        else:
            probe.refused.setdefault(violation.code, []).append(step)
    return probe


def set_up(gate: PlanChecker, state: frozenset, through: Grounded, reached: Callable[[frozenset], bool],
           depth: int, limit: int) -> tuple[list[PlanStep], frozenset] | None:
    """The shortest sequence of `through` steps, each applicable in turn from `state` by the
    domain's own semantics (`gate`'s engine), after which `reached(state)` holds, and the
    state it ends in; None when none is found within `depth` steps and `limit` visited
    states."""
    if reached(state):
        return [], state
    frontier: deque[tuple[frozenset, list[PlanStep]]] = deque([(state, [])])
    seen = {state}
    while frontier:
        here, path = frontier.popleft()
        if len(path) >= depth:
            continue
        for step, ground in through:
            if not gate.applies(here, ground):
                continue
            after = gate.apply(here, ground)
            if after in seen:
                continue
            if reached(after):
                return path + [step], after
            if len(seen) >= limit:
                return None
            seen.add(after)
            frontier.append((after, path + [step]))
    return None


class _SetUps:
    """The set-up searches of one task: per action, its steps and the steps of the actions
    that can make its precondition hold or fail, by the domain's causal graph."""

    def __init__(self, gate: PlanChecker, domain: Domain, grounded: Grounded,
                 settings: CollectSettings):
        graph = CausalGraph.of(domain)
        self.gate, self.settings = gate, settings
        self.steps: dict[str, Grounded] = {}
        self.toward: dict[str, Grounded] = {}
        self.against: dict[str, Grounded] = {}
        for action in domain.actions:
            needs = set(condition_literals(action.precondition))
            helps = graph.relevant_actions(needs)
            hurts = graph.relevant_actions((n.predicate, not n.holds) for n in needs)
            self.steps[action.name] = [g for g in grounded if g[0].action == action.name]
            self.toward[action.name] = [g for g in grounded if g[0].action in helps]
            self.against[action.name] = [g for g in grounded if g[0].action in hurts]

    def to_success(self, state: frozenset, action: str, rng: random.Random
                   ) -> list[PlanStep] | None:
        """A set-up after which a step of `action` is applicable (`means_ends`, toward a few
        of its steps), and that step."""
        return set_up_step(self.gate, state, self.steps[action], self.toward[action],
                           self.settings.setup_depth, rng)

    def to_refusal(self, state: frozenset, action: str, rng: random.Random
                   ) -> list[PlanStep] | None:
        """A set-up after which a step of `action` is refused (`set_up`), and that step."""
        steps = self.steps[action]
        if not self.against[action] or not steps:
            return None

        def refused(here: frozenset) -> bool:
            return any(not self.gate.applies(here, g) for _, g in steps)

        found = set_up(self.gate, state, self.against[action], refused, self.settings.setup_depth,
                       self.settings.setup_states)
        if found is None:
            return None
        path, after = found
        return path + [rng.choice([s for s, g in steps if not self.gate.applies(after, g)])]


def _sample(rng: random.Random, items: Sequence, count: int) -> list:
    return rng.sample(list(items), min(count, len(items)))


def collect_task(task, domain: Domain, log_path: Path, settings: CollectSettings,
                 ref: str) -> int:
    """Probe one task; append its transitions to `log_path`; return how many were logged."""
    rng = task_random(settings.seed, ref)
    problem = task_problem(task, domain)
    env = SymbolicEnv(domain, log=log_path, task=ref)
    count = 0
    succeeded: Counter[str] = Counter()
    refused: Counter[str] = Counter()

    def run(step: PlanStep, action: str) -> bool:
        nonlocal count
        ok = bool(env.step(step).success)
        (succeeded if ok else refused)[action] += 1
        count += 1
        if env.true_state() not in states:
            states.append(env.true_state())
        return ok

    try:
        env.reset(problem, task=ref)
        states = [env.true_state()]
        for reference in reference_plan(task.reference_steps, domain):
            run(reference, reference.action)
        gate = env.gate
        candidates = _candidates(domain, TypedObjects(gate), rng, settings.max_tuples)
        setups = _SetUps(gate, domain, grounded(gate, candidates), settings)
        actions = {a.name for a in domain.actions}
        walk = spent = taken = 0
        while walk < settings.walks or (spent < settings.walk_budget
                                        and not actions <= (+succeeded).keys()):
            walk += 1
            if walk <= settings.walks or not taken:
                env.reset(problem, true_state=rng.choice(states), task=ref)
            # past the first walks, the walk goes on from where it stopped: a set-up of
            # several steps is not cut short by a reset
            taken = 0
            for _ in range(settings.walk_steps):
                options = _classify(gate, env.true_state(), candidates).applicable
                missing = sorted(actions - (+succeeded).keys())
                if walk > settings.walks and missing and not {o.action for o in options} & set(
                        missing):
                    path = setups.to_success(env.true_state(), rng.choice(missing), rng)
                    if path:
                        for prepared in path:
                            run(prepared, prepared.action)
                        taken += len(path)
                        continue
                if not options:
                    break
                picked = _least_succeeded(rng, options, succeeded)
                run(picked, picked.action)
                taken += 1
            spent += max(taken, 1)  # a walk stuck at once still costs, so the loop ends
        for action in sorted(actions - (+refused).keys()):
            for start in _sample(rng, states, settings.states):
                path = setups.to_refusal(start, action, rng)
                if path:
                    env.reset(problem, true_state=start, task=ref)
                    for prepared in path:
                        run(prepared, prepared.action)
                    break
        middle = states[1:-1]
        chosen = [states[0]] + _sample(rng, middle, max(settings.states - 2, 0))
        if len(states) > 1:
            chosen.append(states[-1])
        for state in chosen:
            probe = _classify(gate, state, candidates)
            steps = _by_action(rng, probe.applicable, settings.successes)
            for code in sorted(probe.refused):
                steps += _sample(rng, probe.refused[code], settings.per_reason)
            steps += _sample(rng, candidates, settings.random)
            for probed in steps:
                env.reset(problem, true_state=state, task=ref)
                env.step(probed)
                count += 1
    finally:
        env.close()
    return count


PROBING_OPTIONS: dict[str, dict[str, Any]] = {
    # VirtualHome's executor refuses a step whose effect already holds (switching on what is
    # on); EAI's scorer forgives it and the environment then reports a success by default.
    # Induction wants the executor's answer: the refusal is the precondition `(off ?obj)`.
    "virtualhome": {"additional_step_fails": True},
}
"""Options an environment is built with for probing, unless `env_options` name them."""

RESET_BY_TASK_ID = frozenset({"virtualhome"})
"""Environments whose reset must be told the task id (an EAI task names its own scene graph;
its PDDL problem's name does not say which task it is)."""


def collect_in_env(task, domain: Domain, log_path: Path, settings: ProbeSettings, ref: str,
                   env: str, env_options: Mapping[str, Any] | None = None) -> int:
    """Probe one task in the environment `env` (`probe.py`); returns the transitions logged."""
    problem = task_problem(task, domain)
    world = get_env(env, **{**PROBING_OPTIONS.get(env, {}), **dict(env_options or {})})
    reset = {"task": task.task_id} if env in RESET_BY_TASK_ID else {}
    try:
        with TransitionLog(log_path) as log:
            return probe_task(task, domain, problem, world, log, settings, ref, reset)
    finally:
        close = getattr(world, "close", None)
        if callable(close):
            close()


def collect(tasks: Sequence, domain: Domain, out: str | Path, *,
            settings: CollectSettings = CollectSettings(), taskset: str = "tasks",
            progress: bool = True,
            on_task: Callable[[str, int], None] | None = None, env: str | None = None,
            env_options: Mapping[str, Any] | None = None,
            probe: ProbeSettings | None = None) -> CollectSummary:
    """Probe every task; write `<out>/<TASK_ID>.jsonl` per task (see the module docstring).
    With `env`, each task is probed in that environment with `probe` settings."""
    out = Path(out)
    for task in tasks:  # before anything is written: a task id names a file inside `out`
        file_name(task.task_id, "task id")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise SageError(f"--out {out}: cannot create the folder: {error}") from error
    files, written, skipped, failed = [], [], [], []
    total = 0
    bar = None
    if progress:
        bar = tqdm(total=len(tasks), desc="collect", unit="task", file=sys.stderr)
    try:
        for task in tasks:
            final = out / f"{task.task_id}.jsonl"
            if final.exists():
                skipped.append(task.task_id)
                files.append(final)
            else:
                part = final.with_name(final.name + ".part")
                part.unlink(missing_ok=True)
                ref = f"{taskset}#{task.task_id}"
                try:
                    if env is None:
                        count = collect_task(task, domain, part, settings, ref)
                    else:
                        count = collect_in_env(task, domain, part, probe or ProbeSettings(),
                                               ref, env, env_options)
                except SageError as error:
                    # a task whose problem cannot be built is reported, the others go on
                    failed.append((task.task_id, str(error)))
                    part.unlink(missing_ok=True)
                else:
                    part.replace(final)
                    files.append(final)
                    written.append(task.task_id)
                    total += count
                    if on_task:
                        on_task(task.task_id, count)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(transitions=total)
    finally:
        if bar is not None:
            bar.close()
    return CollectSummary(tuple(files), tuple(written), tuple(skipped), tuple(failed), total)


__all__ = ["CollectSettings", "CollectSummary", "collect", "collect_in_env", "collect_task"]
