"""Object synonyms (`; @sage synonym`): the gate reads the names people and models use for
AI2-THOR objects as the action server does, says which object it took, and guesses nothing."""
from __future__ import annotations

import json

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.gate import Reading, compile_gate
from sage_pddl.pddl import parse_domain, parse_problem
from sage_pddl.pddl.errors import PDDLSemanticError
from sage_pddl.pddl.vocabulary import name_key, vocabulary

ROOM = """
(define (problem room) (:domain ithor)
  (:objects Television SideTable_1 SideTable_2 ShelvingUnit RemoteControl Light - thing)
  (:init (hand-empty) (toggleable Television) (receptacle SideTable_1) (receptacle SideTable_2)
         (receptacle ShelvingUnit) (pickupable RemoteControl) (reachable RemoteControl)
         (toggleable Light))
  (:goal (turned-on Television)))
"""


def _step(action: str, obj: str, target: str = "") -> dict[str, str]:
    return {"action": action, "object": obj, "target": target}


@pytest.fixture(scope="module")
def room():
    return compile_gate(load_domain("ithor"), parse_problem(ROOM))


def test_a_synonym_is_resolved_and_the_gate_says_which_object_it_took(room):
    plan = [_step("MoveTo", "TV"), _step("TurnOn", "tv")]
    verdict = room.check(plan)
    assert verdict.valid and verdict.goal_reached
    assert room.readings(plan) == (Reading(0, "TV", "Television", "Television"),
                                   Reading(1, "tv", "Television", "Television"))
    assert str(room.readings(plan)[0]) == "step 1: 'TV' read as Television: Television"


def test_a_synonym_of_several_instances_names_the_one_the_step_acted_on(room):
    plan = [_step("Pick", "RemoteControl"), _step("MoveTo", "nightstand"),
            _step("Place", "", "Bedside Table")]
    verdict = room.check(plan)
    assert verdict.valid, verdict.violations
    assert ("on", "remotecontrol", "sidetable_1") in verdict.final_state
    assert [(r.word, r.name, r.taken) for r in room.readings(plan)] == [
        ("nightstand", "SideTable", "SideTable_1"), ("Bedside Table", "SideTable", "SideTable_1")]


def test_a_word_for_several_names_takes_the_first_the_scene_has(room):
    # no Shelf here: Bookshelf is the ShelvingUnit, the next name the domain gives it
    (reading,) = room.readings([_step("MoveTo", "Bookshelf")])
    assert (reading.name, reading.taken) == ("ShelvingUnit", "ShelvingUnit")


def test_unknown_stays_unknown_and_an_object_outranks_a_synonym(room):
    for word in ("Telly", "Tele", "Televisions", "Nightstands"):
        verdict = room.check([_step("MoveTo", word)])
        assert verdict.violations[0].code == "unknown-object", word
    assert room.readings([_step("MoveTo", "Telly")]) == ()
    # "Light" is a synonym of LightSwitch, but this problem has an object named Light
    assert room.check([_step("MoveTo", "Light")]).valid
    assert room.readings([_step("MoveTo", "Light")]) == ()


def test_the_issue_s_names_resolve_in_the_bundled_domains():
    for name in ("ithor", "procthor"):
        synonyms = vocabulary(load_domain(name)).synonyms
        for word, wanted in (("Stove", "StoveBurner"), ("TV", "Television"),
                             ("Bookshelf", "Shelf"), ("BedsideTable", "SideTable"),
                             ("Nightstand", "SideTable"), ("towel rack", "TowelHolder")):
            assert synonyms[name_key(word)][0] == wanted, (name, word)


def test_a_malformed_synonym_is_a_located_error():
    domain = parse_domain("(define (domain d)\n ; @sage synonym TV\n (:action a))")
    error = vocabulary(domain).error
    assert isinstance(error, PDDLSemanticError) and "synonym" in str(error)
    assert error.loc is not None and error.loc.line == 2


def test_gate_json_lists_what_it_read(tmp_path, capsys):
    from sage_pddl.cli import main

    (tmp_path / "room.pddl").write_text(ROOM)
    (tmp_path / "plan.json").write_text(json.dumps([_step("MoveTo", "TV"),
                                                    _step("TurnOn", "TV")]))
    code = main(["gate", "ithor", str(tmp_path / "room.pddl"), str(tmp_path / "plan.json"),
                 "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["read_as"][0] == {"step": 0, "word": "TV",
                                                  "name": "Television", "taken": "Television"}
