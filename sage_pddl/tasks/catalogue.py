"""AI2-THOR object types and their affordances: the static facts of household problems.

Source: AI2-THOR's public documentation of object types and their actionable properties
(https://ai2thor.allenai.org/ithor/documentation/objects/object-types, AI2-THOR 5.x; the older
2.x table at allenai.github.io/ai2thor-v2.1.0-documentation/object-types for the columns
Open/Close, Pickupable, On/Off, Receptacle). The table below is written from that documentation,
one row per type, with a few additions that the documentation states elsewhere or that the
paper's simulator-verified task sets confirm:

* ProcTHOR types that iTHOR lacks (ClothesDryer, WashingMachine, Bench, ...);
* LaundryHamper is openable in AI2-THOR 5 (the ProcTHOR task "Open the laundry hamper" was
  verified on ai2thor 5.0.0);
* the *kinds* the domain needs beyond AI2-THOR's flags: `container` (a receptacle that holds
  things inside: every openable receptacle plus sinks, tubs, bins, hampers, bowls, cups, mugs,
  pots, pans), `sittable`/`lieable` furniture, `washable` (pickupable and not spoilt by
  water: electronics, paper, candles), `water_source` (sinks, basins, faucets, shower
  heads), `heater` (Microwave, StoveBurner, Toaster), `cooler` (Fridge);
* `starts_on`: iTHOR scenes start with their lights on (every observation in the task sets
  that lists a LightSwitch reports it "on"), so an unobserved LightSwitch is on initially.

`FIXTURE_GROUPS` lists fixtures that stand together (a Faucet at its Sink): reaching one
reaches the others (the domain's `near` relation).

Unknown types get no affordance at all (`ObjectType.known` is False): a plan step that needs an
affordance of an object the catalogue does not know is refused, the safe side for a gate. The
problem builder reports them (`TaskScene.unknown_types`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_P, _O, _T, _R = "pickupable", "openable", "toggleable", "receptacle"


@dataclass(frozen=True)
class ObjectType:
    """One AI2-THOR object type with its affordances."""

    name: str
    pickupable: bool = False
    openable: bool = False
    toggleable: bool = False
    receptacle: bool = False
    container: bool = False
    sittable: bool = False
    lieable: bool = False
    water_source: bool = False
    heater: bool = False
    cooler: bool = False
    water_sensitive: bool = False
    starts_on: bool = False
    known: bool = True

    @property
    def washable(self) -> bool:
        return self.pickupable and not self.water_sensitive

    def predicates(self) -> tuple[str, ...]:
        """The domain's static predicates that hold of this type, in a fixed order."""
        flags = (
            ("pickupable", self.pickupable), ("openable", self.openable),
            ("toggleable", self.toggleable), ("receptacle", self.receptacle),
            ("container", self.container), ("sittable", self.sittable),
            ("lieable", self.lieable), ("washable", self.washable),
            ("water-source", self.water_source), ("heater", self.heater),
            ("cooler", self.cooler),
        )
        return tuple(name for name, holds in flags if holds)


