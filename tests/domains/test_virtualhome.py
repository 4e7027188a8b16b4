"""The VirtualHome domain against the Embodied Agent Interface's own problems and gold plans,
and the gate on EAI's BEHAVIOR domain, compared with VAL and unified-planning verdicts."""
from __future__ import annotations

import json
import warnings
from collections import Counter
from pathlib import Path

import pytest

from sage_pddl.domains import domain_info, load_domain
from sage_pddl.gate import compile_gate
from sage_pddl.pddl import check_problem, errors_of, load_problem
from sage_pddl.pddl import load_domain as load_domain_file
from sage_pddl.tasks.eai import eai_plan, gold_plans, problem_files

HOUSEHOLD = Path(__file__).resolve().parents[1] / "fixtures" / "household"
VH = HOUSEHOLD / "eai-virtualhome"


def reference(triple: dict, *, normalized: bool) -> str | None:
    """The verdict VAL and unified-planning agree on, or None when they disagree or both fail.

    As written (`normalized=False`): each tool's verdict on the original domain, or on the
    corpus's normalised copy where the tool cannot load the original. Normalised: both tools on
    the normalised copy (`()` bodies written `(and)`), which removes VAL's silent loss of every
    action after EAI's first `:effect ()`.
    """
    if normalized:
        val, up = triple["val_on_normalized_domain"], triple["up_on_normalized_domain"]
    else:
        val = triple["val"] if triple["val"] != "error" else triple["val_on_normalized_domain"]
        up = triple["up"] if triple["up"] != "error" else triple["up_on_normalized_domain"]
    return val if val == up and val != "error" else None


def verdict_of(domain, problem, plan) -> str:
    verdict = compile_gate(domain, problem).check(plan)
    return "valid" if verdict.valid and verdict.goal_reached else "invalid"


@pytest.fixture(scope="module")
def triples():
    return json.loads((HOUSEHOLD / "verdicts.json").read_text())


@pytest.fixture(scope="module")
def ours():
    return load_domain("virtualhome")


@pytest.fixture(scope="module")
def vh_problems():
    found = problem_files(VH / "problems")
    assert len(found) == 45
    return {pid: load_problem(path) for pid, path in found.items()}


def test_every_eai_problem_loads_with_our_domain(ours, vh_problems):
    ill_typed = set()
    for pid, problem in vh_problems.items():
        compile_gate(ours, problem)  # objects, init and goal all resolve against our domain
        diagnostics = check_problem(problem, ours)
        if errors_of(diagnostics) or any("expects character" in d.message for d in diagnostics):
            ill_typed.add(pid)
    # Exactly the problems VAL and unified-planning refuse have ill-typed (facing <object> x)
    # facts in :init; they still load, with a diagnostic.
    assert len(ill_typed) == 10


def test_gold_plans_agree_with_val_and_unified_planning(ours, vh_problems, triples):
    eai_domain = load_domain_file(VH / "virtualhome.pddl")
    plans = gold_plans(VH / "gold_pddl_plan.subset.json")
    tally = Counter()
    for triple in triples:
        if not triple["domain"].startswith("eai-virtualhome/"):
            continue
        pid = triple["plan"].split("#")[1]
        as_written = reference(triple, normalized=False)
        normalized = reference(triple, normalized=True)
        for label, domain in (("ours", ours), ("eai", eai_domain)):
            got = verdict_of(domain, vh_problems[pid], plans[pid])
            if as_written is not None:
                assert got == as_written, (label, pid)
                tally[label, "agree as written"] += 1
            if normalized is not None:
                assert got == normalized, (label, pid)
                tally[label, "agree normalized"] += 1
            else:
                tally[label, "no reference", got] += 1
    for label in ("ours", "eai"):
        # VAL and unified-planning agree on 5 triples as written (VAL drops the actions after
        # EAI's first `:effect ()` and calls 30 gold plans invalid that unified-planning accepts),
        # and on 35 with the normalised domain.
        assert tally[label, "agree as written"] == 5
        assert tally[label, "agree normalized"] == 35
        # Both tools refuse 10 problems (ill-typed `(facing <object> x)` in :init); the gold
        # plans still execute in our gate.
        assert tally[label, "no reference", "valid"] == 10


def test_behavior_gold_plans_on_eai_domains_agree(triples):
    tally = Counter()
    domains_cache: dict[str, object] = {}
    plans = gold_plans(HOUSEHOLD / "eai-behavior" / "gold_pddl_plan.subset.json")
    for triple in triples:
        if not triple["domain"].startswith("eai-behavior/"):
            continue
        path = HOUSEHOLD / triple["domain"]
        if path not in domains_cache:
            domains_cache[path] = load_domain_file(path)
        expected = reference(triple, normalized=False)
        assert expected is not None
        got = verdict_of(domains_cache[path], load_problem(HOUSEHOLD / triple["problem"]),
                         plans[triple["plan"].split("#")[1]])
        assert got == expected, triple["problem"]
        tally[got] += 1
    assert tally == {"valid": 32, "invalid": 2}


def test_script_words_are_aliases(ours):
    aliases = {a.name: {x.upper() for x in a.aliases} for a in domain_info(ours).actions}
    for action, word in (("walk_towards", "WALK"), ("grab", "GRAB"), ("switch_on", "SWITCHON"),
                         ("open_object", "OPEN"), ("put_on", "PUTBACK"), ("put_inside", "PUTIN"),
                         ("look_at", "LOOKAT"), ("move", "PUSH"), ("plug_in", "PLUGIN")):
        assert word in aliases[action]
    eai_actions = [a.name for a in load_domain_file(VH / "virtualhome.pddl").actions]
    assert [a.name for a in ours.actions] == [
        "open_object" if name == "open" else name for name in eai_actions]
    for ours_action, eai_action in zip(ours.actions, load_domain_file(VH / "virtualhome.pddl").actions):
        assert ours_action.parameters == eai_action.parameters


def test_script_style_plan_and_rejections(ours, vh_problems):
    drink = vh_problems["528_1"]  # fetch a glass from a closed freezer
    gate = compile_gate(ours, drink)
    plan = eai_plan(["WALK character freezer", "OPEN character freezer",
                     "GRAB character drinking_glass", "CLOSE character freezer"])
    verdict = gate.check(plan)
    assert verdict.valid and verdict.goal_reached
    assert ("open", "freezer") not in verdict.final_state  # closing really closes
    closed = gate.check(eai_plan(["walk_towards character freezer",
                                  "grab character drinking_glass"]))
    assert not closed.valid and closed.violations[0].step == 1
    far = gate.check(eai_plan(["open character freezer"]))
    assert not far.valid and far.violations[0].code == "open_object/requires/next_to"


def test_unified_planning_reads_our_domain():
    up_io = pytest.importorskip("unified_planning.io")
    environment = pytest.importorskip("unified_planning.environment")
    env = environment.get_environment()
    # EAI's problems call the agent object `character`, like its type; unified-planning needs
    # this flag for the problems (our domain no longer needs it: the action is open_object).
    previous = env.error_used_name
    env.error_used_name = False
    try:
        with warnings.catch_warnings(record=True) as caught:  # the clash it warns about
            warnings.simplefilter("always")
            problem = up_io.PDDLReader().parse_problem(
                str(Path(__file__).resolve().parents[2] / "domains" / "virtualhome.pddl"),
                str(VH / "problems" / "Drink" / "528_1.pddl"))
    finally:
        env.error_used_name = previous
    assert any("Name character already defined" in str(w.message) for w in caught)
    assert "open_object" in {a.name for a in problem.actions}
    assert len(problem.actions) == 33
