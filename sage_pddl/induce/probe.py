"""Probe any environment through its interface and log what it does (the input of induction).

`probe_task(task, domain, problem, env, log, settings, ref)` runs one task in `env`, any
environment that records its last step as a `Transition` (`last_transition`: the symbolic
world, VirtualHome through EAI's simulator, ALFWorld through TextWorld, AI2-THOR behind the
thor-server). The environment alone decides whether a step succeeds. The domain names the
candidate steps (its action names and parameter types, filled with the problem's objects of
those types) and, in the proposed walks only, chooses which of them to send; its preconditions
never decide an outcome, so the logged outcomes of VirtualHome or ALFWorld owe nothing to our
PDDL.

With a generator seeded by (seed, task reference), per task:

1. **reference**: reset, then execute the task's reference plan step by step;
2. **probes**, in every state of that trajectory (before each reference step and at the end):
   * *skip*: the reference step after the next one (steps out of order: a missing step);
   * *repeat*: the reference step just executed, again (its effect already holds);
   * *swap*: the next reference step with one argument replaced by another object of the
     parameter's type (a wrong object);
   * *displaced*: `displaced` other reference steps, drawn from the rest of the plan (steps the
     environment accepts somewhere, sent where a state precondition may not hold);
   * `random` uniformly random candidate steps;
3. **walks**: `walks` times, from a random state of the trajectory, `walk_steps` steps, each
   found by trial: random candidate steps until the environment accepts one (at most
   `walk_tries`), so the walk reaches states the reference plan never visits;
4. **proposed walks**: `proposed_walks` times, from a random state of the trajectory,
   `proposed_steps` steps the domain proposes: in the environment's current state, the
   candidates the domain's gate believes applicable, of their actions one that has succeeded
   least often in these walks so far, then one of its steps. A task without a reference plan
   (a drop-in domain's problem) is explored this way: random tuples of a 4-parameter action
   are almost never applicable. Each proposed walk starts with a *set-up*: when an action has
   not succeeded in this task and the domain believes none of its steps applicable, the steps
   its own semantics say make one applicable (`means_ends`: a tool picked up before a cut, a
   container filled before it is emptied), then that step, each sent to the environment
   (which alone decides; the set-up stops at its first refusal). The walks then go on with
   set-ups only, within `setup_budget` steps in all: each action, in the domain's order, that
   has not succeeded in the task and no set-up was sent toward gets the set-up the domain
   finds toward one of its steps (each in turn), from where the last one stopped, else from
   the task's initial state; so every action whose set-up the domain finds there is tried,
   not only the one a walk drew;
5. **refusal set-ups**: for each action, from up to `refusal_states` states of the reference
   trajectory, the steps the domain's own semantics say lead to a state where one of its
   steps is refused for a reason not yet seen in this task (`refusal_set_up`: a precondition
   literal that holds is made false, set up backward from the step whose effect falsifies it:
   an object shut in a closed container before it is looked for, or picked while located),
   then that step, each sent to the environment, which alone labels them (the domain only
   proposes; the set-up stops at its first refusal). The reasons already seen are the
   domain's reading of the logged refusals (the predicates it finds false there); the
   search stops for an action once the environment refuses a step set up so. An action
   whose precondition no step can make false (no precondition, static facts only) is
   refused only by the other probes.

Random and swapped candidates never name one object for two parameters the domain declares
with different types (`types_allow`): `find character character` fits `find ?char - character
?obj - object` only because a character is an object, is a probe no plan would make, and its
success taught the learner self-loops such as `(next_to ?x ?x)`.

Every step sent is logged, with the environment's answer. A probe that changed the world (any
step may: a real simulator can move the robot on a failure too) is undone by resetting and
replaying the reference prefix, unlogged. If the replay does not reach the same state (a
nondeterministic environment), probing of the task stops there and the log keeps what came
before. Each record names the environment that produced it (`env`) and the task reference.
"""
from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sage_pddl.env.base import Environment
from sage_pddl.env.transitions import TransitionLog
from sage_pddl.gate import PlanChecker, compile_gate
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import Action, Domain, PlanStep, Problem
from sage_pddl.pddl.plans import step_of
from sage_pddl.pddl.vocabulary import step_words, vocabulary
from sage_pddl.tasks import Task, reference_plan

