"""Steps as the tests write them, text or JSON, read into the program's one step type where they
enter: an environment takes `PlanStep`s only (`pddl.plans.step_from_json`, `step_from_text`)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sage_pddl.pddl.model import PlanStep
from sage_pddl.pddl.plans import step_from_json, step_from_text


def as_step(value: PlanStep | Mapping[str, Any] | str) -> PlanStep:
    """`value` as a `PlanStep`: a PlanStep as it is, a JSON step or one step's text read."""
    if isinstance(value, PlanStep):
        return value
    if isinstance(value, Mapping):
        return step_from_json(value)
    return step_from_text(value)


def as_steps(values: Any) -> list[PlanStep]:
    """Each of `values` `as_step`."""
    return [as_step(value) for value in values]
