"""The AI2-THOR object catalogue."""
from __future__ import annotations

from sage_pddl.domains import load_domain
from sage_pddl.pddl.vocabulary import name_key, vocabulary
from sage_pddl.tasks.catalogue import (
    EVERYDAY_WORDS,
    affordances,
    canonical_type,
    fits,
    instance_relations,
    room_fixtures,
    scene_controls,
    scene_instances,
    scene_types,
    selective,
)


def test_affordances_of_common_types():
    assert affordances("Apple").pickupable and not affordances("Apple").openable
    fridge = affordances("Fridge")
    assert fridge.openable and fridge.receptacle and fridge.container and fridge.cooler
    assert affordances("CounterTop").receptacle and not affordances("CounterTop").container
    assert affordances("Microwave").toggleable and affordances("Microwave").heater
    assert affordances("Sofa").sittable and affordances("Bed").lieable
    assert not affordances("Laptop").washable and affordances("Mug").washable
    assert affordances("LightSwitch").starts_on


def test_unknown_types_get_no_affordance():
    unknown = affordances("toothbrush")
    assert not unknown.known and unknown.name == "Toothbrush" and unknown.predicates() == ()


def test_dataset_spellings_normalise_to_types():
    assert canonical_type("dining_table") == "DiningTable"
    assert canonical_type("cabinet") == "Cabinet"
    synonyms = vocabulary(load_domain("ithor")).synonyms  # the domain's `; @sage synonym`
    assert canonical_type("nightstand", synonyms=synonyms) == "SideTable"
    assert canonical_type("nightstand", ("Dresser",), synonyms) == "Dresser"
    assert canonical_type("nightstand") == "Dresser"  # the everyday word alone
    assert canonical_type("clothes", synonyms=synonyms) == "Cloth"
    assert canonical_type("clothes") == "Clothes"  # an object name: the domain says it
    assert canonical_type("lamp", prefer=("FloorLamp",)) == "FloorLamp"
    assert canonical_type("plates") == "Plate"


def test_everyday_words_say_only_what_the_domain_synonyms_do_not():
    for name in ("ithor", "procthor"):
        synonyms = vocabulary(load_domain(name)).synonyms
        for word, types in EVERYDAY_WORDS.items():
            assert not set(types) & set(synonyms.get(name_key(word), ())), (name, word)


def test_fixtures_stand_together_instance_by_instance():
    relations = instance_relations({"sink": ["Sink_1", "Sink_2"], "faucet": ["Faucet_1", "Faucet_2"],
                                    "apple": ["Apple"]})
    assert ("near", "Faucet_1", "Sink_1") in relations and ("near", "Sink_2", "Faucet_2") in relations
    assert ("near", "Faucet_1", "Sink_2") not in relations
    assert not any("Apple" in r for r in relations)
    lone = instance_relations({"bathtub": ["Bathtub"], "faucet": ["Faucet_1", "Faucet_2"]})
    assert {("near", "Bathtub", "Faucet_1"), ("near", "Bathtub", "Faucet_2")} <= set(lone)


def test_knobs_are_paired_with_burners_by_the_scene_not_by_index():
    relations = instance_relations({"stoveknob": ["StoveKnob_1", "StoveKnob_2"],
                                    "stoveburner": ["StoveBurner_1", "StoveBurner_2"]})
    assert not any(r[0] == "controls" for r in relations)
    # a stove's knobs and burners stand together, each by each: no index pairing (issue 42)
    assert {(k, b) for _, k, b in relations if k.startswith("StoveKnob")} == {
        (f"StoveKnob_{i}", f"StoveBurner_{j}") for i in (1, 2) for j in (1, 2)}
    # no source names the pairing of a bundled floor plan (data/ai2thor/scenes.toml says why)
    assert all(scene_controls(f"FloorPlan{n}") == () for n in (1, 2, 3, 4, 201, 301, 401))


def test_object_state_properties_from_the_documentation():
    assert affordances("Apple").sliceable and affordances("Apple").food
    assert affordances("Potato").cookable and not affordances("Egg").cookable
    assert affordances("Egg").cookable_sliced  # cracked, an egg cooks (EggCracked)
    assert affordances("Mug").fillable and not affordances("Apple").fillable
    assert affordances("Bed").dirtyable and affordances("Plate").dirtyable
    assert affordances("ButterKnife").slicer and affordances("Knife").slicer
    assert affordances("Microwave").toggles_closed and affordances("CoffeeMachine").coffee_maker
    assert not affordances("Window").openable and not affordances("Curtains").openable


def test_room_fixtures_and_scene_instances():
    kitchen = room_fixtures("kitchen")
    assert {"StoveBurner", "StoveKnob", "Sink", "Faucet", "LightSwitch"} <= set(kitchen)
    assert "LightSwitch" in room_fixtures("living room") and "Bed" in room_fixtures("bedroom")
    assert room_fixtures("garage") == ()
    assert scene_instances("FloorPlan1")["Cabinet"] == 9
    assert scene_instances("FloorPlan1_physics") == scene_instances("FloorPlan1")
    assert scene_instances("FloorPlan999") == {}


def test_scene_types_are_alfred_s_object_lists_with_ai2thor_5_s_changes():
    """data/ai2thor/scenes.toml: ALFRED's FloorPlanN-objects.json, its names mapped to
    AI2-THOR 5's (Glassbottle -> Bottle), with what AI2-THOR 5's scene dumps add or drop."""
    kitchen = scene_types("FloorPlan1")
    assert "DiningTable" not in kitchen and "Glassbottle" not in kitchen and "Bottle" in kitchen
    assert "Stool" in kitchen and "Chair" not in kitchen  # AI2-THOR 5's FloorPlan1
    assert "Window" in kitchen  # a structural part: in the scene, declared only when named
    assert "Cabinet" not in scene_types("FloorPlan401")
    assert "SideTable" not in scene_types("FloorPlan301") and "Dresser" in scene_types(
        "FloorPlan301")
    assert len(scene_types("FloorPlan230")) > 10  # every ALFRED floor plan is listed
    assert scene_types("procthor_val_4") == ()


def test_receptacle_compatibility_is_data_with_permissive_gaps():
    """data/ai2thor/receptacles.toml: ALFRED's and AI2-THOR's compatible receptacles."""
    assert selective("CoffeeMachine") and fits("Mug", "CoffeeMachine")
    assert not fits("Apple", "CoffeeMachine")
    assert not fits("Pot", "Mug")
    assert fits("Apple", "Desk")  # widened from AI2-THOR's documentation
    assert not fits("AlarmClock", "Bed")  # B10 placed it with forceAction on: `forced` only
    assert fits("AlarmClock", "Bed", "forced")
    assert not selective("Floor") and fits("Pot", "Floor")
    assert fits("Dumbbell", "CounterTop")  # a type no row names fits anywhere
