"""Learn a PDDL domain from logged transitions (state, action, success, next state).

Semantics
---------
Transitions are grouped into *action schemas*: the action word (case-insensitive, aliases mapped
through an optional domain) and its number of arguments. Objects are lifted to parameters by
position (`?x ?y ?z`, then `?x4`...); facts whose arguments are all step arguments become lifted
literals (a fact naming the same object twice gives every lifting). Negative literals range over
every predicate observed in the logs (with its arity) applied to the parameters.

Preconditions. A candidate is a literal (positive or negated) over the parameters, or a 0-ary
fact, that holds in all but a share `exceptions` (default `EXCEPTIONS`, a half) of the
successful transitions where its atom was observed: a real simulator has exceptions (EAI's
executor lets a `touch` succeed when the character is not logged next to its target), so a
literal that explains nearly every failure is not thrown out for a few successes it
contradicts. From those, a greedy set cover keeps the literals needed to explain the failures:
each pick's gain is the failures it newly explains less the successes it newly contradicts
(at least `min_support`); a literal that contradicts no success not already contradicted is
picked before any that does (an exception is paid only for failures no exact literal
explains: in EAI's VirtualHome, `(has_plug ?y)`, false in 9 of 22 grab successes, explains
more failures than `(next_to ?x ?y)`, false in 7, but the failures left once the exact
literals are chosen are the ones `next_to` explains); then ties go to the larger gain, the
literal that holds in more successes, positive literals, and by name; a final pass drops any
chosen literal whose failures stay explained without it. So a literal is kept only when it
explains more than it contradicts. A
failure that no candidate explains is reported as *unexplained* (it failed for a reason the
logged state does not show, or the data is noisy). Failures that are not about preconditions at
all (unknown objects or actions, wrong arity, injected failures, vanished objects) are excluded
and counted. With `exceptions=0` a candidate holds in every success (the strict learner).
Negated literals about *some other object* are candidates too (`(not (exists (?o) (shut-in
?x ?o)))`: nothing shuts the object in; ?o is an object other than the arguments; an atom
binding a parameter and ?o), picked after the literals over the parameters that are as
exact, or, under label noise, after all of them (`_cover`). So is a positive literal over two
parameters or more with an alternative through a further object (`Either`: `(or (next_to ?x
?y) (exists (?o) (and (next_to ?x ?o) (obj_next_to ?o ?y))))`, EAI's loose "close to"), when
the literal is false in a few successes and some failure without it is explained by no exact
literal (`_alternatives`): its condition on the further object is learned as a universal
effect's condition through ?m is (`cover.learn_bridged_conditions`).

Too little evidence. An action with fewer than `min_successes` successes is *conservative*:
its preconditions are every literal that held in all of them (`safe_literals`), not the few
that explain the failures, and the report and the domain's comment say so. `safe=True` learns
every action so: the safe learner of SAM learning (Juba, Le and Stern 2021), which never
accepts a step unlike every success seen.

Label noise. `noise` is the rate at which logged outcomes may be mislabelled. Per action, the
share of its successes that may be mislabelled failures is bounded (`mislabelled_successes`: a
rare outcome is swamped by flips of the common one), and a candidate may be false in that
share of the successes when it is larger than `exceptions`. An action whose successes are no
more than `NOISE_SWAMPED` times the noise rate of its evidence is not learned (reported so):
flipped failures alone would give that many successes, and preconditions learned from them
accept steps at random.

Partial observability. A transition's `unknown` facts were not observed before the step: a
literal about one of them neither holds nor fails there (it explains no failure, contradicts no
success, and `predict` does not hold it against a step), and such a fact is not an effect.
The report gives each learned literal's evidence: the successes where it was observed and held,
those where it was not observed, and the failures it explains.

A unary predicate that never changes in any transition (a type or static affordance such as
`(pickupable ?x)`) is treated like any other literal: it becomes a precondition when the
failures require it; `keep_static=True` also keeps every static unary literal that holds in all
successes (types the data never contradicts). With `types_from`, the domain is written in that
domain's types, predicate declarations and still-valid annotations (`typed_domain`). With
`role_types`, the parameters left untyped are typed by the objects' roles, the static unary
properties every object seen succeeding there has (`roles.py`; with `types_from`, a predicate
that domain's actions change is no property).
Effects are learned from the successes (`effects.py`); the result is written as PDDL by
`to_pddl.py`.

Memory. Transitions are read once and each is reduced, as it is read, to what the learner uses
of it: its states lifted over the step's arguments (and, for a success, over each other object
and that object's bridges, for universal effects), equal lifted states shared. The ground
states are dropped, so the logs stream through and memory grows with their distinct
descriptions, not their size.

Actions that never succeeded have no learnable effects and are left out of the domain (and
reported). In-sample accuracy is the fraction of a schema's used transitions whose success the
learned precondition predicts.
"""
from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from sage_pddl.env.transitions import Transition
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import Domain, key
from sage_pddl.pddl.vocabulary import name_key, vocabulary

