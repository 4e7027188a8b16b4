"""The precondition table: a domain and problem compiled for checking plans.

Semantics
---------
* **Objects and types.** The objects of a task are the domain constants followed by the problem
  objects (a name declared in both is one object whose types are merged; constants that the
  domain's actions use without declaring them, as ALFWorld does, are simply problem objects). An
  object belongs to its declared types, their ancestors (a type with several parents, an
  `either` parent, belongs to all of them) and `object`. An `(either a b)` parameter or
  quantified variable accepts an object of any of the listed types; an untyped one accepts any.
* **Initial state and goal.** `Not` facts in `:init` are documentation of absence and ignored;
  numeric initial values are ignored. The goal is ground once, like a precondition.
* **Grounding.** An action and a tuple of object names become a `GroundAction` on first use and
  are cached: nothing is ground that no plan step names (as VAL does). Quantifiers range over
  the objects of their types and are expanded when the action is grounded (`forall` becomes a
  conjunction, `exists` a disjunction); equality is decided at grounding time.
* **Costs.** `increase`/`decrease` of a 0-ary cost fluent (the one the problem's metric names,
  or `total-cost`/`totalCost`) is ignored: costs never change whether a plan is valid.
* **Scope.** Numeric comparisons, other numeric effects, durative actions, derived predicates,
  preferences, `oneof` and any other `Unsupported` node make compiling a table raise
  `UnsupportedConstruct` naming the construct and its line:column.
* **Caches.** Everything that depends on the domain alone (the vocabulary, names, types, scope
  hazards, canonical texts) is compiled once per `Domain` object (`schema.domain_schema`). A
  table keeps the ground actions plans have named (`ground`, at most `GROUND_ACTIONS_KEPT`,
  the least recently used forgotten first).

Annotations (`; @sage alias|step|reason`, docs/annotations.md) come from the domain's
`Vocabulary`: action names, the JSON-field map of each action's parameters, and the friendly
code and message of a precondition literal.
"""
from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Iterator
from functools import cached_property

from ..pddl import limits
from ..pddl.errors import GroundingTooLarge, PDDLSemanticError, UnsupportedConstruct
from ..pddl.model import (
    Action,
    And,
    Atom,
    Comparison,
    Domain,
    Equals,
    Exists,
    Forall,
    ForallEffect,
    FunctionTerm,
    Imply,
    Location,
    Not,
    NumericEffect,
    ObjectKeys,
    Or,
    Problem,
    Term,
    Typed,
    Unsupported,
    Variable,
    When,
    key,
    object_keys,
    walk,
    walk_numeric,
)
from ..pddl.vocabulary import Reason, canonical_sexpr
from ..pddl.writer import write_formula
from .ground import (
    EQUALS,
    TRUE,
    AnyOf,
    Cond,
    ConditionalEffect,
    ConditionalEffects,
    GroundAction,
    GroundAtom,
    GroundLiteral,
    Implies,
    State,
    action_bindings,
    action_text,
    conjoin,
    spelled,
)
from .schema import domain_schema

_StaticChecks = tuple[tuple[tuple[str, tuple[Term, ...]], ...], ...]
"""Per quantified variable, the static literals (predicate, terms) bound once it is."""


GROUND_ACTIONS_KEPT = 4096
"""Ground actions (and ground preconditions) one table keeps, at most: far more than the
distinct steps of the plans checked against one problem."""