from .setup import (
    Grounded,
    Setters,
    grounded,
    means_ends,
    refusal_set_up,
    set_up_step,
)


@dataclass(frozen=True)
class ProbeSettings:
    seed: int = 0
    random: int = 2
    """Uniformly random candidate steps sent in each state of the reference trajectory."""
    displaced: int = 2
    """Reference steps from elsewhere in the plan sent in each state of its trajectory."""
    walks: int = 2
    walk_steps: int = 3
    walk_tries: int = 10
    """Random candidates a walk step may try before the environment accepts one."""
    max_tuples: int = 60
    """Argument tuples sampled per action for the candidate steps."""
    proposed_walks: int = 3
    proposed_steps: int = 8
    """Walks of steps the domain proposes (see the module docstring)."""
    setup_depth: int = 3
    """Levels of sub-goals a set-up (`means_ends`) may go down, at most."""
    setup_budget: int = 24
    """Steps in all that the set-ups after the proposed walks may send (0: none; see the module
    docstring)."""
    refusal_states: int = 3
    """States of the reference trajectory a refusal set-up is searched from, per action, at
    most (0: no refusal set-ups)."""


class _Episode:
    """The environment, the reference trajectory, and a way back to any state of it."""

    def __init__(self, env: Environment, problem: Problem, reset_options: Mapping[str, Any],
                 log: TransitionLog, ref: str):
        self.env, self.problem, self.options, self.log = env, problem, dict(reset_options), log
        self.ref = ref
        self.done: list[PlanStep] = []  # the reference steps executed so far
        self.states: list[frozenset] = []
        self.logged = 0
        self.succeeded: Counter[str] = Counter()  # logged successes per action word
        # logged failures per action word: each step with the state it was refused in
        self.failures: dict[str, list[tuple[PlanStep, frozenset]]] = {}

    def start(self) -> None:
        self.env.reset(self.problem, **self.options)
        self.states = [self.env.true_state()]

    def step(self, step: PlanStep, *, record: bool = True) -> bool:
        result = self.env.step(step)
        transition = getattr(self.env, "last_transition", None)
        if record and transition is not None:
            # named by the task reference, which `load_task` reads back (for typed induction)
            self.log.append(dataclasses.replace(transition, task=self.ref))
            self.logged += 1
            if result.success:
                self.succeeded[step.action.lower()] += 1
            else:
                self.failures.setdefault(step.action.lower(), []).append((step, transition.pre))
        return bool(result.success)

    def back_to(self, index: int) -> bool:
        """Be in the state before reference step `index`, resetting and replaying the steps
        before it (unlogged) unless the world is already there; whether it is."""
        if self.env.true_state() == self.states[index]:
            return True
        self.env.reset(self.problem, **self.options)
        for step in self.done[:index]:
            self.step(step, record=False)
        return self.env.true_state() == self.states[index]


class TypedObjects:
    """A problem's objects by parameter type, spelled as declared. Read from a compiled gate,
    of which only the typing is used: compiling evaluates no precondition."""

    def __init__(self, gate: PlanChecker):
        self.gate, self.names = gate, dict(gate.objects)

    def of(self, types: tuple[str, ...]) -> list[str]:
        return [self.names.get(k, k) for k in self.gate.objects_of(types)]


def types_allow(action: Action, args: Sequence[str]) -> bool:
    """Whether a candidate step's arguments name an object twice only for parameters the
    domain declares with the same types (see the module docstring)."""
    seen: dict[str, tuple[str, ...]] = {}
    for parameter, arg in zip(action.parameters, args):
        types = tuple(sorted(t.lower() for t in parameter.types))
        if seen.setdefault(arg.lower(), types) != types:
            return False
    return True