from .cover import Bridged, Candidate, greedy_cover, learn_bridged_conditions
from .effects import EffectRow, effect_row, learn_effects
from .learned import LearnedAction
from .lifting import (
    EXTRA,
    SECOND,
    Either,
    Fact,
    LiftedAtom,
    Literal,
    arg_binding,
    further_objects,
    holds,
    lift_with_some_object,
    literal_order,
    literal_text,
    reaches,
    universe,
    variable_names,
)
from .report import ActionReport, Evidence, Example, InductionReport
from .roles import MIN_OBJECTS, RoleTypes, learn_role_types, role_typed_domain
from .to_pddl import effect_text, learned_domain, precondition_text, typed_domain

EXCEPTIONS = 0.5
"""The share of an action's successes a precondition may be false in, by default (`learn`)."""
NOISE_SWAMPED = 2.0
"""With label noise `r`, an action with at most `NOISE_SWAMPED * r` of its evidence successful
is not learned: that many successes are what flipped failures alone would give."""
MIN_SUCCESSES = 1
"""The successes below which an action is learned conservative (`learn(min_successes=...)`)."""
EITHER_MIN_SUPPORT = 2
"""The successes without its literal that an alternative through a further object (`Either`)
must hold in, at least: one drawn from a single success describes that success, not a rule."""

# Failure codes that say nothing about preconditions over the logged state.
EXCLUDED_CODES = frozenset({
    "unknown-action", "unknown-object", "wrong-arity", "type-mismatch", "unparsable-step",
    "injected-failure", "object-gone", "simulator-failure",
})


@dataclass(frozen=True)
class InductionResult:
    domain: Domain
    report: InductionReport
    actions: Mapping[tuple[str, int], LearnedAction] = field(default_factory=dict)
    aliases: Mapping[str, str] = field(default_factory=dict)
    roles: RoleTypes = field(default_factory=RoleTypes)
    """The types learned from the objects' roles (none unless `role_types`)."""

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
    """What the learner keeps of one schema's transitions: each seen from its step's arguments
    (`_Seen`), never the ground states, so the logs stream through."""

    name: str
    arity: int
    successes: list[_Seen] = field(default_factory=list)
    failures: list[_Seen] = field(default_factory=list)
    failure_examples: list[Example] = field(default_factory=list)
    effect_rows: list[EffectRow] = field(default_factory=list)
    success_args: list[set[str]] = field(default_factory=list)
    excluded: int = 0
    excluded_codes: Counter[str] = field(default_factory=Counter)


class _Seen(NamedTuple):
    """A transition's pre-state as the precondition learner reads it."""

    pre: frozenset[LiftedAtom]
    """lifted over the step's arguments (and "some other object", `lift_with_some_object`)"""
    hidden: frozenset[LiftedAtom]
    """the lifted atoms it did not observe"""
    further: tuple[frozenset[LiftedAtom], ...]
    """what it says of each object related to two arguments (`further_objects`)"""


