"""The AI2-THOR object catalogue."""
from __future__ import annotations

from sage_pddl.tasks.catalogue import affordances, canonical_type, fixture_neighbours


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
    assert canonical_type("nightstand") == "SideTable"
    assert canonical_type("clothes") == "Cloth"
    assert canonical_type("lamp", prefer=("FloorLamp",)) == "FloorLamp"
    assert canonical_type("plates") == "Plate"


def test_fixtures_stand_together():
    pairs = fixture_neighbours({"Sink", "Faucet", "Apple"})
    assert ("Faucet", "Sink") in pairs and ("Sink", "Faucet") in pairs
    assert not any("Apple" in p for p in pairs)