class PreconditionTable:
    """A domain and problem compiled for checking plans: objects, types, actions, annotations,
    the initial state, the goal, and a cache of ground actions.

    Everything that depends on the domain alone comes from its cached `DomainSchema`. Of the
    problem, compiling reads only what every check needs (the scope check, the objects'
    declared types, the initial state, a goal of ground literals as two sets, all in the key
    form the problem comes with); the other object tables, the ground goal with its sources
    and the static facts are built when first read."""

    def __init__(self, domain: Domain, problem: Problem, prune_static: bool = True):
        self.domain = domain
        self.problem = problem
        self.schema = schema = domain_schema(domain)
        self.vocabulary = vocab = schema.vocabulary
        if not prune_static:
            self.prune_static = False
        if schema.hazards or domain.unsupported or problem.unsupported:
            self._check_domain_scope()
        self.declared, self.object_names = self._object_keys()
        """`declared`: object key -> its declared type key, or keys (`model.object_keys`): the
        domain constants and the problem objects (`object_types` has their ancestors).
        `object_names`: object key -> original spelling, in declaration order (a name
        declared twice: its first spelling)."""
        self.initial_state: State = self._initial_state()  # raises on an unsupported fact
        """The initial state (`Problem.facts`)."""
        goal = problem.goal
        self.has_goal = not (type(goal) is And and not goal.parts)
        self.goal_sets = problem.goal_literals if self.has_goal else None
        """The goal as `(pos, neg)` atom sets when it is a conjunction of ground literals
        (`Problem.goal_literals`: it holds when `pos <= state` and `state.isdisjoint(neg)`),
        else None."""
        self._ground_actions = functools.lru_cache(maxsize=GROUND_ACTIONS_KEPT)(self._ground)
        """(action name, object keys) -> its ground action (`ground`)."""
        self._preconditions = functools.lru_cache(maxsize=GROUND_ACTIONS_KEPT)(
            self._ground_precondition)
        """(action name, object keys) -> its ground precondition (`precondition_holds`)."""
        complex_goal = self.has_goal and self.goal_sets is None
        if complex_goal:
            self._check_formula_scope(goal, f"in the goal of {problem.name}")
        if vocab.error is not None:
            raise vocab.error
        if complex_goal:
            # ground now: a free variable or an oversized quantifier is a compile error
            self.goal = self._ground_goal()

    # -- scope ----------------------------------------------------------------------------

    prune_static = True
    """With `prune_static`, grounding drops a conditional effect whose static condition is
    false in the initial state (a MoveTo reaches only what stands `near` its target); a gate
    asked to start from a state with other static facts uses an unpruned table instead
    (`Gate.for_state`). See `dynamic`."""

    @cached_property
    def _ground_budget(self) -> int:
        # read on first use, not at import: a worker sets its own limit (`--max-atoms`)
        return limits.MAX_GROUND

    @cached_property
    def _cost_fluents(self) -> frozenset[str]:
        names = {"total-cost", "totalcost"}
        metric = self.problem.metric
        if metric is not None:
            for node in walk_numeric(metric.expression):
                if isinstance(node, FunctionTerm) and not node.args:
                    names.add(key(node.name))
        return frozenset(names)

    def _unsupported(self, construct: str, loc: Location | None, context: str) -> UnsupportedConstruct:
        return UnsupportedConstruct(
            f"{construct} {context} is outside the gate's scope "
            "(it evaluates STRIPS/ADL with typing, equality, quantifiers, conditional effects "
            "and action costs)", loc)

    def _check_node_scope(self, node: object, context: str) -> None:
        if isinstance(node, Comparison):
            raise self._unsupported(f"numeric comparison `{node.op}`", node.loc, context)
        if isinstance(node, Unsupported):
            raise self._unsupported(node.construct, node.loc, context)
        if isinstance(node, NumericEffect):
            cost = (node.op in ("increase", "decrease") and not node.fluent.args
                    and key(node.fluent.name) in self._cost_fluents)
            if not cost:
                raise self._unsupported(
                    f"numeric effect `({node.op} ({node.fluent.name}) ...)`", node.loc, context)

    def _check_formula_scope(self, formula: object, context: str) -> None:
        for node in walk(formula):
            self._check_node_scope(node, context)

    def _check_domain_scope(self) -> None:
        """The domain's sections and actions, and the problem's sections (its facts are
        checked as the initial state is read, then its goal)."""
        domain, problem = self.domain, self.problem
        if domain.unsupported:
            first = domain.unsupported[0]
            raise self._unsupported(first.construct, first.loc, f"in domain {domain.name}")
        for node, context in self.schema.hazards:  # the domain's actions, walked once per domain
            self._check_node_scope(node, context)
        if problem.unsupported:
            first = problem.unsupported[0]
            raise self._unsupported(first.construct, first.loc, f"in problem {problem.name}")

    # -- types and objects ----------------------------------------------------------------

    def ancestors(self, type_name: str) -> frozenset[str]:
        """The type, its ancestors and `object`."""
        return self.schema.ancestors(type_name)

    def _object_keys(self) -> ObjectKeys:
        """`model.object_keys` of the domain's constants and then the problem's objects: the
        tables each holds put together (a name declared in both: made again of all)."""
        schema, problem = self.schema, self.problem
        if not schema.declared:
            return problem.declared, problem.spelling
        declared = {**schema.declared, **problem.declared}
        if len(declared) < len(schema.declared) + len(problem.declared):
            return object_keys([*self.domain.constants, *problem.objects])
        return declared, {**schema.spelling, **problem.spelling}

    @cached_property
    def object_types(self) -> dict[str, frozenset[str]]:
        """Object key -> the type keys it belongs to (declared types, their ancestors and
        `object`; a name declared twice, as a constant and an object, belongs to both)."""
        type_set = self.schema.type_set
        return {name: type_set(types) for name, types in self.declared.items()}

    @cached_property
    def declared_types(self) -> dict[str, tuple[str, ...]]:
        """Object key -> its declared type names (`object` when untyped), for messages."""
        declared: dict[str, list[str]] = {}
        for typed in itertools.chain(self.domain.constants, self.problem.objects):
            names = declared.setdefault(typed.name.lower(), [])
            for type_name in typed.types or ("object",):
                if type_name not in names:
                    names.append(type_name)
        return {n: tuple(t) for n, t in declared.items()}

    @cached_property
    def _objects_of(self) -> dict[tuple[str, ...], tuple[str, ...]]:
        """Type keys -> `objects_of` them: one entry per type list the domain writes."""
        return {}

    def objects_of(self, types: tuple[str, ...]) -> tuple[str, ...]:
        """Object keys that fit a parameter typed `types` (() = any), in declaration order."""
        wanted = tuple(key(t) for t in types)
        found = self._objects_of.get(wanted)
        if found is None:
            if not wanted or "object" in wanted:
                found = tuple(self.object_names)
            else:
                want = set(wanted)
                object_types = self.object_types
                found = tuple(o for o in self.object_names if object_types[o] & want)
            self._objects_of[wanted] = found
        return found

    def fits(self, obj: str, types: tuple[str, ...]) -> bool:
        if not types:
            return True
        have = self.object_types.get(obj, frozenset({"object"}))
        return any(key(t) in have for t in types)

    @property
    def predicate_names(self) -> dict[str, str]:
        """Predicate key -> its spelling in the domain."""
        return self.schema.predicate_names

    def format_atom(self, atom: GroundAtom) -> str:
        """`("found", "apple")` -> `(found Apple)` in the domain's and problem's spelling."""
        return spelled(self.schema.predicate_names.get(atom[0], atom[0]), atom[1:],
                       self.object_names)

    def format_literal(self, literal: GroundLiteral) -> str:
        text = self.format_atom(literal.atom)
        return text if literal.positive else f"(not {text})"

    # -- annotations ----------------------------------------------------------------------

    def canonical(self, node: object, positive: bool = True) -> str:
        """Canonical text of a node: a node of the goal's from this table (so they die with
        it), any other (the domain's actions) from the domain's vocabulary."""
        if id(node) not in self._goal_nodes:
            return self.vocabulary.canonical(node, positive)
        text = self._goal_texts.get(id(node))
        if text is None:
            text = self._goal_texts[id(node)] = canonical_sexpr(write_formula(node))
        return text if positive else f"(not {text})"

    @cached_property
    def _goal_nodes(self) -> frozenset[int]:
        """The ids of the nodes of the problem's goal (which the problem keeps alive)."""
        return frozenset(map(id, walk(self.problem.goal)))

    @cached_property
    def _goal_texts(self) -> dict[int, str]:
        """id(goal node) -> its canonical text, made when first asked for."""
        return {}

    def reason(self, action: Action, literal_or_anchor: Iterable[str]) -> Reason | None:
        return self.vocabulary.reason(action.name, literal_or_anchor)

    # -- state ----------------------------------------------------------------------------

    def _initial_state(self) -> State:
        """The `Atom` facts of `:init` (`Problem.facts`); `Not` facts document absence and
        numeric values are ignored, an unsupported fact raises."""
        problem = self.problem
        if len(problem.facts) < len(problem.init):  # not only atoms: any unsupported?
            for fact in problem.init:
                if isinstance(fact, Unsupported):
                    raise self._unsupported(fact.construct, fact.loc,
                                            f"in the :init of {problem.name}")
        return problem.facts

    @cached_property
    def goal(self) -> Cond | None:
        """The ground goal with every literal's source (what `goal_unmet` reports); None when
        the problem has no goal."""
        if not self.has_goal:
            return None
        return self._ground_goal()

    def _ground_goal(self) -> Cond:
        return self.ground_condition(self.problem.goal, {}, anchor="")

    def ground_condition(self, formula: object, env: dict[str, str],
                         anchor: str | None) -> Cond:
        """`ground_formula` of a whole condition (a precondition, the goal, one of its
        conjuncts) under a grounding budget of its own, read now: a worker sets its own limit
        (`--max-atoms`) after import."""
        self._ground_budget = limits.MAX_GROUND
        return self.ground_formula(formula, env, True, anchor)

    def goal_holds_in(self, state: State | set[GroundAtom]) -> bool | None:
        """Whether the goal holds in `state` (None when the problem has no goal)."""
        sets = self.goal_sets
        if sets is not None:
            return sets[0] <= state and state.isdisjoint(sets[1])
        return None if self.goal is None else self.goal.holds(state)

    @cached_property
    def dynamic(self) -> frozenset[str]:
        """Predicates some action changes; the others are static: they hold in every state
        reached from the initial one exactly as there (see `prune_static`)."""
        return self.vocabulary.effect_predicates

    @cached_property
    def static_state(self) -> State:
        """The initial state's static facts."""
        dynamic = self.dynamic
        return frozenset(a for a in self.initial_state if a[0] not in dynamic)

    # -- grounding ------------------------------------------------------------------------

    def precondition_holds(self, action: Action, args: tuple[str, ...],
                           state: State | set[GroundAtom]) -> bool:
        """Whether `action` with object keys `args` (already checked) applies in `state`.

        Grounds the precondition only, once per `(action, args)`: a caller that asks this of
        every candidate step (SayCan) pays nothing for effects it never applies, which in
        the household domains (a MoveTo reaches what is in, on and near its target) cost far
        more than the precondition."""
        return self._preconditions(action.name, args).holds(state)

    def ground(self, action: Action, args: tuple[str, ...]) -> GroundAction:
        """The ground action of `action` with object keys `args` (already checked), kept."""
        return self._ground_actions(action.name, args)

    @property
    def grounded_count(self) -> int:
        """Ground actions kept."""
        return self._ground_actions.cache_info().currsize

    @cached_property
    def _actions(self) -> dict[str, Action]:
        return {action.name: action for action in self.domain.actions}

    def _ground_precondition(self, name: str, args: tuple[str, ...]) -> Cond:
        action = self._actions[name]
        env = {key(p.name): a for p, a in zip(action.parameters, args)}
        return self.ground_condition(action.precondition, env, anchor=None)

    def _ground(self, name: str, args: tuple[str, ...]) -> GroundAction:
        """Walk the action `name` with its parameters bound to `args`: its precondition
        (`ground_condition`) and its effect (`_ground_effect`)."""
        action = self._actions[name]
        env = {key(p.name): a for p, a in zip(action.parameters, args)}
        precondition = self.ground_condition(action.precondition, env, anchor=None)
        add: list[GroundAtom] = []
        delete: list[GroundAtom] = []
        conditional: list[ConditionalEffect] = []
        self._ground_effect(action.effect, env, TRUE, add, delete, conditional)
        return GroundAction(action, args, precondition, frozenset(add), frozenset(delete),
                            ConditionalEffects.build(conditional),
                            action_text(action, args, self.object_names),
                            action_bindings(action, args, self.object_names))

    def _term(self, term: object, env: dict[str, str]) -> str:
        """The object key a term names under `env`: a variable's value, a constant's key."""
        name: str = term.name.lower()  # type: ignore[attr-defined]
        if type(term) is not Variable:
            return name  # a constant (declared or not)
        value = env.get(name)
        if value is None:
            raise PDDLSemanticError(f"free variable ?{term.name}", term.loc)
        return value

    def _terms(self, terms: tuple[Term, ...], env: dict[str, str]) -> list[str]:
        """`_term` of each term."""
        return [self._term(term, env) for term in terms]

    def _instances(self, variables: tuple[Typed, ...], env: dict[str, str],
                   where: object = None, when: object = None) -> Iterator[dict[str, str]]:
        """Every binding of `variables` over the problem's objects, counted against the
        grounding budget first: a formula that would enumerate more than `limits.MAX_GROUND`
        instances in all is refused before any is built. `when`, the condition of the
        conditional effect the variables range over, prunes bindings by its static literals."""
        domains = [self.objects_of(v.types) for v in variables]
        count = 1
        for values in domains:
            count *= len(values)
        self._ground_budget -= count
        if self._ground_budget < 0:
            sizes = " x ".join(str(len(values)) for values in domains)
            raise GroundingTooLarge(
                f"grounding needs more than {limits.MAX_GROUND:,} quantifier instances "
                f"(this quantifier alone ranges over {sizes} = {count:,} bindings)",
                getattr(where, "loc", None))
        names = [key(v.name) for v in variables]
        checks = self._static_checks(when, names) if when is not None else ()
        if not checks:
            for values in itertools.product(*domains):
                inner = dict(env)
                inner.update(zip(names, values))
                yield inner
            return
        yield from self._pruned_instances(domains, names, checks, 0, dict(env))

    def _static_checks(self, condition: object, names: list[str]) -> _StaticChecks:
        """Per quantified variable (in order), the static positive literals of a `when`
        condition that are fully bound once that variable is: a binding that makes one false
        makes the condition false in every state, so `_pruned_instances` skips the bindings
        below it instead of enumerating them (`(forall (?b ?o) (when (and (controls ?x ?b)
        ...)))` visits only the burners ?x controls)."""
        if not self.prune_static:
            return ()
        parts = condition.parts if isinstance(condition, And) else (condition,)
        levels: list[list[tuple[str, tuple[Term, ...]]]] = [[] for _ in names]
        for part in parts:
            if not isinstance(part, Atom) or key(part.predicate) in self.dynamic:
                continue
            depth = max((names.index(key(a.name)) for a in part.args
                         if isinstance(a, Variable) and key(a.name) in names), default=-1)
            if depth >= 0:
                levels[depth].append((key(part.predicate), part.args))
        return tuple(tuple(level) for level in levels) if any(levels) else ()

    def _pruned_instances(self, domains: list[tuple[str, ...]], names: list[str],
                          checks: _StaticChecks, depth: int,
                          env: dict[str, str]) -> Iterator[dict[str, str]]:
        for value in domains[depth]:
            env[names[depth]] = value
            if any((predicate, *self._terms(args, env))
                   not in self.initial_state for predicate, args in checks[depth]):
                continue
            if depth + 1 == len(names):
                yield dict(env)
            else:
                yield from self._pruned_instances(domains, names, checks, depth + 1, env)
        del env[names[depth]]

    def ground_formula(self, formula: object, env: dict[str, str], positive: bool,
                       anchor: str | None) -> Cond:
        """Ground `formula` (negated when not `positive`) under `env` into a `Cond`.

        `anchor` is the canonical text of the enclosing top-level precondition conjunct; None
        means `formula` is the whole precondition, whose conjuncts become the anchors.
        """
        if anchor is None:
            if isinstance(formula, And) and positive:
                return conjoin(self.ground_formula(p, env, True, self.canonical(p))
                               for p in formula.parts)
            anchor = self.canonical(formula, positive)
        if isinstance(formula, Atom):
            atom = (formula.predicate.lower(), *self._terms(formula.args, env))
            literal = GroundLiteral(atom, positive, self.canonical(formula, positive), anchor)
            if positive:
                return Cond(frozenset((atom,)), frozenset(), (literal,))
            return Cond(frozenset(), frozenset((atom,)), (literal,))
        if isinstance(formula, Equals):
            left, right = self._term(formula.left, env), self._term(formula.right, env)
            if (left == right) == positive:
                return TRUE
            literal = GroundLiteral((EQUALS, left, right), positive,
                                    self.canonical(formula, positive), anchor)
            return Cond(frozenset(), frozenset(), (literal,), (), (literal,))
        if isinstance(formula, Not):
            return self.ground_formula(formula.arg, env, not positive, anchor)
        if isinstance(formula, (And, Or)):
            conjunctive = isinstance(formula, And) == positive
            parts = (self.ground_formula(p, env, positive, anchor) for p in formula.parts)
            if conjunctive:
                return conjoin(parts)
            return self._any_of(parts, formula, env, positive, anchor)
        if isinstance(formula, Imply):
            condition = self.ground_formula(formula.antecedent, env, True, anchor)
            if positive:
                if condition.is_false:
                    return TRUE
                then = self.ground_formula(formula.consequent, env, True, anchor)
                if condition.is_true or then.is_true:
                    return then
                return Cond(frozenset(), frozenset(), (), (Implies(condition, then),))
            return conjoin([condition, self.ground_formula(formula.consequent, env, False, anchor)])
        if isinstance(formula, (Exists, Forall)):
            conjunctive = isinstance(formula, Forall) == positive
            parts = (self.ground_formula(formula.body, inner, positive, anchor)
                     for inner in self._instances(formula.variables, env, formula))
            if conjunctive:
                return conjoin(parts)
            return self._any_of(parts, formula, env, positive, anchor)
        raise self._unsupported(type(formula).__name__, getattr(formula, "loc", None),
                                "in a condition")

    def _any_of(self, parts: Iterable[Cond], source: object, env: dict[str, str],
                positive: bool, anchor: str) -> Cond:
        kept = []
        for part in parts:
            if part.is_true:
                return TRUE
            if not part.is_false:
                kept.append(part)
        if len(kept) == 1:
            return kept[0]
        bindings = tuple(sorted(env.items()))
        any_of = AnyOf.of(tuple(kept), source, bindings, positive,
                          self.canonical(source, positive), anchor)
        return Cond(frozenset(), frozenset(), (), (any_of,))

    def _effect_condition(self, formula: object, env: dict[str, str]) -> Cond | None:
        """The ground condition of a `when`, simplified by the static facts: a static literal
        that holds is dropped, one that does not makes the condition false (None). A condition
        is never reported, so a conjunction of literals becomes two sets without the sources
        `ground_formula` records for explanations."""
        parts = formula.parts if isinstance(formula, And) else (formula,)
        pos: list[GroundAtom] = []
        neg: list[GroundAtom] = []
        for part in parts:
            positive = not isinstance(part, Not)
            node = part.arg if isinstance(part, Not) else part
            if not isinstance(node, Atom):  # a quantifier, `or`, `=`...: the general grounder
                cond = self.ground_formula(formula, env, True, "")
                return None if cond.is_false else cond
            atom = (node.predicate.lower(), *self._terms(node.args, env))
            if self.prune_static and atom[0] not in self.dynamic:
                if (atom in self.initial_state) != positive:
                    return None
                continue
            (pos if positive else neg).append(atom)
        return Cond(frozenset(pos), frozenset(neg)) if pos or neg else TRUE

    def agrees_on_static(self, state: State) -> bool:
        """Whether `state` has exactly the problem's static facts: only then may effects
        dropped by them (`prune_static`) be left out."""
        dynamic = self.dynamic
        return frozenset(a for a in state if a[0] not in dynamic) == self.static_state

    def _ground_effect(self, effect: object, env: dict[str, str], condition: Cond,
                       add: list[GroundAtom], delete: list[GroundAtom],
                       conditional: list[ConditionalEffect]) -> None:
        if isinstance(effect, And):
            for part in effect.parts:
                self._ground_effect(part, env, condition, add, delete, conditional)
        elif isinstance(effect, (Atom, Not)):
            positive = isinstance(effect, Atom)
            atom_node = effect.arg if isinstance(effect, Not) else effect
            if not isinstance(atom_node, Atom):
                raise PDDLSemanticError("an effect may only negate an atom", effect.loc)
            atom = (atom_node.predicate.lower(), *self._terms(atom_node.args, env))
            if condition.is_true:
                (add if positive else delete).append(atom)
            else:
                conditional.append(ConditionalEffect(
                    condition, frozenset((atom,)) if positive else frozenset(),
                    frozenset() if positive else frozenset((atom,))))
        elif isinstance(effect, When):
            when = self._effect_condition(effect.condition, env)
            if when is None:  # false in every state: a static literal that does not hold
                return
            inner = when if condition.is_true else conjoin([condition, when])
            if not inner.is_false:
                self._ground_effect(effect.effect, env, inner, add, delete, conditional)
        elif isinstance(effect, ForallEffect):
            guard = effect.effect.condition if isinstance(effect.effect, When) else None
            for inner_env in self._instances(effect.variables, env, effect, guard):
                self._ground_effect(effect.effect, inner_env, condition, add, delete, conditional)
        elif isinstance(effect, NumericEffect):
            pass  # a cost increase (anything else was rejected by _check_scope)
        else:
            raise self._unsupported(type(effect).__name__, getattr(effect, "loc", None),
                                    "in an effect")