@dataclass
class _Grouped:
    schemas: dict[tuple[str, int], _Schema]
    arities: dict[str, int]
    changing: set[str]
    tasks: set[str]
    count: int
    object_roles: dict[str, set[frozenset[str]]]
    """object -> each distinct set of unary predicates it had in the pre-state of a success it
    took part in (the raw material of its role, `roles.py`)."""


def _example(t: Transition) -> Example:
    return Example(t.task, t.episode, t.step,
                   t.action.text or " ".join([t.action.action, *t.action.args]), t.code)


def _group(transitions: Iterable[Transition], aliases: Mapping[str, str],
           progress: Callable[[int], None] | None = None, roles: bool = False) -> _Grouped:
    """One pass over the transitions: each is reduced to what the learner reads of it and
    dropped, and equal lifted states are shared (`interned`), so memory grows with the
    distinct descriptions rather than with the logged states. The objects' roles are read
    only with `roles` (`role_types`): each success would otherwise walk its state once per
    argument for nothing."""
    schemas: dict[tuple[str, int], _Schema] = {}
    arities: dict[str, int] = {}
    changing: set[str] = set()
    tasks: set[str] = set()
    object_roles: dict[str, set[frozenset[str]]] = {}
    shared: dict = {}

    def interned(value):
        return shared.setdefault(value, value)

    count = 0
    for t in transitions:
        count += 1
        if progress is not None:
            progress(count)
        tasks.add(t.task)
        for state in (t.pre, t.post, t.unknown):
            for fact in state:
                if fact[0] not in arities:
                    arities[fact[0]] = len(fact) - 1
        changing.update(fact[0] for fact in t.added | t.deleted)
        name = aliases.get(name_key(t.action.action), t.action.action)
        slot = (key(name), len(t.action.args))
        schema = schemas.setdefault(slot, _Schema(name, len(t.action.args)))
        if not t.success and t.code in EXCLUDED_CODES:
            schema.excluded += 1
            schema.excluded_codes[str(t.code)] += 1
            continue
        binding = arg_binding([key(a) for a in t.action.args])
        further = (interned(tuple(interned(atoms) for atoms in further_objects(t.pre, binding)))
                   if len(binding) > 1 else ())
        seen = _Seen(interned(lift_with_some_object(t.pre, binding)),
                     interned(lift_with_some_object(t.unknown, binding)), further)
        if t.success:
            schema.successes.append(seen)
            schema.effect_rows.append(effect_row(t, interned))
            if not schema.success_args:
                schema.success_args = [set() for _ in t.action.args]
            for position, arg in enumerate(t.action.args):
                schema.success_args[position].add(key(arg))
                if roles:
                    unary = frozenset(a.predicate for a in seen[0] if a.slots == (position,))
                    object_roles.setdefault(key(arg), set()).add(interned(unary))
        else:
            schema.failures.append(seen)
            schema.failure_examples.append(_example(t))
    return _Grouped(schemas, arities, changing, tasks, count, object_roles)


def _never_succeeded(schema: _Schema) -> str:
    """Why an action with no success is not learned: no success, or, when every logged step
    of it was refused before the environment judged it (an excluded code such as
    `wrong-arity`), that the environment cannot execute it as the domain writes it."""
    if schema.failures or not schema.excluded:
        refusals = Counter(str(e.code) for e in schema.failure_examples)
        codes = ", ".join(f"{code} {n}" for code, n in sorted(refusals.items()))
        return ("no successful transition" + (f" (failures: {codes})" if codes else "")
                + ": effects unknown")
    codes = ", ".join(f"{code} {n}" for code, n in sorted(schema.excluded_codes.items()))
    return (f"never executed: each of its {schema.excluded} logged steps was refused before "
            f"the environment judged it ({codes}); the environment cannot execute the action "
            "as the domain writes it")


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