# name: AI2-THOR actionable properties (P pickupable, O openable, T toggleable, R receptacle)
_ACTIONABLE: dict[str, str] = {
    "AlarmClock": "P", "AluminumFoil": "P", "Apple": "P", "AppleSliced": "P",
    "ArmChair": "R", "BaseballBat": "P", "BasketBall": "P", "Bathtub": "R", "BathtubBasin": "R",
    "Bed": "R", "Bench": "R", "Blinds": "O", "Book": "PO", "Boots": "P", "Bottle": "P",
    "Bowl": "PR", "Box": "POR", "Bread": "P", "BreadSliced": "P", "ButterKnife": "P",
    "Cabinet": "OR", "Candle": "PT", "Cart": "R", "CD": "P", "CellPhone": "PT", "Chair": "R",
    "Cloth": "P", "ClothesDryer": "OTR", "CoffeeMachine": "TR", "CoffeeTable": "R",
    "CounterTop": "R", "CreditCard": "P", "Cup": "PR", "Curtains": "", "Desk": "R",
    "DeskLamp": "T", "Desktop": "T", "DiningTable": "R", "DishSponge": "P", "DogBed": "R",
    "Drawer": "OR", "Dresser": "R", "Dumbbell": "P", "Egg": "P", "EggCracked": "P",
    "Faucet": "T", "Floor": "R", "FloorLamp": "T", "Footstool": "R", "Fork": "P",
    "Fridge": "OR", "GarbageBag": "", "GarbageCan": "R", "HandTowel": "P",
    "HandTowelHolder": "R", "HousePlant": "", "Kettle": "P", "KeyChain": "P", "Knife": "P",
    "Ladle": "P", "Laptop": "POT", "LaundryHamper": "OR", "Lettuce": "P", "LettuceSliced": "P",
    "LightSwitch": "T", "Microwave": "OTR", "Mirror": "", "Mug": "PR", "Newspaper": "P",
    "Ottoman": "R", "Painting": "", "Pan": "PR", "PaperTowelRoll": "P", "Pen": "P",
    "Pencil": "P", "PepperShaker": "P", "Pillow": "P", "Plate": "PR", "Plunger": "P",
    "Poster": "", "Pot": "PR", "Potato": "P", "PotatoSliced": "P", "RemoteControl": "P",
    "RoomDecor": "", "Safe": "OR", "SaltShaker": "P", "ScrubBrush": "P", "Shelf": "R",
    "ShelvingUnit": "R", "ShowerCurtain": "O", "ShowerDoor": "O", "ShowerGlass": "",
    "ShowerHead": "T", "SideTable": "R", "Sink": "R", "SinkBasin": "R", "SoapBar": "P",
    "SoapBottle": "P", "Sofa": "R", "Spatula": "P", "Spoon": "P", "SprayBottle": "P",
    "Statue": "P", "Stool": "R", "StoveBurner": "TR", "StoveKnob": "T", "TableTopDecor": "P",
    "TeddyBear": "P", "Television": "T", "TennisRacket": "P", "TissueBox": "P",
    "Toaster": "TR", "Toilet": "OR", "ToiletPaper": "P", "ToiletPaperHanger": "R",
    "Tomato": "P", "TomatoSliced": "P", "Towel": "P", "TowelHolder": "R", "TVStand": "R",
    "VacuumCleaner": "", "Vase": "P", "WashingMachine": "OTR", "Watch": "P",
    "WateringCan": "P", "Window": "", "WineBottle": "P",
}

# Receptacles that hold things inside rather than on top (besides every openable receptacle).
_OPEN_CONTAINERS = frozenset({
    "Bathtub", "BathtubBasin", "Bowl", "Cup", "GarbageCan", "LaundryHamper", "Mug", "Pan",
    "Pot", "Sink", "SinkBasin", "Toaster",
})
_SITTABLE = frozenset({"ArmChair", "Bed", "Bench", "Chair", "Footstool", "Ottoman", "Sofa",
                       "Stool", "Toilet", "DogBed"})
_LIEABLE = frozenset({"Bed", "Sofa", "DogBed"})
_WATER = frozenset({"Sink", "SinkBasin", "Bathtub", "BathtubBasin", "Faucet", "ShowerHead"})
_HEATERS = frozenset({"Microwave", "StoveBurner", "Toaster"})
_COOLERS = frozenset({"Fridge"})
_WATER_SENSITIVE = frozenset({"CellPhone", "Laptop", "RemoteControl", "AlarmClock", "Watch",
                         "CD", "Candle", "Book", "Newspaper", "TissueBox", "ToiletPaper",
                         "PaperTowelRoll"})
_STARTS_ON = frozenset({"LightSwitch"})

FIXTURE_GROUPS: tuple[frozenset[str], ...] = (
    frozenset({"Sink", "SinkBasin", "Faucet"}),
    frozenset({"Bathtub", "BathtubBasin", "Faucet", "ShowerHead"}),
    frozenset({"StoveBurner", "StoveKnob"}),
    frozenset({"Toilet", "ToiletPaperHanger"}),
    frozenset({"ShowerDoor", "ShowerHead", "ShowerCurtain", "ShowerGlass"}),
)
"""Fixtures that stand together: reaching one reaches the others."""