def _candidates(domain: Domain, objects: TypedObjects, rng: random.Random,
                limit: int) -> list[PlanStep]:
    """Every action of `domain` with at most `limit` argument tuples of fitting objects."""
    steps: list[PlanStep] = []
    for action in domain.actions:
        pools = [objects.of(p.types) for p in action.parameters]
        size = 1
        for pool in pools:
            size *= len(pool)
        wanted = min(limit, size)
        seen: set[tuple[str, ...]] = set()
        for _ in range(wanted * 3):  # sampling with replacement: a few draws may repeat
            if len(seen) >= wanted:
                break
            args = tuple(rng.choice(pool) for pool in pools)
            if args not in seen:
                seen.add(args)
                if types_allow(action, args):
                    steps.append(step_of(action.name, args))
    return steps


def _swapped(step: PlanStep, domain: Domain, objects: TypedObjects, rng: random.Random
             ) -> PlanStep | None:
    """The step with one argument replaced by another object of the parameter's type."""
    vocab = vocabulary(domain)
    action = vocab.action(step.action)
    if action is None or not action.parameters:
        return None
    words = list(step_words(step, action, vocab))
    if len(words) != len(action.parameters) or not all(words):
        return None
    position = rng.randrange(len(words))
    others = sorted(o for o in objects.of(action.parameters[position].types)
                    if o.lower() != words[position].lower()
                    and types_allow(action, words[:position] + [o] + words[position + 1:]))
    if not others:
        return None
    words[position] = rng.choice(others)
    return step_of(action.name, words)


def task_random(seed: int, ref: str) -> random.Random:
    """The generator of one task's probes, seeded by (seed, task reference) with the folders of
    a task set given as a path left out (`examples/relay/problems#p01` seeds as
    `problems#p01`), so that where a checkout or a data folder lies does not change the logs."""
    return random.Random(f"{seed}:{Path(ref).name if '/' in ref else ref}")


def probe_task(task: Task, domain: Domain, problem: Problem, env: Environment, log: TransitionLog,
               settings: ProbeSettings, ref: str,
               reset_options: Mapping[str, Any] | None = None) -> int:
    """Probe one task in `env` (see the module docstring); returns the transitions logged."""
    rng = task_random(settings.seed, ref)
    objects = TypedObjects(compile_gate(domain, problem))
    candidates = _candidates(domain, objects, rng, settings.max_tuples)
    reference = reference_plan(task.reference_steps, domain)
    options: dict[str, Any] = {"domain": domain}
    if getattr(task, "scene", ""):  # AI2-THOR loads it; the other worlds ignore it
        options["scene"] = task.scene
    options.update(reset_options or {})
    episode = _Episode(env, problem, options, log, ref)
    episode.start()
    for index in range(len(reference) + 1):
        probes: list[PlanStep | None] = []
        if index + 1 < len(reference):
            probes.append(reference[index + 1])
        if index >= 1:
            probes.append(reference[index - 1])
        if index < len(reference):
            probes.append(_swapped(reference[index], domain, objects, rng))
        elsewhere = [s for j, s in enumerate(reference) if abs(j - index) > 1]
        probes += rng.sample(elsewhere, min(settings.displaced, len(elsewhere)))
        probes += rng.sample(candidates, min(settings.random, len(candidates)))
        for probe in probes:
            if probe is None:
                continue
            episode.step(probe)
            if not episode.back_to(index):
                return episode.logged
        if index < len(reference):
            episode.step(reference[index])
            episode.done.append(reference[index])
            episode.states.append(env.true_state())
    for _ in range(settings.walks if candidates else 0):
        if not episode.back_to(rng.randrange(len(episode.states))):
            break
        for _ in range(settings.walk_steps):
            for _ in range(settings.walk_tries):
                if episode.step(rng.choice(candidates)):
                    break
    gate = objects.gate
    succeeded: Counter[str] = Counter()
    set_up: set[str] = set()  # the actions a set-up was sent toward
    for _ in range(settings.proposed_walks if candidates else 0):
        if not episode.back_to(rng.randrange(len(episode.states))):
            break
        missing = [a.name for a in domain.actions if not episode.succeeded[a.name.lower()]]
        path = _set_up(gate, env.true_state(), candidates, missing, rng, settings.setup_depth)
        set_up.update(p.action for p in path[-1:])
        for prepared in path:
            if not episode.step(prepared):
                break
        for _ in range(settings.proposed_steps):
            step = _proposal(gate, env.true_state(), candidates, rng, succeeded)
            if step is None:
                break
            if episode.step(step):
                succeeded[step.action] += 1
    if settings.proposed_walks and candidates and not _set_up_the_rest(
            episode, gate, candidates, domain, settings,
            task_random(settings.seed, f"{ref} set-ups"), set_up):
        return episode.logged
    refusals = _Refusals(candidates)
    for action in domain.actions if settings.refusal_states and candidates else ():
        word = action.name.lower()
        states = rng.sample(range(len(episode.states)),
                            min(settings.refusal_states, len(episode.states)))
        for index in states:
            if not episode.back_to(index):
                return episode.logged
            known = refusals.reasons(gate, episode.failures.get(word, ()))
            path = refusals.set_up(gate, env.true_state(), action.name, rng,
                                   settings.setup_depth, known)
            for sent in path:
                if not episode.step(sent):
                    break
            if path and episode.failures.get(word) and episode.failures[word][-1][0] is path[-1]:
                break  # the environment refused the step set up to be refused
    return episode.logged


