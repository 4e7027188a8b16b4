"""The gate against VAL and unified-planning on every (domain, problem, plan) triple of the corpus.

`../shared/corpus/plans_index.json` records, per triple, the verdicts of VAL and of
unified-planning's SequentialPlanValidator (and, for household domains, their verdicts on a
normalised copy of the domain; see the corpus README). Where the two tools agree, the gate must
agree: a plan is "valid" when every step is applicable and the goal holds. Where unified-planning
could not even load a plan because a step's arguments have the wrong types (pddl-copilot's
swapped-argument mutations), the gate must answer `type-mismatch`. Domains outside the gate's
scope must be rejected with UnsupportedConstruct, never a crash.
"""
from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from sage_pddl.gate import compile_gate
from sage_pddl.pddl import load_domain, load_plan, load_problem
from sage_pddl.pddl.errors import UnsupportedConstruct

VERDICTS = ("valid", "invalid")


def load_triples(corpus: Path) -> list[dict]:
    return json.loads((corpus / "plans_index.json").read_text())


@cache
def _domain(path: str):
    return load_domain(path)


def our_verdict(corpus: Path, triple: dict):
    """("valid"|"invalid", Verdict) or ("out-of-scope", error)."""
    try:
        gate = compile_gate(_domain(str(corpus / triple["domain"])),
                            load_problem(corpus / triple["problem"]))
    except UnsupportedConstruct as error:
        return "out-of-scope", error
    verdict = gate.check(load_plan(corpus / triple["plan"]))
    return ("valid" if verdict.solved else "invalid"), verdict


def reference(triple: dict, normalized: bool = False) -> str | None:
    """The agreed VAL/unified-planning verdict, or None when they disagree or failed."""
    val = triple.get("val_on_normalized_domain" if normalized else "val")
    up = triple.get("up_on_normalized_domain" if normalized else "up")
    return val if val == up and val in VERDICTS else None


def test_gate_agrees_with_val_and_unified_planning(corpus_dir: Path):
    disagreements = []
    compared = out_of_scope = type_errors = 0
    for triple in load_triples(corpus_dir):
        agreed = reference(triple)
        agreed_normalized = reference(triple, normalized=True)
        plan_type_error = (triple["val"] == "invalid" and triple["up"] == "error"
                           and "UPTypeError" in triple.get("up_detail", ""))
        if agreed is None and agreed_normalized is None and not plan_type_error:
            continue
        ours, detail = our_verdict(corpus_dir, triple)
        if ours == "out-of-scope":
            assert triple["val"] != "valid" or triple["up"] != "valid", triple
            out_of_scope += 1
            continue
        for expected in {agreed, agreed_normalized} - {None}:
            compared += 1
            if ours != expected:
                disagreements.append((triple["plan"], expected, ours, detail.violations[:2]))
        if plan_type_error:
            type_errors += 1
            codes = [v.code for v in detail.violations]
            if "type-mismatch" not in codes:
                disagreements.append((triple["plan"], "type-mismatch", ours, codes))
    print(f"compared {compared} verdicts, {type_errors} plan type errors, "
          f"{out_of_scope} out of scope")
    assert compared > 300 and type_errors >= 17
    assert disagreements == []


def test_out_of_scope_domains_are_rejected_with_location(corpus_dir: Path):
    drone = [t for t in load_triples(corpus_dir) if "/drone/" in t["domain"]]
    assert drone, "the corpus should hold the numeric drone domain"
    ours, error = our_verdict(corpus_dir, drone[0])
    assert ours == "out-of-scope"
    assert "numeric comparison" in str(error) and error.loc is not None
    assert f":{error.loc.line}:{error.loc.column}:" in str(error)


def test_pddl_copilot_swapped_arguments_are_type_mismatches(corpus_dir: Path):
    triple = next(t for t in load_triples(corpus_dir)
                  if t["plan"] == "classical/pddl-copilot/depots/p01_b5.plan")
    ours, verdict = our_verdict(corpus_dir, triple)
    assert ours == "invalid"
    mismatch = next(v for v in verdict.violations if v.code == "type-mismatch")
    assert "depot0" in mismatch.message


def test_the_types_a_parameter_accepts_are_those_of_its_type_sets(corpus_dir: Path):
    """Binding checks an argument's type by its declared type key (`StepAction.fitting`,
    made once per action): on every corpus problem, for every parameter and object, that
    agrees with the object's type set (its types and their ancestors) meeting the
    parameter's types."""
    checked = 0
    for triple in load_triples(corpus_dir):
        try:
            gate = compile_gate(_domain(str(corpus_dir / triple["domain"])),
                                load_problem(corpus_dir / triple["problem"]))
        except UnsupportedConstruct:
            continue
        table = gate.table
        for action in table.domain.actions:
            named = table.schema.word(action.name)
            for accepted, fitting in zip(named.accepted, named.fitting):
                if accepted is None:
                    assert fitting is None
                    continue
                for obj, kind in table.objects.declared.items():
                    fits = kind in fitting if type(kind) is str else not fitting.isdisjoint(kind)
                    assert fits == (not accepted.isdisjoint(table.objects.types_of(obj))), (obj, action)
                    checked += 1
    assert checked > 10_000
