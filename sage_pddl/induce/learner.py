"""Learn a PDDL domain from logged transitions (state, action, success, next state).

Semantics
---------
Transitions are grouped into *action schemas*: the action word (case-insensitive, aliases mapped
through an optional domain) and its number of arguments. Objects are lifted to parameters by
position (`?x ?y ?z`, then `?x4`...); facts whose arguments are all step arguments become lifted
literals (a fact naming the same object twice gives every lifting). Negative literals range over
every predicate observed in the logs (with its arity) applied to the parameters.

Preconditions. A candidate is a literal (positive or negated) over the parameters, or a 0-ary
fact, that holds in every successful transition where its atom was observed. From those, a
greedy set cover keeps the literals needed to explain the failures: each chosen literal is false
in as many not yet explained failures as possible (at least `min_support` of them), ties going
to the literal that holds in more successes, then to positive literals, then by name; a final
pass drops any chosen literal whose failures stay explained without it. A failure that no
candidate explains is reported as *unexplained* (it failed for a reason the logged state does not
show, or the data is noisy). Failures that are not about preconditions at all (unknown objects or
actions, wrong arity, injected failures, vanished objects) are excluded and counted.

Label noise. `noise` is the rate at which logged outcomes may be mislabelled. Per action, the
share of its successes that may be mislabelled failures is bounded (`mislabelled_successes`: a
rare outcome is swamped by flips of the common one); a candidate must hold in all but that share
of the successes, and a pick's gain is the failures it newly explains less the successes it newly
contradicts, so a literal is kept only when it explains more than it contradicts.

Partial observability. A transition's `unknown` facts were not observed before the step: a
literal about one of them neither holds nor fails there (it explains no failure, contradicts no
success, and `predict` does not hold it against a step), and such a fact is not an effect.
The report gives each learned literal's evidence: the successes where it was observed and held,
those where it was not observed, and the failures it explains.

A unary predicate that never changes in any transition (a type or static affordance such as
`(pickupable ?x)`) is treated like any other literal: it becomes a precondition when the
failures require it; `keep_static=True` also keeps every static unary literal that holds in all
successes (types the data never contradicts). With `types_from`, the domain is written in that
domain's types, predicate declarations and still-valid annotations (`typed_domain`).

Effects. For each lifted fact that some success adds (deletes), the successes are split into
positives (the fact was added / deleted), negatives (it is false / true afterwards) and
indifferent ones (it already held / was already false). No negative: an unconditional effect.
Otherwise a condition is learned by sequential covering over the pre-state literals: the most
specific description of a positive, generalised by intersecting with further positives while no
negative satisfies it, then pruned to the literals needed to exclude the negatives. The effect is
written `(when C e)` only when one such clause C covers every change: a condition needed to
explain the data. When it takes several clauses (the changes share no condition over the
arguments, as a grab that fills whichever hand is free), the effect is reported as not learned
rather than written as a union of incidental conditions. Facts naming one object that is not
an argument are lifted with an extra variable `?o` and become universal effects
`(forall (?o) (when C(?o) e(?o)))` learned the same way over all (transition, object) pairs,
and bounded by their anchor: the relations between ?o and the arguments that held before
every such change (`(inside ?o ?x)` for what an Open un-encloses), since the data says nothing
of objects not so related. A change that no consistent condition explains (the same
description both with and without the change), or that names two non-argument objects, is
reported, never guessed.

Actions that never succeeded have no learnable effects and are left out of the domain (and
reported). In-sample accuracy is the fraction of a schema's used transitions whose success the
learned precondition predicts.
"""
from __future__ import annotations

import dataclasses
import itertools
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from sage_pddl.env.transitions import Transition
from sage_pddl.pddl import write_formula
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import (
    Action,
    And,
    Atom,
    Domain,
    Exists,
    ForallEffect,
    Not,
    PredicateDef,
    Typed,
    Variable,
    When,
    key,
)
from sage_pddl.pddl.vocabulary import canonical_sexpr, name_key, split_reason

# Failure codes that say nothing about preconditions over the logged state.
EXCLUDED_CODES = frozenset({
    "unknown-action", "unknown-object", "wrong-arity", "type-mismatch", "unparsable-step",
    "injected-failure", "object-gone", "simulator-failure",
})

EXTRA = -1  # the index of the universally quantified variable ?o in lifted atoms

LiftedAtom = tuple[str, tuple[int, ...]]          # (predicate, variable indices)
Literal = tuple[bool, str, tuple[int, ...]]       # (positive, predicate, variable indices)
Fact = tuple[str, ...]


def variable_names(arity: int) -> tuple[str, ...]:
    if arity <= 3:
        return ("x", "y", "z")[:arity]
    return tuple(f"x{i + 1}" for i in range(arity))


def literal_text(literal: Literal, names: Sequence[str]) -> str:
    positive, predicate, args = literal
    words = " ".join([predicate, *(("?o" if i == EXTRA else "?" + names[i]) for i in args)])
    return f"({words})" if positive else f"(not ({words}))"


# --- lifting ---------------------------------------------------------------------------------

def _positions(obj: str, binding: Mapping[str, tuple[int, ...]]) -> tuple[int, ...]:
    return binding.get(obj, ())