def _believed(gate: PlanChecker, state: frozenset) -> tuple[PlanChecker, frozenset] | None:
    """The form of `gate` for the environment's `state` and that state in the gate's terms;
    None when the domain cannot read a fact of it (then it has no belief about the steps)."""
    try:
        form = gate.for_state(state)
        return form, form.check([], state=state).final_state
    except SageError:
        return None


class _Refusals:
    """The refusal set-ups of one task (step 5 of the module docstring): the candidates
    grounded, and their conditional setters, per form of the gate, made on first use."""

    def __init__(self, candidates: list[PlanStep]):
        self.candidates = candidates
        self.made: dict[int, Setters] = {}

    def reasons(self, gate: PlanChecker, failures: Sequence[tuple[PlanStep, frozenset]]
                ) -> set[tuple[bool, str]]:
        """Why the domain believes the logged `failures` were refused: the sign and predicate
        of each precondition literal it finds false in each one's state."""
        found: set[tuple[bool, str]] = set()
        for step, state in failures:
            believed = _believed(gate, state)
            if believed is None:
                continue
            form, here = believed
            for _, ground in grounded(form, [step]):
                if not form.applies(here, ground):
                    found |= {(positive, atom[0]) for violation in form.explain(here, ground)
                              for positive, atom in violation.atoms}
        return found

    def set_up(self, gate: PlanChecker, state: frozenset, action: str, rng: random.Random,
               depth: int, known: Collection[tuple[bool, str]] = ()) -> list[PlanStep]:
        """The steps the domain believes lead, from the environment's `state`, to a refusal
        of a step of `action` for a reason not in `known` (`refusal_set_up`), and that step;
        none when it finds none."""
        believed = _believed(gate, state)
        if believed is None:
            return []
        form, here = believed
        if id(form) not in self.made:
            self.made[id(form)] = Setters(grounded(form, self.candidates))
        setters = self.made[id(form)]
        mine = [(s, g) for s, g in setters.through if s.action == action]
        return refusal_set_up(form, here, mine, setters, depth, rng, known) or []


