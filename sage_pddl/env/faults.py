"""Fault injection: make an environment fail on purpose, reproducibly.

A fault is an immutable spec; `start(episode)` gives the per-episode run that holds its state
(has it fired, the random stream). Before each step the environment asks every run of the
episode; a run may answer with an `Injection`:

- `fail`: the step is not executed; the environment returns `StepResult(success=False,
  message=reason, code="injected-failure")` and the state does not change.
- `vanish`: objects to remove from the true state *before* the step runs: every fact that
  mentions them is dropped and any later step naming them fails with code `object-gone`
  ("<Object> is no longer there").

The planner sees a fault only through the StepResult, exactly like a real failure.

Specs:
- `FailAt(step, reason, count)`: fail once, at the first attempt whose counter reaches `step`.
  `count="attempted"` counts attempted steps (0-based index of the attempt); `count="succeeded"`
  counts steps that succeeded so far, the reference harness's `fail_injection.at_step` rule
  ("the first time len(completed) >= at_step the current step is not sent"); `from_task`
  builds that from a task's `fail_injection`.
- `RandomFailures(rate, seed, reason)`: fail each attempt with probability `rate`, drawn from
  `random.Random(f"{seed}:{episode}")` (one draw per attempt), so a run is reproducible for a
  given seed, episode key (the task/problem name) and step sequence.
- `Disappear(obj, step, count)`: the object vanishes once, before the attempt whose counter
  reaches `step`.
- `Faults(specs)`: several at once; disappearances apply first, then the first failing spec
  (in order) gives the reason. Every run is asked every step, so random streams do not depend
  on the other faults.

`parse_fault("fail@3:reason" | "random:0.1[:seed=7]" | "vanish:Apple@2")` reads the CLI form.
"""
from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import PlanStep, key

Count = Literal["attempted", "succeeded"]
INJECTED = "injected-failure"
GONE = "object-gone"


class FaultSpecError(SageError):
    """A fault specification that cannot be read."""


@dataclass(frozen=True)
class StepContext:
    """What a fault may look at before a step runs."""

    episode: str
    index: int  # 0-based attempt number in the episode
    succeeded: int  # steps that succeeded so far in the episode
    step: PlanStep

    def counter(self, count: Count) -> int:
        return self.index if count == "attempted" else self.succeeded


@dataclass(frozen=True)
class Injection:
    fail: bool = False
    reason: str = ""
    code: str = INJECTED
    vanish: tuple[str, ...] = ()


class FaultRun(Protocol):
    def before_step(self, context: StepContext) -> Injection | None: ...


class Fault(Protocol):
    def start(self, episode: str) -> FaultRun: ...


def _check_count(count: str) -> None:
    if count not in ("attempted", "succeeded"):
        raise FaultSpecError(f"fault count must be 'attempted' or 'succeeded', not {count!r}")


@dataclass(frozen=True)
class FailAt:
    step: int
    reason: str = ""
    count: Count = "attempted"

    def __post_init__(self) -> None:
        if self.step < 0:
            raise FaultSpecError(f"FailAt step must be >= 0, got {self.step}")
        _check_count(self.count)

    def start(self, episode: str) -> FaultRun:
        return _OnceRun(self.step, self.count,
                        Injection(fail=True, reason=self.reason or
                                  f"injected failure at step {self.step}"))


@dataclass(frozen=True)
class Disappear:
    obj: str
    step: int
    count: Count = "attempted"

    def __post_init__(self) -> None:
        if self.step < 0 or not self.obj:
            raise FaultSpecError(f"Disappear needs an object and a step >= 0, got {self!r}")
        _check_count(self.count)

    def start(self, episode: str) -> FaultRun:
        return _OnceRun(self.step, self.count, Injection(vanish=(key(self.obj),)))


@dataclass
class _OnceRun:
    at: int
    count: Count
    injection: Injection
    fired: bool = False

    def before_step(self, context: StepContext) -> Injection | None:
        if self.fired or context.counter(self.count) < self.at:
            return None
        self.fired = True
        return self.injection


