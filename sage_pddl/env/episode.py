"""The episode base of environments that read plan steps through the gate.

`GatedEnv` holds what the symbolic world and the AI2-THOR backend share: episode counters, the
step prologue (parse the step, run the faults, refuse steps naming a vanished object, ground the
step with the gate), the transition record, `true_state`, `goal_reached` and `close`. A subclass
says how a grounded step runs (`_execute`), how an object vanishes (`_vanish`) and what the robot
observes (`observe`).
"""
from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sage_pddl.domains import load_domain
from sage_pddl.gate import GroundAction, PlanChecker, StepRejected
from sage_pddl.pddl.model import Domain, PlanStep, Problem, key

from .base import EnvError, Fact, Observation, StepResult, numbered
from .faults import GONE, Faults, StepContext
from .transitions import Transition, TransitionLog, make_transition


class GatedEnv(ABC):
    """The episode bookkeeping and step prologue of environments that read steps through the
    gate (see the module docstring). A subclass's `reset` sets `domain`, `problem`, `gate` and
    `_state`, then calls `_begin_episode`."""

    name = "gated"
    domain: Domain  # set by reset, with `problem` and `gate`
    problem: Problem
    _reset_call = "reset(problem)"  # how the "no episode" error tells the caller to start one

    def __init__(self, *, log: str | Path | None = None,
                 domains_dirs: Iterable[str | Path] | None = None, faults: Any = None):
        self._domains_dirs = list(domains_dirs) if domains_dirs else None
        self._default_faults = faults
        self._log = TransitionLog(log) if log else None
        self._episode = -1
        self._gate: PlanChecker | None = None
        self._state: frozenset = frozenset()
        self.last_transition: Transition | None = None

    @property
    def gate(self) -> PlanChecker:
        """The episode's gate (`reset` sets it)."""
        return self._require_episode()

    @gate.setter
    def gate(self, gate: PlanChecker) -> None:
        self._gate = gate

    @staticmethod
    def _given_gate(gate: PlanChecker | None, domain: Domain, problem: Problem) -> PlanChecker | None:
        """A gate given to `reset` to share (the planner's): it must be compiled from the
        episode's domain and problem."""
        if gate is not None and (gate.domain is not domain or gate.problem is not problem):
            raise EnvError("reset(gate=...): the gate was compiled from another domain or "
                           "problem than the episode's")
        return gate

    def _begin_episode(self, task: str, fault_set: Faults) -> None:
        """Start the counters of a new episode named `task` with its faults (`gate` and the
        true state are set). A true state with other static facts than the problem's (hidden
        facts, an override) gets a gate that does not prune by the problem's."""
        self.gate = self.gate.for_state(self._state)
        self._task = task
        self._episode += 1
        self._index = 0
        self._succeeded = 0
        self._gone: set[str] = set()
        self._fault_run = fault_set.start(task)
        self.last_transition = None

    def _attempt(self, step: PlanStep, call: str) -> PlanStep:
        """The next attempt of the episode: the step numbered."""
        if self._gate is None:
            raise EnvError(f"{call}() called before reset(): start an episode with "
                           "reset(problem)")
        index = self._index
        self._index += 1
        return numbered(step, index)

    def step(self, step: PlanStep) -> StepResult:
        plan_step = self._attempt(step, "step")
        index = plan_step.index
        injection = self._fault_run.before_step(
            StepContext(self._task, index, self._succeeded, plan_step))
        if injection and injection.vanish:
            self._vanish(injection.vanish)
            self.gate = self.gate.for_state(self._state)  # the object's static facts are gone
        pre = self._state
        if injection and injection.fail:
            return self._finish(plan_step, pre, False, injection.reason, injection.code)
        gone = [arg for arg in plan_step.args if key(arg) in self._gone]
        if gone:
            return self._finish(plan_step, pre, False, f"{gone[0]} is no longer there", GONE)
        try:
            ground = self.gate.ground(plan_step, index, pre)
        except StepRejected as rejected:
            violation = rejected.violation
            return self._finish(plan_step, pre, False, violation.message, violation.code)
        # the step acts on the objects the gate resolved (Cabinet -> Cabinet_2): the transition
        # records those, so that its arguments are the objects its facts are about
        spelled = tuple(self.gate.objects.get(arg, arg) for arg in ground.args)
        if spelled != plan_step.args:
            plan_step = dataclasses.replace(plan_step, args=spelled)
        return self._execute(plan_step, pre, ground)

    def refuse(self, step: PlanStep, reason: str, code: str) -> StepResult:
        """Record a step the harness fails without running it (an injected failure): an attempt
        of the episode like any other, logged with its `code` (`induce` leaves such records
        out), the state unchanged."""
        plan_step = self._attempt(step, "refuse")
        return self._finish(plan_step, self._state, False, reason, code)

    @abstractmethod
    def _execute(self, plan_step: PlanStep, pre: frozenset[Fact], ground: GroundAction
                 ) -> StepResult:
        """Run a grounded step from the true state `pre`; `_finish` its outcome."""

    @abstractmethod
    def _vanish(self, objects: Iterable[str]) -> None:
        """Remove vanished objects from the world (later steps naming them fail: `_gone`)."""

    @abstractmethod
    def observe(self) -> Observation:
        """The robot's current view."""

    def true_state(self) -> frozenset[Fact]:
        self._require_episode()
        return self._state

    def goal_reached(self) -> bool | None:
        self._require_episode()
        return bool(self.gate.goal_holds(self._state))

    def goal_conditions(self) -> tuple[int, int]:
        """(met, total) of the goal's top-level conjuncts in the true state."""
        self._require_episode()
        return self.gate.goal_conditions(self._state)

    def close(self) -> None:
        if self._log is not None:
            self._log.close()

    @property
    def step_count(self) -> int:
        return self._index if self.gate is not None else 0

    def _finish(self, plan_step: PlanStep, pre: frozenset[Fact], success: bool, message: str,
                code: str | None) -> StepResult:
        self.last_transition = make_transition(
            task=self._task, env=self.name, domain=self.domain.name, step=plan_step.index,
            plan_step=plan_step, pre=pre, success=success, message=message, post=self._state,
            code=code, episode=self._episode)
        if self._log is not None:
            self._log.append(self.last_transition)
        return StepResult(success, message, self.observe(), code, plan_step.index)

    def _resolve_domain(self, domain: Domain | str | None, problem: Problem) -> Domain:
        if isinstance(domain, Domain):
            return domain

        return load_domain(domain or problem.domain_name, self._domains_dirs)

    @staticmethod
    def _build_spelling(domain: Domain, problem: Problem) -> dict[str, str]:
        return {key(t.name): t.name for t in (*domain.constants, *problem.objects)}

    def _require_episode(self) -> PlanChecker:
        """The episode's gate; raises `EnvError` before the first `reset`."""
        if self._gate is None:
            raise EnvError(f"no episode: call {self._reset_call} first")
        return self._gate