def lift_state(state: Iterable[Fact], binding: Mapping[str, tuple[int, ...]]) -> frozenset[LiftedAtom]:
    """The lifted atoms (over the variables in `binding`) that a ground state makes true."""
    lifted: set[LiftedAtom] = set()
    for fact in state:
        choices = [_positions(obj, binding) for obj in fact[1:]]
        if all(choices):
            for combo in itertools.product(*choices):
                lifted.add((fact[0], combo))
    return frozenset(lifted)


def lift_with_some_object(state: Iterable[Fact], binding: Mapping[str, tuple[int, ...]]
                          ) -> frozenset[LiftedAtom]:
    """`lift_state` plus, for each fact naming exactly one object outside `binding`, its atom
    with that object lifted to ?o: read existentially, "some other object is so related"
    (`(inside_room ?o ?y)`: ?y contains something, so it is a room)."""
    lifted: set[LiftedAtom] = set()
    for fact in state:
        outside = sum(obj not in binding for obj in fact[1:])
        if outside > 1:
            continue
        choices = [binding.get(obj, (EXTRA,)) for obj in fact[1:]]
        for combo in itertools.product(*choices):
            lifted.add((fact[0], combo))
    return frozenset(lifted)


def arg_binding(args: Sequence[str]) -> dict[str, tuple[int, ...]]:
    binding: dict[str, list[int]] = defaultdict(list)
    for index, obj in enumerate(args):
        binding[obj].append(index)
    return {obj: tuple(indices) for obj, indices in binding.items()}


def universe(arities: Mapping[str, int], variables: Sequence[int],
             max_extra: int | None = None) -> frozenset[LiftedAtom]:
    """Every lifted atom of the observed predicates over `variables` (with `max_extra`, those
    naming ?o at most that many times)."""
    atoms = set()
    for predicate, arity in arities.items():
        for combo in itertools.product(variables, repeat=arity):
            if max_extra is None or combo.count(EXTRA) <= max_extra:
                atoms.add((predicate, combo))
    return frozenset(atoms)


def _ground(literal: Literal, args: Sequence[str], extra: str) -> Fact:
    """The ground fact of a lifted literal's atom: positions read in `args`, ?o as `extra`."""
    return (literal[1], *(extra if i == EXTRA else args[i] for i in literal[2]))


def holds(literal: Literal, true_atoms: frozenset[LiftedAtom]) -> bool:
    return ((literal[1], literal[2]) in true_atoms) == literal[0]


# --- sequential covering (conditions of effects) ---------------------------------------------

def _description(true_atoms: frozenset[LiftedAtom], atoms: frozenset[LiftedAtom]) -> frozenset[Literal]:
    return frozenset([(True, p, a) for p, a in true_atoms if (p, a) in atoms]
                     + [(False, p, a) for p, a in atoms - true_atoms])


def _split(clause: Iterable[Literal]) -> tuple[frozenset[LiftedAtom], frozenset[LiftedAtom]]:
    clause = list(clause)
    return (frozenset((lit[1], lit[2]) for lit in clause if lit[0]),
            frozenset((lit[1], lit[2]) for lit in clause if not lit[0]))


def _satisfies(true_atoms: frozenset[LiftedAtom], clause: Iterable[Literal]) -> bool:
    must, must_not = _split(clause)
    return must <= true_atoms and must_not.isdisjoint(true_atoms)


def _any_satisfies(instances: Sequence[frozenset[LiftedAtom]], clause: Iterable[Literal]) -> bool:
    must, must_not = _split(clause)
    return any(must <= n and must_not.isdisjoint(n) for n in instances)


def _literal_order(literal: Literal) -> tuple:
    return (not literal[0], literal[1], literal[2])


def greedy_cover(candidates: Iterable[Literal], to_explain: Sequence[frozenset[LiftedAtom]],
                 weights: Sequence[int] | None = None, min_support: int = 1,
                 preference: Mapping[Literal, float] | None = None,
                 hidden: Sequence[frozenset[LiftedAtom]] | None = None,
                 costs: Mapping[Literal, frozenset[int]] | None = None
                 ) -> tuple[list[Literal], list[int]]:
    """Choose literals until each described instance violates one; return (chosen, uncovered).
    An instance violates a literal only where its atom was observed (`hidden`: the atoms each
    instance did not observe). With `costs` (per candidate, the instances of another set, such
    as the successes, that it contradicts), a pick's gain is the instances it newly explains
    less those it newly contradicts; each pick must gain at least `min_support`."""
    weights = list(weights) if weights is not None else [1] * len(to_explain)
    candidates = sorted(set(candidates), key=_literal_order)
    unseen = list(hidden) if hidden is not None else [frozenset()] * len(to_explain)
    violates = {c: {i for i, atoms in enumerate(to_explain)
                    if (c[1], c[2]) not in unseen[i] and not holds(c, atoms)}
                for c in candidates}
    costs = costs or {}
    uncovered = set(range(len(to_explain)))
    contradicted: set[int] = set()
    chosen: list[Literal] = []
    preference = preference or {}
    while uncovered:
        best, best_key = None, None
        for c in candidates:
            gain = sum(weights[i] for i in violates[c] & uncovered)
            gain -= len(costs.get(c, frozenset()) - contradicted)
            if gain <= 0:
                continue
            rank = (gain, preference.get(c, 0.0), c[0])
            if best_key is None or rank > best_key:
                best, best_key = c, rank
        if best is None or best_key is None or best_key[0] < min_support:
            break
        chosen.append(best)
        uncovered -= violates[best]
        contradicted |= costs.get(best, frozenset())
    # drop literals made redundant by later choices
    for c in list(reversed(chosen)):
        rest = [d for d in chosen if d != c]
        explained = set().union(*(violates[d] for d in rest)) if rest else set()
        if explained >= set(range(len(to_explain))) - uncovered:
            chosen = rest
    return chosen, sorted(uncovered)


