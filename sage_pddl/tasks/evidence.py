"""A task's simulator-verified reference plan as evidence about its scene (REFERENCE §6.5).

`explain_reference` adds, for each reference step the scene's other facts cannot explain, the
weakest fact that explains its success, with the step behind it (`SceneFact.source` is
"reference"): the object it used stood within reach of what the robot went to last (`beside`:
reaching that reaches it, and nothing else, such as the water of a Faucet `near` it, until
either is picked up), or was within reach from the start; a state the observation does not
show is set by what the reference proves (TurnOff of an unobserved lamp succeeded: it was on).
Affordances are never changed and observed states never overridden. What is left (a Pick with
the hand full) is the reference's own error. The answer depends only on the task, the scene's
other facts, the domain and the package, and it takes a gate check per explained step, so it is
kept across processes (`pddl/cache.py`: one file per domain and package, a few hundred bytes a
task) and a run's later processes read it instead of checking the reference again.

`reference_goal` is the goal only asked for (`goal_from_reference=True`): what the reference
plan changes, among `REFERENCE_GOAL_PREDICATES`. Its own reference reaches it by construction.
"""
from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from ..pddl import cache
from ..pddl.errors import SageError
from ..pddl.limits import load_json
from ..pddl.model import And, Atom, Constant, Domain, Formula, Not, Problem
from ..pddl.vocabulary import name_key
from .scene_facts import SceneFact, render_problem
from .taskset import Task, normalize_steps

REFERENCE_GOAL_PREDICATES = ("holding", "turned-on", "opened", "closed", "on", "inside", "sat-on",
                             "lying-on", "heated", "cooled", "cleaned", "sliced", "cooked",
                             "filled")
"""What a goal taken from a reference plan's effects may say (`reference_goal`)."""

# Canonical actions whose execution locates their target (the domain's effects say so).
_LOCATING = {"moveto", "find", "place", "putin", "serve", "sit", "lieon"}

_STATE_FIXES = {  # violation code -> (atoms the reference proves, atoms it disproves)
    "already-off": (("turned-on",), ()),
    "already-on": ((), ("turned-on",)),
    "already-closed": (("opened",), ("closed",)),
    "already-open": (("closed",), ("opened",)),
}


MAX_KEPT = 4096
"""The most tasks' explanations one kept file holds (the earliest go first)."""

_KEPT: dict[str, dict[str, Any]] = {}
"""Kept file name -> its explanations by content, as read or written in this process."""
_KEPT_LOCK = threading.Lock()


def _gate(domain: Domain, problem: Problem):
    from ..gate.gate import compile_gate  # the gate checks the reference against the domain
    return compile_gate(domain, problem)


def explain_reference(task: Task, domain: Domain, things: list[str], rooms: list[str],
                       facts: list[SceneFact], observed_state: set[str]
                       ) -> tuple[list[SceneFact], list[SceneFact]]:
    """Facts that explain the reference plan's success (see module docstring).

    Returns the facts to keep (defaults the reference disproves removed) and the facts added.
    `observed_state` holds the (lower-case) objects whose open/on state the observation shows.
    Read from what an earlier call with the same content kept, if any (module docstring).
    """
    name = cache.content_name("evidence", repr(domain))
    content = hashlib.sha256(repr((task, things, rooms, facts, sorted(observed_state))).encode(
        errors="surrogatepass")).hexdigest()
    with _KEPT_LOCK:
        if name not in _KEPT:
            _KEPT[name] = _read_kept(name)
        kept = _KEPT[name].get(content)
    found = _decoded(kept, facts) if kept is not None else None
    if found is not None:
        return found
    kept_facts, added = _explain(task, domain, things, rooms, facts, observed_state)
    removed = {f.atom for f in facts} - {f.atom for f in kept_facts}
    with _KEPT_LOCK:  # one writer at a time: the file is rewritten whole
        explained = _KEPT[name]
        explained[content] = {"removed": sorted(removed),
                              "added": [[list(f.atom), f.source, f.note] for f in added]}
        while len(explained) > MAX_KEPT:
            del explained[next(iter(explained))]
        cache.write(name, json.dumps(explained).encode())
    return kept_facts, added


def _read_kept(name: str) -> dict[str, Any]:
    """The explanations kept under `name` (empty when there are none or the file is no JSON
    object: a miss, never an error)."""
    data = cache.read(name)
    if data is None:
        return {}
    try:
        explained = load_json(data.decode(), name, "kept evidence")
    except (SageError, UnicodeDecodeError):
        return {}
    return explained if isinstance(explained, dict) else {}


