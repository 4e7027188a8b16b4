"""The symbolic environment: executes plan steps against a problem's TRUE state with the gate.

`reset(problem)` compiles the gate from the problem and its domain (`compile_gate`; or shares
the one given, `gate=`) and takes
the problem's :init as the true state, plus `hidden` facts the planner does not see (what is
inside a closed fridge) or a whole `true_state` override. A step succeeds iff the gate accepts it
from the true state (`ground` then `applicable`); its effects are then applied (`apply`). A
rejected step changes nothing and its message and code are the gate's typed violation (for
example `pick/requires/reachable`, `unknown-object`). No randomness: the same problem, options and
steps always give the same results; failures are only added on purpose by `faults`.

Partial view (the Observation). An object is *concealed* when the true state holds a containment
fact `(in ?o ?c)` (predicates named by `ObservationModel.contain`, object first) and the container
`?c` is closed or itself concealed. A container is closed when a closed-predicate fact holds for it
(`(closed ?c)`), or when it is openable (`(openable ?c)`) and no open-predicate fact (`(opened ?c)`,
`(open ?c)`, ...) holds; an object with a unary `(enclosed ?o)` fact is concealed too. Domains
without such predicates are fully observable. The robot sees:

- `visible_objects`: every problem object and domain constant not concealed (and not vanished);
- `facts`: every true fact whose arguments are all visible (0-ary facts included);
- `text`: `Holding: <objects|nothing>` (when the domain has a holding predicate), `Visible objects:
  ...`, then one line per visible object listing its *dynamic* facts (predicates some action
  changes), e.g. `Fridge: opened`, `Apple: in Fridge`, and an `Also true:` line for 0-ary facts. Static
  facts (types, affordances such as `(openable fridge)`) stay in `facts` but not in the text.

Faults (`sage_pddl.env.faults`) run before each step; a vanished object's facts leave the true
state and any later step that names it fails with code `object-gone`. If a `log` path is given,
every step appends a transition record (`sage_pddl.env.transitions`).

`GatedEnv` is what this environment shares with the AI2-THOR backend (`thor.ai2thor_backend`),
which reads steps the same way and only executes them differently: the episode counters, the
step prologue (number the attempt, read the step, run the faults, refuse a vanished object,
ground the step with the gate; each failure there has the same message and code in both) and
the transition record of every step. A subclass says how a grounded step executes (`_execute`),
how an object vanishes (`_vanish`) and what the robot observes (`observe`).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sage_pddl.gate import GroundAction, PlanChecker, compile_gate
from sage_pddl.pddl.model import Domain, PlanStep, Problem, key
from sage_pddl.pddl.vocabulary import vocabulary

from .base import EnvError, Fact, Observation, StepResult, format_fact, parse_facts
from .episode import GatedEnv
from .faults import compose


@dataclass(frozen=True)
class ObservationModel:
    """Predicate names (case-insensitive) that define what the robot can see."""

    contain: tuple[str, ...] = ("in", "inside", "in-receptacle", "inreceptacle", "contained-in")
    opened: tuple[str, ...] = ("opened", "open", "is-open", "isopen")
    closed: tuple[str, ...] = ("closed", "is-closed", "isclosed")
    openable: tuple[str, ...] = ("openable",)
    enclosed: tuple[str, ...] = ("enclosed",)  # unary: the object is hidden, whatever holds it
    holding: tuple[str, ...] = ("holding", "held", "carrying", "in-hand")


class SymbolicEnv(GatedEnv):
    """See the module docstring. Options may be given at construction and overridden at reset."""

    name = "symbolic"

    def __init__(self, domain: Domain | str | None = None, *, hidden: Iterable[Any] | None = None,
                 true_state: Iterable[Any] | None = None, faults: Any = None,
                 log: str | Path | None = None, observation: ObservationModel | None = None,
                 domains_dirs: Iterable[str | Path] | None = None, task: str | None = None):
        super().__init__(log=log, domains_dirs=domains_dirs, faults=faults)
        self._default_domain = domain
        self._default_hidden = hidden
        self._default_true_state = true_state
        self._default_task = task
        self.model = observation or ObservationModel()

    # --- episode ---------------------------------------------------------------------------

    def reset(self, problem: Problem, *, domain: Domain | str | None = None,
              hidden: Iterable[Any] | None = None, true_state: Iterable[Any] | None = None,
              faults: Any = None, task: str | None = None,
              scene: str | None = None, gate: PlanChecker | None = None) -> Observation:
        """Start an episode of `problem`. `task` and `scene` are accepted for the common reset
        signature and not used: the problem is the whole world here. `gate`: a gate compiled
        from the domain and `problem` to share (the planner's), else one is compiled."""
        domain = self._resolve_domain(domain or self._default_domain, problem)
        gate = self._given_gate(gate, domain, problem)
        if gate is None:
            # the same episode again (seeds, retries): reuse the compiled gate
            same = self._gate is not None and problem is self.problem and domain is self.domain
            gate = self.gate if same else compile_gate(domain, problem)
        spelling = self._build_spelling(domain, problem)
        override = true_state if true_state is not None else self._default_true_state
        state = parse_facts(override) if override is not None else frozenset(gate.initial_state)
        extra = parse_facts(hidden if hidden is not None else self._default_hidden)
        _check_objects(state, spelling, "true-state")
        _check_objects(extra, spelling, "hidden")
        fault_set = compose(faults if faults is not None else self._default_faults)
        unknown = [name for name in fault_set.vanishing() if key(name) not in spelling]
        if unknown:  # it would vanish nothing, and the episode would run as if unfaulted
            raise EnvError(f"a vanish fault names objects the problem does not declare: "
                           f"{', '.join(unknown)}")
        # everything is valid: only now replace the previous episode
        self.domain, self.problem, self.gate, self._spelling = domain, problem, gate, spelling
        self._state = state | extra
        self._dynamic = vocabulary(self.domain).effect_predicates
        self._begin_episode(task or self._default_task or problem.name, fault_set)
        return self.observe()

    def _execute(self, plan_step: PlanStep, pre: frozenset[Fact], ground: GroundAction
                 ) -> StepResult:
        violation = self.gate.applicable(pre, ground, plan_step.index, plan_step.text)
        if violation is not None:
            return self._finish(plan_step, pre, False, violation.message, violation.code)
        self._state = frozenset(self.gate.apply(pre, ground))
        self._succeeded += 1
        return self._finish(plan_step, pre, True, "ok", None)

    # --- observation -----------------------------------------------------------------------

    def observe(self) -> Observation:
        """The robot's current partial view (see the module docstring)."""
        self._require_episode()
        visible = self.visible_objects()
        facts = tuple(sorted(f for f in self._state if all(a in visible for a in f[1:])))
        names = tuple(sorted((self._spelling.get(o, o) for o in visible), key=str.lower))
        return Observation(self._render(visible, facts, names), names, facts)

    def visible_objects(self) -> frozenset[str]:
        """Lower-case names of the objects the robot can see now."""
        self._require_episode()
        return frozenset(self._spelling) - self._gone - self._concealed()

    def describe_objects(self) -> list[dict]:
        """Every object with its types, visibility and true facts (the harness's view)."""
        self._require_episode()
        visible = self.visible_objects()
        types = {key(t.name): list(t.types) for t in (*self.domain.constants, *self.problem.objects)}
        return [{"name": self._spelling[o], "types": types.get(o, []), "visible": o in visible,
                 "gone": o in self._gone,
                 "facts": sorted(format_fact(f) for f in self._state if o in f[1:])}
                for o in sorted(self._spelling)]

    def _concealed(self) -> frozenset[str]:
        m = self.model
        contain, opened, closed, openable = (frozenset(map(key, names)) for names in
                                             (m.contain, m.opened, m.closed, m.openable))
        is_open = {f[1] for f in self._state if f[0] in opened and len(f) == 2}
        is_closed = {f[1] for f in self._state if len(f) == 2 and (
            f[0] in closed or (f[0] in openable and f[1] not in is_open))}
        inside = [(f[1], f[2]) for f in self._state if f[0] in contain and len(f) == 3]
        enclosed = frozenset(map(key, m.enclosed))
        concealed: set[str] = {f[1] for f in self._state if f[0] in enclosed and len(f) == 2}
        changed = True
        while changed:  # containers inside closed containers conceal their contents too
            changed = False
            for obj, container in inside:
                if obj not in concealed and (container in is_closed or container in concealed):
                    concealed.add(obj)
                    changed = True
        return frozenset(concealed)

    def _render(self, visible: frozenset[str], facts: tuple[Fact, ...],
                names: tuple[str, ...]) -> str:
        spell = self._spelling.get
        holding_preds = frozenset(map(key, self.model.holding))
        lines = []
        if any(key(p.name) in holding_preds for p in self.domain.predicates):
            held = sorted(spell(f[-1], f[-1]) for f in facts if f[0] in holding_preds and len(f) > 1)
            lines.append("Holding: " + (", ".join(held) if held else "nothing"))
        lines.append("Visible objects: " + (", ".join(names) if names else "none"))
        per_object: dict[str, list[str]] = {}
        nullary: list[str] = []
        for fact in facts:
            if fact[0] not in self._dynamic or fact[0] in holding_preds:
                continue
            if len(fact) == 1:
                nullary.append(fact[0])
            else:
                words = " ".join([fact[0], *(spell(a, a) for a in fact[2:])])
                per_object.setdefault(fact[1], []).append(words)
        for obj in sorted(per_object, key=lambda o: str(spell(o, o)).lower()):
            lines.append(f"{spell(obj, obj)}: {', '.join(per_object[obj])}")
        if nullary:
            lines.append("Also true: " + ", ".join(nullary))
        return "\n".join(lines)

    # --- helpers ---------------------------------------------------------------------------

    def _vanish(self, objects: Iterable[str]) -> None:
        gone = {key(o) for o in objects}
        self._gone |= gone
        self._state = frozenset(f for f in self._state if not gone.intersection(f[1:]))


def _check_objects(facts: frozenset[Fact], spelling: dict[str, str], what: str) -> None:
    unknown = sorted({a for f in facts for a in f[1:] if a not in spelling})
    if unknown:
        raise EnvError(f"{what} facts name objects the problem does not declare: "
                       f"{', '.join(unknown)}")