def learn_conditions(positives: Sequence[frozenset[LiftedAtom]],
                     negatives: Sequence[frozenset[LiftedAtom]], atoms: frozenset[LiftedAtom],
                     min_support: int = 1) -> tuple[list[tuple[Literal, ...]], int]:
    """Clauses (conjunctions) covering the positives and excluding every negative.

    Returns (clauses, number of positives left unexplained). Identical descriptions are merged
    first: the instance counts become weights.
    """
    pos_counts = Counter(positives)
    neg_counts = Counter(negatives)
    negs = list(neg_counts)
    remaining = sorted(pos_counts, key=lambda a: (-pos_counts[a], sorted(a)))
    clauses: list[tuple[Literal, ...]] = []
    unexplained = 0
    while remaining:
        seed = remaining[0]
        clause = _description(seed, atoms)
        if _any_satisfies(negs, clause):
            unexplained += pos_counts[seed]
            remaining = remaining[1:]
            continue
        for other in remaining[1:]:
            trial = clause & _description(other, atoms)
            if not _any_satisfies(negs, trial):
                clause = trial
        must, must_not = _split(clause)
        covered = [p for p in remaining if must <= p and must_not.isdisjoint(p)]
        support = sum(pos_counts[p] for p in covered)
        remaining = [p for p in remaining if p not in covered]
        if support < min_support:
            unexplained += support
            continue
        # the fewest literals that still exclude every negative
        chosen, left = greedy_cover(clause, negs, [neg_counts[n] for n in negs])
        assert not left  # the clause excludes every negative, so its literals can
        clauses.append(tuple(sorted(chosen, key=_literal_order)))
    return clauses, unexplained


# --- results ---------------------------------------------------------------------------------

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
class LearnedEffect:
    """One learned effect: `literal` (over parameters and maybe ?o), which happens when every
    literal of `condition` holds and, if there is an `exception`, not all of its literals do
    (`(when (and C (not (and X))) e)`). In a universal effect ?o is the quantified object; in
    the conditions of any other effect, "some object other than the arguments"."""

    literal: Literal
    condition: tuple[Literal, ...] = ()
    universal: bool = False
    support: int = 0
    exception: tuple[Literal, ...] = ()

    def fires(self, true_atoms: frozenset[LiftedAtom]) -> bool:
        return _satisfies(true_atoms, self.condition) and not (
            self.exception and _satisfies(true_atoms, self.exception))