def safe_literals(support: Mapping[Literal, int], observed: Mapping[LiftedAtom, int]
                  ) -> list[Literal]:
    """Every literal that held in each success where its atom was observed (and in one at
    least): the preconditions of a safe learner (SAM, Juba, Le and Stern 2021), which never
    accept a step unlike every success seen."""
    return sorted((lit for lit, n in support.items() if 0 < n == observed[lit.atom]),
                  key=literal_order)


def _cover(candidates: Sequence[Candidate], others: frozenset[LiftedAtom],
           failures: Sequence[_Seen], support: Mapping[Candidate, int],
           costs: Mapping[Candidate, frozenset[int]] | None,
           min_support: int, noise: float) -> tuple[list[Candidate], list[int]]:
    """The greedy cover of the failures (`greedy_cover`) by the literals over the parameters
    and the negated literals about some other object (`others`: no object shuts it in,
    `(not (exists (?o) (shut-in ?x ?o)))`). Clean labels: exact literals first, and of two
    equally exact (both contradicting no success, or both some), one over the parameters
    first; in the iTHOR logs, `(not (reachable ?x))` (false in some Find successes) would
    otherwise explain Find's refusals of an object shut in, which was located before it was
    put away. Under label noise (`noise` > 0) a contradicted success may be a flipped label,
    so exactness tells a rule from noise less well: the quantified literals then only cover
    the failures that the literals over the parameters leave. Only negated ones (a blocker):
    that an object lies on *something* holds of nearly every object, and a failure without
    it explained by it is a coincidence of the logged states more often than a rule (a toy
    Pick failure with the fruit not logged on the table). The alternatives through a further
    object (`Either`) count as literals over the parameters."""
    usable = [c for c in candidates if c.atom not in others or not c.positive]
    quantified = frozenset(c for c in usable if c.atom in others)
    fail = [f.pre for f in failures]
    fail_hidden = [f.hidden for f in failures]
    further = [f.further for f in failures]
    if noise <= 0:
        return greedy_cover(usable, fail, min_support=min_support,
                            preference={c: support[c] for c in usable}, hidden=fail_hidden,
                            costs=costs, later=quantified, further=further)
    plain = [c for c in usable if c not in quantified]
    chosen, uncovered = greedy_cover(plain, fail, min_support=min_support,
                                     preference={c: support[c] for c in plain},
                                     hidden=fail_hidden, costs=costs, further=further)
    if not uncovered or not quantified:
        return chosen, uncovered
    contradicted = frozenset().union(*((costs or {}).get(c, frozenset()) for c in chosen))
    more, left = greedy_cover(sorted(quantified, key=literal_order),
                              [fail[i] for i in uncovered], min_support=min_support,
                              preference={c: support[c] for c in quantified},
                              hidden=[fail_hidden[i] for i in uncovered],
                              costs=None if costs is None else {
                                  c: costs[c] - contradicted for c in quantified})
    return chosen + more, [uncovered[i] for i in left]


def _alternatives(successes: Sequence[_Seen], failures: Sequence[_Seen],
                  variables: Sequence[int], arities: Mapping[str, int],
                  support: Mapping[Candidate, int], observed: Mapping[LiftedAtom, int],
                  exact: Sequence[Candidate]) -> list[Either]:
    """The alternatives through a further object (`Either`, "L or some ?m so related to L's
    arguments") worth offering the cover: for each literal L over two parameters or more that
    held in some success and is observed false in at least `EITHER_MIN_SUPPORT`, the clauses
    of `learn_bridged_conditions` over what those successes say of their further objects
    (`further_objects`), each relating ?m to every argument of L, keeping out the failures
    where L is false that no exact literal (`exact`, false in no success) explains, and
    holding in at least `EITHER_MIN_SUPPORT` of those successes (a clause drawn from one
    success describes it). Without such failures the alternative would explain nothing."""
    if not any(s.further for s in successes):
        return []
    explained = {i for c in exact for i, f in enumerate(failures)
                 if c.atom not in f.hidden and not holds(c, f.pre)}
    bridge_atoms = frozenset(a for a in universe(arities, [*variables, SECOND])
                             if SECOND in a.slots)
    found: list[Either] = []
    for atom in sorted(universe(arities, variables)):
        literal = Literal(True, atom.predicate, atom.slots)
        if len(set(atom.slots)) < 2 or not 0 < support[literal] <= (
                observed[atom] - EITHER_MIN_SUPPORT):
            continue
        negatives = _without(atom, [f for i, f in enumerate(failures) if i not in explained])
        if not negatives:
            continue
        clauses, _left = learn_bridged_conditions(
            _without(atom, successes), negatives, frozenset(), bridge_atoms, EITHER_MIN_SUPPORT,
            linked=functools.partial(reaches, positions=atom.slots), widest=True)
        found += [Either(literal, bridge) for _plain, bridge in clauses]
    return found