def _build() -> dict[str, ObjectType]:
    table = {}
    for name, flags in _ACTIONABLE.items():
        openable, receptacle = "O" in flags, "R" in flags
        table[name.lower()] = ObjectType(
            name=name, pickupable="P" in flags, openable=openable, toggleable="T" in flags,
            receptacle=receptacle,
            container=receptacle and (openable or name in _OPEN_CONTAINERS),
            sittable=name in _SITTABLE, lieable=name in _LIEABLE, water_source=name in _WATER,
            heater=name in _HEATERS, cooler=name in _COOLERS,
            water_sensitive=name in _WATER_SENSITIVE,
            starts_on=name in _STARTS_ON,
        )
    return table


CATALOGUE: dict[str, ObjectType] = _build()
"""Lower-cased type name -> ObjectType."""

STRUCTURAL = frozenset({"Wall", "Floor", "Ceiling", "Room", "Doorway", "Window", "WallDecal"})
"""Types the server hides from visible_objects (REFERENCE §8.4); Floor stays a receptacle."""

SYNONYMS: dict[str, tuple[str, ...]] = {
    "nightstand": ("SideTable", "Dresser"), "bookshelf": ("Shelf", "ShelvingUnit"),
    "bookcase": ("Shelf", "ShelvingUnit"), "stove": ("StoveBurner",),
    "oven": ("StoveBurner", "Microwave"), "tv": ("Television",), "counter": ("CounterTop",),
    "clothes": ("Cloth",), "soap": ("SoapBar", "SoapBottle"), "lamp": ("DeskLamp", "FloorLamp"),
    "light": ("LightSwitch",), "lights": ("LightSwitch",), "shower": ("ShowerHead", "Faucet"),
    "rack": ("TowelHolder", "HandTowelHolder"), "towelrack": ("TowelHolder",),
    "couch": ("Sofa",), "table": ("DiningTable", "CoffeeTable", "SideTable", "Desk"),
    "trashcan": ("GarbageCan",), "bin": ("GarbageCan",), "phone": ("CellPhone",),
    "remote": ("RemoteControl",), "refrigerator": ("Fridge",), "tap": ("Faucet",),
    "keys": ("KeyChain",), "plates": ("Plate",), "cups": ("Cup",), "hamper": ("LaundryHamper",),
    "curtain": ("Curtains", "ShowerCurtain"), "coffeemaker": ("CoffeeMachine",),
}
"""Everyday words and dataset spellings for AI2-THOR types, best candidate first."""


def camel_case(name: str) -> str:
    """`dining_table` / `dining table` / `diningTable` -> `DiningTable`; CamelCase is kept."""
    words = [w for w in re.split(r"[\s_\-]+", name.strip()) if w]
    return "".join(w[:1].upper() + w[1:] for w in words)


def lookup(name: str) -> ObjectType | None:
    """The catalogue entry of a type name (any case or spelling), or None."""
    return CATALOGUE.get(camel_case(name).lower())


def canonical_type(name: str, prefer: tuple[str, ...] = ()) -> str:
    """The AI2-THOR type a dataset or instruction word names, as CamelCase.

    Known types keep their catalogue spelling; otherwise a synonym is used, choosing a
    candidate present in `prefer` (the task's other objects) when there is one; otherwise the
    word itself in CamelCase (an unknown type).
    """
    camel = camel_case(name)
    known = CATALOGUE.get(camel.lower())
    if known:
        return known.name
    candidates = SYNONYMS.get(camel.lower()) or SYNONYMS.get(camel.lower().rstrip("s"))
    if not candidates and camel.lower().endswith("s"):
        singular = CATALOGUE.get(camel.lower()[:-1])
        if singular:
            return singular.name
    if candidates:
        preferred = {p.lower() for p in prefer}
        return next((c for c in candidates if c.lower() in preferred), candidates[0])
    return camel


def affordances(name: str) -> ObjectType:
    """The catalogue entry, or a conservative unknown entry with no affordance."""
    return lookup(name) or ObjectType(name=camel_case(name), known=False)


def fixture_neighbours(names: set[str]) -> set[tuple[str, str]]:
    """Pairs (a, b) of distinct present objects in one fixture group (both directions)."""
    by_key = {n.lower(): n for n in names}
    pairs: set[tuple[str, str]] = set()
    for group in FIXTURE_GROUPS:
        present = sorted(by_key[g.lower()] for g in group if g.lower() in by_key)
        pairs.update((a, b) for a in present for b in present if a != b)
    return pairs