def _decoded(kept: Any, facts: list[SceneFact]
             ) -> tuple[list[SceneFact], list[SceneFact]] | None:
    """`explain_reference`'s answer from what it kept for these facts, or None when the entry
    does not read back as it writes them (a broken file is a miss)."""
    try:
        removed = {tuple(map(str, atom)) for atom in kept["removed"]}
        added = [SceneFact(tuple(map(str, atom)), str(source), str(note))
                 for atom, source, note in kept["added"]]
    except (KeyError, TypeError, ValueError):
        return None
    return [f for f in facts if f.atom not in removed], added


def _explain(task: Task, domain: Domain, things: list[str], rooms: list[str],
             facts: list[SceneFact], observed_state: set[str]
             ) -> tuple[list[SceneFact], list[SceneFact]]:
    """`explain_reference` worked out: a gate check of the reference per fact it adds."""
    steps = normalize_steps(task.reference_steps, domain)
    if not steps:
        return facts, []
    by_lower = {t.lower(): t for t in [*things, *rooms]}
    added: list[SceneFact] = []
    for _ in range(len(steps) + 1):
        problem = render_problem(task, domain, things, rooms, facts + added, And(()))
        gate = _gate(domain, problem)
        verdict = gate.check(steps, mode="all")
        explainable = [v for v in verdict.violations if _explainable(v, observed_state)]
        if not explainable:
            break  # what is left (a Pick with the hand full) is the reference's own error
        violation = explainable[0]
        fix = _STATE_FIXES.get(violation.code)
        if fix:
            subject = next(atom[1] for _, atom in violation.atoms if len(atom) > 1)
            target = by_lower.get(subject, subject)
            adds, removes = fix
            note = (f"reference step {violation.step + 1} ({violation.step_text}) succeeded, "
                    f"so the unobserved {target} was {'/'.join(adds)}")
            gone = {(predicate, target) for predicate in removes}
            facts = [f for f in facts if f.atom not in gone]
            added = [f for f in added if f.atom not in gone]
            added += [SceneFact((predicate, target), "reference", note) for predicate in adds]
            continue
        wanted = next(atom for positive, atom in violation.atoms
                      if positive and atom and atom[0] == "reachable")
        target = by_lower.get(wanted[1], wanted[1])
        place = _last_located(gate, steps[:violation.step], by_lower)
        step_text = f"reference step {violation.step + 1} ({violation.step_text})"
        if place:
            added.append(SceneFact(("beside", target, place), "reference",
                                   f"{step_text} uses {target} after reaching {place}"))
        else:
            added.append(SceneFact(("reachable", target), "reference",
                                   f"{step_text} uses {target} before any move"))
    return facts, added


def _explainable(violation, observed_state: set[str]) -> bool:
    """A violation some fact of the scene would explain: an unobserved state (the step's
    success proves it) or an object out of reach (it stood near what the robot reached)."""
    if violation.code in _STATE_FIXES:
        subject = next((atom[1] for _, atom in violation.atoms if len(atom) > 1), None)
        return subject is not None and subject not in observed_state
    return any(positive and atom and atom[0] == "reachable" for positive, atom in violation.atoms)


def _last_located(gate, steps: Sequence[Mapping], by_lower: Mapping[str, str]) -> str | None:
    """What the last locating step of a reference prefix reached: its first argument, the
    instance the gate chose when the step ran (rejected steps change nothing, as in `check`)."""
    state = gate.initial_state
    located = None
    for index, step in enumerate(steps):
        try:
            ground = gate.ground(step, index, state)
        except SageError:
            continue
        if gate.applicable(state, ground, index) is not None:
            continue
        if name_key(step.get("action", "")) in _LOCATING and ground.args:
            located = by_lower.get(ground.args[0], ground.args[0])
        state = gate.apply(state, ground)
    return located


def reference_goal(task: Task, domain: Domain, problem: Problem) -> Formula:
    steps = normalize_steps(task.reference_steps, domain)
    if not steps:
        return And(())
    gate = _gate(domain, problem)
    verdict = gate.check(steps, mode="all")
    initial = gate.initial_state
    names = {o.name.lower(): o.name for o in problem.objects}

    def atom(fact: tuple) -> Atom:
        return Atom(fact[0], tuple(Constant(names.get(a, a)) for a in fact[1:]))

    parts: list[Formula] = [
        atom(a) for a in sorted(verdict.final_state - initial)
        if a[0] in REFERENCE_GOAL_PREDICATES
        and not (a[0] == "closed" and ("opened", *a[1:]) in initial)]
    parts += [Not(atom(a)) for a in sorted(initial - verdict.final_state) if a[0] == "turned-on"]
    return And(tuple(parts))