def _set_up(gate: PlanChecker, state: frozenset, candidates: list[PlanStep],
            missing: Sequence[str], rng: random.Random, depth: int) -> list[PlanStep]:
    """The steps the domain believes set up, from the environment's `state`, a step of an
    action in `missing` (one drawn at random among those the domain believes refused there,
    toward a few of its steps: `means_ends`), and that step; none when it finds no set-up."""
    believed = _believed(gate, state)
    if believed is None:
        return []
    form, here = believed
    steps = grounded(form, candidates)
    waiting = [name for name in missing if not any(
        form.applies(here, g) for s, g in steps if s.action == name)]
    if not waiting:
        return []
    action = rng.choice(sorted(waiting))
    mine = [(s, g) for s, g in steps if s.action == action]
    return set_up_step(form, here, mine, steps, depth, rng) or []


def _set_up_the_rest(episode: _Episode, gate: PlanChecker, candidates: list[PlanStep],
                     domain: Domain, settings: ProbeSettings, rng: random.Random,
                     set_up: set[str]) -> bool:
    """Each action, in the domain's order, that has not succeeded in the task and no set-up was
    sent toward: the set-up the domain finds toward one of its steps (`_toward`) from where the
    episode stopped, else from the task's initial state, then that step, sent until
    `setup_budget` steps are spent in all. Going on from where it stopped, one set-up prepares
    the next (the cup held to drink is then poured). Whether the episode could go back to the
    initial state."""
    budget = settings.setup_budget
    made: dict[int, Grounded] = {}  # the candidates grounded, per form of the gate
    for action in (a.name for a in domain.actions):
        if budget <= 0:
            break
        if episode.succeeded[action.lower()] or action in set_up:
            continue
        path = _toward(gate, episode.env.true_state(), candidates, action, rng,
                       settings.setup_depth, made)
        start = not path  # else from the task's initial state
        if start:
            path = _toward(gate, episode.states[0], candidates, action, rng,
                           settings.setup_depth, made)
        if not path:
            continue
        set_up.add(action)
        if start and not episode.back_to(0):
            return False
        for prepared in path[:budget]:
            budget -= 1
            if not episode.step(prepared):
                break
    return True


def _toward(gate: PlanChecker, state: frozenset, candidates: list[PlanStep], action: str,
            rng: random.Random, depth: int, made: dict[int, Grounded]) -> list[PlanStep]:
    """A step of `action` the domain believes applicable in `state`, else the set-up it finds
    toward one of its steps, each in turn (`means_ends`), and that step; none when it finds
    none. `made` keeps the candidates grounded per form of the gate."""
    believed = _believed(gate, state)
    if believed is None:
        return []
    form, here = believed
    if id(form) not in made:
        made[id(form)] = grounded(form, candidates)
    steps = made[id(form)]
    mine = [(s, g) for s, g in steps if s.action == action]
    ready = [s for s, g in mine if form.applies(here, g)]
    if ready:
        return ready[:1]
    for step, ground in mine:
        found = means_ends(form, here, ground, steps, depth, rng)
        if found is not None:
            return found[0] + [step]
    return []


def _proposal(gate: PlanChecker, state: frozenset, candidates: list[PlanStep],
              rng: random.Random, succeeded: Counter[str]) -> PlanStep | None:
    """A candidate the domain's gate believes applicable in `state` (the environment's own
    state): of the actions believed applicable, one with the fewest successes in these walks
    so far (ties drawn uniformly), then one of its steps; None when it believes none is."""
    believed: dict[str, list[PlanStep]] = {}
    for step in candidates:
        try:
            if gate.check([step], state=state).valid:
                believed.setdefault(step.action, []).append(step)
        except SageError:  # a state fact the domain cannot read: no belief about the step
            continue
    if not believed:
        return None
    fewest = min(succeeded[name] for name in believed)
    rarest = sorted(name for name in believed if succeeded[name] == fewest)
    return rng.choice(believed[rng.choice(rarest)])


__all__ = ["ProbeSettings", "TypedObjects", "probe_task"]