def _without(atom: LiftedAtom, seen: Sequence[_Seen]) -> list[Bridged]:
    """The transitions of `seen` where `atom` is observed false, as `learn_bridged_conditions`
    reads them: nothing over the arguments, and their further objects (`_Seen.further`)."""
    return [(frozenset(), s.further) for s in seen if atom not in s.hidden and atom not in s.pre]


def _learn_preconditions(schema: _Schema, arities: Mapping[str, int], static: set[str],
                         noise: float, min_support: int, keep_static: bool, safe: bool,
                         exceptions: float):
    variables = list(range(schema.arity))
    atoms = universe(arities, variables)
    # "some other object": atoms binding a parameter and ?o, read existentially
    others = frozenset(a for a in universe(arities, variables + [EXTRA], max_extra=1)
                       if EXTRA in a.slots and len(set(a.slots)) > 1)
    succ = [s.pre for s in schema.successes]
    fail = [f.pre for f in schema.failures]
    succ_hidden = [s.hidden for s in schema.successes]
    fail_hidden = [f.hidden for f in schema.failures]
    support: dict[Candidate, int] = {}
    observed: dict[LiftedAtom, int] = {}
    for atom in atoms | others:
        seen = [s for s, hidden in zip(succ, succ_hidden) if atom not in hidden]
        true_count = sum(atom in s for s in seen)
        observed[atom] = len(seen)
        support[Literal(True, atom.predicate, atom.slots)] = true_count
        support[Literal(False, atom.predicate, atom.slots)] = len(seen) - true_count
    tolerance = max(exceptions, mislabelled_successes(noise, len(succ), len(fail)))
    if not safe:  # a literal false in some successes, or its alternative through ?m
        exact = [c for c, n in support.items()
                 if 0 < n == observed[c.atom] and (c.atom not in others or not c.positive)]
        for either in _alternatives(schema.successes, schema.failures, variables, arities,
                                    support, observed, exact):
            support[either] = sum(either.atom not in s.hidden and holds(either, s.pre, s.further)
                                  for s in schema.successes)
    candidates = [lit for lit, n in support.items()
                  if n > 0 and n >= (1.0 - tolerance) * observed[lit.atom] - 1e-9]
    costs = None
    if tolerance > 0:  # a candidate may be false in a few successes: weigh them
        costs = {c: frozenset(i for i, s in enumerate(schema.successes)
                              if c.atom not in s.hidden and not holds(c, s.pre, s.further))
                 for c in candidates}
    chosen: list[Candidate]
    if safe:
        chosen = list(safe_literals({c: n for c, n in support.items()
                                     if isinstance(c, Literal) and c.atom not in others},
                                    observed))
        uncovered = [i for i, (f, hidden) in enumerate(zip(fail, fail_hidden))
                     if all(c.atom in hidden or holds(c, f) for c in chosen)]
    else:
        chosen, uncovered = _cover(candidates, others, schema.failures, support, costs,
                                   min_support, noise)
    static_candidates = sorted(
        (c for c in candidates if isinstance(c, Literal) and c.atom not in others and c.positive
         and c.predicate in static and len(c.slots) == 1 and support[c] == len(succ)
         and c not in chosen),
        key=literal_order)
    if keep_static:
        chosen = [*chosen, *static_candidates]
    chosen = sorted(chosen, key=literal_order)
    names = variable_names(schema.arity)
    evidence = tuple(
        Evidence(precondition_text(c, names), support[c], observed[c.atom],
                 len(succ) - observed[c.atom],
                 sum(1 for f in schema.failures
                     if c.atom not in f.hidden and not holds(c, f.pre, f.further)))
        for c in chosen)
    return tuple(chosen), uncovered, tuple(static_candidates), succ, fail, evidence


