"""The induction report: per action its support, outcomes, in-sample accuracy, the evidence
for each learned literal, the failures left unexplained and the effects not learned."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


def _rate(value: float | None) -> str:
    return "none (no evidence)" if value is None else f"{value:.3f}"


@dataclass(frozen=True)
class Example:
    """A transition quoted in the report."""

    task: str
    episode: int
    step: int
    text: str
    code: str | None

    def __str__(self) -> str:
        return f"{self.task} ep{self.episode} step {self.step}: {self.text} [{self.code}]"



@dataclass(frozen=True)
class Evidence:
    """What a learned precondition literal rests on: the successes where its atom was observed
    and the literal held, those where the atom was not observed, and the failures where it was
    observed false (which it explains)."""

    literal: str
    held: int
    observed: int
    unobserved: int
    explains: int

    def __str__(self) -> str:
        hidden = f" ({self.unobserved} not observed)" if self.unobserved else ""
        return (f"{self.literal}: held in {self.held} of {self.observed} successes where "
                f"observed{hidden}; false in {self.explains} failure(s)")



@dataclass(frozen=True)
class ActionReport:
    name: str
    arity: int
    successes: int
    failures: int
    excluded: int
    accuracy: float | None
    """In-sample accuracy; None for an action with no evidence (never learned)."""
    preconditions: tuple[str, ...]
    effects: tuple[str, ...]
    unexplained_failures: int
    unexplained_examples: tuple[Example, ...] = ()
    contradicting_successes: int = 0
    effect_issues: tuple[str, ...] = ()
    static_candidates: tuple[str, ...] = ()
    in_domain: bool = True
    evidence: tuple[Evidence, ...] = ()
    conservative: bool = False
    """Too few successes to generalise from: its preconditions are every literal that held in
    all of them (safe), not the few that explain the failures."""

    @property
    def support(self) -> int:
        return self.successes

    def to_json(self) -> dict:
        return {"action": self.name, "arity": self.arity, "support": self.successes,
                "successes": self.successes, "failures": self.failures,
                "excluded": self.excluded,
                "accuracy": None if self.accuracy is None else round(self.accuracy, 4),
                "preconditions": list(self.preconditions), "effects": list(self.effects),
                "unexplained_failures": self.unexplained_failures,
                "unexplained_examples": [str(e) for e in self.unexplained_examples],
                "contradicting_successes": self.contradicting_successes,
                "effect_issues": list(self.effect_issues),
                "static_candidates": list(self.static_candidates),
                "in_domain": self.in_domain, "conservative": self.conservative,
                "evidence": [{"literal": e.literal, "held": e.held, "observed": e.observed,
                              "unobserved": e.unobserved, "explains": e.explains}
                             for e in self.evidence]}


@dataclass(frozen=True)
class InductionReport:
    transitions: int
    files: tuple[str, ...]
    actions: tuple[ActionReport, ...]
    static_predicates: tuple[str, ...]
    settings: Mapping[str, object] = field(default_factory=dict)

    @property
    def not_learned(self) -> tuple[str, ...]:
        """`name/arity` of each action the logs cannot teach: no logged success (or, for an
        action of the domain named by `expected`, no logged step at all)."""
        return tuple(f"{a.name}/{a.arity}" for a in self.actions if not a.in_domain)

    @property
    def accuracy(self) -> float | None:
        """In-sample accuracy over the learned actions' transitions; None when none has any."""
        scored = [a for a in self.actions if a.accuracy is not None]
        used = sum(a.successes + a.failures for a in scored)
        right = sum((a.accuracy or 0.0) * (a.successes + a.failures) for a in scored)
        return right / used if used else None

    def to_json(self) -> dict:
        return {"transitions": self.transitions, "files": list(self.files),
                "accuracy": None if self.accuracy is None else round(self.accuracy, 4),
                "settings": dict(self.settings),
                "static_predicates": list(self.static_predicates),
                "actions": [a.to_json() for a in self.actions]}

    def render(self) -> str:
        learned = sum(a.in_domain for a in self.actions)
        lines = [f"induced from {self.transitions} transitions in {len(self.files)} file(s): "
                 f"{learned} action(s) learned, {len(self.not_learned)} not; in-sample "
                 f"accuracy {_rate(self.accuracy)}"]
        if self.not_learned:
            lines.append("NOT LEARNED (no successful step logged): " + ", ".join(self.not_learned))
        for a in self.actions:
            state = ("  (NOT LEARNED: never succeeded)" if not a.in_domain
                     else "  (CONSERVATIVE: too few successes to generalise)"
                     if a.conservative else "")
            lines.append(f"{a.name}/{a.arity}: support {a.successes}, failures {a.failures}"
                         f" (+{a.excluded} excluded), accuracy {_rate(a.accuracy)}, "
                         f"unexplained failures {a.unexplained_failures}{state}")
            if a.preconditions:
                lines.append("    pre: " + " ".join(a.preconditions))
            for evidence in a.evidence:
                lines.append(f"      {evidence}")
            if a.effects:
                lines.append("    eff: " + " ".join(a.effects))
            for issue in a.effect_issues:
                lines.append("    effect not learned: " + issue)
            for example in a.unexplained_examples:
                lines.append(f"    unexplained: {example}")
            if a.contradicting_successes:
                lines.append(f"    successes violating the preconditions (noise): "
                             f"{a.contradicting_successes}")
        return "\n".join(lines)