@dataclass(frozen=True)
class ActionReport:
    name: str
    arity: int
    successes: int
    failures: int
    excluded: int
    accuracy: float
    preconditions: tuple[str, ...]
    effects: tuple[str, ...]
    unexplained_failures: int
    unexplained_examples: tuple[Example, ...] = ()
    contradicting_successes: int = 0
    effect_issues: tuple[str, ...] = ()
    static_candidates: tuple[str, ...] = ()
    in_domain: bool = True
    evidence: tuple[Evidence, ...] = ()

    @property
    def support(self) -> int:
        return self.successes

    def to_json(self) -> dict:
        return {"action": self.name, "arity": self.arity, "support": self.successes,
                "successes": self.successes, "failures": self.failures,
                "excluded": self.excluded, "accuracy": round(self.accuracy, 4),
                "preconditions": list(self.preconditions), "effects": list(self.effects),
                "unexplained_failures": self.unexplained_failures,
                "unexplained_examples": [str(e) for e in self.unexplained_examples],
                "contradicting_successes": self.contradicting_successes,
                "effect_issues": list(self.effect_issues),
                "static_candidates": list(self.static_candidates),
                "in_domain": self.in_domain,
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
    def accuracy(self) -> float:
        used = sum(a.successes + a.failures for a in self.actions)
        right = sum(a.accuracy * (a.successes + a.failures) for a in self.actions)
        return right / used if used else 1.0

    def to_json(self) -> dict:
        return {"transitions": self.transitions, "files": list(self.files),
                "accuracy": round(self.accuracy, 4), "settings": dict(self.settings),
                "static_predicates": list(self.static_predicates),
                "actions": [a.to_json() for a in self.actions]}

    def render(self) -> str:
        learned = sum(a.in_domain for a in self.actions)
        lines = [f"induced from {self.transitions} transitions in {len(self.files)} file(s): "
                 f"{learned} action(s) learned, {len(self.not_learned)} not; in-sample "
                 f"accuracy {self.accuracy:.3f}"]
        if self.not_learned:
            lines.append("NOT LEARNED (no successful step logged): " + ", ".join(self.not_learned))
        for a in self.actions:
            state = "" if a.in_domain else "  (NOT LEARNED: never succeeded)"
            lines.append(f"{a.name}/{a.arity}: support {a.successes}, failures {a.failures}"
                         f" (+{a.excluded} excluded), accuracy {a.accuracy:.3f}, "
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


@dataclass(frozen=True)
class LearnedAction:
    """A learned action schema: enough to predict success and to write PDDL."""

    name: str
    arity: int
    preconditions: tuple[Literal, ...]
    effects: tuple[LearnedEffect, ...]

    def applicable(self, state: Iterable[Fact], args: Sequence[str],
                   unknown: Iterable[Fact] = ()) -> bool:
        """Whether every precondition literal holds in `state`, or is about a fact in
        `unknown` (not observed, so it contradicts nothing)."""
        binding = arg_binding([key(a) for a in args])
        true_atoms, unseen = lift_state(state, binding), lift_state(unknown, binding)
        return all(holds(literal, true_atoms) or (literal[1], literal[2]) in unseen
                   for literal in self.preconditions)

    def changes(self, state: Iterable[Fact], args: Sequence[str]
                ) -> tuple[frozenset[Fact], frozenset[Fact]]:
        """(added, deleted): the facts of `state` that the step makes false and the facts it
        makes true, when the learned effects run there: each effect's condition read in
        `state`, a universal effect ranging over the objects that `state` mentions and the
        arguments do not, the next state `(state - deletes) | adds` as in PDDL."""
        state = frozenset(state)
        names = [key(a) for a in args]
        binding = arg_binding(names)
        added: set[Fact] = set()
        deleted: set[Fact] = set()
        if any(not e.universal for e in self.effects):
            true_atoms = lift_with_some_object(state, binding)
            for effect in self.effects:
                if not effect.universal and effect.fires(true_atoms):
                    (added if effect.literal[0] else deleted).add(
                        _ground(effect.literal, names, ""))
        if any(e.universal for e in self.effects):
            others = sorted({obj for fact in state for obj in fact[1:]} - set(binding))
            for obj in others:
                extended = {**binding, obj: (EXTRA,)}
                true_atoms = lift_state(state, extended)
                for effect in self.effects:
                    if effect.universal and effect.fires(true_atoms):
                        (added if effect.literal[0] else deleted).add(
                            _ground(effect.literal, names, obj))
        after = (state - deleted) | added
        return after - state, state - after


@dataclass(frozen=True)
class InductionResult:
    domain: Domain
    report: InductionReport
    actions: Mapping[tuple[str, int], LearnedAction] = field(default_factory=dict)
    aliases: Mapping[str, str] = field(default_factory=dict)

    def schema_key(self, action: str, arity: int) -> tuple[str, int]:
        name = self.aliases.get(name_key(action), action)
        return (key(name), arity)

    def predict(self, transition: Transition) -> bool | None:
        """Whether the learned preconditions accept the transition's step in its pre-state;
        None when the domain has no action of that name and arity."""
        learned = self.actions.get(self.schema_key(transition.action.action,
                                                   len(transition.action.args)))
        if learned is None:
            return None
        return learned.applicable(transition.pre, transition.action.args, transition.unknown)

    def changes(self, transition: Transition) -> tuple[frozenset[Fact], frozenset[Fact]] | None:
        """(added, deleted) the learned effects predict for the transition's step in its
        pre-state (`LearnedAction.changes`); None when the domain has no such action."""
        learned = self.actions.get(self.schema_key(transition.action.action,
                                                   len(transition.action.args)))
        if learned is None:
            return None
        return learned.changes(transition.pre, transition.action.args)


# --- the learner -----------------------------------------------------------------------------

@dataclass
class _Schema:
    name: str
    arity: int
    successes: list[Transition] = field(default_factory=list)
    failures: list[Transition] = field(default_factory=list)
    excluded: int = 0


def _group(transitions: Iterable[Transition], aliases: Mapping[str, str]):
    schemas: dict[tuple[str, int], _Schema] = {}
    arities: dict[str, int] = {}
    changing: set[str] = set()
    count = 0
    for t in transitions:
        count += 1
        for fact in t.pre | t.post | t.unknown:
            arities.setdefault(fact[0], len(fact) - 1)
        for fact in t.added | t.deleted:
            changing.add(fact[0])
        name = aliases.get(name_key(t.action.action), t.action.action)
        slot = (key(name), len(t.action.args))
        schema = schemas.setdefault(slot, _Schema(name, len(t.action.args)))
        if t.success:
            schema.successes.append(t)
        elif t.code in EXCLUDED_CODES:
            schema.excluded += 1
        else:
            schema.failures.append(t)
    return schemas, arities, changing, count


def _lifted_pre(t: Transition) -> frozenset[LiftedAtom]:
    return lift_state(t.pre, arg_binding([key(a) for a in t.action.args]))


def _lifted_unknown(t: Transition) -> frozenset[LiftedAtom]:
    """The lifted atoms whose truth before the step was not observed."""
    if not t.unknown:
        return frozenset()
    return lift_state(t.unknown, arg_binding([key(a) for a in t.action.args]))


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


def mislabelled_successes(noise: float, successes: int, failures: int) -> float:
    """The share of a schema's logged successes that may be failures mislabelled, when each
    outcome is mislabelled with probability `noise`: the expected flipped failures over the
    logged successes, from the failures the logged counts imply (a rare outcome is swamped by
    flips of the common one), doubled for sampling variation, at least `noise`, at most 0.5."""
    if noise <= 0 or successes == 0:
        return 0.0
    total = successes + failures
    true_failures = min(max((failures - noise * total) / (1.0 - 2.0 * noise), 0.0), total)
    return min(0.5, max(noise, 2.0 * noise * true_failures / successes))


def _learn_preconditions(schema: _Schema, arities: Mapping[str, int], static: set[str],
                         noise: float, min_support: int, keep_static: bool):
    variables = list(range(schema.arity))
    atoms = universe(arities, variables)
    succ = [_lifted_pre(t) for t in schema.successes]
    fail = [_lifted_pre(t) for t in schema.failures]
    succ_hidden = [_lifted_unknown(t) for t in schema.successes]
    fail_hidden = [_lifted_unknown(t) for t in schema.failures]
    support: dict[Literal, int] = {}
    observed: dict[LiftedAtom, int] = {}
    for atom in atoms:
        seen = [s for s, hidden in zip(succ, succ_hidden) if atom not in hidden]
        true_count = sum(atom in s for s in seen)
        observed[atom] = len(seen)
        support[(True, *atom)] = true_count
        support[(False, *atom)] = len(seen) - true_count
    tolerance = mislabelled_successes(noise, len(succ), len(fail))
    candidates = [lit for lit, n in support.items()
                  if n > 0 and n >= (1.0 - tolerance) * observed[(lit[1], lit[2])] - 1e-9]
    costs = None
    if tolerance > 0:  # a candidate may be false in a few successes: weigh them
        costs = {c: frozenset(i for i, (s, hidden) in enumerate(zip(succ, succ_hidden))
                              if (c[1], c[2]) not in hidden and not holds(c, s))
                 for c in candidates}
    chosen, uncovered = greedy_cover(candidates, fail, min_support=min_support,
                                     preference={c: support[c] for c in candidates},
                                     hidden=fail_hidden, costs=costs)
    static_candidates = sorted(
        (c for c in candidates if c[0] and c[1] in static and len(c[2]) == 1
         and support[c] == len(succ) and c not in chosen), key=_literal_order)
    if keep_static:
        chosen = chosen + static_candidates
    chosen = sorted(chosen, key=_literal_order)
    names = variable_names(schema.arity)
    evidence = tuple(
        Evidence(literal_text(c, names), support[c], observed[(c[1], c[2])],
                 len(succ) - observed[(c[1], c[2])],
                 sum(1 for f, hidden in zip(fail, fail_hidden)
                     if (c[1], c[2]) not in hidden and not holds(c, f)))
        for c in chosen)
    return tuple(chosen), uncovered, tuple(static_candidates), succ, fail, evidence


def _effect_instances(schema: _Schema):
    """Per success: (lifted pre over params, lifted post over params, ground objects)."""
    for t in schema.successes:
        args = [key(a) for a in t.action.args]
        yield t, args, arg_binding(args)



def _split_by_change(atom, positive: bool, transitions) -> tuple[list, list]:
    """Pre-states of the (pre, post, unobserved) triples where the effect literal on `atom`
    happened (made true when `positive`, made false otherwise) and of those where it did not
    hold afterwards (so it cannot be an unconditional effect there). A triple where the atom was
    not observed before the step says neither."""
    happened, missed = [], []
    for pre, post, unobserved in transitions:
        if atom in unobserved:
            continue
        before, after = atom in pre, atom in post
        if positive:
            if after and not before:
                happened.append(pre)
            elif not after:
                missed.append(pre)
        elif before and not after:
            happened.append(pre)
        elif after:
            missed.append(pre)
    return happened, missed

def _learn_effects(schema: _Schema, arities: Mapping[str, int], min_support: int):
    variables = list(range(schema.arity))
    effects: list[LearnedEffect] = []
    issues: list[str] = []
    names = variable_names(schema.arity)
    # parameter-level effects
    # conditions over the arguments, and over "some other object" (?o read existentially)
    arg_atoms = universe(arities, [*variables, EXTRA], max_extra=1)
    lifted = []
    adds: set[LiftedAtom] = set()
    dels: set[LiftedAtom] = set()
    extra_adds: set[LiftedAtom] = set()
    extra_dels: set[LiftedAtom] = set()
    two_extra: Counter = Counter()
    for t, _args, binding in _effect_instances(schema):
        pre = lift_state(t.pre, binding)
        post = lift_state(t.post, binding)
        unobserved = lift_state(t.unknown, binding)
        lifted.append((t, binding, pre, post, unobserved, lift_with_some_object(t.pre, binding)))
        adds |= post - pre - unobserved
        dels |= pre - post
        for fact in t.added | t.deleted:
            others = {obj for obj in fact[1:] if obj not in binding}
            if len(others) == 1:
                extended = dict(binding)
                extended[next(iter(others))] = (EXTRA,)
                for atom in lift_state([fact], extended):
                    if EXTRA in atom[1]:
                        (extra_adds if fact in t.added else extra_dels).add(atom)
            elif len(others) > 1:
                two_extra[fact[0]] += 1
    for predicate, count in sorted(two_extra.items()):
        issues.append(f"{count} change(s) of ({predicate} ...) name two or more objects that are "
                      "not arguments")
    for positive, candidates in ((True, adds), (False, dels)):
        for atom in sorted(candidates):
            pos, neg = _split_by_change(atom, positive,
                                        ((some, post, hid) for _t, _b, _pre, post, hid, some in lifted))
            literal = (positive, atom[0], atom[1])
            effects_here, unexplained = _conditional(literal, pos, neg, arg_atoms, min_support,
                                                     universal=False)
            effects += effects_here
            if unexplained:
                issues.append(f"{literal_text(literal, names)}: {unexplained} of {len(pos)} "
                              "change(s) not explained by a consistent condition")
    # effects on one object that is not an argument: universal
    if extra_adds or extra_dels:
        extra_atoms = universe(arities, variables + [EXTRA])
        objects_per = []
        for t, binding, *_ in lifted:
            objects = {obj for fact in t.pre | t.post for obj in fact[1:]} - set(binding)
            rows = []
            for obj in sorted(objects):
                extended = dict(binding)
                extended[obj] = (EXTRA,)
                rows.append((lift_state(t.pre, extended), lift_state(t.post, extended),
                             lift_state(t.unknown, extended)))
            objects_per.append(rows)
        for positive, candidates in ((True, extra_adds), (False, extra_dels)):
            for atom in sorted(candidates):
                pos, neg = _split_by_change(atom, positive,
                                            (row for rows in objects_per for row in rows))
                literal = (positive, atom[0], atom[1])
                effects_here, unexplained = _conditional(literal, pos, neg, extra_atoms,
                                                         min_support, universal=True)
                effects += effects_here
                if unexplained:
                    issues.append(f"{literal_text(literal, names)} for other objects ?o: "
                                  f"{unexplained} of {len(pos)} change(s) not explained by a "
                                  "consistent condition")
    return tuple(effects), tuple(issues)


def _anchor(literal: Literal, positives: Sequence[frozenset[LiftedAtom]]
            ) -> tuple[Literal, ...]:
    """The relations between ?o and the arguments (true atoms naming ?o and a parameter) that
    hold before every change of a universal effect on `literal`: the objects it was seen to
    act on (the changed atom itself left out: a delete needs no condition that it held)."""
    shared = frozenset.intersection(*(
        frozenset(a for a in p if EXTRA in a[1] and any(i != EXTRA for i in a[1])
                  and a != (literal[1], literal[2]))
        for p in positives))
    return tuple(sorted(((True, p, a) for p, a in shared), key=_literal_order))


def _conditional(literal: Literal, pos, neg, atoms, min_support: int, universal: bool):
    """The effect on `literal` under the conditions that separate `pos` from `neg`. A
    universal effect is also bounded by its anchor (`_anchor`): the data shows what happens
    to the objects so related to the arguments, and says nothing of the others (an Open seen
    only on containers with nothing enclosed elsewhere must not un-enclose every object)."""
    if not pos:
        return [], 0
    anchor = _anchor(literal, pos) if universal else ()
    if not neg:
        return [LearnedEffect(literal, anchor, universal, len(pos))], 0
    clauses, unexplained = learn_conditions(pos, neg, atoms, min_support)
    if len(clauses) != 1 or unexplained:
        # no one condition describes the changes; one may describe the exceptions (a walk
        # puts the walker next to its target unless the target is a room)
        exceptions, left = learn_conditions(neg, pos, atoms)
        if len(exceptions) == 1 and not left:
            return [LearnedEffect(literal, anchor, universal, len(pos), exceptions[0])], 0
        # a union of clauses each covering a few changes by incidental facts
        # (`(when (cuttable ?y) ...)`) would be a guess, so the effect is reported, not written
        return [], len(pos)
    clause = tuple(sorted(set(clauses[0]) | set(anchor), key=_literal_order))
    return [LearnedEffect(literal, clause, universal, len(pos))], 0


# --- PDDL ------------------------------------------------------------------------------------

def _term(index: int, names: Sequence[str]) -> Variable:
    return Variable("o" if index == EXTRA else names[index])


def _formula(literal: Literal, names: Sequence[str], some: bool = False):
    """A literal as a formula; with `some`, ?o is read existentially (`(exists (?o) ...)`)."""
    atom: Atom | Exists = Atom(literal[1], tuple(_term(i, names) for i in literal[2]))
    if some and EXTRA in literal[2]:
        atom = Exists((Typed("o"),), atom)
    return atom if literal[0] else Not(atom)


def _conjunction(literals: Sequence[Literal], names: Sequence[str], some: bool = False):
    parts = tuple(_formula(lit, names, some) for lit in literals)
    return parts[0] if len(parts) == 1 else And(parts)


def _effect_formula(effect: LearnedEffect, names: Sequence[str]):
    node = _formula(effect.literal, names)
    some = not effect.universal
    condition = [_conjunction(effect.condition, names, some)] if effect.condition else []
    if effect.exception:
        condition.append(Not(_conjunction(effect.exception, names, some)))
    if condition:
        node = When(condition[0] if len(condition) == 1 else And(tuple(condition)), node)
    if effect.universal:
        node = ForallEffect((Typed("o"),), node)
    return node


def _effect_text(effect: LearnedEffect, names: Sequence[str]) -> str:

    return write_formula(_effect_formula(effect, names))


def learned_domain(name: str, learned: Sequence[LearnedAction], arities: Mapping[str, int]) -> Domain:
    requirements = [":strips"]
    if any(not lit[0] for a in learned for lit in a.preconditions) or any(
            not lit[0] for a in learned for e in a.effects for lit in e.condition) or any(
            e.exception for a in learned for e in a.effects):
        requirements.append(":negative-preconditions")
    if any(e.condition or e.exception or e.universal for a in learned for e in a.effects):
        requirements.append(":conditional-effects")
    if any(not e.universal and EXTRA in lit[2] for a in learned for e in a.effects
           for lit in e.condition + e.exception):
        requirements.append(":existential-preconditions")
    predicates = tuple(
        PredicateDef(p, tuple(Typed(n) for n in ("a", "b", "c", "d", "e", "f")[:n]) if n <= 6
                     else tuple(Typed(f"a{i}") for i in range(n)))
        for p, n in sorted(arities.items()))
    actions = []
    for action in learned:
        names = variable_names(action.arity)
        precondition = And(tuple(_formula(lit, names) for lit in action.preconditions))
        effect = And(tuple(_effect_formula(e, names) for e in action.effects))
        actions.append(Action(action.name, tuple(Typed(n) for n in names), precondition, effect))
    return Domain(name=name, requirements=tuple(requirements), predicates=predicates,
                  actions=tuple(actions))


def _type_lineage(types_from: Domain) -> Callable[[str], list[str]]:
    """type key -> the type and its ancestors, nearest first (`object` left out)."""
    parents = {key(t.name): [key(p) for p in t.parents] for t in types_from.types}

    def lineage(type_name: str) -> list[str]:
        order, queue = [], [key(type_name)]
        while queue:
            current = queue.pop(0)
            if current != "object" and current not in order:
                order.append(current)
                queue += parents.get(current, [])
        return order

    return lineage


def _renamed_variables(text: str, renamed: Mapping[str, str]) -> str:
    """`text` with each `?variable` whose key `renamed` maps spelled as it says."""
    def rename(match: re.Match[str]) -> str:
        return "?" + renamed.get(key(match.group(1)), match.group(1))

    return re.sub(r"\?([A-Za-z][\w-]*)", rename, text)


def _vocabulary_annotations(types_from: Domain, actions: Sequence[Action]) -> tuple:
    """The annotations of `types_from` that still hold for `actions` (its actions learned from
    logs): the step form and the description; the aliases and step fields of the actions
    learned with the same arity; and the `reason` of each precondition literal the learned
    action also has, its variables renamed by position (so violations keep their friendly
    codes, and a task's problem is explained the same way with either domain)."""
    learned = {key(a.name): a for a in actions}
    kept = []
    for annotation in types_from.annotations:
        kind, words = annotation.kind.lower(), annotation.text.split()
        if kind in ("fields", "describe"):
            kept.append(annotation)
            continue
        mine = learned.get(key(words[0])) if words else None
        theirs = types_from.action(words[0]) if words else None
        if kind not in ("alias", "step", "reason") or mine is None or theirs is None \
                or len(mine.parameters) != len(theirs.parameters):
            continue
        if kind == "reason":
            renamed = {key(a.name): b.name for a, b in zip(theirs.parameters, mine.parameters)}
            annotation = dataclasses.replace(annotation, text=_renamed_variables(
                annotation.text, renamed))
            literal = canonical_sexpr(split_reason(annotation)[1])
            parts = mine.precondition.parts if isinstance(mine.precondition, And) else ()
            if literal not in {canonical_sexpr(write_formula(part)) for part in parts}:
                continue
        kept.append(annotation)
    return tuple(kept)


def typed_domain(learned: Domain, types_from: Domain, object_types: Mapping[str, str],
                 seen: Mapping[str, Sequence[set[str]]]) -> Domain:
    """`learned` in the vocabulary of `types_from`, so that it reads that domain's problems and
    plans: its types, constants, predicate declarations (predicates it lacks stay untyped) and
    the annotations that still apply (`_vocabulary_annotations`). Each parameter gets the most
    specific type that every object seen there in a success has (`object_types`: object key ->
    its declared type; `seen`: action key -> the object keys per position); a position with an
    object of unknown type, or whose objects share no type below `object`, stays untyped. A
    universal effect's variable gets the type that every typed object has."""
    lineage = _type_lineage(types_from)
    spelled = {key(t.name): t.name for t in types_from.types}

    def common_type(objects: set[str]) -> tuple[str, ...]:
        if not objects or any(o not in object_types for o in objects):
            return ()
        lines = [lineage(object_types[o]) for o in sorted(objects)]
        shared = [t for t in lines[0] if all(t in line for line in lines[1:])]
        return (spelled.get(shared[0], shared[0]),) if shared else ()

    # a quantified ?o ranges over every object a state mentions: the type all objects share
    quantified = common_type(set(object_types))

    def typed_effect(effect):
        if isinstance(effect, And):
            return And(tuple(typed_effect(part) for part in effect.parts))
        if isinstance(effect, ForallEffect):
            return ForallEffect(tuple(Typed(v.name, v.types or quantified)
                                      for v in effect.variables), effect.effect)
        if isinstance(effect, When):
            return When(typed_condition(effect.condition), effect.effect)
        return effect

    def typed_condition(formula):
        if isinstance(formula, And):
            return And(tuple(typed_condition(part) for part in formula.parts))
        if isinstance(formula, Not):
            return Not(typed_condition(formula.arg))
        if isinstance(formula, Exists):
            return Exists(tuple(Typed(v.name, v.types or quantified)
                                for v in formula.variables), formula.body)
        return formula

    actions = []
    for action in learned.actions:
        positions = seen.get(key(action.name), [])
        parameters = tuple(
            Typed(p.name, common_type(positions[i]) if i < len(positions) else ())
            for i, p in enumerate(action.parameters))
        actions.append(dataclasses.replace(action, parameters=parameters,
                                           effect=typed_effect(action.effect)))
    declared = {key(p.name) for p in types_from.predicates}
    predicates = types_from.predicates + tuple(p for p in learned.predicates
                                               if key(p.name) not in declared)
    requirements = tuple(dict.fromkeys((*learned.requirements, ":typing")))
    return dataclasses.replace(learned, requirements=requirements, types=types_from.types,
                               constants=types_from.constants, predicates=predicates,
                               actions=tuple(actions),
                               annotations=_vocabulary_annotations(types_from, actions))


def learn(transitions: Iterable[Transition], *, domain_name: str = "induced",
          min_support: int = 1, noise: float = 0.0, keep_static: bool = False,
          aliases: Mapping[str, str] | None = None, files: Sequence[str] = (),
          max_examples: int = 5, types_from: Domain | None = None,
          object_types: Mapping[str, str] | None = None,
          expected: Iterable[tuple[str, int]] = ()) -> InductionResult:
    """Learn a domain from transitions (see the module docstring). With `types_from`, the
    domain is written in that domain's types and predicate declarations (`typed_domain`).
    `expected`: (name, arity) of actions the domain should have; one the logs never show is
    reported as not learned."""
    if min_support < 1:
        raise SageError(f"--min-support must be at least 1, not {min_support}")
    if not 0.0 <= noise < 0.5:
        raise SageError(f"--noise must be in [0, 0.5) (a rate of mislabelled outcomes), not {noise}")
    aliases = dict(aliases or {})
    schemas, arities, changing, count = _group(transitions, aliases)
    if count == 0:
        raise SageError("no transitions to learn from (empty logs)")
    static = set(arities) - changing
    learned: dict[tuple[str, int], LearnedAction] = {}
    reports: list[ActionReport] = []
    for slot in sorted(schemas):
        schema = schemas[slot]
        names = variable_names(schema.arity)
        if not schema.successes:
            reports.append(ActionReport(
                schema.name, schema.arity, 0, len(schema.failures), schema.excluded,
                accuracy=1.0, preconditions=(), effects=(),
                unexplained_failures=0, in_domain=False,
                effect_issues=("no successful transition: effects unknown",)))
            continue
        pre, uncovered, static_candidates, succ, fail, evidence = _learn_preconditions(
            schema, arities, static, noise, min_support, keep_static)
        effects, issues = _learn_effects(schema, arities, min_support)
        action = LearnedAction(schema.name, schema.arity, pre, effects)
        learned[slot] = action
        ok_succ = sum(action.applicable(t.pre, t.action.args, t.unknown)
                      for t in schema.successes)
        ok_fail = sum(not action.applicable(t.pre, t.action.args, t.unknown)
                      for t in schema.failures)
        used = len(succ) + len(fail)
        examples = tuple(Example(t.task, t.episode, t.step, t.action.text
                                 or " ".join([t.action.action, *t.action.args]), t.code)
                         for t in (schema.failures[i] for i in uncovered[:max_examples]))
        reports.append(ActionReport(
            schema.name, schema.arity, len(succ), len(fail), schema.excluded,
            accuracy=(ok_succ + ok_fail) / used if used else 1.0,
            preconditions=tuple(literal_text(lit, names) for lit in pre),
            effects=tuple(_effect_text(e, names) for e in effects),
            unexplained_failures=len(uncovered), unexplained_examples=examples,
            contradicting_successes=len(succ) - ok_succ, effect_issues=issues,
            static_candidates=tuple(literal_text(lit, names) for lit in static_candidates),
            evidence=evidence))
    for name, arity in sorted(expected):
        slot = (key(aliases.get(name_key(name), name)), arity)
        if slot not in schemas:
            reports.append(ActionReport(
                name, arity, 0, 0, 0, accuracy=1.0, preconditions=(), effects=(),
                unexplained_failures=0, in_domain=False,
                effect_issues=("never logged: neither preconditions nor effects known",)))
    domain = learned_domain(domain_name, list(learned.values()), arities)
    if types_from is not None:
        seen = {key(schema.name): [{key(t.action.args[i]) for t in schema.successes}
                                   for i in range(schema.arity)]
                for slot, schema in schemas.items() if slot in learned}
        domain = typed_domain(domain, types_from, object_types or {}, seen)
    report = InductionReport(count, tuple(files), tuple(reports), tuple(sorted(static)),
                             {"min_support": min_support, "noise": noise,
                              "keep_static": keep_static, "domain_name": domain_name})
    return InductionResult(domain, report, learned, aliases)