def learn(transitions: Iterable[Transition], *, domain_name: str = "induced",
          min_support: int = 1, noise: float = 0.0, keep_static: bool = False,
          aliases: Mapping[str, str] | None = None, files: Sequence[str] = (),
          max_examples: int = 5, types_from: Domain | None = None,
          object_types: (Mapping[str, str] | Callable[[Iterable[str]], Mapping[str, str]]
                         | None) = None,
          expected: Iterable[tuple[str, int]] = (),
          progress: Callable[[int], None] | None = None, safe: bool = False,
          min_successes: int = MIN_SUCCESSES, exceptions: float = EXCEPTIONS,
          role_types: bool = False, role_min_objects: int = MIN_OBJECTS
          ) -> InductionResult:
    """Learn a domain from transitions (see the module docstring), reading them once (they
    may stream from the logs). With `types_from`, the domain is written in that domain's types
    and predicate declarations (`typed_domain`), each object typed by `object_types` (object ->
    type, or a function of the logged tasks giving it). `expected`: (name, arity) of actions
    the domain should have; one the logs never show is reported as not learned.
    `progress(count)` is called after each transition read. `safe`: every action's
    preconditions are `safe_literals` (the safe learner); `min_successes`: an action with
    fewer successes is learned so, and marked `conservative` in the report; `exceptions`: the
    share of an action's successes a precondition may be false in (0: every one);
    `role_types`: type the parameters left untyped by the objects' roles (`roles.py`, a
    position with fewer than `role_min_objects` distinct objects seen stays untyped)."""
    if min_support < 1:
        raise SageError(f"--min-support must be at least 1, not {min_support}")
    if not 0.0 <= exceptions <= 0.5:
        raise SageError(f"--exceptions must be in [0, 0.5] (a share of an action's successes), "
                        f"not {exceptions}")
    if min_successes < 1:
        raise SageError(f"--min-successes must be at least 1, not {min_successes}")
    if not 0.0 <= noise < 0.5:
        raise SageError(f"--noise must be in [0, 0.5) (a rate of mislabelled outcomes), not {noise}")
    aliases = dict(aliases or {})
    grouped = _group(transitions, aliases, progress, roles=role_types)
    schemas, arities = grouped.schemas, grouped.arities
    if grouped.count == 0:
        raise SageError("no transitions to learn from (empty logs)")
    static = set(arities) - grouped.changing
    learned: dict[tuple[str, int], LearnedAction] = {}
    reports: list[ActionReport] = []
    for slot in sorted(schemas):
        schema = schemas[slot]
        names = variable_names(schema.arity)
        if not schema.successes:
            reports.append(ActionReport(
                schema.name, schema.arity, 0, len(schema.failures), schema.excluded,
                accuracy=None, preconditions=(), effects=(),
                unexplained_failures=0, in_domain=False,
                effect_issues=(_never_succeeded(schema),)))
            continue
        evidence_total = len(schema.successes) + len(schema.failures)
        if len(schema.successes) <= NOISE_SWAMPED * noise * evidence_total:
            reports.append(ActionReport(
                schema.name, schema.arity, len(schema.successes), len(schema.failures),
                schema.excluded, accuracy=None, preconditions=(), effects=(),
                unexplained_failures=0, in_domain=False,
                effect_issues=("no more successes than label noise explains",)))
            continue
        conservative = safe or len(schema.successes) < min_successes
        pre, uncovered, static_candidates, succ, fail, evidence = _learn_preconditions(
            schema, arities, static, noise, min_support, keep_static, conservative, exceptions)
        effects, issues = learn_effects(schema.effect_rows, schema.arity, arities, min_support)
        action = LearnedAction(schema.name, schema.arity, pre, effects)
        learned[slot] = action
        ok_succ = sum(action.accepts(*seen) for seen in schema.successes)
        ok_fail = sum(not action.accepts(*seen) for seen in schema.failures)
        used = len(succ) + len(fail)
        examples = tuple(schema.failure_examples[i] for i in uncovered[:max_examples])
        reports.append(ActionReport(
            schema.name, schema.arity, len(succ), len(fail), schema.excluded,
            accuracy=(ok_succ + ok_fail) / used if used else None,
            preconditions=tuple(precondition_text(lit, names) for lit in pre),
            effects=tuple(effect_text(e, names) for e in effects),
            unexplained_failures=len(uncovered), unexplained_examples=examples,
            contradicting_successes=len(succ) - ok_succ, effect_issues=issues,
            static_candidates=tuple(literal_text(lit, names) for lit in static_candidates),
            evidence=evidence, conservative=conservative and not safe))
    for name, arity in sorted(expected):
        slot = (key(aliases.get(name_key(name), name)), arity)
        if slot not in schemas:
            reports.append(ActionReport(
                name, arity, 0, 0, 0, accuracy=None, preconditions=(), effects=(),
                unexplained_failures=0, in_domain=False,
                effect_issues=("never logged: neither preconditions nor effects known",)))
    domain = learned_domain(domain_name, list(learned.values()), arities)
    if types_from is not None:
        seen = {key(schema.name): schema.success_args
                for slot, schema in schemas.items() if slot in learned}
        types = (object_types(grouped.tasks) if callable(object_types)
                 else dict(object_types or {}))
        domain = typed_domain(domain, types_from, types, seen)
    roles = RoleTypes()
    if role_types:
        # a predicate the logs never change but the named domain's actions do (VirtualHome's
        # `clean`, which `wash` makes true) is a state, not a role
        fluents = vocabulary(types_from).effect_predicates if types_from is not None else ()
        domain, roles, learned = _role_typed(domain, grouped, learned, static - set(fluents),
                                             role_min_objects)
    report = InductionReport(grouped.count, tuple(files), tuple(reports), tuple(sorted(static)),
                             {"min_support": min_support, "noise": noise,
                              "keep_static": keep_static, "domain_name": domain_name,
                              "safe": safe, "min_successes": min_successes,
                              "exceptions": exceptions, "role_types": role_types})
    return InductionResult(domain, report, learned, aliases, roles)


def _role_typed(domain: Domain, grouped: _Grouped,
                learned: dict[tuple[str, int], LearnedAction], static: set[str],
                min_objects: int):
    """(`domain` typed by the objects' roles, the role types, `learned` with each typed
    parameter's properties as its `typing`): the positions `domain` leaves untyped only."""
    untyped = {key(a.name): [not p.types or p.types == ("object",) for p in a.parameters]
               for a in domain.actions}
    positions = {}
    for slot, schema in grouped.schemas.items():
        if slot in learned:
            free = untyped.get(slot[0], [])
            positions[slot[0]] = [objects if i < len(free) and free[i] else set()
                                  for i, objects in enumerate(schema.success_args)]
    declared = [t.name for t in domain.types]
    roles, typed = learn_role_types(positions, grouped.object_roles, static,
                                    min_objects=min_objects, taken=declared)
    retyped = {}
    for slot, action in learned.items():
        kinds = typed.get(slot[0], [])
        typing = tuple(Literal(True, p, (i,)) for i, kind in enumerate(kinds)
                       if kind is not None for p in sorted(kind.properties))
        retyped[slot] = dataclasses.replace(action, typing=typing)
    return role_typed_domain(domain, roles, typed), roles, retyped