@dataclass(frozen=True)
class RandomFailures:
    rate: float
    seed: int | str = 0
    reason: str = "random injected failure"

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise FaultSpecError(f"failure rate must be within [0, 1], got {self.rate}")

    def start(self, episode: str) -> FaultRun:
        return _RandomRun(self, random.Random(f"{self.seed}:{episode}"))


@dataclass
class _RandomRun:
    spec: RandomFailures
    rng: random.Random

    def before_step(self, context: StepContext) -> Injection | None:
        draw = self.rng.random()  # always draw: the stream must not depend on other faults
        if draw < self.spec.rate:
            return Injection(fail=True, reason=self.spec.reason)
        return None


@dataclass(frozen=True)
class Faults:
    specs: tuple[Any, ...] = ()

    def start(self, episode: str) -> FaultRun:
        return _ComposedRun([spec.start(episode) for spec in self.specs])

    def vanishing(self) -> tuple[str, ...]:
        """The objects the specs make vanish, as written, for an environment to check that
        its world has them."""
        return tuple(spec.obj for spec in self.specs if isinstance(spec, Disappear))


@dataclass
class _ComposedRun:
    runs: list[FaultRun] = field(default_factory=list)

    def before_step(self, context: StepContext) -> Injection | None:
        answers = [run.before_step(context) for run in self.runs]
        vanish = tuple(obj for a in answers if a for obj in a.vanish)
        failure = next((a for a in answers if a and a.fail), None)
        if failure is None and not vanish:
            return None
        if failure is None:
            return Injection(vanish=vanish)
        return Injection(fail=True, reason=failure.reason, code=failure.code, vanish=vanish)


def compose(faults: Sequence[Any] | Any | None) -> Faults:
    """Normalise None / one spec / a sequence of specs (or spec strings) into `Faults`."""
    if faults is None:
        return Faults(())
    if isinstance(faults, Faults):
        return faults
    if isinstance(faults, str) or not isinstance(faults, Sequence):
        faults = [faults]
    specs = tuple(parse_fault(f) if isinstance(f, str) else f for f in faults)
    for spec in specs:
        if not callable(getattr(spec, "start", None)):
            raise FaultSpecError(f"not a fault spec: {spec!r}")
    return Faults(specs)


def from_task(fail_injection: Mapping[str, Any] | None) -> Faults:
    """The reference harness's injection for a task (`{"at_step", "failure_reason"}`), if any."""
    if not fail_injection or fail_injection.get("at_step") is None:
        return Faults(())
    return Faults((FailAt(int(fail_injection["at_step"]),
                          str(fail_injection.get("failure_reason") or
                              "Injected mid-execution failure"), count="succeeded"),))


def parse_fault(spec: str) -> Fault:
    """Read `fail@K[:reason]`, `fail-after@K[:reason]` (counts succeeded steps),
    `random:RATE[:seed=S][:reason]`, `vanish:OBJECT@K`."""
    text = spec.strip()
    try:
        if text.startswith(("fail@", "fail-after@")):
            head, _, reason = text.partition(":")
            count: Count = "succeeded" if head.startswith("fail-after@") else "attempted"
            return FailAt(int(head.split("@", 1)[1]), reason.strip(), count)
        if text.startswith("random:"):
            parts = text.split(":")[1:]
            rate = float(parts[0])
            seed: int | str = 0
            reason = "random injected failure"
            for part in parts[1:]:
                if part.startswith("seed="):
                    value = part[5:]
                    seed = int(value) if value.lstrip("-").isdigit() else value
                elif part:
                    reason = part
            return RandomFailures(rate, seed, reason)
        if text.startswith("vanish:"):
            obj, _, at = text[len("vanish:"):].rpartition("@")
            return Disappear(obj.strip(), int(at))
    except (ValueError, IndexError) as error:
        raise FaultSpecError(f"cannot read fault spec {spec!r}: {error}") from error
    raise FaultSpecError(f"cannot read fault spec {spec!r}: expected fail@K[:reason], "
                         "fail-after@K[:reason], random:RATE[:seed=S][:reason] or vanish:OBJECT@K")
