"""Probe any environment through its interface and log what it does (the input of induction).

`probe_task(task, domain, env, log, settings, ref)` runs one task in `env`, any environment that
records its last step as a `Transition` (`last_transition`: the symbolic world, VirtualHome
through EAI's simulator, ALFWorld through TextWorld, AI2-THOR behind the thor-server). The
environment alone decides whether a step succeeds. The domain only names the candidate steps:
its action names and parameter types, filled with the problem's objects of those types. No
precondition of it is evaluated, so logs from VirtualHome or ALFWorld are evidence that owes
nothing to our PDDL.

With a generator seeded by (seed, task id), per task:

1. **reference**: reset, then execute the task's reference plan step by step;
2. **probes**, in every state of that trajectory (before each reference step and at the end):
   * *skip*: the reference step after the next one (steps out of order: a missing step);
   * *repeat*: the reference step just executed, again (its effect already holds);
   * *swap*: the next reference step with one argument replaced by another object of the
     parameter's type (a wrong object);
   * `random` uniformly random candidate steps;
3. **walks**: `walks` times, from a random state of the trajectory, `walk_steps` random
   candidate steps, whatever the environment answers.

A probe that succeeds changed the world, so the episode is reset and the reference prefix
replayed before the next probe; replayed steps are not logged again. If the replay does not
reach the same state (a nondeterministic environment), the task's probing stops there and the
log keeps what came before. Every logged record names the environment that produced it (`env`).
"""
from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sage_pddl.env.transitions import TransitionLog
from sage_pddl.gate import compile_gate
from sage_pddl.pddl.model import Domain, Problem
from sage_pddl.pddl.vocabulary import step_words, vocabulary
from sage_pddl.tasks import normalize_steps

Step = dict[str, Any]


@dataclass(frozen=True)
class ProbeSettings:
    seed: int = 0
    random: int = 2
    walks: int = 2
    walk_steps: int = 3
    max_tuples: int = 60


class _Episode:
    """The environment, the reference trajectory, and a way back to any state of it."""

    def __init__(self, env: Any, problem: Problem, reset_options: Mapping[str, Any],
                 log: TransitionLog, ref: str):
        self.env, self.problem, self.options, self.log = env, problem, dict(reset_options), log
        self.ref = ref
        self.done: list[Step] = []  # the reference steps executed so far
        self.states: list[frozenset] = []
        self.logged = 0

    def start(self) -> None:
        self.env.reset(self.problem, **self.options)
        self.states = [self.env.true_state()]

    def step(self, step: Step, *, record: bool = True) -> bool:
        result = self.env.step(step)
        transition = getattr(self.env, "last_transition", None)
        if record and transition is not None:
            # named by the task reference, which `load_task` reads back (for typed induction)
            self.log.append(dataclasses.replace(transition, task=self.ref))
            self.logged += 1
        return bool(result.success)

    def back_to(self, index: int) -> bool:
        """Reset and replay the first `index` executed reference steps, unlogged; whether the
        state is the one seen there the first time."""
        self.env.reset(self.problem, **self.options)
        for step in self.done[:index]:
            self.step(step, record=False)
        return self.env.true_state() == self.states[index]


class _Objects:
    """The problem's objects by parameter type, spelled as declared. Built from a compiled
    gate, of which only the typing is used: compiling evaluates no precondition."""

    def __init__(self, domain: Domain, problem: Problem):
        gate = compile_gate(domain, problem)
        self._table, self.names = gate.table, dict(gate.objects)

    def of(self, types: tuple[str, ...]) -> list[str]:
        return [self.names.get(k, k) for k in self._table.objects_of(types)]


def _candidates(domain: Domain, objects: _Objects, rng: random.Random,
                limit: int) -> list[Step]:
    steps: list[Step] = []
    for action in domain.actions:
        pools = [objects.of(p.types) for p in action.parameters]
        if any(not pool for pool in pools):
            continue
        size = 1
        for pool in pools:
            size *= len(pool)
        seen: set[tuple[str, ...]] = set()
        for _ in range(min(limit, size) * 3):
            args = tuple(rng.choice(pool) for pool in pools)
            if args not in seen:
                seen.add(args)
                steps.append({"action": action.name, "args": list(args)})
            if len(seen) >= min(limit, size):
                break
    return steps


def _args_of(step: Step, domain: Domain) -> tuple[str, list[str]] | None:
    """(action name, argument words) of a reference step, or None when a word is missing."""
    vocab = vocabulary(domain)
    action = vocab.action(str(step.get("action") or ""))
    if action is None:
        return None
    words = list(step_words(step, action, vocab))
    return (action.name, words) if all(words) and len(words) == len(action.parameters) else None


def _swapped(step: Step, domain: Domain, objects: _Objects, rng: random.Random) -> Step | None:
    """The step with one argument replaced by another object of the parameter's type."""
    found = _args_of(step, domain)
    if found is None or not found[1]:
        return None
    name, words = found
    action = vocabulary(domain).action(name)
    assert action is not None
    position = rng.randrange(len(words))
    others = sorted(o for o in objects.of(action.parameters[position].types)
                    if o.lower() != words[position].lower())
    if not others:
        return None
    words[position] = rng.choice(others)
    return {"action": name, "args": words}


def probe_task(task: Any, domain: Domain, problem: Problem, env: Any, log: TransitionLog,
               settings: ProbeSettings, ref: str,
               reset_options: Mapping[str, Any] | None = None) -> int:
    """Probe one task in `env` (see the module docstring); returns the transitions logged."""
    rng = random.Random(f"{settings.seed}:{ref}")
    objects = _Objects(domain, problem)
    candidates = _candidates(domain, objects, rng, settings.max_tuples)
    reference = normalize_steps(task.reference_steps, domain)
    options: dict[str, Any] = {"domain": domain}
    if getattr(task, "scene", ""):  # an AI2-THOR scene, an EAI task id
        options["scene"] = task.scene
    options.update(reset_options or {})
    episode = _Episode(env, problem, options, log, ref)
    episode.start()
    for index in range(len(reference) + 1):
        probes: list[Step | None] = []
        if index + 1 < len(reference):
            probes.append(reference[index + 1])
        if index >= 1:
            probes.append(reference[index - 1])
        if index < len(reference):
            probes.append(_swapped(reference[index], domain, objects, rng))
        probes += rng.sample(candidates, min(settings.random, len(candidates)))
        for probe in probes:
            if probe is not None and episode.step(dict(probe)) and not episode.back_to(index):
                return episode.logged
        if index < len(reference):
            episode.step(reference[index])
            episode.done.append(reference[index])
            episode.states.append(env.true_state())
    for _ in range(settings.walks if candidates else 0):
        if not episode.back_to(rng.randrange(len(episode.states))):
            break
        for _ in range(settings.walk_steps):
            episode.step(dict(rng.choice(candidates)))
    return episode.logged


__all__ = ["ProbeSettings", "probe_task"]
